package runtime

import "testing"

func newTestGate(n int) *gate {
	g := newGate()
	done := make(chan struct{})
	for i := 0; i < n; i++ {
		g.addChannel(0, 4, "up", func(any) {}, done)
	}
	g.finish()
	return g
}

func TestGateWatermarkIsMinimumOfLiveChannels(t *testing.T) {
	g := newTestGate(3)
	step := func(name string, want int64, moved bool) {
		t.Helper()
		got, m := g.watermark()
		if got != want || m != moved {
			t.Fatalf("%s: watermark %d moved %v, want %d moved %v", name, got, m, want, moved)
		}
	}
	g.wm[0], g.wm[1] = 10, 20
	step("one channel without watermark", MinWatermark, false)
	g.wm[2] = 5
	step("all channels", 5, true)
	g.idle[2] = true
	step("idle channel excluded", 10, true)
	g.wm[2] = 3
	g.idle[2] = false
	step("channel back from idle behind the others does not move it back", 3, false)
	g.wm[2] = 30
	step("caught up", 10, false)
	g.idle[0], g.idle[1], g.idle[2] = true, true, true
	step("all channels idle: the highest of them counts", 30, true)
	g.idle[0], g.idle[1], g.idle[2] = false, false, false
	g.wm[0], g.wm[1] = 40, 50
	g.ended[2], g.nEnded = true, 1
	step("an ended channel does not hold back the others", 40, true)
	g.idle[0], g.idle[1] = true, true
	step("ended and idle channels: time runs to the end", MaxWatermark, true)
}

func TestGateStatus(t *testing.T) {
	g := newTestGate(2)
	g.idle[0] = true
	if idle, changed := g.status(); idle || changed {
		t.Fatalf("one idle channel of two: idle=%v changed=%v", idle, changed)
	}
	g.idle[1] = true
	if idle, changed := g.status(); !idle || !changed {
		t.Fatalf("both idle: idle=%v changed=%v", idle, changed)
	}
	g.ended[0], g.nEnded = true, 1
	g.idle[1] = false
	if idle, changed := g.status(); idle || !changed {
		t.Fatalf("one ended one active: idle=%v changed=%v", idle, changed)
	}
}

func TestGateBarrierAlignmentDefersBlockedChannel(t *testing.T) {
	g := newTestGate(2)
	c0, c1 := g.chans[0], g.chans[1]
	send := func(c *inChannel, m message) {
		if err := c.send(m, nil); err != nil {
			t.Fatal(err)
		}
	}
	send(c0, message{kind: msgBarrier, val: 1})
	send(c0, message{kind: msgWatermark, val: 100}) // after the barrier on channel 0
	send(c1, message{kind: msgWatermark, val: 50})
	send(c1, message{kind: msgBarrier, val: 1})

	c, m, ok := g.poll()
	if !ok || c != c0 || m.kind != msgBarrier {
		t.Fatalf("first message: %v %+v", ok, m)
	}
	if g.blockForBarrier(0, 1) {
		t.Fatal("aligned after one barrier of two")
	}
	// Channel 0 is blocked: its watermark stays queued; channel 1 flows.
	c, m, ok = g.poll()
	if !ok || c != c1 || m.kind != msgWatermark || m.val != 50 {
		t.Fatalf("expected channel 1's watermark, got %v %+v", ok, m)
	}
	c, m, ok = g.poll()
	if !ok || c != c1 || m.kind != msgBarrier {
		t.Fatalf("expected channel 1's barrier, got %v %+v", ok, m)
	}
	if !g.blockForBarrier(1, 1) {
		t.Fatal("not aligned after both barriers")
	}
	g.unblockAll()
	c, m, ok = g.poll()
	if !ok || c != c0 || m.kind != msgWatermark || m.val != 100 {
		t.Fatalf("deferred message not delivered after alignment: %v %+v", ok, m)
	}
	if _, _, ok = g.poll(); ok {
		t.Fatal("extra message")
	}
}

package nexmark

import "testing"

func TestEventTimeFormula(t *testing.T) {
	for _, c := range []struct {
		rate int64
		gens int
	}{{10_000_000, 1}, {100_000, 1}, {1000, 4}, {3, 1}} {
		cfg := DefaultConfig()
		cfg.FirstEventRate = c.rate
		cfg.NumEventGenerators = c.gens
		g := newTestGenerator(t, cfg, 0, 1)
		delayUs := 1e6 / float64(c.rate) * float64(c.gens)
		for i, e := range generateIDs(t, g, 5000) {
			num := cfg.FirstEventNumber + int64(i)
			want := cfg.BaseTime + int64(float64(num)*delayUs)/1000
			if e.Timestamp() != want {
				t.Fatalf("rate %d gens %d: event %d time %d, want %d", c.rate, c.gens, i, e.Timestamp(), want)
			}
		}
	}
}

func TestDefaultRateSpansTenSecondsPer100MEvents(t *testing.T) {
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	if got := g.TimestampForEvent(100_000_000) - DefaultBaseTime; got != 10_000 {
		t.Fatalf("100M events span %d ms at the default rate, want 10000", got)
	}
}

func TestAuctionExpiry(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FirstEventRate = 1000 // 1 ms per event
	g := newTestGenerator(t, cfg, 0, 1)
	// Auctions last 1 + [0, 2H) ms, H = 100·50/3 = 1666 events = 1666 ms.
	var sum, n float64
	for _, e := range generateIDs(t, g, 100_000) {
		if e.Type != AuctionEvent {
			continue
		}
		d := e.Auction.Expires - e.Auction.DateTime
		if d < 1 || d > 2*1666 {
			t.Fatalf("auction %d lasts %d ms, want 1..%d", e.Auction.ID, d, 2*1666)
		}
		sum += float64(d)
		n++
	}
	within(t, "mean auction length (ms)", sum/n, 1666.5, 30)
}

func TestOutOfOrderGroups(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FirstEventRate = 1000
	cfg.OutOfOrderGroupSize = 10
	cfg.FirstEventNumber = 0
	cfg.MaxEvents = 1000
	g := newTestGenerator(t, cfg, 0, 1)
	var ids []int64
	for g.Position() < g.Len() {
		wm := g.Watermark()
		id := g.NextEventID()
		var e Event
		g.Next(&e)
		ids = append(ids, id)
		num := id - cfg.FirstEventID
		if want := cfg.BaseTime + num; e.Timestamp() != want {
			t.Fatalf("event id %d: time %d, want %d", id, e.Timestamp(), want)
		}
		if e.Timestamp() < wm {
			t.Fatalf("event id %d: time %d before the watermark %d", id, e.Timestamp(), wm)
		}
	}
	for grp := 0; grp < len(ids); grp += 10 {
		seen := map[int64]bool{}
		inOrder := true
		for i, id := range ids[grp : grp+10] {
			seen[id-cfg.FirstEventID-int64(grp)] = true
			inOrder = inOrder && id == cfg.FirstEventID+int64(grp+i)
		}
		for k := range int64(10) {
			if !seen[k] {
				t.Fatalf("group %d does not contain event number %d: %v", grp/10, grp+int(k), ids[grp:grp+10])
			}
		}
		if inOrder && grp > 0 {
			t.Fatalf("group %d is in order: %v", grp/10, ids[grp:grp+10])
		}
	}
}

func TestWatermarkInOrder(t *testing.T) {
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	for range 1000 {
		wm := g.Watermark()
		var e Event
		g.Next(&e)
		if wm != e.Timestamp() {
			t.Fatalf("watermark %d, next event time %d; want equal when in order", wm, e.Timestamp())
		}
	}
}

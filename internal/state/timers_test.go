package state

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

var _ ObjectTable = (*TimerService[int64, VoidNamespace])(nil)

// TestTimersAgainstModel registers, deletes and fires timers at random and
// compares the firing order with a sorted list.
func TestTimersAgainstModel(t *testing.T) {
	type tm struct {
		ts  int64
		seq int
		k   int64
	}
	r := rand.New(rand.NewPCG(1, 2))
	kgs := KeyGroupRange{Start: 0, End: 8}
	s := NewTimerService[int64, VoidNamespace](kgs, nil, nil)
	var model []tm
	seq := 0
	wm := int64(0)
	kgOf := func(k int64) int { return int(k % 8) }
	for round := range 200 {
		for range r.IntN(50) {
			k, ts := r.Int64N(20), wm+r.Int64N(100)-10
			if !slices.ContainsFunc(model, func(m tm) bool { return m.k == k && m.ts == ts }) {
				seq++
				model = append(model, tm{ts, seq, k})
			}
			s.RegisterEventTime(kgOf(k), k, VoidNamespace{}, ts)
		}
		for range r.IntN(20) {
			if len(model) == 0 {
				break
			}
			i := r.IntN(len(model))
			s.DeleteEventTime(kgOf(model[i].k), model[i].k, VoidNamespace{}, model[i].ts)
			model = slices.Delete(model, i, i+1)
		}
		if s.Len() != len(model) {
			t.Fatalf("round %d: Len = %d, model has %d", round, s.Len(), len(model))
		}
		wm += r.Int64N(30)
		slices.SortFunc(model, func(a, b tm) int {
			return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.seq, b.seq))
		})
		var want, got []tm
		for len(model) > 0 && model[0].ts <= wm {
			want = append(want, model[0])
			model = model[1:]
		}
		err := s.AdvanceWatermark(wm, func(kg int, k int64, _ VoidNamespace, ts int64) error {
			if kg != kgOf(k) {
				t.Fatalf("timer of key %d fired with key group %d", k, kg)
			}
			got = append(got, tm{ts: ts, k: k})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: fired %d timers, want %d", round, len(got), len(want))
		}
		for i := range got {
			if got[i].ts != want[i].ts || got[i].k != want[i].k {
				t.Fatalf("round %d: firing %d is %v, want %v", round, i, got[i], want[i])
			}
		}
	}
}

func TestTimerServiceKeyGroupRange(t *testing.T) {
	s := NewTimerService[int64, VoidNamespace](KeyGroupRange{Start: 2, End: 4}, nil, nil)
	defer func() {
		if recover() == nil {
			t.Error("registering a timer outside the key group range did not panic")
		}
	}()
	s.RegisterEventTime(4, 1, VoidNamespace{}, 1)
}

// BenchmarkTimers registers a timer and fires it, per op, with 10k timers
// pending.
func BenchmarkTimers(b *testing.B) {
	s := NewTimerService[int64, VoidNamespace](KeyGroupRange{Start: 0, End: 128}, nil, nil)
	const pending = 10000
	for i := range int64(pending) {
		s.RegisterEventTime(int(i%128), i, VoidNamespace{}, i)
	}
	nop := func(int, int64, VoidNamespace, int64) error { return nil }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ts := int64(i)
		k := ts + pending
		s.RegisterEventTime(int(k%128), k, VoidNamespace{}, ts+pending)
		if err := s.AdvanceWatermark(ts, nop); err != nil {
			b.Fatal(err)
		}
	}
}

// timerRange does not start at 0, to catch key group offsets.
var timerRange = KeyGroupRange{Start: 3, End: 19}

func timerKG(k int64) int { return timerRange.Start + int(uint64(k)%uint64(timerRange.Len())) }

func TestTimerServiceBeginSnapshot(t *testing.T) {
	s := NewTimerService[int64, VoidNamespace](timerRange, nil, nil)
	for k := range int64(100) {
		s.RegisterEventTime(timerKG(k), k, VoidNamespace{}, k%7)
		s.RegisterProcessingTime(timerKG(k), k, VoidNamespace{}, k%5)
	}
	var want [][]byte
	for kg := timerRange.Start; kg < timerRange.End; kg++ {
		want = append(want, s.AppendKeyGroup(nil, kg))
	}
	encode, release := s.BeginSnapshot()
	done := make(chan [][]byte)
	go func() {
		var got [][]byte
		for kg := timerRange.Start; kg < timerRange.End; kg++ {
			got = append(got, encode([]byte("x"), kg)[1:])
		}
		release()
		done <- got
	}()
	for k := range int64(100) {
		s.DeleteEventTime(timerKG(k), k, VoidNamespace{}, k%7)
		s.RegisterEventTime(timerKG(k), k, VoidNamespace{}, 100+k)
	}
	got := <-done
	for i := range want {
		if string(got[i]) != string(want[i]) {
			t.Errorf("key group %d: encode gave %x, want %x", timerRange.Start+i, got[i], want[i])
		}
	}
}

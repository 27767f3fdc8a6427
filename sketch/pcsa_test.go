package sketch

import (
	"encoding"
	"errors"
	"math"
	"testing"
)

// PCSA's standard error is about 0.78/√m; the mean relative error over
// seeds stays below 3σ and single runs below 5σ, across the linear-counting
// range and the stochastic-averaging range.
func TestPCSAAccuracy(t *testing.T) {
	const m = 256
	sigma := 0.78 / math.Sqrt(m)
	for _, n := range []int{100, 500, 2000, 10000, 100000, 1000000} {
		var sum float64
		const seeds = 5
		for s := uint64(0); s < seeds; s++ {
			p := NewPCSA(m, s)
			for i := 0; i < n; i++ {
				p.AddUint64(uint64(i))
			}
			e := relErr(p.Estimate(), float64(n))
			if e > 5*sigma {
				t.Errorf("n=%d seed %d: relative error %.4f above 5σ = %.4f", n, s, e, 5*sigma)
			}
			sum += e
		}
		t.Logf("n=%-8d mean |rel err| %.4f (σ = %.4f)", n, sum/seeds, sigma)
		if sum/seeds > 3*sigma {
			t.Errorf("n=%d: mean relative error %.4f above 3σ", n, sum/seeds)
		}
	}
	if e := NewPCSA(16, 0).Estimate(); e != 0 {
		t.Fatalf("empty estimate %v", e)
	}
}

func TestPCSAMergeAndRoundTrip(t *testing.T) {
	a, b, all := NewPCSA(64, 2), NewPCSA(64, 2), NewPCSA(64, 2)
	for i := 0; i < 20000; i++ {
		all.AddUint64(uint64(i))
		if i%3 == 0 {
			a.AddUint64(uint64(i))
		} else {
			b.AddUint64(uint64(i))
		}
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Estimate() != all.Estimate() {
		t.Fatalf("merged %v vs whole %v", a.Estimate(), all.Estimate())
	}
	err := a.Merge(NewPCSA(32, 2))
	if !errors.Is(err, ErrIncompatible) || err.Error() != "sketch: cannot merge PCSA of 64 bitmaps (seed 2) with 32 bitmaps (seed 2)" {
		t.Fatalf("size mismatch: %v", err)
	}
	blob, _ := all.MarshalBinary()
	back := NewPCSA(1, 0)
	if err := back.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	if back.Estimate() != all.Estimate() || back.Bitmaps() != 64 {
		t.Fatal("round trip lost state")
	}
	back.AddString("x")
	all.Add([]byte("x"))
	if back.Estimate() != all.Estimate() {
		t.Fatal("diverged after round trip")
	}
	checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewPCSA(1, 0) })
}

func BenchmarkPCSAAdd(b *testing.B) {
	p := NewPCSA(1024, 1)
	for i := 0; i < b.N; i++ {
		p.AddUint64(uint64(i))
	}
}

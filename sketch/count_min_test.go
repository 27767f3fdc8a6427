package sketch

import (
	"encoding"
	"errors"
	"math"
	"testing"
)

func TestCountMinSizing(t *testing.T) {
	for _, c := range []struct {
		eps, delta float64
		w, d       int
	}{{0.01, 0.01, 272, 5}, {0.001, 0.001, 2719, 7}, {0.1, 0.05, 28, 3}} {
		w, d := CountMinSize(c.eps, c.delta)
		if w != c.w || d != c.d {
			t.Errorf("ε=%g δ=%g: %d×%d, want %d×%d", c.eps, c.delta, w, d, c.w, c.d)
		}
	}
	cm := NewCountMinWithError(0.01, 0.01, 1)
	if cm.Width() != 272 || cm.Depth() != 5 || !near(cm.Epsilon(), math.E/272, 1e-15) || !near(cm.Delta(), math.Exp(-5), 1e-15) {
		t.Fatalf("NewCountMinWithError: %d×%d ε=%v δ=%v", cm.Width(), cm.Depth(), cm.Epsilon(), cm.Delta())
	}
}

// zipfStream returns n draws over a universe of size u with weights 1/i^s,
// and the exact frequencies.
func zipfStream(n, u int, s float64, seed uint64) ([]uint64, map[uint64]uint64) {
	cdf := make([]float64, u)
	total := 0.0
	for i := range cdf {
		total += 1 / math.Pow(float64(i+1), s)
		cdf[i] = total
	}
	r := newSplitMix64(seed)
	out := make([]uint64, n)
	freq := map[uint64]uint64{}
	for i := range out {
		x := r.float64() * total
		lo, hi := 0, u-1
		for lo < hi {
			mid := (lo + hi) / 2
			if cdf[mid] < x {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		out[i] = uint64(lo)*0x9e3779b97f4a7c15 + 1 // spread the ids
		freq[out[i]]++
	}
	return out, freq
}

// TestCountMinBound checks a ≤ â ≤ a + ε‖a‖₁ for every item, allowing the
// bound to fail for at most a δ fraction of items, with and without
// conservative update; conservative estimates are never above plain ones.
func TestCountMinBound(t *testing.T) {
	stream, freq := zipfStream(200000, 50000, 1.1, 3)
	plain := NewCountMinWithError(0.001, 0.01, 7)
	cons := NewCountMinWithError(0.001, 0.01, 7)
	cons.SetConservative(true)
	if !cons.Conservative() || plain.Conservative() {
		t.Fatal("Conservative flag")
	}
	for _, x := range stream {
		plain.AddUint64(x, 1)
		cons.AddUint64(x, 1)
	}
	if plain.Total() != uint64(len(stream)) || cons.Total() != plain.Total() {
		t.Fatalf("totals %d and %d", plain.Total(), cons.Total())
	}
	bound := plain.Epsilon() * float64(plain.Total())
	var overP, overC int
	var errP, errC float64
	for x, f := range freq {
		p, c := plain.EstimateUint64(x), cons.EstimateUint64(x)
		if p < f || c < f {
			t.Fatalf("underestimate for %d: true %d, plain %d, conservative %d", x, f, p, c)
		}
		if c > p {
			t.Fatalf("conservative estimate %d above plain %d", c, p)
		}
		if float64(p-f) > bound {
			overP++
		}
		if float64(c-f) > bound {
			overC++
		}
		errP += float64(p - f)
		errC += float64(c - f)
	}
	n := float64(len(freq))
	t.Logf("ε‖a‖₁ = %.0f; mean overestimate plain %.2f, conservative %.2f; over bound %d and %d of %d",
		bound, errP/n, errC/n, overP, overC, len(freq))
	if float64(overP) > 0.01*n || float64(overC) > 0.01*n {
		t.Errorf("bound exceeded for more than δ of the items: plain %d, conservative %d", overP, overC)
	}
	if errC >= errP {
		t.Errorf("conservative update did not reduce the error: %.0f vs %.0f", errC, errP)
	}
}

func TestCountMinMergeAndRoundTrip(t *testing.T) {
	a, b, all := NewCountMin(100, 4, 9), NewCountMin(100, 4, 9), NewCountMin(100, 4, 9)
	for i := 0; i < 1000; i++ {
		key := []byte{byte(i % 37), byte(i % 11)}
		all.Add(key, uint64(i%5))
		if i%2 == 0 {
			a.Add(key, uint64(i%5))
		} else {
			b.Add(key, uint64(i%5))
		}
	}
	all.AddString("s", 3)
	a.AddString("s", 3)
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	ea, _ := a.MarshalBinary()
	eall, _ := all.MarshalBinary()
	if string(ea) != string(eall) {
		t.Fatal("merged sketch differs from the sketch of the whole stream")
	}
	if a.EstimateString("s") < 3 || a.Estimate([]byte{0, 0}) == 0 {
		t.Fatal("estimates lost in merge")
	}
	if err := a.Merge(a); err != nil || a.Total() != 2*all.Total() {
		t.Fatal("self-merge must double")
	}
	err := a.Merge(NewCountMin(100, 4, 10))
	if !errors.Is(err, ErrIncompatible) || err.Error() != "sketch: cannot merge CountMin 100×4 (seed 9) with 100×4 (seed 10)" {
		t.Fatalf("seed mismatch: %v", err)
	}
	all.SetConservative(true)
	blob, _ := all.MarshalBinary()
	back := NewCountMin(1, 1, 0)
	if err := back.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	back.AddString("t", 2)
	all.AddString("t", 2)
	if back.EstimateString("t") != all.EstimateString("t") || !back.Conservative() {
		t.Fatal("round trip lost state")
	}
	checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewCountMin(1, 1, 0) })
}

func BenchmarkCountMinAdd(b *testing.B) {
	for _, cons := range []bool{false, true} {
		name := "plain"
		if cons {
			name = "conservative"
		}
		b.Run(name, func(b *testing.B) {
			cm := NewCountMinWithError(0.001, 0.01, 1)
			cm.SetConservative(cons)
			for i := 0; i < b.N; i++ {
				cm.AddUint64(uint64(i&0xffff), 1)
			}
		})
	}
}

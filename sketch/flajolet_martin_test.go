package sketch

import (
	"encoding"
	"errors"
	"testing"
)

// The specification's oracle: hashes 0b1010, 0b0100, 0b1000, 0b0111 have
// ranks 1, 2, 3, 0, so R = 3, the estimate is 8 and 8/φ = 10.342.
func TestFlajoletMartinOracle(t *testing.T) {
	f := NewFlajoletMartin(1, 1, 0)
	if f.Estimate() != 1 {
		t.Fatalf("empty estimate %v", f.Estimate())
	}
	for i, h := range []uint64{0b1010, 0b0100, 0b1000, 0b0111} {
		f.AddHash(h)
		if want := []int{1, 2, 3, 3}[i]; f.Rank(0) != want {
			t.Fatalf("after hash %d: R = %d, want %d", i, f.Rank(0), want)
		}
	}
	if f.Estimate() != 8 || !near(f.EstimateCorrected(), 10.342, 1e-4) {
		t.Fatalf("estimate %v, corrected %v; want 8 and 10.342", f.Estimate(), f.EstimateCorrected())
	}
	f.AddHash(0)
	if f.Rank(0) != 64 {
		t.Fatalf("rank of a zero hash = %d, want 64", f.Rank(0))
	}
}

// The max-rank estimator is a constant-factor approximation; with 64
// functions in 8 groups it stays within a factor of 4 here, and duplicates
// never change it.
func TestFlajoletMartinAccuracy(t *testing.T) {
	for _, n := range []int{100, 10000, 1000000} {
		f := NewFlajoletMartin(64, 8, uint64(n))
		for i := 0; i < n; i++ {
			f.AddUint64(uint64(i))
		}
		before := f.Estimate()
		for i := 0; i < n; i += 10 {
			f.AddUint64(uint64(i))
		}
		if f.Estimate() != before {
			t.Fatalf("n=%d: duplicates changed the estimate", n)
		}
		ratio := f.EstimateCorrected() / float64(n)
		t.Logf("n=%d: corrected estimate %.0f (ratio %.2f)", n, f.EstimateCorrected(), ratio)
		if ratio < 0.25 || ratio > 4 {
			t.Errorf("n=%d: estimate %.0f off by more than a factor of 4", n, f.EstimateCorrected())
		}
	}
}

func TestFlajoletMartinMergeAndRoundTrip(t *testing.T) {
	a, b, all := NewFlajoletMartin(16, 4, 1), NewFlajoletMartin(16, 4, 1), NewFlajoletMartin(16, 4, 1)
	for i := 0; i < 3000; i++ {
		s := string(rune('a'+i%26)) + string(rune(i))
		all.AddString(s)
		if i%2 == 0 {
			a.AddString(s)
		} else {
			b.Add([]byte(s))
		}
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Estimate() != all.Estimate() {
		t.Fatalf("merged %v vs whole %v", a.Estimate(), all.Estimate())
	}
	if err := a.Merge(NewFlajoletMartin(16, 2, 1)); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("group mismatch: %v", err)
	}
	blob, _ := all.MarshalBinary()
	back := NewFlajoletMartin(1, 1, 0)
	if err := back.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	if back.Estimate() != all.Estimate() || back.Hashes() != 16 || back.Groups() != 4 {
		t.Fatal("round trip lost state")
	}
	for i := 0; i < 1000; i++ {
		back.AddUint64(uint64(i) << 20)
		all.AddUint64(uint64(i) << 20)
	}
	if back.Estimate() != all.Estimate() {
		t.Fatal("diverged after round trip")
	}
	checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewFlajoletMartin(1, 1, 0) })
}

func BenchmarkFlajoletMartinAdd(b *testing.B) {
	f := NewFlajoletMartin(64, 8, 1)
	for i := 0; i < b.N; i++ {
		f.AddUint64(uint64(i))
	}
}

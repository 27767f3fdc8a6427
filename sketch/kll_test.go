package sketch

import (
	"encoding"
	"errors"
	"math"
	"testing"
)

// permutation returns 0..n−1 in a seeded random order.
func permutation(n int, seed uint64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
	}
	r := newSplitMix64(seed)
	for i := n - 1; i > 0; i-- {
		j := r.intn(uint64(i + 1))
		xs[i], xs[j] = xs[j], xs[i]
	}
	return xs
}

// kllMaxRankError returns the largest normalised rank error over the
// quantiles 0.01..0.99 and the ranks of the matching values, for a sketch
// of the values 0..n−1 (whose exact inclusive rank of v is (v+1)/n).
func kllMaxRankError(s *KLL, n int) float64 {
	worst := 0.0
	for i := 1; i < 100; i++ {
		q := float64(i) / 100
		v := s.Quantile(q)
		worst = math.Max(worst, math.Abs((v+1)/float64(n)-q))
		x := math.Floor(q * float64(n))
		worst = math.Max(worst, math.Abs(s.Rank(x)-(x+1)/float64(n)))
	}
	return worst
}

// TestKLLRankError checks that the rank error over all 99 percentiles stays
// within the all-ranks bound ε₂(200) ≈ 1.65% for random, sorted and
// reversed streams of 10^6 values, and for the merge of eight sketches.
func TestKLLRankError(t *testing.T) {
	const n = 1000000
	eps := KLLNormalizedRankError(KLLDefaultK, true)
	if !near(eps, 0.0165, 0.01) || !near(KLLNormalizedRankError(200, false), 0.0133, 0.01) {
		t.Fatalf("rank error constants: %v %v", eps, KLLNormalizedRankError(200, false))
	}
	check := func(name string, s *KLL) {
		t.Helper()
		e := kllMaxRankError(s, n)
		t.Logf("%-10s retained %4d, max rank error %.4f (bound %.4f)", name, s.NumRetained(), e, eps)
		if e > eps {
			t.Errorf("%s: max rank error %.4f above %.4f", name, e, eps)
		}
		if s.Count() != n || s.Min() != 0 || s.Max() != n-1 || s.Quantile(0) != 0 || s.Quantile(1) != n-1 {
			t.Errorf("%s: count %d min %v max %v", name, s.Count(), s.Min(), s.Max())
		}
	}
	for seed := uint64(1); seed <= 3; seed++ {
		s := NewKLL(KLLDefaultK, seed)
		for _, x := range permutation(n, seed) {
			s.Add(x)
		}
		check("random", s)
	}
	asc, desc := NewKLL(KLLDefaultK, 4), NewKLL(KLLDefaultK, 5)
	for i := 0; i < n; i++ {
		asc.Add(float64(i))
		desc.Add(float64(n - 1 - i))
	}
	check("sorted", asc)
	check("reversed", desc)

	xs := permutation(n, 6)
	var merged *KLL
	for part := 0; part < 8; part++ {
		s := NewKLL(KLLDefaultK, uint64(100+part))
		for _, x := range xs[part*n/8 : (part+1)*n/8] {
			s.Add(x)
		}
		if merged == nil {
			merged = s
		} else if err := merged.Merge(s); err != nil {
			t.Fatal(err)
		}
	}
	check("merged", merged)
	if merged.NumRetained() > 3*KLLDefaultK {
		t.Errorf("merged sketch retains %d items", merged.NumRetained())
	}
}

func TestKLLSmallAndEdgeCases(t *testing.T) {
	s := NewKLL(8, 1)
	if !math.IsNaN(s.Quantile(0.5)) || !math.IsNaN(s.Rank(1)) || !math.IsNaN(s.Min()) {
		t.Fatal("empty sketch must report NaN")
	}
	for _, x := range []float64{5, 1, 4, 2, 3, math.NaN()} {
		s.Add(x)
	}
	if s.Count() != 5 {
		t.Fatalf("NaN counted: %d", s.Count())
	}
	// Exact while nothing was compacted.
	for i, want := range []float64{1, 1, 2, 3, 4, 5} {
		if got := s.Quantile(float64(i) / 5); got != want && i > 0 {
			t.Errorf("Quantile(%v) = %v, want %v", float64(i)/5, got, want)
		}
	}
	if q := s.Quantiles([]float64{0.5, 0.9}); q[0] != 3 || q[1] != 5 {
		t.Errorf("Quantiles = %v", q)
	}
	if c := s.CDF([]float64{0, 2.5, 5}); c[0] != 0 || c[1] != 0.4 || c[2] != 1 {
		t.Errorf("CDF = %v", c)
	}
	if s.K() != 8 || s.NormalizedRankError(false) != KLLNormalizedRankError(8, false) {
		t.Fatal("accessors")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Quantile(1.5) did not panic")
			}
		}()
		s.Quantile(1.5)
	}()
	err := s.Merge(NewKLL(16, 1))
	if !errors.Is(err, ErrIncompatible) || err.Error() != "sketch: cannot merge KLL with k=8 with k=16" {
		t.Fatalf("k mismatch: %v", err)
	}
	if err := s.Merge(s); err != nil || s.Count() != 10 || s.Quantile(0.5) != 3 {
		t.Fatalf("self-merge: count %d median %v err %v", s.Count(), s.Quantile(0.5), err)
	}
	e := NewKLL(8, 2)
	if err := e.Merge(s); err != nil || e.Min() != 1 || e.Max() != 5 || e.Count() != 10 {
		t.Fatal("merge into empty")
	}
}

func TestKLLRoundTrip(t *testing.T) {
	s := NewKLL(50, 3)
	xs := permutation(20000, 3)
	for _, x := range xs[:10000] {
		s.Add(x)
	}
	blob, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back := NewKLL(8, 0)
	if err := back.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	for _, x := range xs[10000:] {
		s.Add(x)
		back.Add(x)
	}
	for q := 0.0; q <= 1; q += 0.05 {
		if s.Quantile(q) != back.Quantile(q) {
			t.Fatalf("diverged after round trip at q=%v", q)
		}
	}
	c := s.Clone()
	c.Add(-1)
	if s.Min() == -1 {
		t.Fatal("clone shares state")
	}
	checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewKLL(8, 0) })
	empty, _ := NewKLL(8, 0).MarshalBinary()
	if err := NewKLL(8, 0).UnmarshalBinary(empty); err != nil {
		t.Fatalf("empty sketch: %v", err)
	}
}

func BenchmarkKLLAdd(b *testing.B) {
	s := NewKLL(KLLDefaultK, 1)
	r := newSplitMix64(1)
	xs := make([]float64, 1<<16)
	for i := range xs {
		xs[i] = r.float64()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Add(xs[i&(1<<16-1)])
	}
}

package sketch

import (
	"encoding"
	"math"
	"testing"
)

func TestMomentsOracle(t *testing.T) {
	var m Moments
	for _, x := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		m.Add(x)
	}
	if m.Count() != 8 || m.Sum() != 40 || m.SumSquares() != 232 {
		t.Fatalf("n=%d S1=%v S2=%v, want 8, 40, 232", m.Count(), m.Sum(), m.SumSquares())
	}
	if m.Mean() != 5 || m.Variance() != 4 || m.StdDev() != 2 {
		t.Fatalf("mean %v var %v sd %v, want 5, 4, 2", m.Mean(), m.Variance(), m.StdDev())
	}
	if !near(m.SampleVariance(), 32.0/7, 1e-15) || !near(m.SampleStdDev(), math.Sqrt(32.0/7), 1e-15) {
		t.Fatalf("sample variance %v, want 32/7", m.SampleVariance())
	}
	var empty Moments
	if !math.IsNaN(empty.Mean()) || !math.IsNaN(empty.Variance()) || !math.IsNaN(empty.SampleVariance()) {
		t.Fatal("empty summary must report NaN")
	}
	one := NewMoments()
	one.Add(3)
	if one.Variance() != 0 || !math.IsNaN(one.SampleVariance()) {
		t.Fatalf("single value: var %v sample var %v", one.Variance(), one.SampleVariance())
	}
}

// Welford keeps full precision where the sum-of-squares formula cancels.
func TestMomentsStability(t *testing.T) {
	var m Moments
	var s1, s2 float64
	for _, d := range []float64{4, 7, 13, 16} {
		x := 1e9 + d
		m.Add(x)
		s1 += x
		s2 += x * x
	}
	if m.Variance() != 22.5 || m.SampleVariance() != 30 {
		t.Fatalf("variance %v sample %v, want 22.5 and 30", m.Variance(), m.SampleVariance())
	}
	naive := s2/4 - (s1/4)*(s1/4)
	t.Logf("naive variance %v vs Welford %v", naive, m.Variance())
}

func TestMomentsRemoveAndMerge(t *testing.T) {
	r := newSplitMix64(3)
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = 100 + 10*r.float64()
	}
	var all, a, b, sub Moments
	for i, x := range xs {
		all.Add(x)
		if i%3 == 0 {
			a.Add(x)
		} else {
			b.Add(x)
		}
		if i >= 400 {
			sub.Add(x)
		}
	}
	if err := a.Merge(&b); err != nil {
		t.Fatal(err)
	}
	if a.Count() != all.Count() || !near(a.Mean(), all.Mean(), 1e-13) || !near(a.Variance(), all.Variance(), 1e-11) {
		t.Fatalf("merged %v/%v vs sequential %v/%v", a.Mean(), a.Variance(), all.Mean(), all.Variance())
	}
	rem := all
	for _, x := range xs[:400] {
		rem.Remove(x)
	}
	if rem.Count() != 600 || !near(rem.Mean(), sub.Mean(), 1e-12) || !near(rem.Variance(), sub.Variance(), 1e-9) {
		t.Fatalf("after removal %v/%v, want %v/%v", rem.Mean(), rem.Variance(), sub.Mean(), sub.Variance())
	}
	for _, x := range xs[400:] {
		rem.Remove(x)
	}
	if rem != (Moments{}) {
		t.Fatalf("removing everything left %+v", rem)
	}
	rem.Remove(1) // no-op on empty
	var e Moments
	if err := e.Merge(&sub); err != nil || e != sub {
		t.Fatal("merge into empty must copy")
	}
	if err := e.Merge(nil); err != nil {
		t.Fatal(err)
	}
}

func TestMomentsRoundTrip(t *testing.T) {
	m := NewMoments()
	for _, x := range []float64{1.5, -2, 1e10, 3} {
		m.Add(x)
	}
	blob, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Moments
	if err := back.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	if back != *m {
		t.Fatalf("round trip %+v, want %+v", back, *m)
	}
	checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewMoments() })
}

func BenchmarkMomentsAdd(b *testing.B) {
	var m Moments
	for i := 0; i < b.N; i++ {
		m.Add(float64(i & 1023))
	}
}

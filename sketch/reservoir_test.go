package sketch

import (
	"encoding"
	"errors"
	"math"
	"testing"
)

// checkInclusion asserts that every item's inclusion frequency over runs is
// within 5 binomial standard deviations of p.
func checkInclusion(t *testing.T, what string, counts []int, runs int, p []float64) {
	t.Helper()
	for i, c := range counts {
		sd := math.Sqrt(p[i] * (1 - p[i]) / float64(runs))
		if f := float64(c) / float64(runs); math.Abs(f-p[i]) > 5*sd+1e-12 {
			t.Errorf("%s: item %d included with frequency %.4f, want %.4f ± %.4f", what, i, f, p[i], 5*sd)
		}
	}
}

func TestReservoirInclusion(t *testing.T) {
	const n, k, runs = 20, 5, 20000
	counts := make([]int, n)
	for r := 0; r < runs; r++ {
		res := NewReservoir[int](k, uint64(r))
		for i := 0; i < n; i++ {
			res.Add(i)
		}
		if len(res.Sample()) != k || res.Count() != n || res.Capacity() != k {
			t.Fatal("sample size")
		}
		for _, x := range res.Sample() {
			counts[x]++
		}
	}
	p := make([]float64, n)
	for i := range p {
		p[i] = float64(k) / n
	}
	checkInclusion(t, "Algorithm R", counts, runs, p)
}

func TestReservoirMerge(t *testing.T) {
	const n1, n2, k, runs = 10, 30, 5, 20000
	counts := make([]int, n1+n2)
	for r := 0; r < runs; r++ {
		a := NewReservoir[int](k, uint64(r))
		b := NewReservoir[int](k, uint64(r)+1<<32)
		for i := 0; i < n1; i++ {
			a.Add(i)
		}
		for i := n1; i < n1+n2; i++ {
			b.Add(i)
		}
		if err := a.Merge(b); err != nil {
			t.Fatal(err)
		}
		if len(a.Sample()) != k || a.Count() != n1+n2 {
			t.Fatalf("merged sample of %d after %d", len(a.Sample()), a.Count())
		}
		for _, x := range a.Sample() {
			counts[x]++
		}
	}
	p := make([]float64, n1+n2)
	for i := range p {
		p[i] = float64(k) / (n1 + n2)
	}
	checkInclusion(t, "merged", counts, runs, p)

	// Small streams merge to their union.
	a, b := NewReservoir[string](10, 1), NewReservoir[string](10, 2)
	a.Add("x")
	b.Add("y")
	b.Add("z")
	if err := a.Merge(b); err != nil || len(a.Sample()) != 3 {
		t.Fatalf("union of small streams: %v %v", a.Sample(), err)
	}
	if err := a.Merge(a); err != nil || len(a.Sample()) != 6 || a.Count() != 6 {
		t.Fatalf("self-merge: %v %v", a.Sample(), err)
	}
	err := a.Merge(NewReservoir[string](3, 1))
	if !errors.Is(err, ErrIncompatible) || err.Error() != "sketch: cannot merge Reservoir of capacity 10 with capacity 3" {
		t.Fatalf("capacity mismatch: %v", err)
	}
}

func TestReservoirRoundTrip(t *testing.T) {
	type point struct{ X, Y int }
	r := NewReservoir[point](8, 4)
	for i := 0; i < 100; i++ {
		r.Add(point{i, -i})
	}
	blob, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back := NewReservoir[point](1, 0)
	if err := back.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	for i := 100; i < 300; i++ {
		r.Add(point{i, -i})
		back.Add(point{i, -i})
	}
	for i, x := range r.Sample() {
		if back.Sample()[i] != x {
			t.Fatalf("diverged after round trip: %v vs %v", back.Sample(), r.Sample())
		}
	}
	checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewReservoir[point](1, 0) })
	empty, _ := NewReservoir[int](3, 0).MarshalBinary()
	if err := NewReservoir[int](1, 0).UnmarshalBinary(empty); err != nil {
		t.Fatalf("empty reservoir: %v", err)
	}
}

func BenchmarkReservoirAdd(b *testing.B) {
	r := NewReservoir[int](1000, 1)
	for i := 0; i < b.N; i++ {
		r.Add(i)
	}
}

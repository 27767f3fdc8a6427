package sketch

import (
	"encoding"
	"errors"
	"testing"
)

// exactWeightedInclusion returns each item's probability of being in a
// weighted sample of size k drawn one item at a time with probability
// proportional to weight, by enumerating all draw sequences.
func exactWeightedInclusion(w []float64, k int) []float64 {
	p := make([]float64, len(w))
	used := make([]bool, len(w))
	var rec func(depth int, prob, rest float64)
	rec = func(depth int, prob, rest float64) {
		if depth == k {
			for i, u := range used {
				if u {
					p[i] += prob
				}
			}
			return
		}
		for i, wi := range w {
			if !used[i] {
				used[i] = true
				rec(depth+1, prob*wi/rest, rest-wi)
				used[i] = false
			}
		}
	}
	total := 0.0
	for _, x := range w {
		total += x
	}
	rec(0, 1, total)
	return p
}

// TestWeightedReservoirInclusion compares inclusion frequencies with the
// exact successive-sampling probabilities, for a direct stream (which
// exercises A-ExpJ's jumps) and for the merge of two reservoirs.
func TestWeightedReservoirInclusion(t *testing.T) {
	w := []float64{1, 5, 2, 0.5, 3, 8, 1, 1, 4, 0.25}
	const k, runs = 3, 30000
	want := exactWeightedInclusion(w, k)
	direct := make([]int, len(w))
	merged := make([]int, len(w))
	for r := 0; r < runs; r++ {
		a := NewWeightedReservoir[int](k, uint64(r))
		for i, x := range w {
			a.Add(i, x)
		}
		for _, it := range a.Sample() {
			direct[it.Item]++
			if it.Weight != w[it.Item] {
				t.Fatal("weight not kept")
			}
		}
		b := NewWeightedReservoir[int](k, uint64(r)+1<<40)
		c := NewWeightedReservoir[int](k, uint64(r)+1<<41)
		for i, x := range w {
			if i%2 == 0 {
				b.Add(i, x)
			} else {
				c.Add(i, x)
			}
		}
		if err := b.Merge(c); err != nil {
			t.Fatal(err)
		}
		for _, it := range b.Sample() {
			merged[it.Item]++
		}
	}
	checkInclusion(t, "A-ExpJ", direct, runs, want)
	checkInclusion(t, "merged", merged, runs, want)
}

func TestWeightedReservoirEdgeCases(t *testing.T) {
	r := NewWeightedReservoir[string](2, 1)
	r.Add("zero", 0)
	r.Add("neg", -1)
	r.Add("one", 1)
	if r.Count() != 1 || r.TotalWeight() != 1 || len(r.Sample()) != 1 || r.Capacity() != 2 {
		t.Fatalf("non-positive weights must be ignored: %v", r.Sample())
	}
	if err := r.Merge(nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Merge(NewWeightedReservoir[string](3, 1)); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("capacity mismatch: %v", err)
	}
	// Tiny weights do not underflow the keys.
	s := NewWeightedReservoir[int](2, 2)
	for i := 0; i < 1000; i++ {
		s.Add(i, 1e-300)
	}
	if len(s.Sample()) != 2 {
		t.Fatal("tiny weights")
	}
}

func TestWeightedReservoirRoundTrip(t *testing.T) {
	r := NewWeightedReservoir[string](4, 9)
	names := []string{"a", "b", "c", "d", "e", "f", "g"}
	for i := 0; i < 100; i++ {
		r.Add(names[i%len(names)], float64(i%5+1))
	}
	blob, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back := NewWeightedReservoir[string](1, 0)
	if err := back.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		r.Add(names[i%len(names)], float64(i%3+1))
		back.Add(names[i%len(names)], float64(i%3+1))
	}
	a, b := r.Sample(), back.Sample()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("diverged after round trip: %v vs %v", a, b)
		}
	}
	checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewWeightedReservoir[string](1, 0) })
}

func BenchmarkWeightedReservoirAdd(b *testing.B) {
	r := NewWeightedReservoir[int](1000, 1)
	for i := 0; i < b.N; i++ {
		r.Add(i, float64(i%100+1))
	}
}

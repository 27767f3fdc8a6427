package sketch

import "testing"

func TestSplitMix64(t *testing.T) {
	r := newSplitMix64(42)
	// intn is uniform: 60,000 draws over 6 values, each within 5σ.
	var counts [6]int
	for i := 0; i < 60000; i++ {
		counts[r.intn(6)]++
	}
	for v, c := range counts {
		if c < 10000-500 || c > 10000+500 {
			t.Errorf("intn(6) produced %d %d times out of 60000", v, c)
		}
	}
	for i := 0; i < 10000; i++ {
		if f := r.float64Open(); !(f > 0 && f < 1) {
			t.Fatalf("float64Open = %v", f)
		}
		if f := r.float64(); !(f >= 0 && f < 1) {
			t.Fatalf("float64 = %v", f)
		}
	}
	// Seeds a multiple of the increment apart must not give shifted copies.
	g := uint64(golden64)
	a, b := newSplitMix64(g), newSplitMix64(2*g)
	a.next()
	if a.next() == b.next() {
		t.Fatal("seeds golden and 2·golden produce shifted sequences")
	}
}

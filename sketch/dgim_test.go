package sketch

import (
	"encoding"
	"testing"
)

// TestDGIMErrorBound streams bits of changing density and checks after every
// bit that each estimate is within count/(2(r−1)) + 1 of the exact count of
// 1s, for the whole window and for shorter suffixes.
func TestDGIMErrorBound(t *testing.T) {
	const window = 1000
	for _, r := range []int{2, 3, 5} {
		g := NewDGIM(window, r)
		rng := newSplitMix64(uint64(r))
		var bits []bool
		maxBuckets, worst := 0, 0.0
		for i := 0; i < 20000; i++ {
			density := []float64{0.5, 0.05, 0.95, 0.3}[i/5000]
			b := rng.float64() < density
			bits = append(bits, b)
			g.Add(b)
			maxBuckets = max(maxBuckets, g.Buckets())
			for _, k := range []int{window, 500, 37, 1} {
				exact := 0
				for j := max(0, len(bits)-k); j < len(bits); j++ {
					if bits[j] {
						exact++
					}
				}
				est := g.CountLast(uint64(k))
				diff := float64(est) - float64(exact)
				if diff < 0 {
					diff = -diff
				}
				if diff > float64(exact)/float64(2*(r-1))+1 {
					t.Fatalf("r=%d bit %d k=%d: estimate %d, exact %d", r, i, k, est, exact)
				}
				if exact > 0 {
					worst = max(worst, diff/float64(exact))
				}
			}
		}
		if g.Count() != g.CountLast(window) || g.Time() != 20000 || g.Window() != window {
			t.Fatal("accessors")
		}
		t.Logf("r=%d: worst relative error %.3f, at most %d buckets", r, worst, maxBuckets)
		if maxBuckets > r*11+1 {
			t.Errorf("r=%d: %d buckets exceed r·(log2 N + 1)", r, maxBuckets)
		}
	}
}

func TestDGIMRoundTrip(t *testing.T) {
	g := NewDGIM(100, 2)
	rng := newSplitMix64(1)
	for i := 0; i < 1000; i++ {
		g.Add(rng.float64() < 0.6)
	}
	blob, _ := g.MarshalBinary()
	back := NewDGIM(1, 2)
	if err := back.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		b := rng.float64() < 0.3
		g.Add(b)
		back.Add(b)
		if g.Count() != back.Count() || g.CountLast(10) != back.CountLast(10) {
			t.Fatal("diverged after round trip")
		}
	}
	checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewDGIM(1, 2) })
}

func BenchmarkDGIMAdd(b *testing.B) {
	g := NewDGIM(1<<20, 2)
	for i := 0; i < b.N; i++ {
		g.Add(i%3 != 0)
	}
}

package sketch

import (
	"bytes"
	"encoding"
	"errors"
	"math"
	"testing"
)

func TestHyperLogLogSmallOracles(t *testing.T) {
	h := NewHyperLogLog(14)
	if h.Estimate() != 0 {
		t.Fatalf("empty estimate %d", h.Estimate())
	}
	h.AddString("x")
	if h.Estimate() != 1 {
		t.Fatalf("one item: estimate %d", h.Estimate())
	}
	before, _ := h.MarshalBinary()
	for i := 0; i < 1000; i++ {
		h.AddString("x")
		h.Add([]byte("x"))
	}
	after, _ := h.MarshalBinary()
	if !bytes.Equal(before, after) {
		t.Fatal("duplicates changed the sketch")
	}
	// Dense form: one item in m registers gives Ertl's value, about 1.
	d := NewHyperLogLog(4)
	d.toDense()
	if d.Estimate() != 0 {
		t.Fatalf("empty dense estimate %d", d.Estimate())
	}
	d.AddUint64(7)
	if e := d.denseEstimate(); math.Abs(e-1) > 0.05 {
		t.Fatalf("dense estimate of one item %v", e)
	}
}

// The sparse key decodes to exactly the register index and ρ the dense path
// computes from the original hash.
func TestHyperLogLogSparseKeyConsistency(t *testing.T) {
	r := newSplitMix64(5)
	for p := uint8(HyperLogLogMinPrecision); p <= HyperLogLogMaxPrecision; p++ {
		h := NewHyperLogLog(p)
		for i := 0; i < 20000; i++ {
			x := r.next()
			switch i % 4 { // force long zero runs in the middle and the tail
			case 1:
				x &^= (1<<39 - 1) << (25 - 25)
			case 2:
				x &^= (1 << (64 - uint(p))) - 1
			case 3:
				x = x >> 63 << 63
			}
			idx := x >> (64 - p)
			rho := uint8(bitsLeadingZeros(x<<p|1<<(p-1))) + 1
			gi, gr := h.denseFromKey(hllSparseKey(x, p))
			if uint64(gi) != idx || gr != rho {
				t.Fatalf("p=%d x=%#x: sparse gives (%d,%d), dense (%d,%d)", p, x, gi, gr, idx, rho)
			}
		}
	}
}

func bitsLeadingZeros(x uint64) int {
	n := 0
	for i := 63; i >= 0 && x&(1<<uint(i)) == 0; i-- {
		n++
	}
	return n
}

// TestHyperLogLogAccuracy follows the specification's test style:
// cardinalities from 10^3 to 10^6 of distinct integers, five data seeds,
// mean relative error below 3σ and every single error below 4σ, where
// σ = 1.04/√m.
func TestHyperLogLogAccuracy(t *testing.T) {
	checkpoints := []int{1000, 3000, 10000, 30000, 100000, 300000, 1000000}
	for _, p := range []uint8{10, 14} {
		sigma := 1.04 / math.Sqrt(float64(uint64(1)<<p))
		sum := make([]float64, len(checkpoints))
		const seeds = 5
		for s := uint64(0); s < seeds; s++ {
			h := NewHyperLogLog(p)
			r := newSplitMix64(1000 + s)
			n := 0
			for ci, c := range checkpoints {
				for ; n < c; n++ {
					h.AddUint64(r.next())
				}
				e := relErr(float64(h.Estimate()), float64(c))
				if e > 4*sigma {
					t.Errorf("p=%d n=%d seed %d: relative error %.4f above 4σ = %.4f", p, c, s, e, 4*sigma)
				}
				sum[ci] += e
			}
		}
		for ci, c := range checkpoints {
			mean := sum[ci] / seeds
			t.Logf("p=%d n=%-8d mean |rel err| %.4f (σ = %.4f)", p, c, mean, sigma)
			if mean > 3*sigma {
				t.Errorf("p=%d n=%d: mean relative error %.4f above 3σ = %.4f", p, c, mean, 3*sigma)
			}
		}
	}
}

// Merging is exact: the union of split streams gives the same bytes as one
// sketch of the whole stream, in every sparse/dense combination.
func TestHyperLogLogMerge(t *testing.T) {
	cases := []struct {
		name   string
		na, nb int
	}{
		{"sparse+sparse", 300, 500},
		{"sparse+dense", 300, 100000},
		{"dense+sparse", 100000, 300},
		{"dense+dense", 60000, 70000},
		{"sparse+sparse→dense", 4000, 4000},
	}
	for _, c := range cases {
		a, b, all := NewHyperLogLog(12), NewHyperLogLog(12), NewHyperLogLog(12)
		r := newSplitMix64(uint64(c.na))
		for i := 0; i < c.na; i++ {
			x := r.next()
			a.AddUint64(x)
			all.AddUint64(x)
		}
		for i := 0; i < c.nb; i++ {
			x := r.next()
			b.AddUint64(x)
			all.AddUint64(x)
			if i%10 == 0 { // overlap
				a.AddUint64(x)
			}
		}
		bb, _ := b.MarshalBinary()
		if err := a.Merge(b); err != nil {
			t.Fatal(err)
		}
		if bb2, _ := b.MarshalBinary(); !bytes.Equal(bb, bb2) {
			t.Fatalf("%s: Merge modified its argument", c.name)
		}
		ea, _ := a.MarshalBinary()
		eall, _ := all.MarshalBinary()
		if !bytes.Equal(ea, eall) {
			t.Errorf("%s: merged sketch (sparse %v, est %d) differs from the union sketch (sparse %v, est %d)",
				c.name, a.IsSparse(), a.Estimate(), all.IsSparse(), all.Estimate())
		}
		if err := a.Merge(a); err != nil || a.Estimate() != all.Estimate() {
			t.Errorf("%s: self-merge changed the estimate", c.name)
		}
	}
	err := NewHyperLogLog(12).Merge(NewHyperLogLog(14))
	if !errors.Is(err, ErrIncompatible) || err.Error() != "sketch: cannot merge HyperLogLog of precision 12 with precision 14" {
		t.Fatalf("precision mismatch: %v", err)
	}
	if err := NewHyperLogLog(12).Merge(nil); err != nil {
		t.Fatal(err)
	}
}

func TestHyperLogLogRoundTrip(t *testing.T) {
	for _, n := range []int{0, 50, 200000} {
		h := NewHyperLogLog(11)
		r := newSplitMix64(9)
		for i := 0; i < n; i++ {
			h.AddUint64(r.next())
		}
		blob, err := h.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back := NewHyperLogLog(4)
		if err := back.UnmarshalBinary(blob); err != nil {
			t.Fatal(err)
		}
		if back.Estimate() != h.Estimate() || back.Precision() != 11 || back.IsSparse() != h.IsSparse() {
			t.Fatalf("n=%d: round trip estimate %d vs %d", n, back.Estimate(), h.Estimate())
		}
		for i := 0; i < 5000; i++ {
			x := r.next()
			h.AddUint64(x)
			back.AddUint64(x)
		}
		if back.Estimate() != h.Estimate() {
			t.Fatalf("n=%d: diverged after round trip", n)
		}
		c := h.Clone()
		c.AddString("only in the clone")
		if c.Estimate() == h.Estimate() && h.IsSparse() {
			t.Fatalf("n=%d: clone shares state", n)
		}
		checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewHyperLogLog(4) })
	}
	// A register above the maximum ρ is corrupt.
	h := NewHyperLogLog(4)
	h.toDense()
	blob, _ := h.MarshalBinary()
	blob[len(blob)-1] = 62
	if err := NewHyperLogLog(4).UnmarshalBinary(blob); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("register 62 at p=4: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("precision 19 did not panic")
			}
		}()
		NewHyperLogLog(19)
	}()
}

func TestHyperLogLogSparseMemory(t *testing.T) {
	h := NewHyperLogLog(14)
	r := newSplitMix64(1)
	for h.IsSparse() {
		h.AddUint64(r.next())
		// At most m list bytes (plus rounding) and an m/4-byte buffer.
		if h.sizeBytes() > 1<<14+1<<12+1<<9 {
			t.Fatalf("sparse form holds %d bytes, more than 1.25× the dense %d", h.sizeBytes(), 1<<14)
		}
	}
	h.Reset()
	if !h.IsSparse() || h.Estimate() != 0 {
		t.Fatal("Reset did not empty the sketch")
	}
}

func BenchmarkHyperLogLogAdd(b *testing.B) {
	for _, bc := range []struct {
		name  string
		dense bool
	}{{"dense", true}, {"sparse", false}} {
		b.Run(bc.name, func(b *testing.B) {
			h := NewHyperLogLog(14)
			if bc.dense {
				h.toDense()
			}
			var buf [8]byte
			for i := 0; i < b.N; i++ {
				if !bc.dense && i&4095 == 0 {
					h.Reset()
				}
				buf[0], buf[1], buf[2], buf[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
				h.Add(buf[:])
			}
		})
	}
}

func BenchmarkHyperLogLogEstimate(b *testing.B) {
	h := NewHyperLogLog(14)
	for i := 0; i < 1000000; i++ {
		h.AddUint64(uint64(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Estimate()
	}
}

package sketch

import (
	"encoding"
	"errors"
	"testing"
)

func TestBloomSizingOracle(t *testing.T) {
	m, k := BloomSize(1000, 0.01)
	if m != 9586 || k != 7 {
		t.Fatalf("BloomSize(1000, 0.01) = %d bits, %d hashes; want 9586 and 7", m, k)
	}
	if fp := BloomFalsePositiveRate(9586, 7, 1000); !near(fp, 0.010035, 1e-3) {
		t.Errorf("FP with k=7: %v, want 0.010035", fp)
	}
	if fp := BloomFalsePositiveRate(9586, 6, 1000); !near(fp, 0.010139, 1e-3) {
		t.Errorf("FP with k=6: %v, want 0.010139", fp)
	}
}

func TestBloomBehaviour(t *testing.T) {
	b := NewBloomForCapacity(1000, 0.01, 3)
	if b.Bits() != 9586 || b.Hashes() != 7 {
		t.Fatalf("shape %d/%d", b.Bits(), b.Hashes())
	}
	for i := uint64(0); i < 1000; i++ {
		b.AddUint64(i)
	}
	for i := uint64(0); i < 1000; i++ {
		if !b.ContainsUint64(i) {
			t.Fatalf("false negative for %d", i)
		}
	}
	fp := 0
	const probes = 200000
	for i := uint64(1 << 32); i < 1<<32+probes; i++ {
		if b.ContainsUint64(i) {
			fp++
		}
	}
	rate := float64(fp) / probes
	t.Logf("false-positive rate %.5f (expected %.5f, fill %.3f)", rate, b.EstimatedFalsePositiveRate(), b.FillRatio())
	if rate < 0.007 || rate > 0.014 {
		t.Errorf("false-positive rate %.5f far from 0.01", rate)
	}
	if c := b.EstimatedCount(); relErr(c, 1000) > 0.05 {
		t.Errorf("estimated count %.1f, want about 1000", c)
	}
	b.AddString("hello")
	if !b.ContainsString("hello") || !b.Contains([]byte("hello")) {
		t.Fatal("string item missing")
	}
	b.Add([]byte("bytes"))
	if !b.ContainsString("bytes") {
		t.Fatal("byte item missing")
	}
}

func TestBloomMergeAndRoundTrip(t *testing.T) {
	a, b := NewBloom(1000, 4, 1), NewBloom(1000, 4, 1)
	for i := uint64(0); i < 50; i++ {
		a.AddUint64(i)
		b.AddUint64(i + 1000)
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < 50; i++ {
		if !a.ContainsUint64(i) || !a.ContainsUint64(i+1000) {
			t.Fatal("union lost an item")
		}
	}
	if err := a.Merge(NewBloom(1000, 5, 1)); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("shape mismatch: %v", err)
	}
	blob, _ := a.MarshalBinary()
	back := NewBloom(1, 1, 0)
	if err := back.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < 50; i++ {
		if !back.ContainsUint64(i + 1000) {
			t.Fatal("round trip lost an item")
		}
	}
	checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewBloom(1, 1, 0) })
}

func BenchmarkBloomAdd(b *testing.B) {
	f := NewBloomForCapacity(1000000, 0.01, 1)
	for i := 0; i < b.N; i++ {
		f.AddUint64(uint64(i))
	}
}

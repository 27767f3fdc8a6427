package sketch

import (
	"encoding"
	"errors"
	"testing"
)

// The specification's AMS oracle stream: counts a:5, b:4, c:3, d:3, so
// F2 = 59. With many buckets the four items rarely collide, so the median
// row is exact.
func TestAMSOracle(t *testing.T) {
	a := NewAMS(1024, 9, 1)
	for _, c := range "abcbdacdabdcaab" {
		a.AddString(string(c), 1)
	}
	if got := a.Estimate(); got != 59 {
		t.Fatalf("F2 = %v, want 59", got)
	}
	// The sampling-based AMS estimator n(2r − 1) averages to F2 exactly
	// over all positions.
	s := "abcbdacdabdcaab"
	sum := 0
	for i := range s {
		r := 0
		for j := i; j < len(s); j++ {
			if s[j] == s[i] {
				r++
			}
		}
		sum += len(s) * (2*r - 1)
	}
	if sum/len(s) != 59 || sum%len(s) != 0 {
		t.Fatalf("sampling estimator average %d/%d", sum, len(s))
	}
}

func TestAMSAccuracyAndTurnstile(t *testing.T) {
	stream, freq := zipfStream(100000, 20000, 1.0, 5)
	var f2 float64
	for _, f := range freq {
		f2 += float64(f) * float64(f)
	}
	for seed := uint64(0); seed < 3; seed++ {
		a := NewAMSWithError(0.1, 0.05, seed)
		if a.Width() != 600 || a.Depth() != 51 {
			t.Fatalf("NewAMSWithError(0.1, 0.05) = %d×%d", a.Width(), a.Depth())
		}
		for _, x := range stream {
			a.AddUint64(x, 1)
		}
		e := relErr(a.Estimate(), f2)
		t.Logf("seed %d: F2 %.0f, estimate %.0f, relative error %.4f", seed, f2, a.Estimate(), e)
		if e > 0.1 {
			t.Errorf("seed %d: relative error %.4f above ε = 0.1", seed, e)
		}
		// Deleting every occurrence brings the sketch back to zero.
		for x, f := range freq {
			a.AddUint64(x, -int64(f))
		}
		if a.Estimate() != 0 {
			t.Errorf("seed %d: estimate %v after deleting everything", seed, a.Estimate())
		}
	}
}

func TestAMSMergeAndRoundTrip(t *testing.T) {
	a, b, all := NewAMS(64, 5, 3), NewAMS(64, 5, 3), NewAMS(64, 5, 3)
	for i := 0; i < 500; i++ {
		key := []byte{byte(i % 29)}
		all.Add(key, int64(i%7)-2)
		if i%3 == 0 {
			a.Add(key, int64(i%7)-2)
		} else {
			b.Add(key, int64(i%7)-2)
		}
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Estimate() != all.Estimate() {
		t.Fatalf("merged %v vs whole %v", a.Estimate(), all.Estimate())
	}
	if err := a.Merge(NewAMS(64, 4, 3)); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("shape mismatch: %v", err)
	}
	if err := a.Merge(a); err != nil || a.Estimate() != 4*all.Estimate() {
		t.Fatalf("self-merge: %v", a.Estimate())
	}
	blob, _ := all.MarshalBinary()
	back := NewAMS(1, 1, 0)
	if err := back.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	back.AddUint64(77, 5)
	all.AddUint64(77, 5)
	if back.Estimate() != all.Estimate() {
		t.Fatal("round trip lost state")
	}
	checkDecodeErrors(t, blob, func() encoding.BinaryUnmarshaler { return NewAMS(1, 1, 0) })
}

func BenchmarkAMSAdd(b *testing.B) {
	a := NewAMSWithError(0.1, 0.05, 1) // 600 × 51
	for i := 0; i < b.N; i++ {
		a.AddUint64(uint64(i&0xffff), 1)
	}
}

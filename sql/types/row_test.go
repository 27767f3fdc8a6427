package types

import (
	"math/rand/v2"
	"testing"
)

// randRow returns a random row type, random values of it, and the row of
// those values written into arena.
func randRow(t *testing.T, rng *rand.Rand, arena *Arena) (*RowType, []Value, Row) {
	t.Helper()
	rt := randRowType(rng, 2)
	vals := make([]Value, rt.Len())
	for i := range vals {
		vals[i] = randValue(rng, rt.FieldType(i))
	}
	r, err := BuildRow(rt, arena, vals...)
	if err != nil {
		t.Fatalf("%s: build %v: %v", rt, vals, err)
	}
	return rt, vals, r
}

// TestRowRoundTripRandom builds random rows of random types and checks that
// they read back equal, survive Bytes/RowFromBytes, encode equal values to
// equal bytes, and that truncated or corrupted bytes give an error, never a
// panic.
func TestRowRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	arena := NewArena(1 << 10)
	for iter := 0; iter < 3000; iter++ {
		rt, vals, r := randRow(t, rng, arena)
		got := RowValues(rt, r)
		for i := range vals {
			if !valueEqual(rt.FieldType(i), vals[i], got[i]) {
				t.Fatalf("%s: field %d wrote %#v read %#v", rt, i, vals[i], got[i])
			}
			if (vals[i] == nil) != r.IsNull(i) {
				t.Fatalf("%s: field %d null %v", rt, i, r.IsNull(i))
			}
		}
		// Round trip through bytes.
		back, err := RowFromBytes(rt, r.Bytes())
		if err != nil {
			t.Fatalf("%s: RowFromBytes of a written row: %v", rt, err)
		}
		if back != r {
			t.Fatalf("%s: RowFromBytes gives another row", rt)
		}
		// Equal values, written again from what was read, give equal bytes.
		again, err := BuildRow(rt, nil, got...)
		if err != nil {
			t.Fatal(err)
		}
		if again != r {
			t.Fatalf("%s: equal values give different bytes:\n%x\n%x", rt, r.Encoding(), again.Encoding())
		}
		if c := r.Clone(); c != r {
			t.Fatal("clone differs")
		}
		// Truncations and corruptions: never a panic.
		b := r.Bytes()
		for k := 0; k < 40 && len(b) > 0; k++ {
			cut := rng.IntN(len(b))
			if _, err := RowFromBytes(rt, b[:cut]); err == nil && rt.Len() > 0 {
				t.Fatalf("%s: truncation to %d of %d bytes accepted", rt, cut, len(b))
			}
		}
		for k := 0; k < 20 && len(b) > 0; k++ {
			c := append([]byte(nil), b...)
			c[rng.IntN(len(c))] ^= byte(1 << rng.IntN(8))
			if r2, err := RowFromBytes(rt, c); err == nil {
				// Accepted: it must then read without a panic.
				_ = RowValues(rt, r2)
			}
		}
	}
}

// TestRowPrefix reads the first k fields of random rows through Prefix:
// where it answers, each field reads as in the row of the first k fields
// written anew, and it answers exactly when the two rows' null bitmaps
// have one size.
func TestRowPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	answered := 0
	for iter := 0; iter < 1500; iter++ {
		rt, vals, r := randRow(t, rng, nil)
		for k := 0; k <= rt.Len(); k++ {
			p, ok := r.Prefix(k)
			if want := (k+63)/64 == (rt.Len()+63)/64; ok != want {
				t.Fatalf("%s: Prefix(%d) answers %v, want %v", rt, k, ok, want)
			}
			if !ok {
				continue
			}
			answered++
			pt := MustRowType(rt.Fields()[:k]...)
			if p.Len() != k {
				t.Fatalf("%s: Prefix(%d) has %d fields", rt, k, p.Len())
			}
			got, want := RowValues(pt, p), vals[:k]
			for i := range want {
				if !valueEqual(pt.FieldType(i), want[i], got[i]) || (want[i] == nil) != p.IsNull(i) {
					t.Fatalf("%s: Prefix(%d) field %d reads %#v, want %#v", rt, k, i, got[i], want[i])
				}
			}
		}
	}
	if answered == 0 {
		t.Fatal("Prefix never answered")
	}
	if _, ok := (Row{}).Prefix(-1); ok {
		t.Error("Prefix(-1) answers")
	}
}

package types

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPositionCopierMatchesCopyField starts rows with a PositionCopier from
// random rows of random types, sets the other fields from a second row, in
// a random order, and compares each row with the one written field by
// field (Reset, CopyFieldRef, CopyField), also after a row left unfinished:
// they are equal, byte for byte.
// Output types have fewer, as many or more fields than the input's, with
// bitmaps of the same size.
func TestPositionCopierMatchesCopyField(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	arena := NewArena(1 << 10)
	tried := 0
	for iter := 0; iter < 3000; iter++ {
		rt, _, r := randRow(t, rng, arena)
		other, _, r2 := randRow(t, rng, arena)
		if rt.Len() == 0 || other.Len() == 0 {
			continue
		}
		// Output field i is field i of rt, copied, or a field of other,
		// set after the copier starts the row.
		words := (rt.Len() + 63) / 64
		m := 64*(words-1) + 1 + rng.IntN(64)
		var fs []Field
		var kept []int
		from := map[int]int{}
		for i := 0; i < m; i++ {
			if i < rt.Len() && rng.IntN(3) > 0 {
				fs = append(fs, rt.Field(i))
				kept = append(kept, i)
				continue
			}
			j := rng.IntN(other.Len())
			f := other.Field(j)
			f.Name = fmt.Sprintf("o%d", i)
			fs = append(fs, f)
			if rng.IntN(4) > 0 { // the others stay NULL
				from[i] = j
			}
		}
		out := MustRowType(fs...)
		c, err := NewPositionCopier(rt, out, kept)
		if err != nil {
			t.Fatalf("%s into %s: %v", rt, out, err)
		}
		tried++
		got, want := NewRowWriter(out, arena), NewRowWriter(out, arena)
		for round := 0; round < 3; round++ { // the later ones on used writers
			if round == 2 {
				// A row of rt with other values.
				_, r = randRowOf(rng, rt, arena)
			}
			if round == 1 {
				// A row left unfinished: Start begins anew.
				for i, j := range from {
					got.CopyField(i, r2, j)
				}
			}
			c.Start(got, r)
			for _, i := range kept {
				want.CopyFieldRef(i, r, i)
			}
			for _, i := range rng.Perm(m) {
				if j, ok := from[i]; ok {
					got.CopyField(i, r2, j)
					want.CopyField(i, r2, j)
				}
			}
			g, w := got.Finish(), want.Finish()
			if g != w {
				t.Fatalf("%s into %s (kept %v): the copier gives %x, CopyField %x", rt, out, kept, g.Bytes(), w.Bytes())
			}
		}
	}
	if tried < 1000 {
		t.Fatalf("only %d types tried", tried)
	}
}

// TestPositionCopierRefuses checks the types a copier refuses: bitmaps of
// other sizes, and fields of other types or out of range.
func TestPositionCopierRefuses(t *testing.T) {
	small := MustRowType(F("a", BigInt()), F("b", String()))
	wide := make([]Field, 70)
	for i := range wide {
		wide[i] = F(fmt.Sprintf("f%d", i), BigInt())
	}
	for _, tc := range []struct {
		name    string
		in, out *RowType
		fields  []int
	}{
		{"bitmaps", small, MustRowType(wide...), []int{0}},
		{"type", small, MustRowType(F("a", BigInt()), F("b", BigInt())), []int{1}},
		{"range", small, MustRowType(F("a", BigInt())), []int{1}},
		{"negative", small, small, []int{-1}},
	} {
		if _, err := NewPositionCopier(tc.in, tc.out, tc.fields); err == nil {
			t.Errorf("%s: NewPositionCopier(%s, %s, %v) = nil error", tc.name, tc.in, tc.out, tc.fields)
		}
	}
}

// randRowOf returns a random row of rt.
func randRowOf(rng *rand.Rand, rt *RowType, arena *Arena) ([]Value, Row) {
	vals := make([]Value, rt.Len())
	for i := range vals {
		vals[i] = randValue(rng, rt.FieldType(i))
	}
	r, err := BuildRow(rt, arena, vals...)
	if err != nil {
		panic(fmt.Sprintf("%s: build %v: %v", rt, vals, err))
	}
	return vals, r
}

// TestPositionCopierOtherRows copies from a row with fewer fields than the
// copier's input type, field by field, into a writer left with a row
// unfinished, and refuses a writer of another type.
func TestPositionCopierOtherRows(t *testing.T) {
	in := MustRowType(F("a", BigInt()), F("b", String()), F("c", BigInt()))
	short := MustRowType(F("a", BigInt()), F("b", String()))
	c, err := NewPositionCopier(in, in, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	arena := NewArena(0)
	r, err := BuildRow(short, arena, int64(7), "seven")
	if err != nil {
		t.Fatal(err)
	}
	got, want := NewRowWriter(in, arena), NewRowWriter(in, arena)
	got.SetInt64(0, 1) // a row left unfinished
	got.SetInt64(2, 3)
	c.Start(got, r)
	want.CopyFieldRef(0, r, 0)
	want.CopyFieldRef(1, r, 1)
	if g, w := got.Finish(), want.Finish(); g != w {
		t.Fatalf("from a row of %s: %x, want %x", short, g.Bytes(), w.Bytes())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a writer of another type: no panic")
		}
	}()
	c.Start(NewRowWriter(short, arena), r)
}

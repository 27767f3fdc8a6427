package types

import (
	"math/rand/v2"
	"testing"
)

// TestCopyFieldMatchesSetValue projects random rows of random types onto
// shuffled subsets of their fields with CopyField, with CopyFieldRef and
// with SetValue(FieldValue): the rows are equal, byte for byte.
func TestCopyFieldMatchesSetValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	arena := NewArena(1 << 10)
	for iter := 0; iter < 2000; iter++ {
		rt, _, r := randRow(t, rng, arena)
		if rt.Len() == 0 {
			continue
		}
		// A projection: some of the fields, in a random order, some twice.
		var src []int
		var fs []Field
		for k := 0; k < 1+rng.IntN(rt.Len()+2); k++ {
			j := rng.IntN(rt.Len())
			f := rt.Field(j)
			f.Name = f.Name + "_" + string(rune('a'+k%26)) + string(rune('a'+k/26))
			src, fs = append(src, j), append(fs, f)
		}
		pt := MustRowType(fs...)
		typed, boxed, ref := NewRowWriter(pt, arena), NewRowWriter(pt, arena), NewRowWriter(pt, arena)
		for round := 0; round < 2; round++ { // the second on reused writers
			order := rng.Perm(len(src))
			for _, i := range order {
				typed.CopyField(i, r, src[i])
				ref.CopyFieldRef(i, r, src[i])
				if err := boxed.SetValue(i, FieldValue(rt, r, src[i])); err != nil {
					t.Fatalf("%s: SetValue: %v", pt, err)
				}
			}
			got, byRef, want := typed.Finish(), ref.Finish(), boxed.Finish()
			if got != want {
				t.Fatalf("%s from %s (fields %v, order %v): CopyField gives %x, SetValue %x", pt, rt, src, order, got.Bytes(), want.Bytes())
			}
			if byRef != want {
				t.Fatalf("%s from %s (fields %v, order %v): CopyFieldRef gives %x, SetValue %x", pt, rt, src, order, byRef.Bytes(), want.Bytes())
			}
		}
	}
}

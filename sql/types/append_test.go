package types

import (
	"math/rand/v2"
	"testing"
)

// TestAppendInt64 checks that a row with a BIGINT appended by
// Arena.AppendInt64 is the row a RowWriter builds of the same values, for
// random row types (nested ones, NULLs, and rows whose null bitmap grows a
// word with the new field).
func TestAppendInt64(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	a := NewArena(0)
	// The appended rows are written over used memory.
	ra := NewRecyclingArena(1 << 16)
	for iter := range 3000 {
		in := randRowType(rng, 2)
		if iter%50 == 0 {
			// 63 and 64 fields: the new field is the 64th, or starts a
			// second bitmap word.
			fs := make([]Field, 63+iter/50%2)
			for i := range fs {
				fs[i] = F("f"+string(rune('a'+i%26))+string(rune('a'+i/26)), randType(rng, 1))
			}
			in = MustRowType(fs...)
		}
		fields := append(in.Fields(), F("rank_number", BigInt()))
		out := MustRowType(fields...)
		vals := make([]Value, in.Len())
		w := NewRowWriter(in, a)
		for i := range vals {
			vals[i] = randValue(rng, in.FieldType(i))
			if err := w.SetValue(i, vals[i]); err != nil {
				t.Fatal(err)
			}
		}
		r := w.Finish()
		v := rng.Int64() - 1<<62
		want := NewRowWriter(out, a)
		for i, x := range vals {
			if err := want.SetValue(i, x); err != nil {
				t.Fatal(err)
			}
		}
		want.SetInt64(in.Len(), v)
		ra.Rewind()
		junk := ra.alloc(1 << 15)
		for i := range junk {
			junk[i] = 0xff
		}
		ra.Rewind()
		if got, w := ra.AppendInt64(out, r, v), want.Finish(); got != w {
			t.Fatalf("row type %s: appended row %s, want %s", out, FormatRow(out, got), FormatRow(out, w))
		}
	}
}

package types

import "testing"

// TestSetStringRef checks that a string set by reference ends up in the row
// as SetString puts it, mixed with copied fields, re-set fields, NULLs,
// nested rows and AppendTo, and that a row written after Reset does not hold it.
func TestSetStringRef(t *testing.T) {
	rt := MustRowType(F("a", String()), F("n", BigInt()), F("b", String()), F("c", String()), F("r", RowOf(F("x", String()))))
	copied := NewRowWriter(rt, NewArena(0))
	ref := NewRowWriter(rt, NewArena(0))
	nested := NewRowWriter(rt.FieldType(4).Row(), nil)
	write := func(w *RowWriter, set func(w *RowWriter, i int, s string)) Row {
		set(w, 2, "first")
		set(w, 0, "alpha")
		w.SetInt64(1, 7)
		set(w, 2, "beta") // set again: the later value counts
		set(w, 3, "gone")
		w.SetNull(3)
		nested.Reset()
		nested.SetStringRef(0, "inner")
		w.SetRowFrom(4, nested)
		return w.Finish()
	}
	want := write(copied, (*RowWriter).SetString)
	got := write(ref, (*RowWriter).SetStringRef)
	if got != want {
		t.Fatalf("row by reference %q differs from the copied row %q", got.b, want.b)
	}
	if got.String(0) != "alpha" || got.String(2) != "beta" || !got.IsNull(3) || got.Row(4, rt.FieldType(4).Row()).String(0) != "inner" {
		t.Fatalf("row by reference reads %q, %q, null=%v", got.String(0), got.String(2), got.IsNull(3))
	}
	// AppendTo leaves the writer as it is; Reset then forgets the references.
	ref.SetStringRef(0, "x")
	if b := ref.AppendTo(nil); b == nil || ref.refs[0] != "x" {
		t.Fatalf("AppendTo: %q, refs %q", b, ref.refs)
	}
	ref.Reset()
	if r := ref.Finish(); r.Len() != 0 && !r.IsNull(0) {
		t.Fatalf("a reset writer wrote field 0 = %q", r.String(0))
	}
}

func TestEncoded(t *testing.T) {
	rt := MustRowType(F("a", String()), F("n", BigInt()))
	w := NewRowWriter(rt, NewArena(0))
	w.SetStringRef(0, "alpha")
	w.SetInt64(1, 7)
	if got, want := w.Encoded(), string(w.AppendTo(nil)); got != want {
		t.Fatalf("Encoded() = %q, want AppendTo's %q", got, want)
	}
	if r := w.Finish(); r.String(0) != "alpha" || r.Int64(1) != 7 {
		t.Fatalf("Encoded changed the writer: %q %d", r.String(0), r.Int64(1))
	}
	if got := NewRowWriter(MustRowType(), nil).Encoded(); got != "" {
		t.Fatalf("a row of no fields encodes as %q", got)
	}
}

// TestResetLeavesNoTrace checks that a row written after others, with
// fields left NULL that they had set (fixed, variable, by reference, and
// set then NULLed), is byte for byte the row a fresh writer writes: Reset
// leaves old slots and lengths behind, and encoding must not show them.
func TestResetLeavesNoTrace(t *testing.T) {
	rt := MustRowType(F("a", String()), F("n", BigInt()), F("b", String()), F("d", DecimalType(25, 2)), F("m", BigInt()))
	used := NewRowWriter(rt, NewArena(0))
	for k := 0; k < 3; k++ {
		used.SetString(0, "alpha")
		used.SetInt64(1, int64(k+1))
		used.SetStringRef(2, "beta")
		if err := used.SetDecimal(3, MustParseDecimal("123.45")); err != nil {
			t.Fatal(err)
		}
		used.SetInt64(4, 9)
		used.Finish()
	}
	write := func(w *RowWriter) Row {
		w.SetString(2, "gamma")
		w.SetInt64(4, 5)
		w.SetString(0, "x")
		w.SetNull(0)
		return w.Finish()
	}
	got, want := write(used), write(NewRowWriter(rt, NewArena(0)))
	if got != want {
		t.Fatalf("row after Reset %q differs from a fresh writer's %q", got.b, want.b)
	}
	if !got.IsNull(1) || !got.IsNull(3) || got.Int64(1) != 0 || got.String(2) != "gamma" {
		t.Fatalf("row after Reset reads n null=%v (%d), d null=%v, b=%q", got.IsNull(1), got.Int64(1), got.IsNull(3), got.String(2))
	}
}

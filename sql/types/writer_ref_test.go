package types

import "testing"

// TestSetStringRef checks that a string set by reference ends up in the row
// as SetString puts it, mixed with copied fields, re-set fields, NULLs,
// nested rows and AppendTo, and that Reset forgets it.
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
	if ref.hasRefs || ref.refs[0] != "" {
		t.Fatalf("Reset kept references %q", ref.refs)
	}
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

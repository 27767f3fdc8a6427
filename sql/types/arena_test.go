package types

import (
	"testing"
	"unsafe"
)

// TestScratchArena checks that a scratch arena writes every row into the
// same memory, each row right when read before the next is written.
func TestScratchArena(t *testing.T) {
	rt := MustRowType(F("id", BigInt()), F("name", String()))
	a := NewScratchArena()
	w := NewRowWriter(rt, a)
	var starts []*byte
	for i, name := range []string{"ab", "a longer name than the first", "c"} {
		w.SetInt64(0, int64(i))
		w.SetString(1, name)
		r := w.Finish()
		if got := r.String(1); got != name {
			t.Fatalf("row %d: name %q, want %q", i, got, name)
		}
		if got := r.Int64(0); got != int64(i) {
			t.Fatalf("row %d: id %d", i, got)
		}
		starts = append(starts, unsafe.StringData(r.b))
	}
	if starts[0] != starts[1] || starts[1] != starts[2] {
		t.Fatal("the rows of a scratch arena are not in the same memory")
	}
}

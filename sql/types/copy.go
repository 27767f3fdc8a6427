package types

import (
	"fmt"
	"slices"
	"unsafe"
)

// CopyField sets field i to the value of field j of r, NULL as NULL,
// without boxing it: the typed copy of SetValue(i, FieldValue(rt, r, j)).
// Field j of r must be of the type of field i (a projection of the same
// columns); a nested ROW, ARRAY or MAP is copied as its bytes are.
func (w *RowWriter) CopyField(i int, r Row, j int) { w.copyField(i, r, j, false) }

// CopyFieldRef is CopyField keeping the bytes of a field of variable size
// as SetStringRef keeps a string: they are copied once, by Finish or
// AppendTo, so r's memory must stay as it is until then (a row's does).
func (w *RowWriter) CopyFieldRef(i int, r Row, j int) { w.copyField(i, r, j, true) }

// copyField is CopyField, or CopyFieldRef if ref.
func (w *RowWriter) copyField(i int, r Row, j int, ref bool) {
	if r.IsNull(j) {
		w.setNull(i)
		return
	}
	if !w.isVar[i] {
		w.setFixed(i, r.slot(j))
		return
	}
	if v := varAt(r.b, r.slot(j)); ref {
		w.SetStringRef(i, v)
	} else {
		w.setVar(i, v)
	}
}

// PositionCopier starts rows that take some of their fields from a row at
// the same positions: a projection that keeps columns where they are
// (auction, bidder, price*k, dateTime, extra over a bid's auction, bidder,
// price, dateTime, extra). It copies the input's null bitmap and slots at
// once instead of field by field.
type PositionCopier struct {
	// n is the number of fields of the input rows, out that of the
	// output rows; fixed is the size of the bitmap and slots copied.
	n, out, fixed int
	// fields are the fields copied.
	fields []int
	// keep has the bits of the fields copied, per null bitmap word.
	keep []uint64
	// vars are the fields copied that are of variable size.
	vars []int
}

// NewPositionCopier returns the copier of fields of rows of type rt into
// rows of type out, whose null bitmaps have the same size (both types have
// up to 64 fields, or both 65 to 128, and so on); field i of out must be
// of the type of field i of rt (up to nullability) for each i in fields.
func NewPositionCopier(rt, out *RowType, fields []int) (*PositionCopier, error) {
	if rt.bitmapBytes != out.bitmapBytes {
		return nil, fmt.Errorf("types: rows of %d fields copied into rows of %d: their null bitmaps differ in size", rt.Len(), out.Len())
	}
	c := &PositionCopier{n: rt.Len(), out: out.Len(), fields: slices.Clone(fields), fixed: min(rt.fixedSize, out.fixedSize), keep: make([]uint64, rt.bitmapBytes/8)}
	for _, i := range fields {
		if i < 0 || i >= rt.Len() || i >= out.Len() || !rt.FieldType(i).EqualIgnoringNullability(out.FieldType(i)) {
			return nil, fmt.Errorf("types: field %d of %s is not copied as field %d of %s: no such field, or another type", i, rt, i, out)
		}
		c.keep[i>>6] |= 1 << (i & 63)
		if slices.Contains(out.varFields, i) {
			c.vars = append(c.vars, i)
		}
	}
	return c, nil
}

// Start resets w to a row whose copied fields are those of r, as
// CopyFieldRef(i, r, i) sets them, and whose other fields are NULL. As with
// CopyFieldRef, r's memory must stay as it is until the row is finished.
// w must write rows of the copier's output type; r is of its input type (a
// row of another number of fields is copied field by field).
func (c *PositionCopier) Start(w *RowWriter, r Row) {
	if w.n != c.out {
		panic(fmt.Sprintf("types: a copier into rows of %d fields starts a row of %d", c.out, w.n))
	}
	if int(r.n) != c.n {
		w.Reset()
		for _, i := range c.fields {
			w.CopyFieldRef(i, r, i)
		}
		return
	}
	w.vbuf = w.vbuf[:0]
	w.ordered, w.lastVar = true, -1
	if c.fixed == 0 {
		return
	}
	if nativeLE {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&w.fixed[0])), c.fixed), r.b)
	} else {
		for k := range c.fixed / 8 {
			w.fixed[k] = le64(r.b, 8*k)
		}
	}
	for k, word := range c.keep {
		w.nulls[k] = w.nulls[k]&word | w.full[k]&^word
	}
	for _, i := range c.vars {
		if w.nulls[i>>6]&(1<<(i&63)) == 0 {
			w.SetStringRef(i, varAt(r.b, w.slots[i]))
		}
	}
}

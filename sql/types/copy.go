package types

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

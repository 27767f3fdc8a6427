package types

import (
	"encoding/binary"
	"fmt"
)

// AppendInt64 returns the row r with the BIGINT (or other 64-bit fixed
// width) value v as one more field, in the arena: r holds the first
// r.Len() fields of rt, and the new field is field r.Len() of rt. The
// bytes of r are copied once, as a whole, rather than field by field
// through a RowWriter: what a rank's output row (the input row and its rank
// number) costs.
func (a *Arena) AppendInt64(rt *RowType, r Row, v int64) Row {
	n := int(r.n)
	m := n + 1
	if rt.Len() != m || !rt.fields[n].Type.IsFixed() {
		panic(fmt.Sprintf("types: AppendInt64 of a row of %d fields to a row type of %d fields", n, rt.Len()))
	}
	oldBM, newBM := bitmapBytes(n), bitmapBytes(m)
	oldFS, newFS := oldBM+8*n, newBM+8*m
	delta := newFS - oldFS
	dst := a.alloc(len(r.b) + delta)
	copy(dst[:oldBM], r.b[:oldBM])
	clear(dst[oldBM:newBM])
	dst[n>>3] &^= 1 << (n & 7)
	copy(dst[newBM:newBM+8*n], r.b[oldBM:oldFS])
	for _, i := range rt.varFields {
		if i >= n {
			break
		}
		if r.b[i>>3]&(1<<(i&7)) != 0 {
			continue
		}
		o := newBM + 8*i
		binary.LittleEndian.PutUint64(dst[o:], binary.LittleEndian.Uint64(dst[o:])+uint64(delta)<<32)
	}
	binary.LittleEndian.PutUint64(dst[newBM+8*n:], uint64(v))
	copy(dst[newFS:], r.b[oldFS:])
	return Row{b: unsafeString(dst), n: int32(m)}
}

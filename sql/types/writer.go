package types

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// Canonical bit patterns of the NaNs.
const (
	canonicalNaN64 = 0x7ff8000000000000
	canonicalNaN32 = 0x7fc00000
)

// Float64Bits returns the canonical bits of f: -0.0 as +0.0 and every NaN
// as one NaN, as stored in rows and keys.
func Float64Bits(f float64) uint64 {
	if f == 0 {
		return 0
	}
	if f != f {
		return canonicalNaN64
	}
	return math.Float64bits(f)
}

// Float32Bits returns the canonical bits of f (see Float64Bits).
func Float32Bits(f float32) uint32 {
	if f == 0 {
		return 0
	}
	if f != f {
		return canonicalNaN32
	}
	return math.Float32bits(f)
}

// cells are the fields of a row or the elements of an array being written:
// null bits, slots and the variable-length bytes of each cell.
type cells struct {
	nulls  []uint64
	slots  []uint64
	vstart []int32
	vlen   []int32
	vbuf   []byte
	// ordered says the variable-length bytes in vbuf are exactly those of
	// the non-NULL variable cells in cell order, without gaps: the
	// canonical variable part. lastVar is the last variable cell set.
	ordered bool
	lastVar int
}

// varSet notes that cell i gets variable-length bytes at the end of vbuf.
func (c *cells) varSet(i int) {
	if i <= c.lastVar {
		c.ordered = false
	}
	c.lastVar = i
}

// appendVar appends s to vbuf, reslicing in place when there is room so
// that no pointer is stored (no GC write barrier on the hot path).
func (c *cells) appendVar(s string) {
	n := len(c.vbuf)
	if cap(c.vbuf)-n >= len(s) {
		c.vbuf = c.vbuf[:n+len(s)]
		copy(c.vbuf[n:], s)
		return
	}
	c.vbuf = append(c.vbuf, s...)
}

func (c *cells) setFixed(i int, v uint64) {
	c.nulls[i>>6] &^= 1 << (i & 63)
	c.slots[i] = v
}

func (c *cells) setNull(i int) {
	wasSet := !c.isNull(i)
	c.nulls[i>>6] |= 1 << (i & 63)
	c.slots[i] = 0
	if wasSet && c.vlen != nil && i < len(c.vlen) && c.vlen[i] != 0 {
		c.ordered = false // its bytes stay in vbuf as a gap
		c.vlen[i] = 0
	}
}

func (c *cells) isNull(i int) bool { return c.nulls[i>>6]&(1<<(i&63)) != 0 }

func (c *cells) setVar(i int, s string) {
	c.nulls[i>>6] &^= 1 << (i & 63)
	c.varSet(i)
	c.vstart[i] = int32(len(c.vbuf))
	c.appendVar(s)
	c.vlen[i] = int32(len(s))
}

func (c *cells) setVarBytes(i int, b []byte) { c.setVar(i, unsafeString(b)) }

// appendInt64Bytes appends to vbuf what the function appendInt64Bytes
// appends, writing a whole word at its end and keeping the bytes of v it
// needs: vbuf is the writer's own, so the bytes past its length are free
// to write.
func (c *cells) appendInt64Bytes(v int64) {
	u := uint64(v)
	if v < 0 {
		u = ^u
	}
	n := (bits.Len64(u) + 8) / 8
	l := len(c.vbuf)
	if cap(c.vbuf)-l < 8 {
		c.vbuf = slices.Grow(c.vbuf, 8)
	}
	binary.BigEndian.PutUint64(c.vbuf[l:l+8], uint64(v)<<(64-8*n))
	c.vbuf = c.vbuf[:l+n]
}

// beginVar and endVar bracket bytes appended to vbuf directly as cell i.
func (c *cells) beginVar(i int) {
	c.nulls[i>>6] &^= 1 << (i & 63)
	c.varSet(i)
	c.vstart[i] = int32(len(c.vbuf))
}

func (c *cells) endVar(i int) { c.vlen[i] = int32(len(c.vbuf)) - c.vstart[i] }

func (c *cells) setTimestamp(i int, ts Timestamp, precision int) {
	ts = ts.Truncate(precision)
	if precision <= MaxCompactTimestampPrecision {
		c.setFixed(i, uint64(ts.Millis))
		return
	}
	c.beginVar(i)
	c.vbuf = binary.LittleEndian.AppendUint64(c.vbuf, uint64(ts.Millis))
	c.vbuf = binary.LittleEndian.AppendUint32(c.vbuf, uint32(ts.NanoOfMilli))
	c.endVar(i)
}

func (c *cells) setDecimal(i int, d Decimal, t Type) error {
	p, s := int(t.p), int(t.s)
	if d.b == nil && int(d.scale) == s {
		if p > MaxCompactPrecision {
			// Every int64 fits 19 digits or more: its bytes as they are.
			c.beginVar(i)
			c.appendInt64Bytes(d.u)
			c.endVar(i)
			return nil
		}
		if d.u < pow10[p] && d.u > -pow10[p] {
			c.setFixed(i, uint64(d.u))
			return nil
		}
	}
	f, err := d.Fit(p, s)
	if err != nil {
		c.setNull(i)
		return err
	}
	if p <= MaxCompactPrecision {
		c.setFixed(i, uint64(f.u))
		return nil
	}
	c.beginVar(i)
	c.vbuf = f.appendBytes(c.vbuf)
	c.endVar(i)
	return nil
}

// size returns the encoded size of the cells with var fields vars (nil
// means all cells are variable length when allVar).
func (c *cells) varSize(n int, vars []int, allVar bool) int {
	size := 0
	if allVar {
		for i := 0; i < n; i++ {
			if !c.isNull(i) {
				size += int(c.vlen[i])
			}
		}
		return size
	}
	for _, i := range vars {
		if !c.isNull(i) {
			size += int(c.vlen[i])
		}
	}
	return size
}

// encode writes n cells into dst, which has exactly the room: the bitmap
// at 0, the slots, then the variable part. base is the offset of dst in
// the value whose start offsets count from.
func (c *cells) encode(dst []byte, base, n int, vars []int, allVar bool) {
	bm := bitmapBytes(n)
	for w := 0; w < bm>>3; w++ {
		binary.LittleEndian.PutUint64(dst[8*w:], c.nulls[w])
	}
	slots := dst[bm:]
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint64(slots[8*i:], c.slots[i])
	}
	off := bm + 8*n
	put := func(i int) {
		if c.isNull(i) {
			return
		}
		l := int(c.vlen[i])
		copy(dst[off:], c.vbuf[c.vstart[i]:int(c.vstart[i])+l])
		binary.LittleEndian.PutUint64(slots[8*i:], uint64(base+off)<<32|uint64(l))
		off += l
	}
	if allVar {
		for i := 0; i < n; i++ {
			put(i)
		}
	} else {
		for _, i := range vars {
			put(i)
		}
	}
}

// RowWriter writes rows of one RowType field by field. Start a row with
// Reset (every field starts NULL), set fields in any order with the Set
// method of each field's type, and Finish it into the arena. The setters
// do not check the field's type: call the one of its type. A RowWriter is
// reusable and allocates nothing per row once its buffers have grown; it
// is not safe for concurrent use.
type RowWriter struct {
	_ cacheLinePad
	cells
	rt    *RowType
	arena *Arena
	n     int
	// refs[i] holds field i's bytes when vstart[i] is refCell (set by
	// SetStringRef). Reset leaves them (clearing them costs more than the
	// memory they keep a little longer).
	refs  []string
	fixed []uint64 // the null words then the slots: nulls and slots share it
	full  []uint64 // the null words with every field NULL
	// isVar[i] tells whether field i lives in the variable part.
	isVar []bool
	_     cacheLinePad
}

// NewRowWriter returns a writer of rows of type rt into arena (which may
// be nil if rows are only appended with AppendTo). It is Reset.
func NewRowWriter(rt *RowType, arena *Arena) *RowWriter {
	n := rt.Len()
	w := &RowWriter{rt: rt, arena: arena, n: n}
	words := bitmapBytes(n) / 8
	w.fixed = guarded[uint64](words + n)
	w.nulls = w.fixed[:words:words]
	w.slots = w.fixed[words:]
	w.full = make([]uint64, words)
	for i := 0; i < n; i++ {
		w.full[i>>6] |= 1 << (i & 63)
	}
	w.vstart = guarded[int32](n)
	w.vlen = guarded[int32](n)
	w.isVar = make([]bool, n)
	for _, i := range rt.varFields {
		w.isVar[i] = true
	}
	w.Reset()
	return w
}

// RowType returns the type of the rows written.
func (w *RowWriter) RowType() *RowType { return w.rt }

// Reset starts a new row with every field NULL. The slots and lengths of
// the fields are left as they were: a field's are read only once it is
// set, and encodeRow zeroes the slots of the fields left NULL.
func (w *RowWriter) Reset() {
	for k, word := range w.full {
		w.nulls[k] = word
	}
	w.vbuf = w.vbuf[:0]
	w.ordered, w.lastVar = true, -1
}

// Size returns the size of the row's encoding as set so far.
func (w *RowWriter) Size() int { return w.rt.fixedSize + w.varSize(w.n, w.rt.varFields, false) }

// Finish returns the row written, in the arena, and Resets the writer.
func (w *RowWriter) Finish() Row {
	rt := w.rt
	size := rt.fixedSize
	for _, i := range rt.varFields {
		if w.nulls[i>>6]&(1<<(i&63)) == 0 {
			size += int(w.vlen[i])
		}
	}
	if size == 0 {
		return Row{}
	}
	dst := w.arena.alloc(size)
	w.encodeRow(dst)
	w.Reset()
	return Row{b: unsafeString(dst), n: int32(w.n)}
}

// encodeRow writes the row into dst, which has exactly its size.
func (w *RowWriter) encodeRow(dst []byte) {
	rt := w.rt
	fs := rt.fixedSize
	if w.ordered {
		// The variable part is vbuf as it is: one copy.
		copy(dst[fs:], w.vbuf)
		for _, i := range rt.varFields {
			if w.nulls[i>>6]&(1<<(i&63)) == 0 {
				w.slots[i] = uint64(fs+int(w.vstart[i]))<<32 | uint64(uint32(w.vlen[i]))
			}
		}
	} else {
		off := fs
		for _, i := range rt.varFields {
			if w.nulls[i>>6]&(1<<(i&63)) != 0 {
				continue
			}
			st, l := int(w.vstart[i]), int(w.vlen[i])
			if st == refCell {
				copy(dst[off:off+l], w.refs[i])
			} else {
				copy(dst[off:off+l], w.vbuf[st:st+l])
			}
			w.slots[i] = uint64(off)<<32 | uint64(l)
			off += l
		}
	}
	for k, word := range w.nulls {
		for ; word != 0; word &= word - 1 {
			w.slots[k<<6|bits.TrailingZeros64(word)] = 0
		}
	}
	if nativeLE {
		if len(w.fixed) > 0 {
			copy(dst[:fs], unsafe.Slice((*byte)(unsafe.Pointer(&w.fixed[0])), fs))
		}
		return
	}
	for k, word := range w.fixed {
		binary.LittleEndian.PutUint64(dst[8*k:], word)
	}
}

// AppendTo appends the encoding of the row written to dst, leaving the
// writer as it is.
func (w *RowWriter) AppendTo(dst []byte) []byte {
	size := w.Size()
	start := len(dst)
	dst = grow(dst, size)
	if size > 0 {
		w.encodeRow(dst[start:])
	}
	return dst
}

// Encoded returns the encoding of the row written as a string of its own, in
// one allocation, leaving the writer as it is.
func (w *RowWriter) Encoded() string {
	size := w.Size()
	if size == 0 {
		return ""
	}
	b := make([]byte, size)
	w.encodeRow(b)
	return unsafeString(b)
}

func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		nb := make([]byte, len(dst), 2*cap(dst)+n)
		copy(nb, dst)
		dst = nb
	}
	return dst[:len(dst)+n]
}

// SetNull sets field i to NULL.
func (w *RowWriter) SetNull(i int) { w.setNull(i) }

// SetBool sets BOOLEAN field i.
func (w *RowWriter) SetBool(i int, v bool) {
	var s uint64
	if v {
		s = 1
	}
	w.setFixed(i, s)
}

// SetInt64 sets field i of an integer type (TINYINT to BIGINT, the value
// in its range), of an INTERVAL (months or milliseconds) or of DATE (days).
func (w *RowWriter) SetInt64(i int, v int64) { w.setFixed(i, uint64(v)) }

// SetFloat32 sets FLOAT field i.
func (w *RowWriter) SetFloat32(i int, v float32) { w.setFixed(i, uint64(Float32Bits(v))) }

// SetFloat64 sets DOUBLE field i.
func (w *RowWriter) SetFloat64(i int, v float64) { w.setFixed(i, Float64Bits(v)) }

// SetString sets CHAR or VARCHAR field i (stored as given: CAST pads and
// cuts to the length, the writer does not).
func (w *RowWriter) SetString(i int, s string) { w.setVar(i, s) }

// refCell is the vstart of a field whose bytes are in refs.
const refCell = -1

// SetStringRef sets CHAR or VARCHAR field i to s as SetString does, but
// keeps s itself until Finish or AppendTo copies it into the row: one copy
// instead of two. s must not change before then, so a Go string or a
// string of a row that stays as it is will do, and a string viewing bytes
// that are still being written will not.
func (w *RowWriter) SetStringRef(i int, s string) {
	if w.refs == nil {
		w.refs = guarded[string](w.n)
	}
	w.nulls[i>>6] &^= 1 << (i & 63)
	w.ordered = false
	w.vstart[i] = refCell
	w.vlen[i] = int32(len(s))
	w.refs[i] = s
}

// SetBytes sets BINARY or VARBINARY field i.
func (w *RowWriter) SetBytes(i int, b []byte) { w.setVarBytes(i, b) }

// SetDate sets DATE field i.
func (w *RowWriter) SetDate(i int, d Date) { w.setFixed(i, uint64(int64(d))) }

// SetTime sets TIME field i, cut to the field's precision.
func (w *RowWriter) SetTime(i int, t Time) {
	w.setFixed(i, uint64(t.Truncate(int(w.rt.fields[i].Type.p))))
}

// SetTimestampMillis sets TIMESTAMP or TIMESTAMP_LTZ field i of precision
// at most 3 to ms milliseconds since the epoch (cut to the precision): the
// fast path of SetTimestamp.
func (w *RowWriter) SetTimestampMillis(i int, ms int64) {
	if p := w.rt.fields[i].Type.p; p < MaxCompactTimestampPrecision {
		u := pow10[MaxCompactTimestampPrecision-p]
		ms = floorDiv(ms, u) * u
	}
	w.setFixed(i, uint64(ms))
}

// SetTimestamp sets TIMESTAMP or TIMESTAMP_LTZ field i, cut to the field's
// precision.
func (w *RowWriter) SetTimestamp(i int, ts Timestamp) {
	w.setTimestamp(i, ts, int(w.rt.fields[i].Type.p))
}

// SetDecimal sets DECIMAL field i, rounded HALF_UP to the field's scale.
// If it does not fit the field's precision the field is set NULL and the
// error wraps ErrOverflow.
func (w *RowWriter) SetDecimal(i int, d Decimal) error {
	if t := &w.rt.fields[i].Type; d.b == nil && d.scale == t.s {
		// The fast path of setDecimal: an unscaled int64 of the field's
		// scale.
		if t.p > MaxCompactPrecision {
			w.beginVar(i)
			w.appendInt64Bytes(d.u)
			w.endVar(i)
			return nil
		}
		if lim := pow10[t.p]; d.u < lim && d.u > -lim {
			w.setFixed(i, uint64(d.u))
			return nil
		}
	}
	if err := w.setDecimal(i, d, w.rt.fields[i].Type); err != nil {
		return fmt.Errorf("types: field %s: %w", QuoteIdentifier(w.rt.fields[i].Name), err)
	}
	return nil
}

// SetRow sets ROW field i to a copy of r.
func (w *RowWriter) SetRow(i int, r Row) { w.setVar(i, r.b) }

// SetRowFrom sets ROW field i to the row written by nested (whose type must
// be the field's), leaving nested as it is.
func (w *RowWriter) SetRowFrom(i int, nested *RowWriter) {
	w.beginVar(i)
	w.vbuf = nested.AppendTo(w.vbuf)
	w.endVar(i)
}

// SetArray sets ARRAY field i to a copy of a.
func (w *RowWriter) SetArray(i int, a Array) { w.setVar(i, a.b) }

// SetArrayFrom sets ARRAY field i to the array written by a.
func (w *RowWriter) SetArrayFrom(i int, a *ArrayWriter) {
	w.beginVar(i)
	w.vbuf = a.AppendTo(w.vbuf)
	w.endVar(i)
}

// SetMap sets MAP or MULTISET field i to a copy of m.
func (w *RowWriter) SetMap(i int, m Map) { w.setVar(i, m.b) }

// SetMapFrom sets MAP or MULTISET field i to the map written by m.
func (w *RowWriter) SetMapFrom(i int, m *MapWriter) {
	w.beginVar(i)
	w.vbuf = m.AppendTo(w.vbuf)
	w.endVar(i)
}

// ArrayWriter writes ARRAY values (and the key and value arrays of maps)
// element by element: Reset, Append each element with the method of the
// element type, then AppendTo a parent's buffer (RowWriter.SetArrayFrom) or
// Finish into an arena. Reusable; not safe for concurrent use.
type ArrayWriter struct {
	cells
	elem   Type
	allVar bool
	n      int
}

// NewArrayWriter returns a writer of arrays of elem.
func NewArrayWriter(elem Type) *ArrayWriter {
	return &ArrayWriter{elem: elem, allVar: !elem.IsFixed()}
}

// Elem returns the element type.
func (a *ArrayWriter) Elem() Type { return a.elem }

// Reset starts a new, empty array.
func (a *ArrayWriter) Reset() {
	a.n = 0
	a.nulls = a.nulls[:0]
	a.slots = a.slots[:0]
	a.vbuf = a.vbuf[:0]
	a.vstart = a.vstart[:0]
	a.vlen = a.vlen[:0]
}

// Len returns the number of elements appended.
func (a *ArrayWriter) Len() int { return a.n }

// next makes room for one more element, NULL until set, and returns its
// index.
func (a *ArrayWriter) next() int {
	j := a.n
	a.n++
	if j&63 == 0 {
		a.nulls = append(a.nulls, 0)
	}
	a.nulls[j>>6] |= 1 << (j & 63)
	a.slots = append(a.slots, 0)
	if a.allVar {
		a.vstart = append(a.vstart[:j], 0)
		a.vlen = append(a.vlen[:j], 0)
	}
	return j
}

// AppendNull appends a NULL element.
func (a *ArrayWriter) AppendNull() { a.next() }

// AppendBool appends a BOOLEAN element.
func (a *ArrayWriter) AppendBool(v bool) {
	var s uint64
	if v {
		s = 1
	}
	a.setFixed(a.next(), s)
}

// AppendInt64 appends an element of an integer, INTERVAL or DATE type.
func (a *ArrayWriter) AppendInt64(v int64) { a.setFixed(a.next(), uint64(v)) }

// AppendFloat32 appends a FLOAT element.
func (a *ArrayWriter) AppendFloat32(v float32) { a.setFixed(a.next(), uint64(Float32Bits(v))) }

// AppendFloat64 appends a DOUBLE element.
func (a *ArrayWriter) AppendFloat64(v float64) { a.setFixed(a.next(), Float64Bits(v)) }

// AppendString appends a CHAR or VARCHAR element.
func (a *ArrayWriter) AppendString(s string) { a.setVar(a.next(), s) }

// AppendBytes appends a BINARY or VARBINARY element.
func (a *ArrayWriter) AppendBytes(b []byte) { a.setVarBytes(a.next(), b) }

// AppendDate appends a DATE element.
func (a *ArrayWriter) AppendDate(d Date) { a.setFixed(a.next(), uint64(int64(d))) }

// AppendTime appends a TIME element, cut to the element type's precision.
func (a *ArrayWriter) AppendTime(t Time) { a.setFixed(a.next(), uint64(t.Truncate(int(a.elem.p)))) }

// AppendTimestamp appends a TIMESTAMP or TIMESTAMP_LTZ element.
func (a *ArrayWriter) AppendTimestamp(ts Timestamp) { a.setTimestamp(a.next(), ts, int(a.elem.p)) }

// AppendDecimal appends a DECIMAL element rounded to the element type's
// scale; NULL, and an error wrapping ErrOverflow, if it does not fit.
func (a *ArrayWriter) AppendDecimal(d Decimal) error { return a.setDecimal(a.next(), d, a.elem) }

// AppendRow appends a ROW element, a copy of r.
func (a *ArrayWriter) AppendRow(r Row) { a.setVar(a.next(), r.b) }

// AppendRowFrom appends the row written by w.
func (a *ArrayWriter) AppendRowFrom(w *RowWriter) {
	j := a.next()
	a.beginVar(j)
	a.vbuf = w.AppendTo(a.vbuf)
	a.endVar(j)
}

// AppendArray appends an ARRAY element, a copy of v.
func (a *ArrayWriter) AppendArray(v Array) { a.setVar(a.next(), v.b) }

// AppendArrayFrom appends the array written by w.
func (a *ArrayWriter) AppendArrayFrom(w *ArrayWriter) {
	j := a.next()
	a.beginVar(j)
	a.vbuf = w.AppendTo(a.vbuf)
	a.endVar(j)
}

// AppendMap appends a MAP or MULTISET element, a copy of m.
func (a *ArrayWriter) AppendMap(m Map) { a.setVar(a.next(), m.b) }

// AppendMapFrom appends the map written by w.
func (a *ArrayWriter) AppendMapFrom(w *MapWriter) {
	j := a.next()
	a.beginVar(j)
	a.vbuf = w.AppendTo(a.vbuf)
	a.endVar(j)
}

// Size returns the size of the array's encoding.
func (a *ArrayWriter) Size() int {
	return 4 + bitmapBytes(a.n) + 8*a.n + a.varSize(a.n, nil, a.allVar)
}

// AppendTo appends the array's encoding to dst, leaving the writer as it
// is.
func (a *ArrayWriter) AppendTo(dst []byte) []byte {
	size := a.Size()
	start := len(dst)
	dst = grow(dst, size)
	binary.LittleEndian.PutUint32(dst[start:], uint32(a.n))
	if a.n > 0 {
		// Bits of the last word beyond n are zero: next sets only its own.
		a.encode(dst[start+4:], 4, a.n, nil, a.allVar)
	}
	return dst
}

// Finish returns the array written, in the arena, and Resets the writer.
func (a *ArrayWriter) Finish(arena *Arena) Array {
	dst := arena.alloc(a.Size())
	a.AppendTo(dst[:0])
	a.Reset()
	return Array{b: unsafeString(dst)}
}

// MapWriter writes MAP and MULTISET values: append each entry's key to Keys
// and its value to Values (a MULTISET's values are INT counts), then
// AppendTo a parent (RowWriter.SetMapFrom) or Finish.
type MapWriter struct {
	keys, values *ArrayWriter
}

// NewMapWriter returns a writer of values of t, a MAP or MULTISET type.
func NewMapWriter(t Type) *MapWriter {
	return &MapWriter{keys: NewArrayWriter(t.Elem()), values: NewArrayWriter(t.Value())}
}

// Keys returns the writer of the keys.
func (m *MapWriter) Keys() *ArrayWriter { return m.keys }

// Values returns the writer of the values.
func (m *MapWriter) Values() *ArrayWriter { return m.values }

// Reset starts a new, empty map.
func (m *MapWriter) Reset() { m.keys.Reset(); m.values.Reset() }

// Len returns the number of entries (keys) appended.
func (m *MapWriter) Len() int { return m.keys.Len() }

// AppendTo appends the map's encoding to dst. It panics if the number of
// keys and values differ (a programming error).
func (m *MapWriter) AppendTo(dst []byte) []byte {
	if m.keys.Len() != m.values.Len() {
		panic(fmt.Sprintf("types: map written with %d keys and %d values", m.keys.Len(), m.values.Len()))
	}
	start := len(dst)
	dst = grow(dst, 4)
	dst = m.keys.AppendTo(dst)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return m.values.AppendTo(dst)
}

// Finish returns the map written, in the arena, and Resets the writer.
func (m *MapWriter) Finish(arena *Arena) Map {
	dst := arena.alloc(4 + m.keys.Size() + m.values.Size())
	m.AppendTo(dst[:0])
	m.Reset()
	return Map{b: unsafeString(dst)}
}

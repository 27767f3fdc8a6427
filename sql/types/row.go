package types

import (
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// Row is a row in eddy's binary row format (see the package documentation):
// an immutable byte string and its number of fields. Rows of one type are
// equal (==) exactly when their field values are equal, so a Row is a
// comparable record for the relational operators. The zero Row has no
// fields.
//
// A Row built by a RowWriter points into its Arena; Clone gives a row of
// its own.
type Row struct {
	b string
	n int32
}

// le64 reads a little-endian uint64 at o.
func le64(s string, o int) uint64 {
	_ = s[o+7]
	return uint64(s[o]) | uint64(s[o+1])<<8 | uint64(s[o+2])<<16 | uint64(s[o+3])<<24 |
		uint64(s[o+4])<<32 | uint64(s[o+5])<<40 | uint64(s[o+6])<<48 | uint64(s[o+7])<<56
}

// le32 reads a little-endian uint32 at o.
func le32(s string, o int) uint32 {
	_ = s[o+3]
	return uint32(s[o]) | uint32(s[o+1])<<8 | uint32(s[o+2])<<16 | uint32(s[o+3])<<24
}

// Len returns the number of fields.
func (r Row) Len() int { return int(r.n) }

// Size returns the size of the row's encoding in bytes.
func (r Row) Size() int { return len(r.b) }

// slot returns the 8-byte slot of field i.
func (r Row) slot(i int) uint64 {
	off := (int(r.n)+63)>>6<<3 + 8*i
	if uint(off)+8 > uint(len(r.b)) {
		panicSlot(i, int(r.n))
	}
	return load64(unsafe.Add(unsafe.Pointer(unsafe.StringData(r.b)), off))
}

func panicSlot(i, n int) {
	panic(fmt.Sprintf("types: field %d of a row of %d fields", i, n))
}

// IsNull reports whether field i is NULL.
func (r Row) IsNull(i int) bool { return r.b[i>>3]&(1<<(i&7)) != 0 }

// AnyNull reports whether any field is NULL.
func (r Row) AnyNull() bool {
	for i := 0; i < bitmapBytes(int(r.n)); i++ {
		if r.b[i] != 0 {
			return true
		}
	}
	return false
}

// Bool returns BOOLEAN field i.
func (r Row) Bool(i int) bool { return r.slot(i) != 0 }

// Int64 returns field i of an integer type (TINYINT to BIGINT), of an
// INTERVAL (months or milliseconds), or of a DATE (days).
func (r Row) Int64(i int) int64 { return int64(r.slot(i)) }

// Int32 returns field i of type TINYINT, SMALLINT, INT or INTERVAL YEAR TO
// MONTH.
func (r Row) Int32(i int) int32 { return int32(r.slot(i)) }

// Float32 returns FLOAT field i.
func (r Row) Float32(i int) float32 { return math.Float32frombits(uint32(r.slot(i))) }

// Float64 returns DOUBLE field i.
func (r Row) Float64(i int) float64 { return math.Float64frombits(r.slot(i)) }

// String returns CHAR or VARCHAR field i without copying (it shares the
// row's memory, as the row does its arena's).
func (r Row) String(i int) string { return varAt(r.b, r.slot(i)) }

// BinaryString returns BINARY or VARBINARY field i as a string, without
// copying.
func (r Row) BinaryString(i int) string { return varAt(r.b, r.slot(i)) }

// Binary returns a copy of BINARY or VARBINARY field i.
func (r Row) Binary(i int) []byte {
	if r.IsNull(i) {
		return nil
	}
	return []byte(varAt(r.b, r.slot(i)))
}

// Date returns DATE field i.
func (r Row) Date(i int) Date { return Date(int32(r.slot(i))) }

// Time returns TIME field i.
func (r Row) Time(i int) Time { return Time(r.slot(i)) }

// TimestampMillis returns the milliseconds of TIMESTAMP or TIMESTAMP_LTZ
// field i of precision <= 3: the fast path of Timestamp.
func (r Row) TimestampMillis(i int) int64 { return int64(r.slot(i)) }

// Timestamp returns TIMESTAMP or TIMESTAMP_LTZ field i of the given
// precision.
func (r Row) Timestamp(i int, precision int) Timestamp { return timestampAt(r.b, r.slot(i), precision) }

// Decimal returns DECIMAL(precision, scale) field i.
func (r Row) Decimal(i int, precision, scale int) Decimal {
	return decimalAt(r.b, r.slot(i), precision, scale)
}

// Row returns ROW field i, of row type t, without copying.
func (r Row) Row(i int, t *RowType) Row { return Row{b: varAt(r.b, r.slot(i)), n: int32(t.Len())} }

// Array returns ARRAY field i without copying.
func (r Row) Array(i int) Array { return Array{b: varAt(r.b, r.slot(i))} }

// Map returns MAP or MULTISET field i without copying.
func (r Row) Map(i int) Map { return Map{b: varAt(r.b, r.slot(i))} }

// Prefix returns the row of the first k fields of r, in r's memory, and
// true when r's encoding holds them where that of a row of k fields does:
// when the null bitmaps of the two have one size (k from 1 to 64 and
// r.Len() at most 64, say). The row is for reading its fields one by one:
// its encoding keeps the bytes, and the null bits, of r's other fields, so
// it is not the canonical encoding of a row of k fields that keys and
// equality compare, and AnyNull, Size, Bytes and Clone see all of r.
func (r Row) Prefix(k int) (Row, bool) {
	if k < 0 || k > int(r.n) || bitmapBytes(k) != bitmapBytes(int(r.n)) {
		return Row{}, false
	}
	return Row{b: r.b, n: int32(k)}, true
}

// Clone returns a copy of the row in its own allocation, so that keeping it
// does not keep its arena chunk alive.
func (r Row) Clone() Row { return Row{b: strings.Clone(r.b), n: r.n} }

// Bytes returns a copy of the row's encoding (read it back with
// RowFromBytes).
func (r Row) Bytes() []byte { return []byte(r.b) }

// Encoding returns the row's encoding without copying (read it back with
// RowFromString).
func (r Row) Encoding() string { return r.b }

// AppendEncoding appends the row's encoding to dst.
func (r Row) AppendEncoding(dst []byte) []byte { return append(dst, r.b...) }

func varAt(b string, slot uint64) string {
	off := int(slot >> 32)
	return b[off : off+int(uint32(slot))]
}

func timestampAt(b string, slot uint64, precision int) Timestamp {
	if precision <= MaxCompactTimestampPrecision {
		return Timestamp{Millis: int64(slot)}
	}
	v := varAt(b, slot)
	if len(v) < 12 {
		return Timestamp{} // a NULL field
	}
	return Timestamp{Millis: int64(le64(v, 0)), NanoOfMilli: int32(le32(v, 8))}
}

func decimalAt(b string, slot uint64, precision, scale int) Decimal {
	if precision <= MaxCompactPrecision {
		return Decimal{u: int64(slot), scale: int32(scale)}
	}
	return decimalFromBytes(varAt(b, slot), scale)
}

// Array is an ARRAY value in eddy's binary format: a count, a null bitmap,
// 8-byte slots and a variable part. Its accessors mirror Row's, by element
// index. The zero Array is empty.
type Array struct{ b string }

// Len returns the number of elements.
func (a Array) Len() int {
	if len(a.b) < 4 {
		return 0
	}
	return int(le32(a.b, 0))
}

func (a Array) slot(j int) uint64 {
	n := a.Len()
	off := 4 + (n+63)>>6<<3 + 8*j
	if uint(j) >= uint(n) || uint(off)+8 > uint(len(a.b)) {
		panicSlot(j, n)
	}
	return load64(unsafe.Add(unsafe.Pointer(unsafe.StringData(a.b)), off))
}

// IsNull reports whether element j is NULL.
func (a Array) IsNull(j int) bool { return a.b[4+j>>3]&(1<<(j&7)) != 0 }

// Bool returns BOOLEAN element j.
func (a Array) Bool(j int) bool { return a.slot(j) != 0 }

// Int64 returns element j of an integer, INTERVAL or DATE type.
func (a Array) Int64(j int) int64 { return int64(a.slot(j)) }

// Int32 returns element j of type TINYINT, SMALLINT or INT.
func (a Array) Int32(j int) int32 { return int32(a.slot(j)) }

// Float32 returns FLOAT element j.
func (a Array) Float32(j int) float32 { return math.Float32frombits(uint32(a.slot(j))) }

// Float64 returns DOUBLE element j.
func (a Array) Float64(j int) float64 { return math.Float64frombits(a.slot(j)) }

// String returns CHAR or VARCHAR element j without copying.
func (a Array) String(j int) string { return varAt(a.b, a.slot(j)) }

// BinaryString returns BINARY or VARBINARY element j without copying.
func (a Array) BinaryString(j int) string { return varAt(a.b, a.slot(j)) }

// Date returns DATE element j.
func (a Array) Date(j int) Date { return Date(int32(a.slot(j))) }

// Time returns TIME element j.
func (a Array) Time(j int) Time { return Time(a.slot(j)) }

// Timestamp returns TIMESTAMP or TIMESTAMP_LTZ element j of the given
// precision.
func (a Array) Timestamp(j int, precision int) Timestamp {
	return timestampAt(a.b, a.slot(j), precision)
}

// Decimal returns DECIMAL(precision, scale) element j.
func (a Array) Decimal(j int, precision, scale int) Decimal {
	return decimalAt(a.b, a.slot(j), precision, scale)
}

// Row returns ROW element j, of row type t.
func (a Array) Row(j int, t *RowType) Row { return Row{b: varAt(a.b, a.slot(j)), n: int32(t.Len())} }

// Array returns ARRAY element j.
func (a Array) Array(j int) Array { return Array{b: varAt(a.b, a.slot(j))} }

// Map returns MAP or MULTISET element j.
func (a Array) Map(j int) Map { return Map{b: varAt(a.b, a.slot(j))} }

// Encoding returns the array's encoding without copying.
func (a Array) Encoding() string { return a.b }

// Map is a MAP (or MULTISET) value: an array of keys and an array of values
// of the same length, in the order the entries were written. The zero Map
// is empty.
type Map struct{ b string }

// Len returns the number of entries.
func (m Map) Len() int { return m.Keys().Len() }

// Keys returns the array of keys (of a MULTISET: its elements).
func (m Map) Keys() Array {
	if len(m.b) < 4 {
		return Array{}
	}
	return Array{b: m.b[4 : 4+int(le32(m.b, 0))]}
}

// Values returns the array of values (of a MULTISET: the INT counts).
func (m Map) Values() Array {
	if len(m.b) < 4 {
		return Array{}
	}
	return Array{b: m.b[4+int(le32(m.b, 0)):]}
}

// Encoding returns the map's encoding without copying.
func (m Map) Encoding() string { return m.b }

// unsafeString views b as a string; b must never be written again.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

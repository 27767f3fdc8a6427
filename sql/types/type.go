package types

import (
	"fmt"
	"strings"
)

// Kind is the root of a logical type (Flink's LogicalTypeRoot), without its
// parameters (length, precision, scale, element types) or nullability.
type Kind uint8

const (
	// KindNull is the type of an untyped NULL literal.
	KindNull Kind = iota
	// KindBoolean is BOOLEAN.
	KindBoolean
	// KindTinyInt is TINYINT, a 1-byte signed integer.
	KindTinyInt
	// KindSmallInt is SMALLINT, a 2-byte signed integer.
	KindSmallInt
	// KindInt is INT (INTEGER), a 4-byte signed integer.
	KindInt
	// KindBigInt is BIGINT, an 8-byte signed integer.
	KindBigInt
	// KindFloat is FLOAT, a 4-byte IEEE 754 number.
	KindFloat
	// KindDouble is DOUBLE, an 8-byte IEEE 754 number.
	KindDouble
	// KindDecimal is DECIMAL(p, s), an exact number of p digits, s of them
	// after the point.
	KindDecimal
	// KindChar is CHAR(n), a fixed-length character string.
	KindChar
	// KindVarChar is VARCHAR(n); STRING is VARCHAR(2147483647).
	KindVarChar
	// KindBinary is BINARY(n), a fixed-length byte string.
	KindBinary
	// KindVarBinary is VARBINARY(n); BYTES is VARBINARY(2147483647).
	KindVarBinary
	// KindDate is DATE, a day of the proleptic Gregorian calendar.
	KindDate
	// KindTime is TIME(p), a time of day without time zone.
	KindTime
	// KindTimestamp is TIMESTAMP(p), a date and time without time zone.
	KindTimestamp
	// KindTimestampLTZ is TIMESTAMP_LTZ(p) (TIMESTAMP WITH LOCAL TIME ZONE),
	// an instant shown in the session's time zone.
	KindTimestampLTZ
	// KindIntervalYearMonth is INTERVAL YEAR TO MONTH (and its YEAR and
	// MONTH resolutions), a number of months.
	KindIntervalYearMonth
	// KindIntervalDayTime is INTERVAL DAY TO SECOND (and its other day-time
	// resolutions), a number of milliseconds.
	KindIntervalDayTime
	// KindRow is ROW<name type, ...>.
	KindRow
	// KindArray is ARRAY<T>.
	KindArray
	// KindMap is MAP<K, V>.
	KindMap
	// KindMultiset is MULTISET<T>, a bag of elements with their counts.
	KindMultiset
	numKinds
)

var kindNames = [...]string{
	KindNull: "NULL", KindBoolean: "BOOLEAN", KindTinyInt: "TINYINT", KindSmallInt: "SMALLINT",
	KindInt: "INT", KindBigInt: "BIGINT", KindFloat: "FLOAT", KindDouble: "DOUBLE",
	KindDecimal: "DECIMAL", KindChar: "CHAR", KindVarChar: "VARCHAR", KindBinary: "BINARY",
	KindVarBinary: "VARBINARY", KindDate: "DATE", KindTime: "TIME", KindTimestamp: "TIMESTAMP",
	KindTimestampLTZ: "TIMESTAMP_LTZ", KindIntervalYearMonth: "INTERVAL YEAR TO MONTH",
	KindIntervalDayTime: "INTERVAL DAY TO SECOND", KindRow: "ROW", KindArray: "ARRAY",
	KindMap: "MAP", KindMultiset: "MULTISET",
}

// String names the kind as SQL writes it ("BIGINT", "TIMESTAMP_LTZ").
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Limits of the type parameters, as Flink has them.
const (
	// MaxLength is the largest length of CHAR, VARCHAR, BINARY and
	// VARBINARY; VARCHAR(MaxLength) is STRING and VARBINARY(MaxLength) is
	// BYTES.
	MaxLength = 2147483647
	// MaxDecimalPrecision is the largest precision of DECIMAL.
	MaxDecimalPrecision = 38
	// MaxCompactPrecision is the largest DECIMAL precision stored in the
	// fixed part of a row (an unscaled int64).
	MaxCompactPrecision = 18
	// DefaultDecimalPrecision and DefaultDecimalScale are those of a bare
	// DECIMAL.
	DefaultDecimalPrecision = 10
	DefaultDecimalScale     = 0
	// MaxTimePrecision is the largest fractional-second precision of TIME,
	// TIMESTAMP and TIMESTAMP_LTZ.
	MaxTimePrecision = 9
	// DefaultTimestampPrecision is the precision of a bare TIMESTAMP or
	// TIMESTAMP_LTZ; a bare TIME has precision 0.
	DefaultTimestampPrecision = 6
	// MaxCompactTimestampPrecision is the largest timestamp precision
	// stored in the fixed part of a row (milliseconds since the epoch).
	MaxCompactTimestampPrecision = 3
)

// Type is a logical type: a kind, its parameters and its nullability. It is
// a small immutable value; composite types share their element and field
// types. Compare types with Equal (or EqualIgnoringNullability), not ==.
// The zero Type is the nullable NULL type.
type Type struct {
	kind    Kind
	notNull bool
	// p is the length (CHAR, VARCHAR, BINARY, VARBINARY), the precision
	// (DECIMAL, TIME, TIMESTAMP, TIMESTAMP_LTZ); s the scale of DECIMAL.
	p, s int32
	// elem is the element type of ARRAY and MULTISET, the key type of MAP.
	elem *Type
	// val is the value type of MAP.
	val *Type
	// row is the row type of ROW.
	row *RowType
}

// Type constructors. Every type they return is nullable; call NotNull for
// the NOT NULL variant.

// NullType returns the type of an untyped NULL.
func NullType() Type { return Type{kind: KindNull} }

// Boolean returns BOOLEAN.
func Boolean() Type { return Type{kind: KindBoolean} }

// TinyInt returns TINYINT.
func TinyInt() Type { return Type{kind: KindTinyInt} }

// SmallInt returns SMALLINT.
func SmallInt() Type { return Type{kind: KindSmallInt} }

// Int returns INT.
func Int() Type { return Type{kind: KindInt} }

// BigInt returns BIGINT.
func BigInt() Type { return Type{kind: KindBigInt} }

// Float returns FLOAT.
func Float() Type { return Type{kind: KindFloat} }

// Double returns DOUBLE.
func Double() Type { return Type{kind: KindDouble} }

// DecimalType returns DECIMAL(precision, scale). It panics unless 1 <=
// precision <= 38 and 0 <= scale <= precision (a programming error: check
// user input with CheckDecimal first).
func DecimalType(precision, scale int) Type {
	if err := CheckDecimal(precision, scale); err != nil {
		panic(err)
	}
	return Type{kind: KindDecimal, p: int32(precision), s: int32(scale)}
}

// CheckDecimal reports whether DECIMAL(precision, scale) is a valid type.
func CheckDecimal(precision, scale int) error {
	if precision < 1 || precision > MaxDecimalPrecision {
		return fmt.Errorf("types: DECIMAL precision %d is out of range; use 1 to %d", precision, MaxDecimalPrecision)
	}
	if scale < 0 || scale > precision {
		return fmt.Errorf("types: DECIMAL(%d, %d) scale is out of range; use 0 to the precision %d", precision, scale, precision)
	}
	return nil
}

// Char returns CHAR(n), 1 <= n <= MaxLength (0 is allowed for the empty
// string literal, as Flink does).
func Char(n int) Type { return Type{kind: KindChar, p: int32(checkLength("CHAR", n))} }

// VarChar returns VARCHAR(n).
func VarChar(n int) Type { return Type{kind: KindVarChar, p: int32(checkLength("VARCHAR", n))} }

// String returns STRING, that is VARCHAR(2147483647).
func String() Type { return Type{kind: KindVarChar, p: MaxLength} }

// Binary returns BINARY(n).
func Binary(n int) Type { return Type{kind: KindBinary, p: int32(checkLength("BINARY", n))} }

// VarBinary returns VARBINARY(n).
func VarBinary(n int) Type { return Type{kind: KindVarBinary, p: int32(checkLength("VARBINARY", n))} }

// Bytes returns BYTES, that is VARBINARY(2147483647).
func Bytes() Type { return Type{kind: KindVarBinary, p: MaxLength} }

func checkLength(name string, n int) int {
	if n < 0 || n > MaxLength {
		panic(fmt.Sprintf("types: %s length %d is out of range; use 1 to %d", name, n, MaxLength))
	}
	return n
}

// DateType returns DATE.
func DateType() Type { return Type{kind: KindDate} }

// TimeType returns TIME(precision), 0 <= precision <= 9.
func TimeType(precision int) Type {
	return Type{kind: KindTime, p: int32(checkTimePrecision("TIME", precision))}
}

// TimestampType returns TIMESTAMP(precision), 0 <= precision <= 9.
func TimestampType(precision int) Type {
	return Type{kind: KindTimestamp, p: int32(checkTimePrecision("TIMESTAMP", precision))}
}

// TimestampLTZType returns TIMESTAMP_LTZ(precision), 0 <= precision <= 9.
func TimestampLTZType(precision int) Type {
	return Type{kind: KindTimestampLTZ, p: int32(checkTimePrecision("TIMESTAMP_LTZ", precision))}
}

func checkTimePrecision(name string, p int) int {
	if p < 0 || p > MaxTimePrecision {
		panic(fmt.Sprintf("types: %s precision %d is out of range; use 0 to %d", name, p, MaxTimePrecision))
	}
	return p
}

// IntervalYearMonth returns INTERVAL YEAR TO MONTH, whose values are a
// number of months. Flink's YEAR and MONTH resolutions collapse to it.
func IntervalYearMonth() Type { return Type{kind: KindIntervalYearMonth} }

// IntervalDayTime returns INTERVAL DAY TO SECOND, whose values are a number
// of milliseconds. Flink's other day-time resolutions collapse to it.
func IntervalDayTime() Type { return Type{kind: KindIntervalDayTime} }

// ArrayOf returns ARRAY<elem>.
func ArrayOf(elem Type) Type { return Type{kind: KindArray, elem: &elem} }

// MultisetOf returns MULTISET<elem>.
func MultisetOf(elem Type) Type { return Type{kind: KindMultiset, elem: &elem} }

// MapOf returns MAP<key, value>.
func MapOf(key, value Type) Type { return Type{kind: KindMap, elem: &key, val: &value} }

// RowOf returns ROW<fields>. It panics on an empty or duplicate field name
// (use NewRowType to get an error instead).
func RowOf(fields ...Field) Type {
	rt, err := NewRowType(fields...)
	if err != nil {
		panic(err)
	}
	return rt.Type()
}

// Kind returns the root of the type.
func (t Type) Kind() Kind { return t.kind }

// IsNullable reports whether the type admits NULL.
func (t Type) IsNullable() bool { return !t.notNull }

// NotNull returns the NOT NULL variant of the type. The NULL type stays
// nullable.
func (t Type) NotNull() Type {
	if t.kind != KindNull {
		t.notNull = true
	}
	return t
}

// Nullable returns the nullable variant of the type.
func (t Type) Nullable() Type { t.notNull = false; return t }

// WithNullability returns the type, nullable or not.
func (t Type) WithNullability(nullable bool) Type {
	if nullable {
		return t.Nullable()
	}
	return t.NotNull()
}

// Length returns the length of CHAR, VARCHAR, BINARY and VARBINARY (0 for
// other kinds).
func (t Type) Length() int {
	switch t.kind {
	case KindChar, KindVarChar, KindBinary, KindVarBinary:
		return int(t.p)
	}
	return 0
}

// Precision returns the precision of DECIMAL (digits), TIME, TIMESTAMP and
// TIMESTAMP_LTZ (fractional second digits), and the decimal precision of
// the integer kinds as Flink counts it (TINYINT 3, SMALLINT 5, INT 10,
// BIGINT 19); 0 for others.
func (t Type) Precision() int {
	switch t.kind {
	case KindDecimal, KindTime, KindTimestamp, KindTimestampLTZ:
		return int(t.p)
	case KindTinyInt:
		return 3
	case KindSmallInt:
		return 5
	case KindInt:
		return 10
	case KindBigInt:
		return 19
	case KindIntervalDayTime:
		return 3
	}
	return 0
}

// Scale returns the scale of DECIMAL (0 for others).
func (t Type) Scale() int {
	if t.kind == KindDecimal {
		return int(t.s)
	}
	return 0
}

// Elem returns the element type of ARRAY and MULTISET and the key type of
// MAP; it panics for other kinds.
func (t Type) Elem() Type {
	if t.elem == nil {
		panic(fmt.Sprintf("types: %s has no element type", t))
	}
	return *t.elem
}

// Key returns the key type of MAP; it panics for other kinds.
func (t Type) Key() Type {
	if t.kind != KindMap {
		panic(fmt.Sprintf("types: %s has no key type", t))
	}
	return *t.elem
}

// Value returns the value type of MAP (INT NOT NULL for a MULTISET, the
// type of its counts); it panics for other kinds.
func (t Type) Value() Type {
	switch t.kind {
	case KindMap:
		return *t.val
	case KindMultiset:
		return Int().NotNull()
	}
	panic(fmt.Sprintf("types: %s has no value type", t))
}

// Row returns the row type of ROW; it panics for other kinds.
func (t Type) Row() *RowType {
	if t.row == nil {
		panic(fmt.Sprintf("types: %s is not a ROW", t))
	}
	return t.row
}

// IsFixed reports whether values of the type live in the fixed part of a
// row (8 bytes) rather than the variable part.
func (t Type) IsFixed() bool {
	switch t.kind {
	case KindChar, KindVarChar, KindBinary, KindVarBinary, KindRow, KindArray, KindMap, KindMultiset:
		return false
	case KindDecimal:
		return t.p <= MaxCompactPrecision
	case KindTimestamp, KindTimestampLTZ:
		return t.p <= MaxCompactTimestampPrecision
	}
	return true
}

// IsNumeric reports whether the type is of Flink's NUMERIC family: TINYINT,
// SMALLINT, INT, BIGINT, DECIMAL, FLOAT, DOUBLE.
func (t Type) IsNumeric() bool { return t.kind >= KindTinyInt && t.kind <= KindDecimal }

// IsExactNumeric reports whether the type is TINYINT, SMALLINT, INT, BIGINT
// or DECIMAL.
func (t Type) IsExactNumeric() bool { return t.IsIntegral() || t.kind == KindDecimal }

// IsIntegral reports whether the type is TINYINT, SMALLINT, INT or BIGINT.
func (t Type) IsIntegral() bool { return t.kind >= KindTinyInt && t.kind <= KindBigInt }

// IsApproximateNumeric reports whether the type is FLOAT or DOUBLE.
func (t Type) IsApproximateNumeric() bool { return t.kind == KindFloat || t.kind == KindDouble }

// IsString reports whether the type is CHAR or VARCHAR (Flink's
// CHARACTER_STRING family).
func (t Type) IsString() bool { return t.kind == KindChar || t.kind == KindVarChar }

// IsBinary reports whether the type is BINARY or VARBINARY.
func (t Type) IsBinary() bool { return t.kind == KindBinary || t.kind == KindVarBinary }

// IsTemporal reports whether the type is DATE, TIME, TIMESTAMP or
// TIMESTAMP_LTZ (Flink's DATETIME family).
func (t Type) IsTemporal() bool { return t.kind >= KindDate && t.kind <= KindTimestampLTZ }

// IsTimestamp reports whether the type is TIMESTAMP or TIMESTAMP_LTZ.
func (t Type) IsTimestamp() bool { return t.kind == KindTimestamp || t.kind == KindTimestampLTZ }

// IsInterval reports whether the type is an INTERVAL.
func (t Type) IsInterval() bool {
	return t.kind == KindIntervalYearMonth || t.kind == KindIntervalDayTime
}

// IsConstructed reports whether the type is ROW, ARRAY, MAP or MULTISET.
func (t Type) IsConstructed() bool { return t.kind >= KindRow && t.kind <= KindMultiset }

// IsPredefined reports whether the type is of Flink's PREDEFINED family
// (every kind but the constructed ones and NULL).
func (t Type) IsPredefined() bool { return t.kind > KindNull && t.kind < KindRow }

// Equal reports whether the types are the same, nullability and field
// names included.
func (t Type) Equal(u Type) bool { return t.equal(u, true) }

// EqualIgnoringNullability reports whether the types are the same up to the
// nullability of the type itself and of every nested type.
func (t Type) EqualIgnoringNullability(u Type) bool { return t.equal(u, false) }

func (t Type) equal(u Type, nullability bool) bool {
	if t.kind != u.kind || t.p != u.p || t.s != u.s {
		return false
	}
	if nullability && t.notNull != u.notNull {
		return false
	}
	switch t.kind {
	case KindArray, KindMultiset:
		return t.elem.equal(*u.elem, nullability)
	case KindMap:
		return t.elem.equal(*u.elem, nullability) && t.val.equal(*u.val, nullability)
	case KindRow:
		return t.row.equal(u.row, nullability)
	}
	return true
}

// String returns Flink's summary form of the type: "BIGINT NOT NULL",
// "DECIMAL(10, 2)", "STRING", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)",
// "ROW<`a` INT, `b` STRING>", "ARRAY<INT>", "MAP<STRING, INT>".
func (t Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t Type) write(b *strings.Builder) {
	switch t.kind {
	case KindDecimal:
		fmt.Fprintf(b, "DECIMAL(%d, %d)", t.p, t.s)
	case KindChar, KindBinary:
		fmt.Fprintf(b, "%s(%d)", t.kind, t.p)
	case KindVarChar:
		if t.p == MaxLength {
			b.WriteString("STRING")
		} else {
			fmt.Fprintf(b, "VARCHAR(%d)", t.p)
		}
	case KindVarBinary:
		if t.p == MaxLength {
			b.WriteString("BYTES")
		} else {
			fmt.Fprintf(b, "VARBINARY(%d)", t.p)
		}
	case KindTime, KindTimestamp, KindTimestampLTZ:
		fmt.Fprintf(b, "%s(%d)", t.kind, t.p)
	case KindIntervalYearMonth:
		b.WriteString("INTERVAL YEAR(2) TO MONTH")
	case KindIntervalDayTime:
		b.WriteString("INTERVAL DAY(2) TO SECOND(3)")
	case KindArray, KindMultiset:
		b.WriteString(t.kind.String())
		b.WriteByte('<')
		t.elem.write(b)
		b.WriteByte('>')
	case KindMap:
		b.WriteString("MAP<")
		t.elem.write(b)
		b.WriteString(", ")
		t.val.write(b)
		b.WriteByte('>')
	case KindRow:
		b.WriteString("ROW<")
		for i, f := range t.row.fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteIdentifier(f.Name))
			b.WriteByte(' ')
			f.Type.write(b)
		}
		b.WriteByte('>')
	default:
		b.WriteString(t.kind.String())
	}
	if t.notNull {
		b.WriteString(" NOT NULL")
	}
}

// QuoteIdentifier quotes a name in backticks as Flink does, doubling any
// backtick in it.
func QuoteIdentifier(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

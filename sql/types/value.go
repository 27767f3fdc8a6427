package types

import (
	"fmt"
	"math"
)

// Value is a boxed SQL value, for constants, printing and tests (the hot
// path reads rows with the typed accessors). By the type of the value:
//
//	NULL                       nil
//	BOOLEAN                    bool
//	TINYINT, SMALLINT          int8, int16
//	INT, BIGINT                int32, int64
//	FLOAT, DOUBLE              float32, float64
//	DECIMAL                    Decimal
//	CHAR, VARCHAR              string
//	BINARY, VARBINARY          []byte
//	DATE, TIME                 Date, Time
//	TIMESTAMP, TIMESTAMP_LTZ   Timestamp
//	INTERVAL YEAR TO MONTH     int32 (months)
//	INTERVAL DAY TO SECOND     int64 (milliseconds)
//	ROW                        []Value (one per field)
//	ARRAY                      []Value
//	MAP, MULTISET              []MapEntry (a MULTISET's values are int32)
//
// Writers also take any Go integer for the integer and interval types, a
// float64 for FLOAT, a string for BINARY, and a Row, Array or Map for the
// constructed types.
type Value = any

// MapEntry is an entry of a boxed MAP or MULTISET value.
type MapEntry struct {
	Key, Value Value
}

// FieldValue returns field i of r (of type rt) boxed.
func FieldValue(rt *RowType, r Row, i int) Value {
	if r.IsNull(i) {
		return nil
	}
	return cellValue(rt.fields[i].Type, r.b, r.slot(i))
}

// RowValues returns every field of r (of type rt) boxed.
func RowValues(rt *RowType, r Row) []Value {
	vs := make([]Value, rt.Len())
	for i := range vs {
		vs[i] = FieldValue(rt, r, i)
	}
	return vs
}

// ElemValue returns element j of a (of element type elem) boxed.
func ElemValue(elem Type, a Array, j int) Value {
	if a.IsNull(j) {
		return nil
	}
	return cellValue(elem, a.b, a.slot(j))
}

// ArrayValues returns the elements of a boxed.
func ArrayValues(elem Type, a Array) []Value {
	vs := make([]Value, a.Len())
	for j := range vs {
		vs[j] = ElemValue(elem, a, j)
	}
	return vs
}

// MapEntries returns the entries of m (of MAP or MULTISET type t) boxed.
func MapEntries(t Type, m Map) []MapEntry {
	ks, vs := m.Keys(), m.Values()
	es := make([]MapEntry, ks.Len())
	for j := range es {
		es[j] = MapEntry{ElemValue(t.Elem(), ks, j), ElemValue(t.Value(), vs, j)}
	}
	return es
}

func cellValue(t Type, b string, slot uint64) Value {
	switch t.kind {
	case KindNull:
		return nil
	case KindBoolean:
		return slot != 0
	case KindTinyInt:
		return int8(slot)
	case KindSmallInt:
		return int16(slot)
	case KindInt, KindIntervalYearMonth:
		return int32(slot)
	case KindBigInt, KindIntervalDayTime:
		return int64(slot)
	case KindFloat:
		return math.Float32frombits(uint32(slot))
	case KindDouble:
		return math.Float64frombits(slot)
	case KindDecimal:
		return decimalAt(b, slot, int(t.p), int(t.s))
	case KindChar, KindVarChar:
		return varAt(b, slot)
	case KindBinary, KindVarBinary:
		return []byte(varAt(b, slot))
	case KindDate:
		return Date(int32(slot))
	case KindTime:
		return Time(slot)
	case KindTimestamp, KindTimestampLTZ:
		return timestampAt(b, slot, int(t.p))
	case KindRow:
		return RowValues(t.row, Row{b: varAt(b, slot), n: int32(t.row.Len())})
	case KindArray:
		return ArrayValues(*t.elem, Array{b: varAt(b, slot)})
	case KindMap, KindMultiset:
		return MapEntries(t, Map{b: varAt(b, slot)})
	}
	panic(fmt.Sprintf("types: no value of type %s", t))
}

// BuildRow writes a row of type rt from boxed values into arena (a fresh
// one if nil): for constants and tests.
func BuildRow(rt *RowType, arena *Arena, values ...Value) (Row, error) {
	if len(values) != rt.Len() {
		return Row{}, fmt.Errorf("types: %d values for a row of %d fields %s", len(values), rt.Len(), rt)
	}
	if arena == nil {
		arena = NewArena(0)
	}
	w := NewRowWriter(rt, arena)
	for i, v := range values {
		if err := w.SetValue(i, v); err != nil {
			return Row{}, err
		}
	}
	return w.Finish(), nil
}

// MustBuildRow is BuildRow for values known to fit; it panics on an error.
func MustBuildRow(rt *RowType, arena *Arena, values ...Value) Row {
	r, err := BuildRow(rt, arena, values...)
	if err != nil {
		panic(err)
	}
	return r
}

// SetValue sets field i from a boxed value (see Value for the Go types
// taken). The error names the field and the expected type.
func (w *RowWriter) SetValue(i int, v Value) error {
	f := w.rt.fields[i]
	if err := setCell(&w.cells, i, f.Type, v); err != nil {
		return fmt.Errorf("types: field %s %s: %w", QuoteIdentifier(f.Name), f.Type, err)
	}
	return nil
}

// AppendValue appends an element from a boxed value.
func (a *ArrayWriter) AppendValue(v Value) error {
	if err := setCell(&a.cells, a.next(), a.elem, v); err != nil {
		return fmt.Errorf("types: element of %s: %w", a.elem, err)
	}
	return nil
}

// Int64Of returns a value of a Go integer type (int, int8 … int64, uint8 …
// uint64, uint) as an int64, and false for other types and for unsigned
// values above math.MaxInt64.
func Int64Of(v Value) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	case uint:
		if uint64(x) <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// intRange returns the range of an integer kind.
func intRange(k Kind) (int64, int64) {
	switch k {
	case KindTinyInt:
		return math.MinInt8, math.MaxInt8
	case KindSmallInt:
		return math.MinInt16, math.MaxInt16
	case KindInt, KindIntervalYearMonth, KindDate:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func setCell(c *cells, i int, t Type, v Value) error {
	if v == nil {
		c.setNull(i)
		return nil
	}
	bad := func() error { return fmt.Errorf("a %T value does not fit", v) }
	switch t.kind {
	case KindNull:
		return bad()
	case KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		var s uint64
		if b {
			s = 1
		}
		c.setFixed(i, s)
	case KindTinyInt, KindSmallInt, KindInt, KindBigInt, KindIntervalYearMonth, KindIntervalDayTime:
		n, ok := Int64Of(v)
		if !ok {
			return bad()
		}
		lo, hi := intRange(t.kind)
		if n < lo || n > hi {
			return fmt.Errorf("%d is out of range: %w", n, ErrOverflow)
		}
		c.setFixed(i, uint64(n))
	case KindFloat:
		switch x := v.(type) {
		case float32:
			c.setFixed(i, uint64(Float32Bits(x)))
		case float64:
			c.setFixed(i, uint64(Float32Bits(float32(x))))
		default:
			return bad()
		}
	case KindDouble:
		switch x := v.(type) {
		case float64:
			c.setFixed(i, Float64Bits(x))
		case float32:
			c.setFixed(i, Float64Bits(float64(x)))
		default:
			return bad()
		}
	case KindDecimal:
		d, ok := v.(Decimal)
		if !ok {
			n, isInt := Int64Of(v)
			if !isInt {
				return bad()
			}
			d = DecimalFromInt64(n)
		}
		return c.setDecimal(i, d, t)
	case KindChar, KindVarChar:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		c.setVar(i, s)
	case KindBinary, KindVarBinary:
		switch x := v.(type) {
		case []byte:
			c.setVarBytes(i, x)
		case string:
			c.setVar(i, x)
		default:
			return bad()
		}
	case KindDate:
		d, ok := v.(Date)
		if !ok {
			return bad()
		}
		c.setFixed(i, uint64(int64(d)))
	case KindTime:
		tm, ok := v.(Time)
		if !ok || tm < 0 || int64(tm) >= NanosPerDay {
			return bad()
		}
		c.setFixed(i, uint64(tm.Truncate(int(t.p))))
	case KindTimestamp, KindTimestampLTZ:
		ts, ok := v.(Timestamp)
		if !ok || ts.NanoOfMilli < 0 || ts.NanoOfMilli >= NanosPerMilli {
			return bad()
		}
		c.setTimestamp(i, ts, int(t.p))
	case KindRow:
		switch x := v.(type) {
		case Row:
			c.setVar(i, x.b)
		case []Value:
			w := NewRowWriter(t.row, nil)
			if len(x) != t.row.Len() {
				return fmt.Errorf("%d values for a row of %d fields", len(x), t.row.Len())
			}
			for j, e := range x {
				if err := w.SetValue(j, e); err != nil {
					return err
				}
			}
			c.beginVar(i)
			c.vbuf = w.AppendTo(c.vbuf)
			c.endVar(i)
		default:
			return bad()
		}
	case KindArray:
		switch x := v.(type) {
		case Array:
			c.setVar(i, x.b)
		case []Value:
			w := NewArrayWriter(*t.elem)
			for _, e := range x {
				if err := w.AppendValue(e); err != nil {
					return err
				}
			}
			c.beginVar(i)
			c.vbuf = w.AppendTo(c.vbuf)
			c.endVar(i)
		default:
			return bad()
		}
	case KindMap, KindMultiset:
		switch x := v.(type) {
		case Map:
			c.setVar(i, x.b)
		case []MapEntry:
			w := NewMapWriter(t)
			for _, e := range x {
				if err := w.keys.AppendValue(e.Key); err != nil {
					return err
				}
				if err := w.values.AppendValue(e.Value); err != nil {
					return err
				}
			}
			c.beginVar(i)
			c.vbuf = w.AppendTo(c.vbuf)
			c.endVar(i)
		default:
			return bad()
		}
	default:
		return bad()
	}
	return nil
}

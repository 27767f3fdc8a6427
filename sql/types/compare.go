package types

import (
	"math"
	"strings"
)

// Compare orders field i of rows a and b (both of a row type whose field i
// has type t): -1, 0 or +1, NULL before every value. Values compare as SQL
// does: numbers by value, strings and bytes by their bytes (for UTF-8, by
// code point), FLOAT and DOUBLE with NaN after every number, temporal
// values in time order, rows field by field, arrays element by element
// then by length, maps by their key array then their value array.
func Compare(t Type, a, b Row, i int) int {
	an, bn := a.IsNull(i), b.IsNull(i)
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	}
	return compareCell(t, a.b, a.slot(i), b.b, b.slot(i))
}

// NullOrder says where NULLs sort.
type NullOrder uint8

const (
	// NullsDefault sorts NULL as the smallest value, as Flink does: first in
	// ascending order, last in descending order.
	NullsDefault NullOrder = iota
	// NullsFirst sorts NULLs before every value.
	NullsFirst
	// NullsLast sorts NULLs after every value.
	NullsLast
)

// SortKey is one key of an ORDER BY: a field, its direction and where its
// NULLs go.
type SortKey struct {
	// Field is the position of the field in the row.
	Field int
	// Descending sorts from the largest value.
	Descending bool
	// Nulls places the NULLs.
	Nulls NullOrder
}

// RowComparator orders rows of one type by sort keys (ORDER BY, top-N,
// MIN/MAX over several fields). It is immutable and safe for concurrent
// use.
type RowComparator struct {
	keys  []SortKey
	types []Type
}

// NewRowComparator returns the ordering of rows of type rt by keys.
func NewRowComparator(rt *RowType, keys ...SortKey) *RowComparator {
	c := &RowComparator{keys: append([]SortKey(nil), keys...), types: make([]Type, len(keys))}
	for k, key := range keys {
		c.types[k] = rt.FieldType(key.Field)
	}
	return c
}

// Compare returns -1, 0 or +1 as a sorts before, with or after b.
func (c *RowComparator) Compare(a, b Row) int {
	for k, key := range c.keys {
		i := key.Field
		an, bn := a.IsNull(i), b.IsNull(i)
		if an || bn {
			if an && bn {
				continue
			}
			nullsFirst := key.Nulls == NullsFirst || (key.Nulls == NullsDefault && !key.Descending)
			if an == nullsFirst {
				return -1
			}
			return 1
		}
		r := compareCell(c.types[k], a.b, a.slot(i), b.b, b.slot(i))
		if r != 0 {
			if key.Descending {
				return -r
			}
			return r
		}
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpFloat orders floats with NaN after every number (-0.0 and +0.0 are
// one value in rows).
func cmpFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an || bn:
		if an && bn {
			return 0
		}
		if an {
			return 1
		}
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareCell compares two non-NULL cells of type t.
func compareCell(t Type, ab string, as uint64, bb string, bs uint64) int {
	switch t.kind {
	case KindFloat:
		return cmpFloat(float64(math.Float32frombits(uint32(as))), float64(math.Float32frombits(uint32(bs))))
	case KindDouble:
		return cmpFloat(math.Float64frombits(as), math.Float64frombits(bs))
	case KindDecimal:
		if t.p <= MaxCompactPrecision {
			return cmpInt(int64(as), int64(bs))
		}
		return decimalAt(ab, as, int(t.p), int(t.s)).Cmp(decimalAt(bb, bs, int(t.p), int(t.s)))
	case KindChar, KindVarChar, KindBinary, KindVarBinary:
		return strings.Compare(varAt(ab, as), varAt(bb, bs))
	case KindTimestamp, KindTimestampLTZ:
		if t.p <= MaxCompactTimestampPrecision {
			return cmpInt(int64(as), int64(bs))
		}
		return timestampAt(ab, as, int(t.p)).Compare(timestampAt(bb, bs, int(t.p)))
	case KindRow:
		ra := Row{b: varAt(ab, as), n: int32(t.row.Len())}
		rb := Row{b: varAt(bb, bs), n: int32(t.row.Len())}
		for i := 0; i < t.row.Len(); i++ {
			if r := Compare(t.row.FieldType(i), ra, rb, i); r != 0 {
				return r
			}
		}
		return 0
	case KindArray:
		return compareArrays(*t.elem, Array{b: varAt(ab, as)}, Array{b: varAt(bb, bs)})
	case KindMap, KindMultiset:
		ma, mb := Map{b: varAt(ab, as)}, Map{b: varAt(bb, bs)}
		if r := compareArrays(t.Elem(), ma.Keys(), mb.Keys()); r != 0 {
			return r
		}
		return compareArrays(t.Value(), ma.Values(), mb.Values())
	case KindNull:
		return 0
	}
	// BOOLEAN, the integers, DATE, TIME, intervals: the signed slot.
	return cmpInt(int64(as), int64(bs))
}

func compareArrays(elem Type, a, b Array) int {
	n, m := a.Len(), b.Len()
	for j := 0; j < n && j < m; j++ {
		an, bn := a.IsNull(j), b.IsNull(j)
		switch {
		case an && bn:
			continue
		case an:
			return -1
		case bn:
			return 1
		}
		if r := compareCell(elem, a.b, a.slot(j), b.b, b.slot(j)); r != 0 {
			return r
		}
	}
	return cmpInt(int64(n), int64(m))
}

// CompareValues orders two boxed values of type t as Compare does (NULL
// first).
func CompareValues(t Type, a, b Value) (int, error) {
	rt := MustRowType(F("v", t))
	ra, err := BuildRow(rt, nil, a)
	if err != nil {
		return 0, err
	}
	rb, err := BuildRow(rt, nil, b)
	if err != nil {
		return 0, err
	}
	return Compare(t, ra, rb, 0), nil
}

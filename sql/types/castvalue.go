package types

import (
	"fmt"
	"math"
	"math/big"
	"time"
)

// CastValue returns CAST(v AS to) for a boxed v of type from, as Flink
// evaluates it (for constant folding and tests; generated code does the
// same on typed values): integers narrow by wrapping and FLOAT/DOUBLE to
// integers truncate and saturate, as Java's casts; DECIMAL to integers
// truncates; numbers to DECIMAL round HALF_UP (an error wrapping
// ErrOverflow beyond the precision, where Flink gives NULL); BOOLEAN to
// numbers is 1 or 0 and numbers to BOOLEAN is v <> 0; TIMESTAMP to DATE and
// TIME takes its parts, DATE and TIME to TIMESTAMP start at midnight and
// 1970-01-01; TIMESTAMP and TIMESTAMP_LTZ convert through loc (nil means
// UTC); intervals convert to and from INT/BIGINT as months or
// milliseconds; strings cast as ParseValue and FormatValue, padded and cut
// to the target length; constructed values cast element by element. A cast
// SupportsExplicitCast refuses is an error. NULL casts to NULL.
func CastValue(v Value, from, to Type, loc *time.Location) (Value, error) {
	if v == nil {
		return nil, nil
	}
	if !SupportsExplicitCast(from, to) {
		return nil, fmt.Errorf("types: cannot cast %s to %s", from, to)
	}
	bad := func() (Value, error) {
		return nil, fmt.Errorf("types: a %T is not a value of %s", v, from)
	}
	switch {
	case to.IsString():
		if from.IsString() {
			s, ok := v.(string)
			if !ok {
				return bad()
			}
			return CastString(to, s), nil
		}
		s, err := FormatValue(from, v, loc)
		if err != nil {
			return nil, err
		}
		return CastString(to, s), nil
	case from.IsString():
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		return ParseValue(to, s, loc)
	case to.IsBinary():
		b, ok := v.([]byte)
		if !ok {
			return bad()
		}
		return castBinary(to, append([]byte(nil), b...)), nil
	case from.IsConstructed():
		return castConstructed(v, from, to, loc)
	}
	// Scalars: read v as an integer, a float, a decimal or a temporal value.
	switch {
	case from.kind == KindBoolean || from.IsNumeric() || from.IsInterval():
		return castNumeric(v, from, to)
	case from.IsTemporal():
		return castTemporal(v, from, to, loc)
	}
	return nil, fmt.Errorf("types: cannot cast %s to %s", from, to)
}

// numeric is a number read from a boxed value.
type numeric struct {
	isInt, isFloat, isDec bool
	i                     int64
	f                     float64
	d                     Decimal
}

func readNumeric(v Value, t Type) (numeric, bool) {
	switch t.kind {
	case KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return numeric{}, false
		}
		if b {
			return numeric{isInt: true, i: 1}, true
		}
		return numeric{isInt: true}, true
	case KindFloat, KindDouble:
		switch x := v.(type) {
		case float32:
			return numeric{isFloat: true, f: float64(x)}, true
		case float64:
			return numeric{isFloat: true, f: x}, true
		}
		return numeric{}, false
	case KindDecimal:
		d, ok := v.(Decimal)
		return numeric{isDec: true, d: d}, ok
	}
	n, ok := Int64Of(v)
	return numeric{isInt: true, i: n}, ok
}

// boxInt boxes n as a value of integer-like type t, wrapping as Java's
// narrowing casts do.
func boxInt(n int64, t Type) Value {
	switch t.kind {
	case KindTinyInt:
		return int8(n)
	case KindSmallInt:
		return int16(n)
	case KindInt, KindIntervalYearMonth:
		return int32(n)
	}
	return n
}

// javaDoubleToLong is Java's (long) d: truncation, NaN to 0, saturation.
func javaDoubleToLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaDoubleToInt is Java's (int) d.
func javaDoubleToInt(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int64(int32(f))
}

func castNumeric(v Value, from, to Type) (Value, error) {
	n, ok := readNumeric(v, from)
	if !ok {
		return nil, fmt.Errorf("types: a %T is not a value of %s", v, from)
	}
	switch {
	case to.kind == KindBoolean:
		switch {
		case n.isInt:
			return n.i != 0, nil
		case n.isFloat:
			return n.f != 0, nil
		}
		return !n.d.IsZero(), nil
	case to.IsIntegral() || to.IsInterval():
		var i int64
		switch {
		case n.isInt:
			i = n.i
		case n.isFloat:
			if to.kind == KindBigInt || to.kind == KindIntervalDayTime {
				i = javaDoubleToLong(n.f)
			} else {
				i = javaDoubleToInt(n.f)
			}
		default:
			// BigDecimal.longValue(): the integral part's low 64 bits.
			q := n.d.Rescale(0)
			if n.d.Scale() > 0 {
				q = normBig(new(big.Int).Quo(n.d.bigU(), bigPow10(n.d.Scale())), 0)
			}
			if q.b != nil {
				i = int64(new(big.Int).And(q.b, new(big.Int).SetUint64(math.MaxUint64)).Uint64())
			} else {
				i = q.u
			}
		}
		return boxInt(i, to), nil
	case to.IsApproximateNumeric():
		var f float64
		switch {
		case n.isInt:
			f = float64(n.i)
		case n.isFloat:
			f = n.f
		default:
			f = n.d.Float64()
		}
		if to.kind == KindFloat {
			return float32(f), nil
		}
		return f, nil
	case to.kind == KindDecimal:
		var d Decimal
		switch {
		case n.isInt:
			d = DecimalFromInt64(n.i)
		case n.isFloat:
			var err error
			if d, err = DecimalFromFloat64(n.f); err != nil {
				return nil, err
			}
		default:
			d = n.d
		}
		return d.Fit(int(to.p), int(to.s))
	}
	return nil, fmt.Errorf("types: cannot cast %s to %s", from, to)
}

func castTemporal(v Value, from, to Type, loc *time.Location) (Value, error) {
	// Read v as a wall-clock timestamp (and whether it is an instant).
	var ts Timestamp
	switch from.kind {
	case KindDate:
		d, ok := v.(Date)
		if !ok {
			return nil, fmt.Errorf("types: a %T is not a DATE", v)
		}
		ts = Timestamp{Millis: int64(d) * MillisPerDay}
	case KindTime:
		t, ok := v.(Time)
		if !ok {
			return nil, fmt.Errorf("types: a %T is not a TIME", v)
		}
		ts = Timestamp{Millis: int64(t) / NanosPerMilli, NanoOfMilli: int32(int64(t) % NanosPerMilli)}
	case KindTimestamp, KindTimestampLTZ:
		t, ok := v.(Timestamp)
		if !ok {
			return nil, fmt.Errorf("types: a %T is not a %s", v, from.kind)
		}
		ts = t
		if from.kind == KindTimestampLTZ {
			ts = ts.ToLocal(loc)
		}
	}
	switch to.kind {
	case KindDate:
		return ts.Date(), nil
	case KindTime:
		return ts.TimeOfDay().Truncate(int(to.p)), nil
	case KindTimestamp:
		return ts.Truncate(int(to.p)), nil
	case KindTimestampLTZ:
		return ts.FromLocal(loc).Truncate(int(to.p)), nil
	}
	return nil, fmt.Errorf("types: cannot cast %s to %s", from, to)
}

func castConstructed(v Value, from, to Type, loc *time.Location) (Value, error) {
	switch from.kind {
	case KindArray:
		xs, ok := v.([]Value)
		if !ok {
			return nil, fmt.Errorf("types: a %T is not an ARRAY", v)
		}
		out := make([]Value, len(xs))
		for j, x := range xs {
			var err error
			if out[j], err = CastValue(x, *from.elem, *to.elem, loc); err != nil {
				return nil, fmt.Errorf("element %d: %w", j, err)
			}
		}
		return out, nil
	case KindRow:
		xs, ok := v.([]Value)
		if !ok || len(xs) != from.row.Len() {
			return nil, fmt.Errorf("types: a %T is not a %s", v, from)
		}
		out := make([]Value, len(xs))
		for j, x := range xs {
			var err error
			if out[j], err = CastValue(x, from.row.FieldType(j), to.row.FieldType(j), loc); err != nil {
				return nil, fmt.Errorf("field %s: %w", QuoteIdentifier(from.row.Field(j).Name), err)
			}
		}
		return out, nil
	case KindMap, KindMultiset:
		es, ok := v.([]MapEntry)
		if !ok {
			return nil, fmt.Errorf("types: a %T is not a %s", v, from.kind)
		}
		out := make([]MapEntry, len(es))
		for j, e := range es {
			k, err := CastValue(e.Key, from.Elem(), to.Elem(), loc)
			if err != nil {
				return nil, err
			}
			val, err := CastValue(e.Value, from.Value(), to.Value(), loc)
			if err != nil {
				return nil, err
			}
			out[j] = MapEntry{k, val}
		}
		return out, nil
	}
	return nil, fmt.Errorf("types: cannot cast %s to %s", from, to)
}

package formats

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"

	"github.com/eddystream/eddy/sql/types"
)

// avroValueOut converts a boxed SQL value of a scalar type t to its Avro
// value (avroAppend writes arrays, maps and rows); path names the column
// in errors.
func avroValueOut(t types.Type, v types.Value, path string) (any, error) {
	if v == nil {
		if !t.IsNullable() {
			return nil, fmt.Errorf("avro: %s is NULL but its type %s is NOT NULL", avroColumnName(path), t)
		}
		return nil, nil
	}
	switch t.Kind() {
	case types.KindBoolean, types.KindBigInt, types.KindFloat, types.KindDouble, types.KindChar, types.KindVarChar,
		types.KindBinary, types.KindVarBinary:
		return v, nil
	case types.KindTinyInt, types.KindSmallInt, types.KindInt:
		n, _ := types.Int64Of(v)
		return int32(n), nil
	case types.KindDecimal:
		d := v.(types.Decimal).Rescale(t.Scale())
		return twosComplement(d.BigUnscaled()), nil
	case types.KindDate:
		return int32(v.(types.Date)), nil
	case types.KindTime:
		ns := int64(v.(types.Time))
		if t.Precision() > 3 {
			return ns / 1000, nil
		}
		return int32(ns / 1_000_000), nil
	case types.KindTimestamp, types.KindTimestampLTZ:
		ts := v.(types.Timestamp)
		switch p := t.Precision(); {
		case p <= 3:
			return ts.Millis, nil
		case p <= 6:
			if ts.Millis >= math.MaxInt64/1000 || ts.Millis < math.MinInt64/1000 {
				return nil, fmt.Errorf("avro: %s: %v is out of the range of timestamp-micros", avroColumnName(path), ts)
			}
			return ts.Millis*1000 + int64(ts.NanoOfMilli)/1000, nil
		default:
			if ts.Millis >= math.MaxInt64/1_000_000 || ts.Millis < math.MinInt64/1_000_000 {
				return nil, fmt.Errorf("avro: %s: %v is out of the range of timestamp-nanos (years 1677 to 2262); use TIMESTAMP(6)", avroColumnName(path), ts)
			}
			return ts.Millis*1_000_000 + int64(ts.NanoOfMilli), nil
		}
	}
	return nil, fmt.Errorf("avro: %s is %s, which the avro formats cannot hold", avroColumnName(path), t)
}

// twosComplement returns the big-endian two's-complement bytes of n, as
// short as they can be (Avro's decimal).
func twosComplement(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n - 1, complemented, is n in two's complement.
	m := new(big.Int).Neg(n)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// fromTwosComplement is the integer of big-endian two's-complement bytes.
func fromTwosComplement(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

// avroValueIn converts a decoded Avro value (logical types raw) to the
// boxed SQL value of type t; path names the column in errors.
func avroValueIn(t types.Type, v any, path string) (types.Value, error) {
	if v == nil {
		if !t.IsNullable() {
			return nil, fmt.Errorf("avro: %s is null but its type %s is NOT NULL", avroColumnName(path), t)
		}
		return nil, nil
	}
	bad := func() error {
		return fmt.Errorf("avro: %s is %s, but the message holds a %T (%v)", avroColumnName(path), t, v, v)
	}
	switch t.Kind() {
	case types.KindBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		var n int64
		switch x := v.(type) {
		case int32:
			n = int64(x)
		case int64:
			n = x
		default:
			return nil, bad()
		}
		switch t.Kind() {
		case types.KindTinyInt:
			if n < math.MinInt8 || n > math.MaxInt8 {
				return nil, fmt.Errorf("avro: %s: %d is out of the range of TINYINT", avroColumnName(path), n)
			}
			return int8(n), nil
		case types.KindSmallInt:
			if n < math.MinInt16 || n > math.MaxInt16 {
				return nil, fmt.Errorf("avro: %s: %d is out of the range of SMALLINT", avroColumnName(path), n)
			}
			return int16(n), nil
		case types.KindInt:
			if n < math.MinInt32 || n > math.MaxInt32 {
				return nil, fmt.Errorf("avro: %s: %d is out of the range of INT", avroColumnName(path), n)
			}
			return int32(n), nil
		}
		return n, nil
	case types.KindFloat:
		switch x := v.(type) {
		case float32:
			return x, nil
		case float64:
			return float32(x), nil
		}
	case types.KindDouble:
		switch x := v.(type) {
		case float32:
			return float64(x), nil
		case float64:
			return x, nil
		}
	case types.KindChar, types.KindVarChar:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case types.KindBinary, types.KindVarBinary:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case types.KindDecimal:
		b, ok := v.([]byte)
		if !ok {
			return nil, bad()
		}
		d, err := types.DecimalFromBig(fromTwosComplement(b), t.Scale()).Fit(t.Precision(), t.Scale())
		if err != nil {
			return nil, fmt.Errorf("avro: %s: %w", avroColumnName(path), err)
		}
		return d, nil
	case types.KindDate:
		if x, ok := v.(int32); ok {
			return types.Date(x), nil
		}
	case types.KindTime:
		var ns int64
		switch x := v.(type) {
		case int32: // time-millis
			ns = int64(x) * 1_000_000
		case int64: // time-micros
			if x < 0 || x >= 86_400_000_000 {
				return nil, fmt.Errorf("avro: %s: %d microseconds is not a time of day (0 to 86399999999)", avroColumnName(path), x)
			}
			ns = x * 1000
		default:
			return nil, bad()
		}
		if ns < 0 || ns >= 86_400_000_000_000 {
			return nil, fmt.Errorf("avro: %s: %d milliseconds is not a time of day (0 to 86399999)", avroColumnName(path), v)
		}
		return types.Time(ns), nil
	case types.KindTimestamp, types.KindTimestampLTZ:
		x, ok := v.(int64)
		if !ok {
			return nil, bad()
		}
		switch p := t.Precision(); {
		case p <= 3:
			return types.TimestampFromMillis(x), nil
		case p <= 6:
			ms := floorDiv64(x, 1000)
			return types.Timestamp{Millis: ms, NanoOfMilli: int32(x-ms*1000) * 1000}, nil
		default:
			ms := floorDiv64(x, 1_000_000)
			return types.Timestamp{Millis: ms, NanoOfMilli: int32(x - ms*1_000_000)}, nil
		}
	case types.KindArray:
		xs, ok := v.([]any)
		if !ok {
			return nil, bad()
		}
		out := make([]types.Value, len(xs))
		for j, x := range xs {
			e, err := avroValueIn(t.Elem(), x, path+"[]")
			if err != nil {
				return nil, err
			}
			out[j] = e
		}
		return out, nil
	case types.KindMap, types.KindMultiset:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad()
		}
		out := make([]types.MapEntry, 0, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			e, err := avroValueIn(t.Value(), m[k], path+"{}")
			if err != nil {
				return nil, err
			}
			out = append(out, types.MapEntry{Key: k, Value: e})
		}
		return out, nil
	case types.KindRow:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad()
		}
		return avroFieldsIn(t.Row(), m, path)
	}
	return nil, bad()
}

// avroFieldsIn converts a decoded record to the boxed fields of a row of
// type rt.
func avroFieldsIn(rt *types.RowType, m map[string]any, path string) ([]types.Value, error) {
	out := make([]types.Value, rt.Len())
	for j, f := range rt.Fields() {
		p := f.Name
		if path != "" {
			p = path + "." + f.Name
		}
		e, err := avroValueIn(f.Type, m[f.Name], p)
		if err != nil {
			return nil, err
		}
		out[j] = e
	}
	return out, nil
}

// floorDiv64 is a/b rounded towards negative infinity.
func floorDiv64(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// avroAppendRow appends row r of type rt in Avro's binary encoding of the
// schema AvroSchemaOf derives from rt. Maps are written in the order of
// their entries in the row, so that a row is always written to the same
// bytes.
func avroAppendRow(dst []byte, rt *types.RowType, r types.Row) ([]byte, error) {
	var err error
	for i, f := range rt.Fields() {
		if dst, err = avroAppend(dst, f.Type, types.FieldValue(rt, r, i), f.Name); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// avroAppend appends boxed value v of type t (its union branch first if t
// is nullable); path names the column in errors.
func avroAppend(dst []byte, t types.Type, v types.Value, path string) ([]byte, error) {
	if v == nil {
		if !t.IsNullable() {
			return nil, fmt.Errorf("avro: %s is NULL but its type %s is NOT NULL", avroColumnName(path), t)
		}
		return append(dst, 0), nil // branch 0, null
	}
	if t.IsNullable() {
		dst = append(dst, 2) // branch 1
	}
	var err error
	switch t.Kind() {
	case types.KindArray:
		vs := v.([]types.Value)
		if len(vs) > 0 {
			dst = binary.AppendVarint(dst, int64(len(vs)))
			for _, e := range vs {
				if dst, err = avroAppend(dst, t.Elem(), e, path+"[]"); err != nil {
					return nil, err
				}
			}
		}
		return append(dst, 0), nil
	case types.KindMap, types.KindMultiset:
		es := v.([]types.MapEntry)
		if len(es) > 0 {
			dst = binary.AppendVarint(dst, int64(len(es)))
			for _, e := range es {
				k, ok := e.Key.(string)
				if !ok {
					return nil, fmt.Errorf("avro: %s holds a NULL key, which an Avro map cannot", avroColumnName(path))
				}
				dst = binary.AppendVarint(dst, int64(len(k)))
				dst = append(dst, k...)
				if dst, err = avroAppend(dst, t.Value(), e.Value, path+"{}"); err != nil {
					return nil, err
				}
			}
		}
		return append(dst, 0), nil
	case types.KindRow:
		vs := v.([]types.Value)
		for j, f := range t.Row().Fields() {
			if dst, err = avroAppend(dst, f.Type, vs[j], path+"."+f.Name); err != nil {
				return nil, err
			}
		}
		return dst, nil
	}
	a, err := avroValueOut(t.NotNull(), v, path)
	if err != nil {
		return nil, err
	}
	switch x := a.(type) {
	case bool:
		if x {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case int32:
		return binary.AppendVarint(dst, int64(x)), nil
	case int64:
		return binary.AppendVarint(dst, x), nil
	case float32:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(x)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(x)), nil
	case string:
		dst = binary.AppendVarint(dst, int64(len(x)))
		return append(dst, x...), nil
	case []byte:
		dst = binary.AppendVarint(dst, int64(len(x)))
		return append(dst, x...), nil
	}
	return nil, fmt.Errorf("avro: %s is %s, which the avro formats cannot hold", avroColumnName(path), t)
}

package types

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
)

// randType returns a random type, constructed types down to depth.
func randType(rng *rand.Rand, depth int) Type {
	var t Type
	n := 19
	if depth > 0 {
		n = 24
	}
	switch rng.IntN(n) {
	case 0:
		t = Boolean()
	case 1:
		t = TinyInt()
	case 2:
		t = SmallInt()
	case 3:
		t = Int()
	case 4:
		t = BigInt()
	case 5:
		t = Float()
	case 6:
		t = Double()
	case 7:
		p := 1 + rng.IntN(18)
		t = DecimalType(p, rng.IntN(p+1))
	case 8:
		p := 19 + rng.IntN(20)
		t = DecimalType(p, rng.IntN(p+1))
	case 9:
		t = Char(1 + rng.IntN(10))
	case 10:
		t = String()
	case 11:
		t = Bytes()
	case 12:
		t = DateType()
	case 13:
		t = TimeType(rng.IntN(10))
	case 14:
		t = TimestampType(rng.IntN(4))
	case 15:
		t = TimestampType(4 + rng.IntN(6))
	case 16:
		t = TimestampLTZType(rng.IntN(10))
	case 17:
		t = IntervalYearMonth()
	case 18:
		t = IntervalDayTime()
	case 19, 20:
		t = randRowType(rng, depth-1).Type()
	case 21:
		t = ArrayOf(randType(rng, depth-1))
	case 22:
		t = MapOf(randType(rng, depth-1), randType(rng, depth-1))
	case 23:
		t = MultisetOf(randType(rng, depth-1))
	}
	if rng.IntN(4) == 0 {
		t = t.NotNull()
	}
	return t
}

func randRowType(rng *rand.Rand, depth int) *RowType {
	n := rng.IntN(8)
	if rng.IntN(20) == 0 {
		n = 60 + rng.IntN(80) // several bitmap words
	}
	fs := make([]Field, n)
	for i := range fs {
		fs[i] = F(fmt.Sprintf("f%d", i), randType(rng, depth))
	}
	return MustRowType(fs...)
}

// randValue returns a random value of t, NULL sometimes when nullable.
func randValue(rng *rand.Rand, t Type) Value {
	if t.IsNullable() && rng.IntN(6) == 0 {
		return nil
	}
	switch t.Kind() {
	case KindBoolean:
		return rng.IntN(2) == 0
	case KindTinyInt:
		return int8(rng.Uint32())
	case KindSmallInt:
		return int16(rng.Uint32())
	case KindInt:
		return int32(rng.Uint32())
	case KindBigInt:
		switch rng.IntN(4) {
		case 0:
			return int64(math.MinInt64)
		case 1:
			return int64(rng.IntN(100))
		}
		return int64(rng.Uint64())
	case KindIntervalYearMonth:
		return int32(rng.IntN(20000) - 10000)
	case KindIntervalDayTime:
		return rng.Int64N(1e12) - 5e11
	case KindFloat:
		switch rng.IntN(8) {
		case 0:
			return float32(math.NaN())
		case 1:
			return float32(math.Copysign(0, -1))
		case 2:
			return float32(math.Inf(-1))
		}
		return float32(rng.NormFloat64() * 1000)
	case KindDouble:
		switch rng.IntN(8) {
		case 0:
			return math.NaN()
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return math.Inf(1)
		case 3:
			return 1e-300 * rng.Float64()
		}
		return rng.NormFloat64() * 1e6
	case KindDecimal:
		digits := 1 + rng.IntN(t.Precision())
		u := new(big.Int)
		for range digits {
			u.Mul(u, big.NewInt(10))
			u.Add(u, big.NewInt(int64(rng.IntN(10))))
		}
		if rng.IntN(2) == 0 {
			u.Neg(u)
		}
		return DecimalFromBig(u, t.Scale())
	case KindChar, KindVarChar:
		const alphabet = "abcXYZ 019_é€𝄞\x00"
		rs := []rune(alphabet)
		n := rng.IntN(12)
		out := make([]rune, n)
		for i := range out {
			out[i] = rs[rng.IntN(len(rs))]
		}
		return string(out)
	case KindBinary, KindVarBinary:
		b := make([]byte, rng.IntN(10))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	case KindDate:
		return Date(int32(rng.IntN(int(MaxDate-MinDate))) + int32(MinDate))
	case KindTime:
		return Time(rng.Int64N(NanosPerDay)).Truncate(t.Precision())
	case KindTimestamp, KindTimestampLTZ:
		lo, hi := int64(MinDate)*MillisPerDay, int64(MaxDate+1)*MillisPerDay
		ts := Timestamp{Millis: lo + rng.Int64N(hi-lo), NanoOfMilli: int32(rng.IntN(NanosPerMilli))}
		return ts.Truncate(t.Precision())
	case KindRow:
		rt := t.Row()
		vs := make([]Value, rt.Len())
		for i := range vs {
			vs[i] = randValue(rng, rt.FieldType(i))
		}
		return vs
	case KindArray:
		vs := make([]Value, rng.IntN(5))
		if rng.IntN(10) == 0 {
			vs = make([]Value, 65+rng.IntN(70))
		}
		for i := range vs {
			vs[i] = randValue(rng, t.Elem())
		}
		return vs
	case KindMap, KindMultiset:
		es := make([]MapEntry, rng.IntN(4))
		for i := range es {
			es[i] = MapEntry{randValue(rng, t.Elem()), randValue(rng, t.Value())}
		}
		return es
	}
	return nil
}

// valueEqual compares boxed values as SQL values of type t (floats by
// canonical bits, decimals by value).
func valueEqual(t Type, a, b Value) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch t.Kind() {
	case KindFloat:
		return Float32Bits(a.(float32)) == Float32Bits(b.(float32))
	case KindDouble:
		return Float64Bits(a.(float64)) == Float64Bits(b.(float64))
	case KindDecimal:
		return a.(Decimal).Cmp(b.(Decimal)) == 0
	case KindBinary, KindVarBinary:
		return bytes.Equal(a.([]byte), b.([]byte))
	case KindRow:
		as, bs := a.([]Value), b.([]Value)
		for i := range as {
			if !valueEqual(t.Row().FieldType(i), as[i], bs[i]) {
				return false
			}
		}
		return len(as) == len(bs)
	case KindArray:
		as, bs := a.([]Value), b.([]Value)
		if len(as) != len(bs) {
			return false
		}
		for i := range as {
			if !valueEqual(t.Elem(), as[i], bs[i]) {
				return false
			}
		}
		return true
	case KindMap, KindMultiset:
		as, bs := a.([]MapEntry), b.([]MapEntry)
		if len(as) != len(bs) {
			return false
		}
		for i := range as {
			if !valueEqual(t.Elem(), as[i].Key, bs[i].Key) || !valueEqual(t.Value(), as[i].Value, bs[i].Value) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

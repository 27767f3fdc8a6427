package types

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Names of the logical types of Debezium and Kafka Connect that carry
// temporal and decimal values.
const (
	DebeziumDate           = "io.debezium.time.Date"
	DebeziumTime           = "io.debezium.time.Time"
	DebeziumMicroTime      = "io.debezium.time.MicroTime"
	DebeziumNanoTime       = "io.debezium.time.NanoTime"
	DebeziumTimestamp      = "io.debezium.time.Timestamp"
	DebeziumMicroTimestamp = "io.debezium.time.MicroTimestamp"
	DebeziumNanoTimestamp  = "io.debezium.time.NanoTimestamp"
	DebeziumZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	DebeziumZonedTime      = "io.debezium.time.ZonedTime"
	DebeziumVariableScale  = "io.debezium.data.VariableScaleDecimal"
	ConnectDecimal         = "org.apache.kafka.connect.data.Decimal"
	ConnectDate            = "org.apache.kafka.connect.data.Date"
	ConnectTime            = "org.apache.kafka.connect.data.Time"
	ConnectTimestamp       = "org.apache.kafka.connect.data.Timestamp"
)

// DebeziumLogical returns the Kafka Connect type and the logical type's
// name under which JSONOptions.Debezium writes a value of type t ("int32"
// and DebeziumDate for DATE), and for DECIMAL the Connect parameters
// ("scale", "connect.decimal.precision"). name is empty for types written
// as they are without the option.
func DebeziumLogical(t Type) (connectType, name string, params [][2]string) {
	switch t.kind {
	case KindDate:
		return "int32", DebeziumDate, nil
	case KindTime:
		switch p := t.Precision(); {
		case p <= 3:
			return "int32", DebeziumTime, nil
		case p <= 6:
			return "int64", DebeziumMicroTime, nil
		}
		return "int64", DebeziumNanoTime, nil
	case KindTimestamp:
		switch p := t.Precision(); {
		case p <= 3:
			return "int64", DebeziumTimestamp, nil
		case p <= 6:
			return "int64", DebeziumMicroTimestamp, nil
		}
		return "int64", DebeziumNanoTimestamp, nil
	case KindTimestampLTZ:
		return "string", DebeziumZonedTimestamp, nil
	case KindDecimal:
		return "bytes", ConnectDecimal, [][2]string{
			{"scale", strconv.Itoa(t.Scale())},
			{"connect.decimal.precision", strconv.Itoa(t.Precision())},
		}
	}
	return "", "", nil
}

// appendDebeziumCell appends a value of a type that JSONOptions.Debezium
// writes in Debezium's form; ok is false for other types.
func appendDebeziumCell(dst []byte, t Type, b string, slot uint64) (out []byte, ok bool, err error) {
	switch t.kind {
	case KindDate:
		return strconv.AppendInt(dst, int64(int32(slot)), 10), true, nil
	case KindTime:
		v := int64(slot) // nanoseconds since midnight
		switch p := t.Precision(); {
		case p <= 3:
			v /= NanosPerMilli
		case p <= 6:
			v /= 1000
		}
		return strconv.AppendInt(dst, v, 10), true, nil
	case KindTimestamp:
		ts := timestampAt(b, slot, t.Precision())
		var v int64
		switch p := t.Precision(); {
		case p <= 3:
			v = ts.Millis
		case p <= 6:
			v = ts.Millis*1000 + int64(ts.NanoOfMilli)/1000
		default:
			// Nanoseconds since the epoch fit in an int64 for years 1677
			// to 2262 only.
			const lim = math.MaxInt64/NanosPerMilli - 1
			if ts.Millis > lim || ts.Millis < -lim {
				return nil, true, fmt.Errorf("TIMESTAMP %s does not fit Debezium's %s (nanoseconds since 1970 in 64 bits, years 1677 to 2262); use TIMESTAMP(6)", ts.Format(t.Precision()), DebeziumNanoTimestamp)
			}
			v = ts.Millis*NanosPerMilli + int64(ts.NanoOfMilli)
		}
		return strconv.AppendInt(dst, v, 10), true, nil
	case KindTimestampLTZ:
		ts := timestampAt(b, slot, t.Precision())
		dst = append(dst, '"')
		dst = ts.appendSQL(dst, 'T', 0)
		return append(dst, 'Z', '"'), true, nil
	case KindDecimal:
		d := decimalAt(b, slot, t.Precision(), t.Scale())
		var buf [16]byte
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, appendTwosComplement(buf[:0], d))
		return append(dst, '"'), true, nil
	}
	return dst, false, nil
}

// appendTwosComplement appends the unscaled value of d in big-endian two's
// complement in the fewest bytes that hold it, as Java's
// BigInteger.toByteArray (0 is one zero byte).
func appendTwosComplement(dst []byte, d Decimal) []byte {
	if u, ok := d.Unscaled(); ok {
		var b [8]byte
		for i := 7; i >= 0; i-- {
			b[i] = byte(u)
			u >>= 8
		}
		i := 0
		for i < 7 && ((b[i] == 0 && b[i+1]&0x80 == 0) || (b[i] == 0xff && b[i+1]&0x80 != 0)) {
			i++
		}
		return append(dst, b[i:]...)
	}
	x := d.bigU()
	if x.Sign() >= 0 {
		mag := x.Bytes()
		if mag[0]&0x80 != 0 {
			dst = append(dst, 0)
		}
		return append(dst, mag...)
	}
	// x < 0: 2^(8n) + x in n bytes, n the fewest whose sign bit is set.
	n := (new(big.Int).Not(x).BitLen())/8 + 1 // -x-1 = ^x needs < 8n-1 bits
	v := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	v.Add(v, x)
	return v.FillBytes(make([]byte, n))
}

// DecimalFromTwosComplement returns the decimal whose unscaled value is b
// in big-endian two's complement (Kafka Connect's Decimal) and whose scale
// is scale. An empty b is 0.
func DecimalFromTwosComplement(b []byte, scale int) Decimal {
	if len(b) <= 8 {
		var u int64
		if len(b) > 0 && b[0]&0x80 != 0 {
			u = -1
		}
		for _, c := range b {
			u = u<<8 | int64(c)
		}
		return NewDecimal(u, scale)
	}
	x := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return normBig(x, int32(scale))
}

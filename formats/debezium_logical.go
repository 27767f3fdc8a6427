package formats

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/eddystream/eddy/sql/types"
)

// logicalColumn is a column of the table whose values the messages'
// schema names with a logical type of Debezium or Kafka Connect: a date
// as days since the epoch, a timestamp as microseconds, a DECIMAL as the
// base64 of its unscaled value, and so on.
type logicalColumn struct {
	field   string     // the column's name, its field in before and after
	logical string     // the logical type's name
	scale   int        // the scale of a Connect Decimal
	target  types.Type // the column's type in the table
}

// logicalReader converts the values of logical types in the payload of
// enveloped Debezium messages into the text the JSON decoder reads for the
// table's columns, as the messages' schema names them. Debezium's
// connectors write such messages with their default settings
// (time.precision.mode adaptive, decimal.handling.mode precise), and so
// does eddy's Kafka pipeline sink with its schema included.
type logicalReader struct {
	rt     *types.RowType
	tsSep  byte   // between a timestamp's date and time: ' ' or 'T'
	ignore bool   // a value that does not convert is NULL ('ignore-parse-errors')
	schema []byte // the schema the columns were found in
	cols   []logicalColumn
}

func newLogicalReader(rt *types.RowType, opts *types.JSONOptions) *logicalReader {
	l := &logicalReader{rt: rt, tsSep: ' '}
	if opts != nil && opts.TimestampFormat == types.JSONTimestampISO8601 {
		l.tsSep = 'T'
	}
	l.ignore = opts != nil && opts.IgnoreParseErrors
	return l
}

// connectSchema is a schema as Kafka Connect's JSON converter writes it.
type connectSchema struct {
	Type       string            `json:"type"`
	Name       string            `json:"name"`
	Field      string            `json:"field"`
	Fields     []connectSchema   `json:"fields"`
	Parameters map[string]string `json:"parameters"`
}

// logicalNames are the logical types whose values the reader converts.
var logicalNames = map[string]bool{
	types.DebeziumDate: true, types.DebeziumTime: true, types.DebeziumMicroTime: true, types.DebeziumNanoTime: true,
	types.DebeziumTimestamp: true, types.DebeziumMicroTimestamp: true, types.DebeziumNanoTimestamp: true,
	types.DebeziumZonedTimestamp: true, types.DebeziumZonedTime: true, types.DebeziumVariableScale: true,
	types.ConnectDecimal: true, types.ConnectDate: true, types.ConnectTime: true, types.ConnectTimestamp: true,
}

// columns returns the table's columns that schema names with a logical
// type, from its "after" struct (or "before"); none if schema is not a
// Kafka Connect schema, which the reader does not need.
func (l *logicalReader) columns(schema []byte) ([]logicalColumn, error) {
	if bytes.Equal(schema, l.schema) {
		return l.cols, nil
	}
	var s connectSchema
	if json.Unmarshal(schema, &s) != nil {
		return nil, nil
	}
	var row *connectSchema
	for i := range s.Fields {
		f := &s.Fields[i]
		if (f.Field == "after" || (f.Field == "before" && row == nil)) && f.Type == "struct" {
			row = f
		}
	}
	var cols []logicalColumn
	if row != nil {
		for _, f := range row.Fields {
			if !logicalNames[f.Name] {
				continue
			}
			i, ok := l.rt.Index(f.Field)
			if !ok {
				continue
			}
			c := logicalColumn{field: f.Field, logical: f.Name, target: l.rt.FieldType(i)}
			if f.Name == types.ConnectDecimal {
				sc, err := strconv.Atoi(f.Parameters["scale"])
				if err != nil || !validScale(sc) {
					return nil, fmt.Errorf("debezium-json: column %s: the schema's %s has no \"scale\" parameter of -%d to %d (%q)",
						types.QuoteIdentifier(f.Field), f.Name, types.MaxDecimalPrecision, types.MaxDecimalPrecision, f.Parameters["scale"])
				}
				c.scale = sc
			}
			cols = append(cols, c)
		}
	}
	l.schema, l.cols = append(l.schema[:0], schema...), cols
	return cols, nil
}

// rewrite returns the message data with the values of its logical-typed
// columns in the text the JSON decoder reads for their columns' types, or
// data itself when the schema names none of the table's columns.
func (l *logicalReader) rewrite(data []byte) ([]byte, error) {
	var env struct {
		Schema  json.RawMessage            `json:"schema"`
		Payload map[string]json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(data, &env); err != nil || len(env.Schema) == 0 || env.Payload == nil {
		return data, nil // the decoder reports what is wrong
	}
	cols, err := l.columns(env.Schema)
	if err != nil || len(cols) == 0 {
		return data, err
	}
	for _, side := range []string{"before", "after"} {
		raw := env.Payload[side]
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var row map[string]json.RawMessage
		if err := json.Unmarshal(raw, &row); err != nil {
			return data, nil
		}
		for _, c := range cols {
			v, ok := row[c.field]
			if !ok || string(v) == "null" {
				continue
			}
			nv, err := l.convert(c, v)
			if err != nil && l.ignore {
				nv, err = json.RawMessage("null"), nil
			}
			if err != nil {
				return nil, fmt.Errorf("debezium-json: column %s of %q (%s): %w", types.QuoteIdentifier(c.field), side, c.logical, err)
			}
			row[c.field] = nv
		}
		if env.Payload[side], err = json.Marshal(row); err != nil {
			return nil, fmt.Errorf("debezium-json: %w", err)
		}
	}
	out, err := json.Marshal(struct {
		Payload map[string]json.RawMessage `json:"payload"`
	}{env.Payload})
	if err != nil {
		return nil, fmt.Errorf("debezium-json: %w", err)
	}
	return out, nil
}

// temporalValue is a value of a temporal logical type.
type temporalValue struct {
	kind types.Kind // KindDate, KindTime or KindTimestamp
	date types.Date
	tod  types.Time
	ts   types.Timestamp
}

// convert returns the JSON text of value v of column c for the column's
// type; v itself where the column's type takes the value as it is (a
// BIGINT column of microseconds).
func (l *logicalReader) convert(c logicalColumn, v json.RawMessage) (json.RawMessage, error) {
	k := c.target.Kind()
	switch c.logical {
	case types.ConnectDecimal, types.DebeziumVariableScale:
		if !isDecimalTarget(k) {
			return v, nil
		}
		d, ok, err := readDecimal(c, v)
		if err != nil || !ok {
			return v, err
		}
		if c.target.IsString() {
			return strconv.AppendQuote(nil, string(d.AppendText(nil))), nil
		}
		return d.AppendText(nil), nil
	}
	if k != types.KindDate && k != types.KindTime && k != types.KindTimestamp && k != types.KindTimestampLTZ && !c.target.IsString() {
		return v, nil
	}
	tv, ok, err := readTemporal(c.logical, v)
	if err != nil || !ok {
		return v, err
	}
	if c.target.IsString() && (c.logical == types.DebeziumZonedTimestamp || c.logical == types.DebeziumZonedTime) {
		return v, nil // the text as Debezium wrote it
	}
	var out []byte
	switch {
	case k == types.KindDate && tv.kind == types.KindDate:
		out = tv.date.AppendText(out)
	case k == types.KindDate && tv.kind == types.KindTimestamp:
		out = tv.ts.Date().AppendText(out)
	case k == types.KindTime && tv.kind == types.KindTime:
		out = tv.tod.AppendFormat(out, 0)
	case k == types.KindTime && tv.kind == types.KindTimestamp:
		out = tv.ts.TimeOfDay().AppendFormat(out, 0)
	case (k == types.KindTimestamp || k == types.KindTimestampLTZ) && tv.kind != types.KindTime:
		ts := tv.ts
		if tv.kind == types.KindDate {
			ts = types.Timestamp{Millis: int64(tv.date) * types.MillisPerDay}
		}
		out = ts.AppendFormat(out, 0)
		if len(out) > 10 && l.tsSep != ' ' {
			out[10] = l.tsSep
		}
		if k == types.KindTimestampLTZ {
			out = append(out, 'Z')
		}
	case c.target.IsString():
		switch tv.kind {
		case types.KindDate:
			out = tv.date.AppendText(out)
		case types.KindTime:
			out = tv.tod.AppendFormat(out, 9)
		default:
			out = tv.ts.AppendFormat(out, 0)
		}
	default:
		return nil, fmt.Errorf("a %s value does not convert to %s; declare the column as %s", tv.kind, c.target, tv.kind)
	}
	return strconv.AppendQuote(nil, string(out)), nil
}

func isDecimalTarget(k types.Kind) bool {
	switch k {
	case types.KindDecimal, types.KindFloat, types.KindDouble, types.KindChar, types.KindVarChar:
		return true
	}
	return false
}

// readDecimal reads a Connect Decimal (the base64 of the unscaled value,
// or a number as the JSON converter writes it with decimal.format NUMERIC)
// or a Debezium VariableScaleDecimal ({"scale":2,"value":"base64"}); ok
// is false for a number, which the JSON decoder reads as it is.
func readDecimal(c logicalColumn, v json.RawMessage) (d types.Decimal, ok bool, err error) {
	scale, b64 := c.scale, v
	if c.logical == types.DebeziumVariableScale {
		var vs struct {
			Scale *int            `json:"scale"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(v, &vs); err != nil || vs.Scale == nil {
			return d, false, fmt.Errorf("%s is not {\"scale\":..,\"value\":..}", v)
		}
		if !validScale(*vs.Scale) {
			return d, false, fmt.Errorf("the scale %d is not of -%d to %d", *vs.Scale, types.MaxDecimalPrecision, types.MaxDecimalPrecision)
		}
		scale, b64 = *vs.Scale, vs.Value
	}
	if len(b64) == 0 || b64[0] != '"' {
		if c.logical == types.DebeziumVariableScale {
			return d, false, fmt.Errorf("the value %s is not base64 text", b64)
		}
		return d, false, nil
	}
	var s string
	if err := json.Unmarshal(b64, &s); err != nil {
		return d, false, err
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return d, false, fmt.Errorf("%q is not base64: %w", s, err)
	}
	if scale >= 0 {
		return types.DecimalFromTwosComplement(raw, scale), true, nil
	}
	// A negative scale multiplies the unscaled value by a power of ten.
	x := types.DecimalFromTwosComplement(raw, 0).BigUnscaled()
	x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
	return types.DecimalFromBig(x, 0), true, nil
}

// validScale reports whether a decimal's scale is one a DECIMAL can hold,
// or its negative.
func validScale(s int) bool {
	return s >= -types.MaxDecimalPrecision && s <= types.MaxDecimalPrecision
}

// readTemporal reads a value of a temporal logical type; ok is false when
// v is not of the form the type has (the JSON decoder then reports it).
func readTemporal(logical string, v json.RawMessage) (tv temporalValue, ok bool, err error) {
	switch logical {
	case types.DebeziumZonedTimestamp, types.DebeziumZonedTime:
		var s string
		if json.Unmarshal(v, &s) != nil {
			return tv, false, nil
		}
		if logical == types.DebeziumZonedTimestamp {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return tv, false, fmt.Errorf("%q is not an ISO-8601 timestamp with an offset", s)
			}
			return temporalValue{kind: types.KindTimestamp, ts: types.TimestampFromTime(t.UTC())}, true, nil
		}
		t, err := time.Parse("15:04:05.999999999Z07:00", s)
		if err != nil {
			return tv, false, fmt.Errorf("%q is not an ISO-8601 time with an offset", s)
		}
		t = t.UTC()
		return temporalValue{kind: types.KindTime, tod: types.TimeOf(t.Hour(), t.Minute(), t.Second(), t.Nanosecond())}, true, nil
	}
	n, perr := strconv.ParseInt(string(v), 10, 64)
	if perr != nil {
		return tv, false, nil
	}
	switch logical {
	case types.DebeziumDate, types.ConnectDate:
		if n < int64(types.MinDate) || n > int64(types.MaxDate) {
			return tv, false, fmt.Errorf("%d days since 1970-01-01 is not a date of the years 0000 to 9999", n)
		}
		return temporalValue{kind: types.KindDate, date: types.Date(n)}, true, nil
	case types.DebeziumTime, types.ConnectTime:
		return timeOfDay(n, types.NanosPerMilli)
	case types.DebeziumMicroTime:
		return timeOfDay(n, 1000)
	case types.DebeziumNanoTime:
		return timeOfDay(n, 1)
	case types.DebeziumTimestamp, types.ConnectTimestamp:
		return timestampOf(n, types.NanosPerMilli)
	case types.DebeziumMicroTimestamp:
		return timestampOf(n, 1000)
	case types.DebeziumNanoTimestamp:
		return timestampOf(n, 1)
	}
	return tv, false, nil
}

// timeOfDay returns the time n units of unit nanoseconds after midnight.
func timeOfDay(n, unit int64) (temporalValue, bool, error) {
	if n < 0 || n >= types.NanosPerDay/unit {
		return temporalValue{}, false, fmt.Errorf("%d is not a time of day in units of %d ns", n, unit)
	}
	return temporalValue{kind: types.KindTime, tod: types.Time(n * unit)}, true, nil
}

// timestampOf returns the timestamp n units of unit nanoseconds after
// 1970-01-01 00:00:00, of the years 0000 to 9999.
func timestampOf(n, unit int64) (temporalValue, bool, error) {
	ts := splitNanos(n, unit)
	if ts.Millis < int64(types.MinDate)*types.MillisPerDay || ts.Millis >= (int64(types.MaxDate)+1)*types.MillisPerDay {
		return temporalValue{}, false, fmt.Errorf("%d units of %d ns since 1970 is not a time of the years 0000 to 9999", n, unit)
	}
	return temporalValue{kind: types.KindTimestamp, ts: ts}, true, nil
}

// splitNanos returns the timestamp of n units of unit nanoseconds since
// the epoch.
func splitNanos(n, unit int64) types.Timestamp {
	per := int64(types.NanosPerMilli) / unit // units per millisecond
	ms, rem := n/per, n%per
	if rem < 0 {
		ms, rem = ms-1, rem+per
	}
	return types.Timestamp{Millis: ms, NanoOfMilli: int32(rem * unit)}
}

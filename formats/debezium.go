package formats

import (
	"bytes"
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// debeziumSpec is the spec of the "debezium-json" format.
var debeziumSpec = connector.Spec{
	Name: "debezium-json",
	Kind: connector.FormatKind,
	Description: "Debezium's JSON change events, for SQL tables: reads {\"before\":..,\"after\":..,\"op\":..} messages (op c and r as +I, u as -U and +U, d as -D) " +
		"and writes every change as Flink does ({\"before\":null,\"after\":{..},\"op\":\"c\"} for +I and +U, {\"before\":{..},\"after\":null,\"op\":\"d\"} for -U and -D).",
	Options: append([]connector.Option{
		{Key: "schema-include", Type: connector.Bool, Default: "false",
			Description: "Whether the messages carry Debezium's schema envelope ({\"schema\":..,\"payload\":{..}}), as Kafka Connect writes them with value.converter.schemas.enable=true; " +
				"columns the schema names with Debezium's or Connect's temporal and decimal logical types (io.debezium.time.Date, io.debezium.time.MicroTimestamp, org.apache.kafka.connect.data.Decimal, …) are read as those types have them. Reading only."},
	}, jsonTableOptions...),
}

type debeziumFormat struct{}

func (debeziumFormat) Spec() connector.Spec { return debeziumSpec }

func (debeziumFormat) NewDecoder(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("debezium-json: reads the rows of SQL tables only, not %v records; use json for Go records", ctx.RecordType)
	}
	return NewDebeziumDecoder(ctx.Table.Schema, jsonRowOptions(ctx.Options, false), ctx.Options.Bool("schema-include"))
}

func (debeziumFormat) NewEncoder(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("debezium-json: writes the rows of SQL tables only, not %v records; use json for Go records", ctx.RecordType)
	}
	return NewDebeziumEncoder(ctx.Table.Schema, jsonRowOptions(ctx.Options, false)), nil
}

// The fields of a Debezium message that the format reads.
const (
	dbzBefore = iota
	dbzAfter
	dbzOp
)

// NewDebeziumDecoder returns a decoder of Debezium JSON messages into the
// changes of rows of type rt: op "c" (create) and "r" (read, in a
// snapshot) give +I of "after", "u" gives -U of "before" then +U of
// "after", "d" gives -D of "before". With schemaInclude the message is
// the envelope {"schema":..,"payload":{..}}, and the values of columns
// that its schema names with Debezium's or Kafka Connect's temporal and
// decimal logical types (io.debezium.time.Date as days since the epoch,
// io.debezium.time.MicroTimestamp as microseconds, Connect's Decimal as
// base64 bytes, …) are read as those types have them, into DATE, TIME,
// TIMESTAMP, TIMESTAMP_LTZ, DECIMAL, FLOAT, DOUBLE and string columns.
// Empty messages (Kafka's
// tombstones) give nothing. With opts.IgnoreParseErrors, a message that
// does not decode is skipped.
func NewDebeziumDecoder(rt *types.RowType, opts *types.JSONOptions, schemaInclude bool) (connector.Decoder[connector.TableRecord], error) {
	msg, err := types.NewRowType(types.F("before", rt.Type()), types.F("after", rt.Type()), types.F("op", types.String()))
	if err != nil {
		return nil, fmt.Errorf("debezium-json: %w", err)
	}
	top := msg
	if schemaInclude {
		if top, err = types.NewRowType(types.F("payload", msg.Type())); err != nil {
			return nil, fmt.Errorf("debezium-json: %w", err)
		}
	}
	d, err := types.NewJSONDecoder(top, nil, opts)
	if err != nil {
		return nil, fmt.Errorf("debezium-json: %w", err)
	}
	skip := opts != nil && opts.IgnoreParseErrors
	var logical *logicalReader
	if schemaInclude {
		logical = newLogicalReader(rt, opts)
	}
	return decoderFunc[connector.TableRecord](func(data []byte, emit func(connector.TableRecord)) error {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil
		}
		var err error
		if logical != nil && bytes.Contains(data, []byte(`"name"`)) {
			data, err = logical.rewrite(data)
		}
		if err == nil {
			err = decodeDebezium(d, msg, rt, schemaInclude, data, emit)
		}
		if err != nil && skip {
			return nil
		}
		return err
	}), nil
}

func decodeDebezium(d *types.JSONDecoder, msg, rt *types.RowType, schemaInclude bool, data []byte, emit func(connector.TableRecord)) error {
	r, err := d.Decode(data)
	if err != nil {
		return fmt.Errorf("debezium-json: %w", err)
	}
	if schemaInclude {
		if r.IsNull(0) {
			return fmt.Errorf("debezium-json: the message has no \"payload\"; set 'debezium-json.schema-include' = 'false' for messages without the schema envelope")
		}
		r = r.Row(0, msg)
	}
	if r.IsNull(dbzOp) {
		hint := ""
		if !schemaInclude {
			hint = " (messages with a \"schema\" and a \"payload\" need 'debezium-json.schema-include' = 'true')"
		}
		return fmt.Errorf("debezium-json: the message has no \"op\"%s", hint)
	}
	row := func(i int, op string) (types.Row, error) {
		if r.IsNull(i) {
			name := [...]string{"before", "after"}[i]
			hint := ""
			if i == dbzBefore {
				hint = "; a Postgres table needs REPLICA IDENTITY FULL for Debezium to send it"
			}
			return types.Row{}, fmt.Errorf("debezium-json: the %q field of an op %q message is null%s", name, op, hint)
		}
		return r.Row(i, rt), nil
	}
	switch op := r.String(dbzOp); op {
	case "c", "r":
		a, err := row(dbzAfter, op)
		if err != nil {
			return err
		}
		emit(connector.TableRecord{Kind: changelog.Insert, Row: a})
	case "u":
		b, err := row(dbzBefore, op)
		if err != nil {
			return err
		}
		a, err := row(dbzAfter, op)
		if err != nil {
			return err
		}
		emit(connector.TableRecord{Kind: changelog.UpdateBefore, Row: b})
		emit(connector.TableRecord{Kind: changelog.UpdateAfter, Row: a})
	case "d":
		b, err := row(dbzBefore, op)
		if err != nil {
			return err
		}
		emit(connector.TableRecord{Kind: changelog.Delete, Row: b})
	default:
		return fmt.Errorf("debezium-json: unknown op %q; Debezium's ops are c, r, u and d", op)
	}
	return nil
}

// NewDebeziumEncoder returns an encoder of changes of rows of type rt as
// Flink's debezium-json format writes them: +I and +U as
// {"before":null,"after":{..},"op":"c"}, -U and -D as
// {"before":{..},"after":null,"op":"d"}.
func NewDebeziumEncoder(rt *types.RowType, opts *types.JSONOptions) connector.Encoder[connector.TableRecord] {
	return connector.EncoderFunc[connector.TableRecord](func(dst []byte, c connector.TableRecord) ([]byte, error) {
		var err error
		if c.Kind.IsAddition() {
			dst = append(dst, `{"before":null,"after":`...)
			if dst, err = types.AppendJSON(dst, rt, c.Row, opts); err != nil {
				return dst, fmt.Errorf("debezium-json: %w", err)
			}
			return append(dst, `,"op":"c"}`...), nil
		}
		dst = append(dst, `{"before":`...)
		if dst, err = types.AppendJSON(dst, rt, c.Row, opts); err != nil {
			return dst, fmt.Errorf("debezium-json: %w", err)
		}
		return append(dst, `,"after":null,"op":"d"}`...), nil
	})
}

func init() { connector.Register(debeziumFormat{}) }

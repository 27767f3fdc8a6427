package formats

import (
	"errors"
	"fmt"

	"github.com/twmb/avro"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// avroSpec is the spec of the "avro" format.
var avroSpec = connector.Spec{
	Name: "avro",
	Kind: connector.FormatKind,
	Description: "Avro binary, one record per message, for SQL tables: the schema is derived from the table's columns as Flink's avro format derives it " +
		"(docs/formats.md has the type mapping); insertions only. Messages carry no schema: readers and writers must agree on the columns.",
}

type avroFormat struct{}

func (avroFormat) Spec() connector.Spec { return avroSpec }

func (avroFormat) NewDecoder(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, avroNeedsTable("avro")
	}
	return NewAvroRowDecoder(ctx.Table.Schema)
}

func (avroFormat) NewEncoder(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, avroNeedsTable("avro")
	}
	return NewAvroRowEncoder(ctx.Table.Schema)
}

// avroNeedsTable is the error of an avro format asked for records that
// are not rows of a table.
func avroNeedsTable(format string) error {
	return fmt.Errorf("%s: the format reads and writes the rows of SQL tables (its schema comes from their columns); for Go records use 'json'", format)
}

// avroRows reads and writes the rows of one table as Avro records of the
// schema derived from its columns.
type avroRows struct {
	format string // the format's name, for errors
	rt     *types.RowType
	schema *avro.Schema
	text   string // the schema's JSON
	w      *types.RowWriter
}

// newAvroRows derives the schema of the rows of rt.
func newAvroRows(format string, rt *types.RowType) (*avroRows, error) {
	text, err := AvroSchemaOf(rt)
	if err != nil {
		return nil, err
	}
	s, err := parseAvroSchema(text)
	if err != nil {
		return nil, fmt.Errorf("%s: the schema derived from the table's columns does not parse (rename the columns to Avro names: letters, digits and '_', not starting with a digit): %w", format, err)
	}
	return &avroRows{format: format, rt: rt, schema: s, text: text, w: types.NewRowWriter(rt, types.NewArena(0))}, nil
}

// decode decodes one record written with the schema of s (s.schema, or a
// schema resolving a writer's schema to it).
func (a *avroRows) decode(s *avro.Schema, data []byte) (types.Row, error) {
	var v any
	rest, err := s.Decode(data, &v)
	if err != nil {
		var se *avro.SemanticError
		if errors.As(err, &se) && se.GoType == nil && se.Err != nil {
			// The library's wrapper names the Avro type being read, which
			// says nothing here; keep the field and the cause.
			where := ""
			if se.Field != "" {
				where = " (at field " + types.QuoteIdentifier(se.Field) + ")"
			}
			return types.Row{}, fmt.Errorf("%s: the message is not an Avro record of the table's schema%s: %w", a.format, where, se.Err)
		}
		return types.Row{}, fmt.Errorf("%s: the message is not an Avro record of the table's schema: %w", a.format, err)
	}
	if len(rest) > 0 {
		return types.Row{}, fmt.Errorf("%s: %d bytes are left after the Avro record; the message is not one record of the table's schema", a.format, len(rest))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return types.Row{}, fmt.Errorf("%s: the message decodes to a %T, not a record", a.format, v)
	}
	vals, err := avroFieldsIn(a.rt, m, "")
	if err != nil {
		return types.Row{}, err
	}
	a.w.Reset()
	for i, v := range vals {
		if err := a.w.SetValue(i, v); err != nil {
			return types.Row{}, fmt.Errorf("%s: %w", a.format, err)
		}
	}
	return a.w.Finish(), nil
}

// encode appends the row of c as an Avro record to dst.
func (a *avroRows) encode(dst []byte, c connector.TableRecord) ([]byte, error) {
	if c.Kind != changelog.Insert && c.Kind != changelog.UpdateAfter {
		return dst, fmt.Errorf("%s: cannot write a %v change: the %s format holds insertions only; use 'debezium-json' for a changelog", a.format, c.Kind, a.format)
	}
	out, err := avroAppendRow(dst, a.rt, c.Row)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// NewAvroRowDecoder returns a decoder of Avro binary records, one per
// message, of the schema AvroSchemaOf derives from rt, into insertions
// (+I) of rows of type rt.
func NewAvroRowDecoder(rt *types.RowType) (connector.Decoder[connector.TableRecord], error) {
	a, err := newAvroRows("avro", rt)
	if err != nil {
		return nil, err
	}
	return decoderFunc[connector.TableRecord](func(data []byte, emit func(connector.TableRecord)) error {
		r, err := a.decode(a.schema, data)
		if err != nil {
			return err
		}
		emit(connector.TableRecord{Kind: changelog.Insert, Row: r})
		return nil
	}), nil
}

// NewAvroRowEncoder returns an encoder of rows of type rt as Avro binary
// records of the schema AvroSchemaOf derives from rt. It encodes
// insertions only.
func NewAvroRowEncoder(rt *types.RowType) (connector.Encoder[connector.TableRecord], error) {
	a, err := newAvroRows("avro", rt)
	if err != nil {
		return nil, err
	}
	return connector.EncoderFunc[connector.TableRecord](a.encode), nil
}

func init() { connector.Register(avroFormat{}) }

package formats

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// jsonTableOptions are the options of the json format (and of the JSON
// inside debezium-json) that concern the values of SQL rows.
var jsonTableOptions = []connector.Option{
	{Key: "ignore-parse-errors", Type: connector.Bool, Default: "false",
		Description: "SQL tables: whether a field whose value does not convert to its column's type is NULL and a line that is not JSON is skipped, instead of failing the job."},
	{Key: "timestamp-format.standard", Type: connector.Enum, Default: "SQL", Values: []string{"SQL", "ISO-8601"},
		Description: "SQL tables: the text of TIMESTAMP and TIMESTAMP_LTZ values, 'SQL' (2020-12-30 12:13:14.123) or 'ISO-8601' (2020-12-30T12:13:14.123)."},
	{Key: "map-null-key.mode", Type: connector.Enum, Default: "FAIL", Values: []string{"FAIL", "DROP", "LITERAL"},
		Description: "SQL tables: what writing a MAP with a NULL key does: fail, drop the entry, or write the key as 'map-null-key.literal'."},
	{Key: "map-null-key.literal", Type: connector.String, Default: "null",
		Description: "SQL tables: the key written for a NULL map key when 'map-null-key.mode' is LITERAL."},
	{Key: "encode.decimal-as-plain-number", Type: connector.Bool, Default: "false",
		Description: "SQL tables: whether DECIMAL values are written in plain notation (0.000000027) rather than Java's scientific notation (2.7E-8)."},
}

// jsonRowOptions reads the value options of a JSON-based format.
func jsonRowOptions(o connector.Options, failOnMissing bool) *types.JSONOptions {
	j := &types.JSONOptions{
		FailOnMissingField: failOnMissing,
		IgnoreParseErrors:  o.Bool("ignore-parse-errors"),
		DecimalAsPlain:     o.Bool("encode.decimal-as-plain-number"),
		MapNullKeyLiteral:  o.String("map-null-key.literal"),
	}
	if o.String("timestamp-format.standard") == "ISO-8601" {
		j.TimestampFormat = types.JSONTimestampISO8601
	}
	switch o.String("map-null-key.mode") {
	case "DROP":
		j.MapNullKey = types.JSONMapNullKeyDrop
	case "LITERAL":
		j.MapNullKey = types.JSONMapNullKeyLiteral
	}
	return j
}

// NewJSONRowDecoder returns a decoder of JSON objects, one per message,
// into insertions (+I) of rows of type rt, as Flink's json format reads
// them (see types.JSONDecoder). With opts.IgnoreParseErrors a message
// that is not a JSON object is skipped.
func NewJSONRowDecoder(rt *types.RowType, opts *types.JSONOptions) (connector.Decoder[connector.TableRecord], error) {
	d, err := types.NewJSONDecoder(rt, nil, opts)
	if err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	skip := opts != nil && opts.IgnoreParseErrors
	return decoderFunc[connector.TableRecord](func(data []byte, emit func(connector.TableRecord)) error {
		r, err := d.Decode(data)
		if err != nil {
			if skip {
				return nil
			}
			return err
		}
		emit(connector.TableRecord{Kind: changelog.Insert, Row: r})
		return nil
	}), nil
}

// NewJSONRowEncoder returns an encoder of rows of type rt as JSON objects,
// as Flink's json format writes them (see types.AppendJSON). It encodes
// insertions only: an append-only format cannot say that a row was
// retracted.
func NewJSONRowEncoder(rt *types.RowType, opts *types.JSONOptions) connector.Encoder[connector.TableRecord] {
	return connector.EncoderFunc[connector.TableRecord](func(dst []byte, c connector.TableRecord) ([]byte, error) {
		if c.Kind != changelog.Insert && c.Kind != changelog.UpdateAfter {
			return dst, fmt.Errorf("json: cannot write a %v change: the json format holds insertions only; use 'debezium-json' for a changelog", c.Kind)
		}
		return types.AppendJSON(dst, rt, c.Row, opts)
	})
}

package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// canalSpec is the spec of the "canal-json" format.
var canalSpec = connector.Spec{
	Name: "canal-json",
	Kind: connector.FormatKind,
	Description: "Canal's JSON change messages, for SQL tables: reads them as Flink does, " +
		"{\"data\":[..],\"old\":[..],\"type\":\"INSERT|UPDATE|DELETE\",\"database\":..,\"table\":..} — " +
		"INSERT as +I, UPDATE as -U (the row with the fields \"old\" lists) and +U, DELETE as -D, per row of \"data\"; DDL messages are skipped; " +
		"and writes every change as Flink does ({\"data\":[{..}],\"type\":\"INSERT\"} for +I and +U, {\"data\":[{..}],\"type\":\"DELETE\"} for -U and -D).",
	Options: append([]connector.Option{
		{Key: "database.include", Type: connector.String,
			Description: "Read only the messages of databases matching this regular expression."},
		{Key: "table.include", Type: connector.String,
			Description: "Read only the messages of tables matching this regular expression."},
	}, jsonTableOptions...),
}

// maxwellSpec is the spec of the "maxwell-json" format.
var maxwellSpec = connector.Spec{
	Name: "maxwell-json",
	Kind: connector.FormatKind,
	Description: "Maxwell's JSON change messages, for SQL tables: reads them as Flink does, " +
		"{\"database\":..,\"table\":..,\"type\":\"insert|update|delete\",\"data\":{..},\"old\":{..}} — " +
		"insert as +I, update as -U (the row with the fields \"old\" lists) and +U, delete as -D; " +
		"and writes every change as Flink does ({\"data\":{..},\"type\":\"insert\"} for +I and +U, {\"data\":{..},\"type\":\"delete\"} for -U and -D).",
	Options: jsonTableOptions,
}

type canalFormat struct{}

func (canalFormat) Spec() connector.Spec { return canalSpec }

func (canalFormat) NewDecoder(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("canal-json: reads the rows of SQL tables only, not %v records", ctx.RecordType)
	}
	return NewChangeMessageDecoder("canal-json", ctx.Table.Schema, jsonRowOptions(ctx.Options, false),
		ctx.Options.String("database.include"), ctx.Options.String("table.include"))
}

type maxwellFormat struct{}

func (maxwellFormat) Spec() connector.Spec { return maxwellSpec }

func (maxwellFormat) NewDecoder(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("maxwell-json: reads the rows of SQL tables only, not %v records", ctx.RecordType)
	}
	return NewChangeMessageDecoder("maxwell-json", ctx.Table.Schema, jsonRowOptions(ctx.Options, false), "", "")
}

// changeMessage is the envelope canal-json and maxwell-json share; data
// and old are kept raw and decoded as rows of the table.
type changeMessage struct {
	Data     json.RawMessage `json:"data"`
	Old      json.RawMessage `json:"old"`
	Type     string          `json:"type"`
	Database string          `json:"database"`
	Table    string          `json:"table"`
	IsDDL    bool            `json:"isDdl"`
}

// NewChangeMessageDecoder returns a decoder of Canal ("canal-json": data
// and old are arrays of rows) or Maxwell ("maxwell-json": objects) change
// messages into changes of rows of type rt. An update's -U row is the
// data row with the fields that "old" holds replaced by their old values.
// databaseInclude and tableInclude, if set, are regular expressions that
// the message's database and table must match (else it is skipped).
func NewChangeMessageDecoder(format string, rt *types.RowType, opts *types.JSONOptions, databaseInclude, tableInclude string) (connector.Decoder[connector.TableRecord], error) {
	rows, err := types.NewJSONDecoder(rt, nil, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", format, err)
	}
	dbRe, err := includeRegexp(format, "database.include", databaseInclude)
	if err != nil {
		return nil, err
	}
	tableRe, err := includeRegexp(format, "table.include", tableInclude)
	if err != nil {
		return nil, err
	}
	skip := opts != nil && opts.IgnoreParseErrors
	w := types.NewRowWriter(rt, types.NewArena(1024))
	canal := format == "canal-json"
	decode := func(msg []byte, emit func(connector.TableRecord)) error {
		if len(bytes.TrimSpace(msg)) == 0 {
			return nil
		}
		var m changeMessage
		if err := json.Unmarshal(msg, &m); err != nil {
			return fmt.Errorf("%s: %w", format, err)
		}
		if m.IsDDL || (dbRe != nil && !dbRe.MatchString(m.Database)) || (tableRe != nil && !tableRe.MatchString(m.Table)) {
			return nil
		}
		var data, old []json.RawMessage
		if canal {
			if err := unmarshalRows(m.Data, &data); err != nil {
				return fmt.Errorf("%s: \"data\": %w", format, err)
			}
			if err := unmarshalRows(m.Old, &old); err != nil {
				return fmt.Errorf("%s: \"old\": %w", format, err)
			}
		} else {
			if len(m.Data) > 0 && string(m.Data) != "null" {
				data = []json.RawMessage{m.Data}
			}
			if len(m.Old) > 0 && string(m.Old) != "null" {
				old = []json.RawMessage{m.Old}
			}
		}
		kind := strings.ToUpper(m.Type)
		switch kind {
		case "INSERT", "UPDATE", "DELETE":
		case "BOOTSTRAP-INSERT":
			kind = "INSERT" // Maxwell's snapshot rows
		case "CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX", "BOOTSTRAP-START", "BOOTSTRAP-COMPLETE":
			return nil // DDL and bookkeeping
		default:
			return fmt.Errorf("%s: unknown \"type\" %q; the change types are INSERT, UPDATE and DELETE", format, m.Type)
		}
		if len(data) == 0 {
			return fmt.Errorf("%s: the %s message has no \"data\"", format, kind)
		}
		for i, d := range data {
			after, err := rows.Decode(d)
			if err != nil {
				return fmt.Errorf("%s: row %d of \"data\": %w", format, i, err)
			}
			// The next Decode reuses the decoder's memory, and a message
			// may hold several rows.
			after = after.Clone()
			switch kind {
			case "INSERT":
				emit(connector.TableRecord{Kind: changelog.Insert, Row: after})
			case "DELETE":
				emit(connector.TableRecord{Kind: changelog.Delete, Row: after})
			case "UPDATE":
				if i >= len(old) {
					return fmt.Errorf("%s: an UPDATE message has %d rows of \"data\" and %d of \"old\"", format, len(data), len(old))
				}
				before, err := mergeOld(w, rows, rt, after, old[i])
				if err != nil {
					return fmt.Errorf("%s: row %d of \"old\": %w", format, i, err)
				}
				emit(connector.TableRecord{Kind: changelog.UpdateBefore, Row: before})
				emit(connector.TableRecord{Kind: changelog.UpdateAfter, Row: after})
			}
		}
		return nil
	}
	return decoderFunc[connector.TableRecord](func(data []byte, emit func(connector.TableRecord)) error {
		err := decode(data, emit)
		if err != nil && skip {
			return nil
		}
		return err
	}), nil
}

func unmarshalRows(raw json.RawMessage, out *[]json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// mergeOld returns the row before an update: after, with the fields that
// the "old" object names replaced by their values there. A field "old" does
// not name did not change.
func mergeOld(w *types.RowWriter, rows *types.JSONDecoder, rt *types.RowType, after types.Row, old json.RawMessage) (types.Row, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(old, &fields); err != nil {
		return types.Row{}, err
	}
	oldRow, err := rows.Decode(old)
	if err != nil {
		return types.Row{}, err
	}
	w.Reset()
	for i, f := range rt.Fields() {
		if _, changed := fields[f.Name]; changed {
			w.CopyField(i, oldRow, i)
		} else {
			w.CopyField(i, after, i)
		}
	}
	return w.Finish().Clone(), nil
}

func init() {
	connector.Register(canalFormat{})
	connector.Register(maxwellFormat{})
}

// includeRegexp compiles an include option that must match whole names.
func includeRegexp(format, option, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		return nil, fmt.Errorf("%s: '%s.%s' = '%s' is not a regular expression: %w", format, format, option, expr, err)
	}
	return re, nil
}

func (canalFormat) NewEncoder(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("canal-json: writes the rows of SQL tables only, not %v records; use json for Go records", ctx.RecordType)
	}
	return NewCanalEncoder(ctx.Table.Schema, jsonRowOptions(ctx.Options, false)), nil
}

func (maxwellFormat) NewEncoder(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("maxwell-json: writes the rows of SQL tables only, not %v records; use json for Go records", ctx.RecordType)
	}
	return NewMaxwellEncoder(ctx.Table.Schema, jsonRowOptions(ctx.Options, false)), nil
}

// NewCanalEncoder returns an encoder of changes of rows of type rt as
// Flink's canal-json format writes them, one message per change: +I and
// +U as {"data":[{..}],"type":"INSERT"}, -U and -D as
// {"data":[{..}],"type":"DELETE"}. An update is thus written as the
// deletion of its old row and the insertion of its new one.
func NewCanalEncoder(rt *types.RowType, opts *types.JSONOptions) connector.Encoder[connector.TableRecord] {
	return connector.EncoderFunc[connector.TableRecord](func(dst []byte, c connector.TableRecord) ([]byte, error) {
		dst = append(dst, `{"data":[`...)
		dst, err := types.AppendJSON(dst, rt, c.Row, opts)
		if err != nil {
			return dst, fmt.Errorf("canal-json: %w", err)
		}
		if c.Kind.IsAddition() {
			return append(dst, `],"type":"INSERT"}`...), nil
		}
		return append(dst, `],"type":"DELETE"}`...), nil
	})
}

// NewMaxwellEncoder returns an encoder of changes of rows of type rt as
// Flink's maxwell-json format writes them, one message per change: +I
// and +U as {"data":{..},"type":"insert"}, -U and -D as
// {"data":{..},"type":"delete"}.
func NewMaxwellEncoder(rt *types.RowType, opts *types.JSONOptions) connector.Encoder[connector.TableRecord] {
	return connector.EncoderFunc[connector.TableRecord](func(dst []byte, c connector.TableRecord) ([]byte, error) {
		dst = append(dst, `{"data":`...)
		dst, err := types.AppendJSON(dst, rt, c.Row, opts)
		if err != nil {
			return dst, fmt.Errorf("maxwell-json: %w", err)
		}
		if c.Kind.IsAddition() {
			return append(dst, `,"type":"insert"}`...), nil
		}
		return append(dst, `,"type":"delete"}`...), nil
	})
}

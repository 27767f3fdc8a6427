package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/eddystream/eddy/connector"
)

// JSON returns a decoder of JSON objects into values of T, with
// encoding/json.
func JSON[T any]() connector.Decoder[T] {
	return connector.DecoderFunc[T](func(data []byte) (T, error) {
		var v T
		err := json.Unmarshal(data, &v)
		return v, err
	})
}

// JSONEncoder returns an encoder of values of T as JSON, with encoding/json
// (HTML characters are not escaped). It appends no line ending.
func JSONEncoder[T any]() connector.Encoder[T] {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	return connector.EncoderFunc[T](func(dst []byte, v T) ([]byte, error) {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return dst, fmt.Errorf("json: encoding a %T: %w", v, err)
		}
		return append(dst, bytes.TrimRight(buf.Bytes(), "\n")...), nil
	})
}

// jsonSpec is the spec of the "json" format.
var jsonSpec = connector.Spec{
	Name:        "json",
	Kind:        connector.FormatKind,
	Description: "JSON objects, one per message or line: for a SQL table, rows of its schema as Flink's json format reads and writes them (insertions only); for the Go API, the record's fields by name (encoding/json rules: field names or `json` tags).",
	Options: append([]connector.Option{
		{Key: "fail-on-missing-field", Type: connector.Bool, Default: "false",
			Description: "Whether a JSON object that lacks one of the record's fields (a table's columns) is a bad record, instead of leaving the field at its zero value (NULL)."},
	}, jsonTableOptions...),
}

type jsonFormat struct{}

func (jsonFormat) Spec() connector.Spec { return jsonSpec }

func (jsonFormat) NewDecoder(ctx connector.Context) (any, error) {
	if ctx.Table != nil {
		return NewJSONRowDecoder(ctx.Table.Schema, jsonRowOptions(ctx.Options, ctx.Options.Bool("fail-on-missing-field")))
	}
	t := ctx.RecordType
	strict := ctx.Options.Bool("fail-on-missing-field")
	var fields []string
	if strict {
		if t.Kind() != reflect.Struct {
			return nil, fmt.Errorf("json: fail-on-missing-field needs a struct record type, not %v", t)
		}
		fields = jsonFieldNames(t)
	}
	return connector.DecoderFunc[any](func(data []byte) (any, error) {
		p := reflect.New(t)
		if err := json.Unmarshal(data, p.Interface()); err != nil {
			return nil, err
		}
		if strict {
			var present map[string]json.RawMessage
			if err := json.Unmarshal(data, &present); err != nil {
				return nil, err
			}
			// encoding/json matches names without regard to case, and so
			// does the check.
			lower := make(map[string]bool, len(present))
			for k := range present {
				lower[strings.ToLower(k)] = true
			}
			for _, f := range fields {
				if !lower[strings.ToLower(f)] {
					return nil, fmt.Errorf("json: field %q is missing", f)
				}
			}
		}
		return p.Elem().Interface(), nil
	}), nil
}

func (jsonFormat) NewEncoder(ctx connector.Context) (any, error) {
	if ctx.Table != nil {
		return NewJSONRowEncoder(ctx.Table.Schema, jsonRowOptions(ctx.Options, false)), nil
	}
	return JSONEncoder[any](), nil
}

// jsonFieldNames lists the JSON names of the exported fields of struct t,
// with the fields of embedded structs without a name tag in its place, as
// encoding/json sees them.
func jsonFieldNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, tagged := f.Tag.Lookup("json")
		n, _, _ := strings.Cut(tag, ",")
		if n == "-" {
			continue
		}
		if f.Anonymous && n == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFieldNames(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tagged && n != "" {
			name = n
		}
		out = append(out, name)
	}
	return out
}

func init() { connector.Register(jsonFormat{}) }

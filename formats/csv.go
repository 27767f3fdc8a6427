package formats

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/eddystream/eddy/connector"
)

// CSVOptions configures CSV decoding and encoding.
type CSVOptions struct {
	// FieldDelimiter separates fields; 0 means ','.
	FieldDelimiter rune
	// AllowComments skips lines that start with '#'.
	AllowComments bool
}

// errComment tells that a line is a comment, which the decoder skips.
var errComment = fmt.Errorf("csv: comment line")

// CSV returns a decoder of one line of comma-separated fields into a T made
// by parse. Quoted fields may not span lines.
func CSV[T any](parse func(fields []string) (T, error), opts CSVOptions) connector.Decoder[T] {
	comma := opts.FieldDelimiter
	if comma == 0 {
		comma = ','
	}
	var rd bytes.Reader
	return decoderFunc[T](func(line []byte, emit func(T)) error {
		if opts.AllowComments && bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			return nil
		}
		rd.Reset(line)
		cr := csv.NewReader(&rd)
		cr.Comma = comma
		cr.FieldsPerRecord = -1
		fields, err := cr.Read()
		if err != nil {
			return err
		}
		v, err := parse(fields)
		if err != nil {
			return err
		}
		emit(v)
		return nil
	})
}

type decoderFunc[T any] func(data []byte, emit func(T)) error

func (f decoderFunc[T]) Decode(data []byte, emit func(T)) error { return f(data, emit) }

// CSVEncoder returns an encoder of a T as one line of fields made by
// format, quoted where needed. It appends no line ending.
func CSVEncoder[T any](format func(v T) ([]string, error), opts CSVOptions) connector.Encoder[T] {
	comma := opts.FieldDelimiter
	if comma == 0 {
		comma = ','
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma = comma
	return connector.EncoderFunc[T](func(dst []byte, v T) ([]byte, error) {
		fields, err := format(v)
		if err != nil {
			return dst, err
		}
		for i, f := range fields {
			if strings.ContainsAny(f, "\r\n") {
				return dst, fmt.Errorf("csv: field %d holds a line break, which a one-line CSV record cannot hold (the CSV decoder reads a record per line)", i+1)
			}
		}
		buf.Reset()
		if err := w.Write(fields); err != nil {
			return dst, err
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return dst, err
		}
		return append(dst, bytes.TrimRight(buf.Bytes(), "\r\n")...), nil
	})
}

var csvSpec = connector.Spec{
	Name:        "csv",
	Kind:        connector.FormatKind,
	Description: "Comma-separated fields, one record per line: for a SQL table, its columns in order as Flink's csv format reads and writes them (insertions only, scalar columns); for the Go API, mapped by position onto the exported fields of the record's struct type (numbers, bools, strings, and time.Time in RFC 3339).",
	Options: []connector.Option{
		{Key: "field-delimiter", Type: connector.String, Default: ",",
			Description: "The single character that separates fields.",
			Check: func(v string) error {
				if utf8.RuneCountInString(v) != 1 || v == "\"" || v == "\n" || v == "\r" {
					return fmt.Errorf("the field delimiter must be one character other than a quote or a line break")
				}
				return nil
			}},
		{Key: "allow-comments", Type: connector.Bool, Default: "false",
			Description: "Whether lines that start with '#' are comments, and skipped."},
		{Key: "quote-character", Type: connector.String, Default: "\"",
			Description: "SQL tables: the character that encloses fields holding the delimiter, a quote or a line break.", Check: oneASCII("quote character")},
		{Key: "disable-quote-character", Type: connector.Bool, Default: "false",
			Description: "SQL tables: whether fields are never enclosed in quotes (a delimiter inside a value then needs 'csv.escape-character')."},
		{Key: "escape-character", Type: connector.String,
			Description: "SQL tables: the character that makes the next one literal (none by default).", Check: oneASCII("escape character")},
		{Key: "null-literal", Type: connector.String,
			Description: "SQL tables: the text of NULL, read and written; by default NULL is an empty field."},
		{Key: "ignore-parse-errors", Type: connector.Bool, Default: "false",
			Description: "SQL tables: whether a field that does not parse is NULL, and a line with the wrong number of fields skipped, instead of failing the job."},
	},
}

type csvFormat struct{}

func (csvFormat) Spec() connector.Spec { return csvSpec }

func csvOptionsOf(o connector.Options) CSVOptions {
	r, _ := utf8.DecodeRuneInString(o.String("field-delimiter"))
	return CSVOptions{FieldDelimiter: r, AllowComments: o.Bool("allow-comments")}
}

// oneASCII checks that an option is one ASCII character other than a line
// break.
func oneASCII(what string) func(string) error {
	return func(v string) error {
		if len(v) != 1 || v[0] >= utf8.RuneSelf || v == "\n" || v == "\r" {
			return fmt.Errorf("the %s must be one ASCII character other than a line break", what)
		}
		return nil
	}
}

// csvRowOptionsOf reads the options of the csv format for SQL rows.
func csvRowOptionsOf(o connector.Options) (CSVRowOptions, error) {
	d := o.String("field-delimiter")
	if len(d) != 1 || d[0] >= utf8.RuneSelf {
		return CSVRowOptions{}, &connector.OptionError{Connector: "csv", Key: "field-delimiter", Problem: fmt.Sprintf("= '%s': the field delimiter of a table's CSV must be one ASCII character", d)}
	}
	r := CSVRowOptions{
		FieldDelimiter:    d[0],
		Quote:             o.String("quote-character")[0],
		DisableQuote:      o.Bool("disable-quote-character"),
		NullLiteral:       o.String("null-literal"),
		HasNullLiteral:    o.IsSet("null-literal"),
		AllowComments:     o.Bool("allow-comments"),
		IgnoreParseErrors: o.Bool("ignore-parse-errors"),
	}
	if e := o.String("escape-character"); e != "" {
		r.Escape = e[0]
	}
	if !r.DisableQuote && r.Quote == r.FieldDelimiter {
		return r, &connector.OptionError{Connector: "csv", Key: "quote-character", Problem: "is the field delimiter; choose another character"}
	}
	return r, nil
}

func (csvFormat) NewDecoder(ctx connector.Context) (any, error) {
	if ctx.Table != nil {
		o, err := csvRowOptionsOf(ctx.Options)
		if err != nil {
			return nil, err
		}
		return NewCSVRowDecoder(ctx.Table.Schema, o)
	}
	m, err := newStructMapping(ctx.RecordType)
	if err != nil {
		return nil, err
	}
	return CSV[any](m.parse, csvOptionsOf(ctx.Options)), nil
}

func (csvFormat) NewEncoder(ctx connector.Context) (any, error) {
	if ctx.Table != nil {
		o, err := csvRowOptionsOf(ctx.Options)
		if err != nil {
			return nil, err
		}
		return NewCSVRowEncoder(ctx.Table.Schema, o)
	}
	m, err := newStructMapping(ctx.RecordType)
	if err != nil {
		return nil, err
	}
	return CSVEncoder[any](m.format, csvOptionsOf(ctx.Options)), nil
}

// structMapping maps CSV fields by position onto a struct's exported fields.
type structMapping struct {
	t      reflect.Type
	fields []int
}

var timeType = reflect.TypeFor[time.Time]()

func newStructMapping(t reflect.Type) (*structMapping, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("csv: records must be structs to map fields by position, not %v", t)
	}
	m := &structMapping{t: t}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		default:
			if f.Type != timeType {
				return nil, fmt.Errorf("csv: field %s of %v has type %v, which CSV cannot hold; use a string, number, bool or time.Time", f.Name, t, f.Type)
			}
		}
		m.fields = append(m.fields, i)
	}
	return m, nil
}

func (m *structMapping) parse(fields []string) (any, error) {
	if len(fields) != len(m.fields) {
		return nil, fmt.Errorf("csv: %d fields, but %v has %d", len(fields), m.t, len(m.fields))
	}
	v := reflect.New(m.t).Elem()
	for k, i := range m.fields {
		f := v.Field(i)
		s := fields[k]
		var err error
		switch f.Kind() {
		case reflect.String:
			f.SetString(s)
		case reflect.Bool:
			var b bool
			b, err = strconv.ParseBool(s)
			f.SetBool(b)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			var n int64
			n, err = strconv.ParseInt(s, 10, f.Type().Bits())
			f.SetInt(n)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			var n uint64
			n, err = strconv.ParseUint(s, 10, f.Type().Bits())
			f.SetUint(n)
		case reflect.Float32, reflect.Float64:
			var x float64
			x, err = strconv.ParseFloat(s, f.Type().Bits())
			f.SetFloat(x)
		default:
			var t time.Time
			t, err = time.Parse(time.RFC3339Nano, s)
			f.Set(reflect.ValueOf(t))
		}
		if err != nil {
			return nil, fmt.Errorf("csv: field %d (%s): %w", k+1, m.t.Field(i).Name, err)
		}
	}
	return v.Interface(), nil
}

func (m *structMapping) format(rec any) ([]string, error) {
	v := reflect.ValueOf(rec)
	if v.Type() != m.t {
		return nil, fmt.Errorf("csv: cannot encode a %T as %v", rec, m.t)
	}
	out := make([]string, len(m.fields))
	for k, i := range m.fields {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			out[k] = f.String()
		case reflect.Bool:
			out[k] = strconv.FormatBool(f.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			out[k] = strconv.FormatInt(f.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			out[k] = strconv.FormatUint(f.Uint(), 10)
		case reflect.Float32, reflect.Float64:
			out[k] = strconv.FormatFloat(f.Float(), 'g', -1, f.Type().Bits())
		default:
			out[k] = f.Interface().(time.Time).Format(time.RFC3339Nano)
		}
	}
	return out, nil
}

func init() { connector.Register(csvFormat{}) }

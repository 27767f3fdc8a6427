// Package print is eddy's print connector, as Flink's: a sink that writes
// every record on a line of standard output (or standard error), rendered
// as Flink renders rows, "+I[1, Alice]", with the row kind of a changelog
// record and "+I" for any other. With parallelism above 1 each line starts
// with the number of the subtask that wrote it ("2> "), after the print
// identifier if there is one ("orders:2> "). It registers as "print" with
// Flink's option names.
//
// The sink is for debugging and demos: it writes records as they come, so
// after a failure and restart it prints again what followed the last
// checkpoint.
package print

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// Options configures a print sink.
type Options struct {
	// Identifier starts every line, to tell the output of several print
	// sinks apart (Flink's print-identifier).
	Identifier string
	// StandardError writes to standard error instead of standard output.
	StandardError bool
	// Writer, if set, receives the lines instead of standard output or
	// error, for tests and captures. Lines of all subtasks are written
	// whole, one batch at a time, under a lock.
	Writer io.Writer
}

// NewSink returns the print sink of records of type T.
func NewSink[T any](o Options) connector.Sink[T] { return sink[T]{o: o} }

type sink[T any] struct {
	o   Options
	row func(dst []byte, v T) []byte
}

// ChangelogMode says that the sink prints changes of every kind.
func (sink[T]) ChangelogMode() changelog.Mode { return changelog.Retract }

// mu serialises the writes of every print sink, so that lines do not
// interleave.
var mu sync.Mutex

// Prefix returns what starts the lines of subtask (0-based) of a sink with
// the given identifier and parallelism, as Flink's print sink writes it:
// "id:2> ", "id> ", "2> " or nothing.
func Prefix(identifier string, subtask, parallelism int) string {
	p := identifier
	if parallelism > 1 {
		if p != "" {
			p += ":"
		}
		p += fmt.Sprint(subtask + 1)
	}
	if p != "" {
		p += "> "
	}
	return p
}

func (s sink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	w := s.o.Writer
	if w == nil {
		w = os.Stdout
		if s.o.StandardError {
			w = os.Stderr
		}
	}
	row := s.row
	if row == nil {
		row = func(dst []byte, v T) []byte { return AppendRow(dst, v) }
	}
	return &writer[T]{w: w, prefix: Prefix(s.o.Identifier, ctx.Subtask(), ctx.Parallelism()), row: row}, nil
}

// NewTableSink returns the print sink of the rows of a SQL table of type
// rt, rendered as Flink renders them ("+I[1001, 5]", "-U[...]").
func NewTableSink(rt *types.RowType, o Options) connector.Sink[connector.TableRecord] {
	return sink[connector.TableRecord]{o: o, row: func(dst []byte, c connector.TableRecord) []byte {
		return types.AppendChange(dst, c.Kind, rt, c.Row)
	}}
}

type writer[T any] struct {
	w      io.Writer
	prefix string
	buf    []byte
	// row renders a record; AppendRow for Go values.
	row func(dst []byte, v T) []byte
}

func (w *writer[T]) Write(records []T, _ []int64) error {
	w.buf = w.buf[:0]
	for _, v := range records {
		w.buf = append(w.buf, w.prefix...)
		w.buf = w.row(w.buf, v)
		w.buf = append(w.buf, '\n')
	}
	mu.Lock()
	_, err := w.w.Write(w.buf)
	mu.Unlock()
	if err != nil {
		return fmt.Errorf("print sink: %w", err)
	}
	return nil
}

func (w *writer[T]) Flush() error { return nil }
func (w *writer[T]) Close() error { return nil }

// RetainsNoRecords implements connector.NonRetainingWriter: Write renders
// every record before it returns.
func (w *writer[T]) RetainsNoRecords() bool { return true }

var timeType = reflect.TypeFor[time.Time]()

// Row renders v as Flink's print connector does: its row kind and its
// fields in brackets, separated by ", ". A changelog record
// (changelog.Kinded, such as changelog.Change) shows its kind and the
// fields of its Row; any other record shows +I and its own fields. The
// fields of a struct are its exported fields in order; a value of another
// type is one field. A nil pointer is null, a time is written in RFC 3339.
func Row(v any) string { return string(AppendRow(nil, v)) }

// AppendRow appends the rendering of Row to dst.
func AppendRow(dst []byte, v any) []byte {
	kind := changelog.Insert
	rv := reflect.ValueOf(v)
	if k, ok := v.(changelog.Kinded); ok {
		kind = k.RowKind()
		if r := deref(rv); r.Kind() == reflect.Struct {
			if f := r.FieldByName("Row"); f.IsValid() {
				rv = f
			}
		}
	}
	dst = append(dst, kind.String()...)
	dst = append(dst, '[')
	rv = deref(rv)
	if rv.IsValid() && rv.Kind() == reflect.Struct && rv.Type() != timeType {
		first := true
		for i := 0; i < rv.NumField(); i++ {
			if !rv.Type().Field(i).IsExported() {
				continue
			}
			if !first {
				dst = append(dst, ", "...)
			}
			first = false
			dst = appendField(dst, rv.Field(i))
		}
	} else {
		dst = appendField(dst, rv)
	}
	return append(dst, ']')
}

// deref follows pointers and interfaces; a nil one gives the zero Value.
func deref(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

func appendField(dst []byte, v reflect.Value) []byte {
	v = deref(v)
	switch {
	case !v.IsValid():
		return append(dst, "null"...)
	case v.Type() == timeType:
		return v.Interface().(time.Time).AppendFormat(dst, time.RFC3339Nano)
	case v.Kind() == reflect.String:
		return append(dst, v.String()...)
	case v.CanInterface():
		return fmt.Append(dst, v.Interface())
	}
	return append(dst, strings.TrimSpace(fmt.Sprint(v))...)
}

var spec = connector.Spec{
	Name:        "print",
	Kind:        connector.SinkKind,
	Description: "Writes every record on a line of standard output or error, as Flink's print connector: the row kind and the fields, \"+I[1, Alice]\", after the subtask number (\"2> \") when the sink runs in parallel. For debugging: it is at-least-once.",
	Options: []connector.Option{
		{Key: "print-identifier", Type: connector.String,
			Description: "A message that identifies the print sink and starts each of its lines."},
		{Key: "standard-error", Type: connector.Bool, Default: "false",
			Description: "Whether to print to standard error instead of standard output."},
	},
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSink(ctx connector.Context) (any, error) {
	o := Options{Identifier: ctx.Options.String("print-identifier"), StandardError: ctx.Options.Bool("standard-error")}
	if ctx.Table != nil {
		return NewTableSink(ctx.Table.Schema, o), nil
	}
	return NewSink[any](o), nil
}

func init() { connector.Register(factory{}) }

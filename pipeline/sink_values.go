package pipeline

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

var valuesSpec = connector.Spec{
	Name: "values",
	Kind: connector.SinkKind,
	Description: "Prints the pipeline's events to standard output, one per line: CREATE TABLE and ALTER TABLE for schema events, " +
		"'+I db.table[1, a]' for row changes. For trying a pipeline out; it keeps nothing.",
	Options: []connector.Option{
		{Key: "print.enabled", Type: connector.Bool, Default: "true", Description: "Whether to print the events (false discards them)."},
	},
}

// printSpec is the same sink under the name 'print'.
var printSpec = func() connector.Spec { s := valuesSpec; s.Name = "print"; return s }()

// PrintSink writes a pipeline's events as lines of text.
type PrintSink struct {
	mu *sync.Mutex
	w  io.Writer
}

// NewPrintSink returns a sink that writes events to w, one per line, lines
// of different subtasks never interleaved.
func NewPrintSink(w io.Writer) *PrintSink { return &PrintSink{mu: &sync.Mutex{}, w: w} }

// NewWriter returns the writer of one subtask.
func (s *PrintSink) NewWriter(connector.WriterContext) (connector.Writer[Event], error) {
	return &printWriter{s: s}, nil
}

type printWriter struct {
	s   *PrintSink
	buf bytes.Buffer
}

func (w *printWriter) Write(events []Event, _ []int64) error {
	for _, e := range events {
		w.buf.WriteString(FormatEvent(e))
		w.buf.WriteByte('\n')
	}
	return w.Flush()
}

func (w *printWriter) Flush() error {
	if w.buf.Len() == 0 {
		return nil
	}
	w.s.mu.Lock()
	_, err := w.s.w.Write(w.buf.Bytes())
	w.s.mu.Unlock()
	w.buf.Reset()
	return err
}

func (w *printWriter) Close() error { return nil }

// FormatEvent writes an event as a line of text: "CREATE TABLE db.t (id
// INT NOT NULL, PRIMARY KEY (id))", "ALTER TABLE db.t ADD COLUMN c INT",
// "TRUNCATE TABLE db.t", "DROP TABLE db.t", or a row change as
// "+I db.t[1, a]".
func FormatEvent(e Event) string {
	switch e.Kind {
	case DataChange:
		return e.Change.Kind.String() + " " + e.Table.String() + strings.TrimPrefix(types.FormatChange(e.Change.Kind, e.Schema.Columns, e.Change.Row), e.Change.Kind.String())
	case CreateTable:
		return fmt.Sprintf("CREATE TABLE %s %s", e.Table, e.Schema)
	case AlterTable:
		return fmt.Sprintf("ALTER TABLE %s %s", e.Table, describe(e.Changes))
	case TruncateTable:
		return "TRUNCATE TABLE " + e.Table.String()
	}
	return "DROP TABLE " + e.Table.String()
}

type valuesFactory struct{ spec connector.Spec }

func (f valuesFactory) Spec() connector.Spec { return f.spec }

func (f valuesFactory) NewSink(ctx connector.Context) (any, error) {
	if !ctx.Options.Bool("print.enabled") {
		return NewPrintSink(io.Discard), nil
	}
	return NewPrintSink(os.Stdout), nil
}

func init() {
	Sinks.Register(valuesFactory{valuesSpec})
	Sinks.Register(valuesFactory{printSpec})
}

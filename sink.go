package eddy

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connectors/filesystem"
	"github.com/eddystream/eddy/formats"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// Sink is the end of a pipeline. Its methods configure the sink operator.
type Sink struct {
	node *runtime.Node
	env  *Environment
}

// Name sets the sink operator's name.
func (s *Sink) Name(name string) *Sink {
	s.node.Name = name
	return s
}

// Parallelism sets the number of parallel sink subtasks: at least 1.
// Another value is an error that Plan and Execute return.
func (s *Sink) Parallelism(n int) *Sink {
	if n < 1 {
		s.env.fail(fmt.Errorf("Parallelism(%d) on operator %q: the parallelism of an operator must be at least 1", n, s.node.Name))
		return s
	}
	s.node.Parallelism = n
	return s
}

// sinkNode adds a sink consuming s whose operator build returns.
func sinkNode[T any](s *Stream[T], name string, build func(ctx *runtime.Context) (runtime.Input[T], error)) *Sink {
	n := s.env.graph.AddNode(&runtime.Node{
		Name: "Sink: " + name, NumInputs: 1,
		InTypes:  []*runtime.InType{runtime.NewInType[T]()},
		OutTypes: map[string]*runtime.OutType{},
	})
	n.Build = func(ctx *runtime.Context, _ map[string]any) (*runtime.Built, error) {
		in, err := build(ctx)
		if err != nil {
			return nil, err
		}
		return &runtime.Built{Inputs: []any{in}}, nil
	}
	// A sink runs with the parallelism of what it consumes unless told
	// otherwise, so that it chains to it.
	n.Parallelism = s.node.Parallelism
	s.connect(n, 0)
	if m := s.ChangelogMode(); !m.IsInsertOnly() && s.part == runtime.Forward {
		// Rebalanced, the changes of a row would reach different sink
		// subtasks, and a retraction could be applied before the row it
		// takes back.
		n.Inputs[0].KeepOrder = fmt.Sprintf("the stream carries %s changes, whose order must be kept; give the sink the parallelism of its input, or write it with WriteUpserts, which keys it by the sink's key", m.Describe())
	}
	return &Sink{node: n, env: s.env}
}

// SinkTo hands every record to fn. fn is called on the sink subtask's
// goroutine; an error fails the job. Like every non-transactional sink, it
// sees each record at least once across failures.
func SinkTo[T any](s *Stream[T], fn func(v T) error) *Sink {
	return sinkNode(s, "Func", func(*runtime.Context) (runtime.Input[T], error) {
		return ops.NewSink(func(v T, _ int64) error { return fn(v) }, nil, nil), nil
	})
}

// WriteTo adds a sink writing s with sink (see package connector). A
// connector.TransactionalSink is exactly-once: what it makes visible is
// exactly the output of the records the last completed checkpoint accounts
// for. Any other sink is flushed at every checkpoint, so it is
// at-least-once, and exactly-once in effect if its writes are idempotent.
// A TopologySink adds operators of its own instead.
// A sink of changelog rows receives their kinds with them; one that
// declares the kinds it applies (connector.ChangelogSink) refuses a stream
// that carries others.
func WriteTo[T any](s *Stream[T], name string, sink connector.Sink[T]) *Sink {
	if c, ok := sink.(connector.ChangelogSink); ok {
		if m := s.ChangelogMode(); !c.ChangelogMode().Includes(m) {
			s.env.fail(fmt.Errorf("eddy: sink %q applies %s changes but %q produces a %s stream; %s",
				name, c.ChangelogMode().Describe(), s.node.Name, m.Describe(), modeHint(c.ChangelogMode(), m)))
		}
	}
	if ts, ok := sink.(TopologySink[T]); ok {
		return ts.AddTo(s, name)
	}
	if ts, ok := sink.(connector.TransactionalSink[T]); ok {
		sk := sinkNode(s, name, func(ctx *runtime.Context) (runtime.Input[T], error) {
			w, err := ts.NewTransactionalWriter(ops.NewWriterContext(ctx))
			if err != nil {
				return nil, err
			}
			return ops.NewTransactionalSink(ctx, w)
		})
		sk.node.UnionLists = []string{ops.PendingList, ops.CurrentList}
		return sk
	}
	return sinkNode(s, name, func(ctx *runtime.Context) (runtime.Input[T], error) {
		w, err := sink.NewWriter(ops.NewWriterContext(ctx))
		if err != nil {
			return nil, err
		}
		return ops.NewWriterSink(w), nil
	})
}

// modeHint says how to bring a stream of mode have to a sink that applies
// want.
func modeHint(want, have changelog.Mode) string {
	if want == changelog.Upsert && have.Contains(changelog.UpdateBefore) {
		return "write it with eddy.WriteUpserts, which keys it and drops the -U halves of updates"
	}
	return "use a sink that applies them"
}

// WriteToConnector adds a sink made by the connector registered as name in
// connector.Default, with the given options (the keys of a SQL WITH
// clause). The options are checked against the connector's spec; a mistake
// fails Execute with an error naming the option.
func WriteToConnector[T any](s *Stream[T], name string, options map[string]string) *Sink {
	sink, err := connector.OpenSink[T](connector.Default, name, options)
	if err != nil {
		s.env.fail(fmt.Errorf("eddy: sink: %w", err))
		return WriteTo[T](s, name, failedSink[T]{err})
	}
	return WriteTo(s, name, sink)
}

// failedSink stands in for a sink that could not be made; the job fails
// before it runs.
type failedSink[T any] struct{ err error }

func (f failedSink[T]) NewWriter(connector.WriterContext) (connector.Writer[T], error) {
	return nil, f.err
}

// Discard consumes the stream and drops its records, as a blackhole sink
// does in benchmarks.
func Discard[T any](s *Stream[T]) *Sink {
	return sinkNode(s, "Discard", func(ctx *runtime.Context) (runtime.Input[T], error) {
		return ops.NewBatchSink(func(*runtime.Batch[T]) error { return nil }, nil, nil), nil
	})
}

// syncWriter serialises writes of whole lines from several subtasks.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) write(p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.w.Write(p)
	return err
}

// Print writes every record to standard output, one a line, as fmt's %v
// renders it; with parallelism above 1 each line starts with the subtask
// number ("2> ") as Flink's print sink does.
func Print[T any](s *Stream[T]) *Sink { return PrintTo(s, os.Stdout) }

// PrintTo is Print writing to w.
func PrintTo[T any](s *Stream[T], w io.Writer) *Sink {
	sw := &syncWriter{w: w}
	return sinkNode(s, "Print", func(ctx *runtime.Context) (runtime.Input[T], error) {
		prefix := ""
		if ctx.Parallelism > 1 {
			prefix = fmt.Sprintf("%d> ", ctx.Subtask+1)
		}
		var line []byte
		return ops.NewBatchSink(func(b *runtime.Batch[T]) error {
			line = line[:0]
			for _, v := range b.Data {
				line = fmt.Appendf(line, "%s%v\n", prefix, v)
			}
			return sw.write(line)
		}, nil, nil), nil
	})
}

// WriteJSONLines writes every record as a JSON object on its own line to
// the file at path, which it creates or truncates. The sink runs as one
// subtask. It is at-least-once: after a failure and restart, records
// written since the last checkpoint may be written again. WriteFiles is the
// exactly-once file sink.
func WriteJSONLines[T any](s *Stream[T], path string) *Sink {
	return WriteTo(s, "JSONLines", filesystem.NewFileWriter(path, formats.JSONEncoder[T])).Parallelism(1)
}

// Record is a value with its event timestamp (milliseconds; NoTimestamp if
// it has none).
type Record[T any] struct {
	Value     T
	Timestamp int64
}

// NoTimestamp is the timestamp of a record that has none.
const NoTimestamp = runtime.NoTimestamp

// Collected holds what a Collect sink received. It is safe to read while
// the job runs.
type Collected[T any] struct {
	mu      sync.Mutex
	records []Record[T]
}

// Values returns the values received so far, in the order they arrived.
func (c *Collected[T]) Values() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]T, len(c.records))
	for i, r := range c.records {
		out[i] = r.Value
	}
	return out
}

// Records returns the records received so far with their timestamps.
func (c *Collected[T]) Records() []Record[T] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Record[T](nil), c.records...)
}

// Collect keeps every record of s in memory, for tests and small results.
func Collect[T any](s *Stream[T]) *Collected[T] {
	c := &Collected[T]{}
	sinkNode(s, "Collect", func(*runtime.Context) (runtime.Input[T], error) {
		return ops.NewBatchSink(func(b *runtime.Batch[T]) error {
			c.mu.Lock()
			for i, v := range b.Data {
				c.records = append(c.records, Record[T]{Value: v, Timestamp: b.TS[i]})
			}
			c.mu.Unlock()
			return nil
		}, nil, nil), nil
	})
	return c
}

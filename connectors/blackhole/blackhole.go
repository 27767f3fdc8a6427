// Package blackhole is eddy's blackhole connector, as Flink's: a sink that
// discards every record, for benchmarks and for jobs whose output does not
// matter. It registers as "blackhole" and takes no options.
package blackhole

import (
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// NewSink returns a sink that discards records of type T.
func NewSink[T any]() connector.Sink[T] { return sink[T]{} }

type sink[T any] struct{}

// ChangelogMode says that the sink takes changes of every kind.
func (sink[T]) ChangelogMode() changelog.Mode { return changelog.Retract }

func (sink[T]) NewWriter(connector.WriterContext) (connector.Writer[T], error) {
	return writer[T]{}, nil
}

type writer[T any] struct{}

func (writer[T]) Write([]T, []int64) error { return nil }
func (writer[T]) Flush() error             { return nil }
func (writer[T]) Close() error             { return nil }

// RetainsNoRecords implements connector.NonRetainingWriter: the writer
// keeps nothing.
func (writer[T]) RetainsNoRecords() bool { return true }

var spec = connector.Spec{
	Name:        "blackhole",
	Kind:        connector.SinkKind,
	Description: "Discards every record, as Flink's blackhole connector: for benchmarks, and for jobs whose output does not matter.",
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSink(ctx connector.Context) (any, error) {
	if ctx.Table != nil {
		return NewSink[connector.TableRecord](), nil
	}
	return NewSink[any](), nil
}

func init() { connector.Register(factory{}) }

package eddy

import (
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// OutputTag names a side output of type T: a second stream an operator can
// emit to, besides its main output.
type OutputTag[T any] struct {
	id string
}

// NewOutputTag returns the tag of a side output called id. Ids must be
// unique among the side outputs of one operator.
func NewOutputTag[T any](id string) OutputTag[T] { return OutputTag[T]{id: "side:" + id} }

// ID returns the name of the side output among the operator's outputs:
// "side:" followed by the id the tag was made with.
func (t OutputTag[T]) ID() string { return t.id }

// SideOutputContext is a function context that can emit to side outputs:
// a *ProcessContext or a *KeyedContext.
type SideOutputContext interface {
	// Timestamp returns the timestamp of the record being handled.
	Timestamp() int64
	sideOutputs() (*ops.SideOutputs, map[string]any)
}

// Emit sends v to the side output t of the operator whose context c is,
// with the current timestamp. If nothing consumes the side output, v is
// dropped.
func (t OutputTag[T]) Emit(c SideOutputContext, v T) {
	sides, outs := c.sideOutputs()
	if e := ops.SideEmitter[T](sides, t.id, outs); e != nil {
		e.Emit(v, c.Timestamp())
	}
}

// SideOutput returns the stream of side output t of the operator that
// produces s.
func SideOutput[T, U any](s *Stream[U], t OutputTag[T]) *Stream[T] {
	if s.node.OutTypes[t.id] == nil {
		s.node.OutTypes[t.id] = runtime.NewOutType[T]()
	}
	return &Stream[T]{env: s.env, node: s.node, tag: t.id}
}

package eddy

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// Stream is a stream of records of type T: the output of a source or an
// operator. Transformations are generic functions that take a stream and
// return a new one.
type Stream[T any] struct {
	env  *Environment
	node *runtime.Node
	tag  string
	part runtime.Partitioning
	// mode is the changelog mode of a stream of changes; 0 means
	// insert-only.
	mode changelog.Mode
}

// ChangelogMode returns the kinds of change the stream carries: insert-only
// for a stream of plain records; for a stream of changelog.Change values,
// the kinds the operator that makes it can produce (see package changelog).
func (s *Stream[T]) ChangelogMode() changelog.Mode {
	if s.mode == 0 {
		return changelog.InsertOnly
	}
	return s.mode
}

// withMode returns s with its changelog mode set.
func (s *Stream[T]) withMode(m changelog.Mode) *Stream[T] {
	s.mode = m
	if s.node != nil && s.tag == "" && m != 0 {
		// The job graph shows the mode of each operator's main output.
		s.node.Changelog = m.String()
	}
	return s
}

// derivedMode is the mode of the output of an operator that turns records
// of a stream of mode in into records of type U by a function it cannot see
// into: insert-only unless U carries change kinds, in which case any kind
// may come out.
func derivedMode[U any](in changelog.Mode) changelog.Mode {
	if _, ok := any(*new(U)).(changelog.Kinded); ok {
		return changelog.Retract
	}
	return changelog.InsertOnly
}

// Env returns the environment the stream belongs to.
func (s *Stream[T]) Env() *Environment { return s.env }

// Name sets the name of the operator that produces the stream, as plans,
// metrics and errors show it.
func (s *Stream[T]) Name(name string) *Stream[T] {
	s.node.Name = name
	return s
}

// UID sets the identifier under which the operator that produces the
// stream keeps its state in checkpoints and savepoints. Give stateful
// operators UIDs so that savepoints restore into later versions of the job
// even after operators are added or removed; without one, an operator is
// identified by its position in the job.
func (s *Stream[T]) UID(uid string) *Stream[T] {
	s.node.UID = uid
	return s
}

// Parallelism sets the number of parallel subtasks of the operator that
// produces the stream: at least 1, and at most its max parallelism. Another
// value is an error that Plan and Execute return.
func (s *Stream[T]) Parallelism(n int) *Stream[T] {
	if n < 1 {
		s.env.fail(fmt.Errorf("Parallelism(%d) on operator %q: the parallelism of an operator must be at least 1", n, s.node.Name))
		return s
	}
	s.node.Parallelism = n
	return s
}

// Subtasks returns the number of parallel subtasks of the operator that
// produces s: the parallelism set on it (by Parallelism, or by the
// transformation, as FromSlice of changes runs in one subtask and MapRows
// with its input's), or else the environment's default.
func (s *Stream[T]) Subtasks() int {
	if s.node.Parallelism > 0 {
		return s.node.Parallelism
	}
	return s.env.cfg.Parallelism
}

// DisableChaining keeps the operator that produces the stream in subtasks
// of its own.
func (s *Stream[T]) DisableChaining() *Stream[T] {
	s.node.NoChain = true
	return s
}

// Rebalance returns the stream redistributed round-robin over the subtasks
// of the next operator.
func (s *Stream[T]) Rebalance() *Stream[T] {
	c := *s
	c.part = runtime.Rebalance
	return &c
}

// Broadcast returns the stream with every record sent to every subtask of
// the next operator.
func (s *Stream[T]) Broadcast() *Stream[T] {
	c := *s
	c.part = runtime.Broadcast
	return &c
}

// connect adds an edge from s into input index input of n.
func (s *Stream[T]) connect(n *runtime.Node, input int) {
	s.env.graph.Connect(s.node, s.tag, n, input, s.part, nil)
}

// newNode adds a node with a main output of type O and the given inputs.
func newNode[O any](env *Environment, name string, inputs ...*runtime.InType) *runtime.Node {
	return env.graph.AddNode(&runtime.Node{
		Name:      name,
		NumInputs: len(inputs),
		InTypes:   inputs,
		OutTypes:  map[string]*runtime.OutType{"": runtime.NewOutType[O]()},
	})
}

// oneInput adds a one-input operator consuming s.
func oneInput[I, O any](s *Stream[I], name string, build func(ctx *runtime.Context, outs map[string]any) (runtime.Input[I], error)) *Stream[O] {
	n := newNode[O](s.env, name, runtime.NewInType[I]())
	n.Build = func(ctx *runtime.Context, outs map[string]any) (*runtime.Built, error) {
		in, err := build(ctx, outs)
		if err != nil {
			return nil, err
		}
		return &runtime.Built{Inputs: []any{in}}, nil
	}
	s.connect(n, 0)
	return &Stream[O]{env: s.env, node: n}
}

// mainOut returns the main output of an operator being built.
func mainOut[O any](outs map[string]any) runtime.Input[O] { return outs[""].(runtime.Input[O]) }

// Map applies fn to every record. Records keep their timestamps.
func Map[T, U any](s *Stream[T], fn func(T) U) *Stream[U] {
	return oneInput[T, U](s, "Map", func(_ *runtime.Context, outs map[string]any) (runtime.Input[T], error) {
		return ops.NewMap(fn, mainOut[U](outs)), nil
	}).withMode(derivedMode[U](s.ChangelogMode()))
}

// TryMap applies fn to every record; an error fails the job, naming the
// operator.
func TryMap[T, U any](s *Stream[T], fn func(T) (U, error)) *Stream[U] {
	return oneInput[T, U](s, "Map", func(_ *runtime.Context, outs map[string]any) (runtime.Input[T], error) {
		return ops.NewTryMap(fn, mainOut[U](outs)), nil
	}).withMode(derivedMode[U](s.ChangelogMode()))
}

// Filter keeps the records for which pred returns true.
func Filter[T any](s *Stream[T], pred func(T) bool) *Stream[T] {
	return oneInput[T, T](s, "Filter", func(_ *runtime.Context, outs map[string]any) (runtime.Input[T], error) {
		return ops.NewFilter(pred, mainOut[T](outs)), nil
	}).withMode(s.mode)
}

// FlatMap turns every record into zero or more: fn calls emit for each
// record it produces. Produced records take the timestamp of their input.
func FlatMap[T, U any](s *Stream[T], fn func(v T, emit func(U))) *Stream[U] {
	return oneInput[T, U](s, "FlatMap", func(_ *runtime.Context, outs map[string]any) (runtime.Input[T], error) {
		return ops.NewFlatMap(fn, mainOut[U](outs)), nil
	}).withMode(derivedMode[U](s.ChangelogMode()))
}

// Union merges streams of the same type into one. The merged stream's
// watermark is the minimum of its inputs'.
func Union[T any](first *Stream[T], rest ...*Stream[T]) *Stream[T] {
	n := newNode[T](first.env, "Union", runtime.NewInType[T]())
	n.Build = func(_ *runtime.Context, outs map[string]any) (*runtime.Built, error) {
		return &runtime.Built{Inputs: []any{runtime.Input[T](ops.NewUnion(mainOut[T](outs)))}}, nil
	}
	first.connect(n, 0)
	mode := first.ChangelogMode()
	for _, s := range rest {
		if s.env != first.env {
			panic("eddy: Union of streams from different environments")
		}
		s.connect(n, 0)
		mode = mode.Union(s.ChangelogMode())
	}
	return (&Stream[T]{env: first.env, node: n}).withMode(mode)
}

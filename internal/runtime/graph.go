package runtime

import (
	"fmt"
	"sync/atomic"
)

// Graph is a logical dataflow: operators (nodes) connected by edges. The
// typed front doors build it; Execute turns it into subtasks.
type Graph struct {
	Nodes []*Node
}

// Node is a logical operator. Its typed parts are closures made by the
// front door, so that the runtime itself needs no reflection.
type Node struct {
	ID   int
	Name string
	// UID identifies the operator's state in checkpoints and savepoints; it
	// must stay the same across versions of a job for its state to be
	// restored. Empty means "op<ID>".
	UID string
	// UnionLists names the operator-state lists that every subtask receives
	// whole on restore, rather than a round-robin share.
	UnionLists []string
	// Parallelism is the number of subtasks; 0 means the job's default.
	Parallelism int
	// MaxParallelism is the number of key groups of a keyed operator; 0
	// means the job's default.
	MaxParallelism int
	// NoChain keeps the node out of operator chains.
	NoChain bool
	// Changelog names the kinds of change the node's main output carries
	// (see changelog.Mode), for the job graph; empty for insert-only.
	Changelog string

	// Inputs lists the edges into the node, each with its input index.
	Inputs []*Edge
	// Outputs lists the edges out of the node.
	Outputs []*Edge
	// NumInputs is the number of distinct inputs (1 for most operators, 2
	// for connected streams and joins, 0 for sources).
	NumInputs int

	// OutTypes has the glue for each output: "" is the main output, other
	// names are side outputs.
	OutTypes map[string]*OutType
	// InTypes has the glue for each input index.
	InTypes []*InType

	// Build creates the operator for one subtask. outs holds, per output
	// name, an Input[T] of that output's type that feeds its consumers.
	Build func(ctx *Context, outs map[string]any) (*Built, error)
	// Source, for a source node, creates the subtask's source driver, which
	// emits into outs (per output name, an Input[T] of that output's type).
	Source func(ctx *Context, outs map[string]any) (SourceDriver, error)

	parallelism    int // resolved
	maxParallelism int // resolved
}

// Edge connects an output of one node to an input of another.
type Edge struct {
	From      *Node
	Tag       string // "" for the main output
	To        *Node
	Input     int
	Partition Partitioning
	// Hash is a func(T) uint64 for Hash partitioning; state.KeyGroupOf
	// maps its result to the key group, and state.SubtaskOf the key group
	// to the receiving subtask.
	Hash any
	// KeepOrder, if set, says why the edge must keep its records in order
	// from each sending subtask to one receiving subtask: a forward edge
	// between operators of different parallelism, which would rebalance,
	// is then an error that gives this reason.
	KeepOrder string

	chained bool
}

// OutType is the typed glue for one output of a node.
type OutType struct {
	combine func(outs []any) any
	// counted wraps an output so that it counts the records sent through
	// it into n.
	counted   func(out any, n *atomic.Int64) any
	newPool   func(size int) (pool any, recycle func(any))
	newWriter func(e *Edge, outs []*inChannel, pool any, size, maxP int, task *TaskMetrics) (any, flusher)
}

// InType is the typed glue for one input of a node.
type InType struct {
	bind  func(in any) func(payload any) error
	guard func(in any, ctx *Context) any
	// finished returns the input of a subtask restored as finished: it
	// drops everything, and if ends, ends the operator's outputs at its end.
	finished func(op *finishedOp, ends bool) any
}

// NewOutType returns the glue for an output carrying records of type T.
func NewOutType[T any]() *OutType {
	return &OutType{
		combine: func(outs []any) any { return combine[T](outs) },
		counted: func(out any, n *atomic.Int64) any { return Input[T](&countingOutput[T]{out: out.(Input[T]), n: n}) },
		newPool: func(size int) (any, func(any)) {
			pool := newBatchPool[T](size)
			return pool, func(p any) { pool.put(p.(*Batch[T])) }
		},
		newWriter: func(e *Edge, outs []*inChannel, pool any, size, maxP int, task *TaskMetrics) (any, flusher) {
			var hash func(T) uint64
			if e.Partition == Hash {
				hash = e.Hash.(func(T) uint64)
			}
			w := newWriter(e.Partition, outs, pool.(*batchPool[T]), size, hash, maxP, task)
			return Input[T](w), w
		},
	}
}

// NewInType returns the glue for an input receiving records of type T.
func NewInType[T any]() *InType {
	return &InType{
		bind: func(in any) func(payload any) error {
			typed, ok := in.(Input[T])
			if !ok {
				panic(fmt.Sprintf("runtime: input is %T, not Input[%T]", in, *new(T)))
			}
			return func(p any) error { return typed.ProcessBatch(p.(*Batch[T])) }
		},
		guard: func(in any, ctx *Context) any { return Input[T](&guard[T]{in: in.(Input[T]), ctx: ctx}) },
		finished: func(op *finishedOp, ends bool) any {
			return Input[T](&finishedInput[T]{op: op, ends: ends})
		},
	}
}

// StateUID returns the UID under which the node's state is checkpointed.
func (n *Node) StateUID() string {
	if n.UID != "" {
		return n.UID
	}
	return fmt.Sprintf("op%d", n.ID)
}

// AddNode adds n to the graph and assigns its id.
func (g *Graph) AddNode(n *Node) *Node {
	n.ID = len(g.Nodes)
	g.Nodes = append(g.Nodes, n)
	return n
}

// Connect adds an edge from output tag of from to input index input of to.
func (g *Graph) Connect(from *Node, tag string, to *Node, input int, p Partitioning, hash any) *Edge {
	e := &Edge{From: from, Tag: tag, To: to, Input: input, Partition: p, Hash: hash}
	from.Outputs = append(from.Outputs, e)
	to.Inputs = append(to.Inputs, e)
	return e
}

// String describes the edge for plans and errors.
func (e *Edge) String() string {
	tag := ""
	if e.Tag != "" {
		tag = "[" + e.Tag + "]"
	}
	return fmt.Sprintf("%s%s -%s-> %s", e.From.Name, tag, e.Partition, e.To.Name)
}

// Chained reports whether the compiled plan runs the edge inside an
// operator chain, as a function call rather than an exchange.
func (e *Edge) Chained() bool { return e.chained }

// ResolvedMaxParallelism is the node's max parallelism in the compiled
// plan (the job's default when the node sets none).
func (n *Node) ResolvedMaxParallelism() int { return n.maxParallelism }

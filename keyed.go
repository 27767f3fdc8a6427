package eddy

import (
	"fmt"

	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// KeyedStream is a stream partitioned by a key: records with equal keys go
// to the same subtask of the next operator, which can keep state and timers
// per key. Keys hash to key groups (the max parallelism, 128 by default),
// the unit in which keyed state is redistributed when parallelism changes.
type KeyedStream[K comparable, T any] struct {
	s    *Stream[T]
	spec ops.KeySpec[K, T]
	// forward says that s is partitioned by the key already
	// (ReinterpretAsKeyed): its records go to the subtask of the same
	// index.
	forward bool
}

// KeyBy partitions s by key. K must be made of numbers, strings, bools, and
// arrays and structs of them, so that it hashes the same in every process.
func KeyBy[T any, K comparable](s *Stream[T], key func(T) K) *KeyedStream[K, T] {
	spec, err := ops.NewKeySpec[K](key)
	if err != nil {
		s.env.fail(fmt.Errorf("eddy: KeyBy after %q: %w", s.node.Name, err))
		spec = ops.KeySpec[K, T]{Key: key, Hash: func(K) uint64 { return 0 }}
	}
	return &KeyedStream[K, T]{s: s, spec: spec}
}

// ReinterpretAsKeyed returns s as a stream keyed by key without an exchange,
// as Flink's DataStreamUtils.reinterpretAsKeyedStream does: the operator
// reading it runs in the subtask of the same index as the record's, chained
// to the operator before it where chaining applies (a one-input operator,
// chaining not disabled), and can keep state and timers per key. Every
// record of s must be in the subtask that KeyBy(s, key) would send it to:
// s comes from a keyed operator whose key is key's for each of its records,
// of the same type and value, and whose parallelism and max parallelism are
// the reading operator's. The job fails to start if the parallelisms
// differ, and fails when a record comes whose key belongs to another
// subtask's key groups.
func ReinterpretAsKeyed[T any, K comparable](s *Stream[T], key func(T) K) *KeyedStream[K, T] {
	k := KeyBy(s, key)
	k.forward = true
	return k
}

// WithRecordHash returns k routing records by hash, which must hash a
// record's key as eddy hashes the key itself (for string keys,
// xxhash.Sum64String(key(v))), without building the key: a key that costs
// an allocation to build is then built once per record, by the operator
// that reads it, rather than once more by the exchange into it.
func (k *KeyedStream[K, T]) WithRecordHash(hash func(T) uint64) *KeyedStream[K, T] {
	spec := k.spec
	spec.RecordHash = hash
	return &KeyedStream[K, T]{s: k.s, spec: spec, forward: k.forward}
}

// connect adds a hash-partitioned edge from the keyed stream into input
// index input of n.
func (k *KeyedStream[K, T]) connect(n *runtime.Node, input int) {
	if k.forward {
		e := k.s.env.graph.Connect(k.s.node, k.s.tag, n, input, runtime.Forward, nil)
		e.KeepOrder = "a stream reinterpreted as keyed (eddy.ReinterpretAsKeyed) must be read with the parallelism of the operator that partitioned it; give both the same parallelism"
		return
	}
	k.s.env.graph.Connect(k.s.node, k.s.tag, n, input, runtime.Hash, k.spec.Partitioner())
}

// Env returns the environment of the stream.
func (k *KeyedStream[K, T]) Env() *Environment { return k.s.env }

// backendFactory returns how keyed operators of the environment create
// their state backends.
func (e *Environment) backendFactory() ops.BackendFactory { return e.backend.factory(e) }

// fail records an error found while the job is built; Execute returns it.
func (e *Environment) fail(err error) { e.errs = append(e.errs, err) }

// keyedNode adds a keyed one-input operator consuming k.
func keyedNode[K comparable, T, O any](k *KeyedStream[K, T], name string, build func(ctx *runtime.Context, outs map[string]any) (runtime.Input[T], error)) *Stream[O] {
	n := newNode[O](k.s.env, name, runtime.NewInType[T]())
	n.Build = func(ctx *runtime.Context, outs map[string]any) (*runtime.Built, error) {
		in, err := build(ctx, outs)
		if err != nil {
			return nil, err
		}
		return &runtime.Built{Inputs: []any{in}}, nil
	}
	k.connect(n, 0)
	return &Stream[O]{env: k.s.env, node: n}
}

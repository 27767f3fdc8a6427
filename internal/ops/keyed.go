package ops

import (
	"fmt"

	"github.com/eddystream/eddy/internal/keys"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/codec"
	"github.com/eddystream/eddy/internal/state/kv"
)

// BackendFactory creates the keyed state backend of one operator subtask
// owning the key groups kgs.
type BackendFactory func(ctx *runtime.Context, kgs state.KeyGroupRange) (state.Backend, error)

// KeySpec says how an operator finds the key of its records.
type KeySpec[K comparable, T any] struct {
	// Key extracts the key of a record.
	Key func(T) K
	// Hash hashes a key; state.KeyGroupOf maps the hash to the key's group.
	Hash func(K) uint64
	// Codec encodes keys for snapshots and byte-oriented backends; nil
	// means the default codec of K.
	Codec codec.Codec[K]
	// RecordHash, if set, hashes a record's key as Hash(Key(v)) does,
	// without building the key: exchanges route records with it.
	RecordHash func(T) uint64
}

// NewKeySpec returns the key spec of key, with the stable hash of K.
func NewKeySpec[K comparable, T any](key func(T) K) (KeySpec[K, T], error) {
	h, err := keys.HasherFor[K]()
	if err != nil {
		return KeySpec[K, T]{}, err
	}
	return KeySpec[K, T]{Key: key, Hash: h}, nil
}

// Partitioner returns the hash function an exchange uses to route records
// of type T by this key.
func (ks KeySpec[K, T]) Partitioner() func(T) uint64 {
	if ks.RecordHash != nil {
		return ks.RecordHash
	}
	key, hash := ks.Key, ks.Hash
	return func(v T) uint64 { return hash(key(v)) }
}

// keyedBase is what every keyed operator has: its key groups, its state
// backend and store, and the current key.
type keyedBase[K comparable, T any] struct {
	spec    KeySpec[K, T]
	maxP    int
	kgs     state.KeyGroupRange
	backend state.Backend
	kc      *state.KeyContext[K]
	store   *state.Store[K]
	ctx     *runtime.Context
	// snapTables are the tables the operator's snapshots hold.
	snapTables *state.KeyedTables
}

func newKeyedBase[K comparable, T any](ctx *runtime.Context, spec KeySpec[K, T], newBackend BackendFactory) (*keyedBase[K, T], error) {
	kgs := state.RangeOf(ctx.Subtask, ctx.Parallelism, ctx.MaxParallelism)
	b, err := newBackend(ctx, kgs)
	if err != nil {
		return nil, fmt.Errorf("creating state backend: %w", err)
	}
	if rs := ctx.Restored; rs != nil && len(rs.Backends) > 0 {
		if _, ok := b.(incrementalBackend); !ok {
			b.Close()
			return nil, fmt.Errorf("the checkpoint holds keyed state of the %s backend in its own format, which the %T backend cannot read: run the job with that state backend (eddy.PebbleState), or restore from a savepoint, which restores into any state backend", rs.Backends[0].Kind, b)
		}
	}
	kc := &state.KeyContext[K]{}
	codec := spec.Codec
	if codec == nil {
		codec = lazyCodec[K]()
	}
	return &keyedBase[K, T]{
		spec: spec, maxP: ctx.MaxParallelism, kgs: kgs, backend: b, kc: kc, ctx: ctx,
		store: state.NewStore(b, kc, ctx.ProcessingTime, codec), snapTables: state.NewKeyedTables(b),
	}, nil
}

// setKeyOf makes v's key the current key and returns its key group.
func (k *keyedBase[K, T]) setKeyOf(v T) int {
	key := k.spec.Key(v)
	return k.setKeyGroup(state.KeyGroupOf(k.spec.Hash(key), k.maxP), key)
}

// setKeyAt makes the key of record i of b the current key and returns its
// key group: the one the hash exchange computed and sent with the batch if
// it did (b.KG), so that each key is hashed once per record; otherwise it
// hashes the key.
func (k *keyedBase[K, T]) setKeyAt(b *runtime.Batch[T], i int) int {
	if len(b.KG) == 0 {
		return k.setKeyOf(b.Data[i])
	}
	return k.setKeyGroup(int(b.KG[i]), k.spec.Key(b.Data[i]))
}

// setKeyGroup makes key, of key group kg, the current key, after checking
// that the subtask owns kg.
func (k *keyedBase[K, T]) setKeyGroup(kg int, key K) int {
	if !k.kgs.Contains(kg) {
		panic(fmt.Sprintf("ops: record with key %v in key group %d reached subtask %d owning %v; if its input is a stream reinterpreted as keyed (eddy.ReinterpretAsKeyed), that stream is not partitioned by this key", key, kg, k.ctx.Subtask, k.kgs))
	}
	k.kc.KG, k.kc.Key = kg, key
	return kg
}

// setKey makes key (of key group kg) the current key.
func (k *keyedBase[K, T]) setKey(kg int, key K) { k.kc.KG, k.kc.Key = kg, key }

// Close closes the state backend.
func (k *keyedBase[K, T]) Close() error { return k.backend.Close() }

// lazyCodec returns the default codec of T, or a codec that fails when used
// if T has none, so that jobs whose state is never encoded (heap state
// without checkpoints) do not need one.
func lazyCodec[T any]() codec.Codec[T] {
	c, err := codec.Default[T]()
	if err != nil {
		return failingCodec[T]{err}
	}
	return c
}

type failingCodec[T any] struct{ err error }

func (f failingCodec[T]) Append(dst []byte, v T) []byte {
	panic(&kv.BackendError{Op: "encode", Err: f.err})
}

func (f failingCodec[T]) Decode(src []byte) (v T, n int, err error) { return v, 0, f.err }

// newTimers returns the timers of the operator's key groups, part of its
// snapshots under name: on a bytes backend, a table of the backend called
// name (so the backend's own snapshots hold them); otherwise a timer service
// in memory, registered as an extra table. It panics with a
// *kv.BackendError if the bytes backend has a table of that name of
// another kind.
func newTimers[K comparable, N comparable, T any](k *keyedBase[K, T], name string) state.Timers[K, N] {
	if bb, ok := k.backend.(state.BytesBackend); ok {
		ts, err := state.NewBytesTimers[K, N](bb, name, k.keyCodec(), lazyCodec[N]())
		if err != nil {
			panic(&kv.BackendError{Op: "create timers", Err: err})
		}
		return ts
	}
	ts := state.NewTimerService[K, N](k.kgs, k.keyCodec(), lazyCodec[N]())
	k.registerExtra(name, ts)
	return ts
}

func (k *keyedBase[K, T]) keyGroups() state.KeyGroupRange { return k.kgs }
func (k *keyedBase[K, T]) keyCodec() codec.Codec[K]       { return k.store.KeyCodec() }

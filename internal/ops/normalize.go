package ops

import (
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// NormalizeLogic turns an upsert changelog keyed by its unique key into a
// retract changelog, as Flink's ChangelogNormalize does.
type NormalizeLogic[T any] struct {
	// Equal compares two rows: an upsert of a row equal to the one its key
	// holds emits nothing.
	Equal func(a, b T) bool
	// TTL, if positive, drops the row of a key not updated for that long.
	TTL time.Duration
}

// Normalize runs a NormalizeLogic over a changelog keyed by its unique key.
// Its state is the last row of each key. An addition (+I or +U) of a key
// without a row emits +I; of a key with a different row, -U of that row and
// +U of the new one; of a key with an equal row, nothing (with a TTL, the
// row's time to live restarts). A retraction (-D or -U), whose row may have
// only its key fields set, emits -D of the whole row the key held, and a
// retraction of a key without a row is counted (RetractionsWithoutState).
type Normalize[K comparable, T any] struct {
	*relational[K, changelog.Change[T], T]
	equal func(a, b T) bool
	last  *state.ValueHandle[K, state.VoidNamespace, T]
}

// NewNormalize returns the operator; it restores ctx.Restored.
func NewNormalize[K comparable, T any](ctx *runtime.Context, spec KeySpec[K, changelog.Change[T]], newBackend BackendFactory, logic NormalizeLogic[T], outs map[string]any) (*Normalize[K, T], error) {
	rel, err := newRelational[K, changelog.Change[T], T](ctx, spec, newBackend, logic.TTL, outs)
	if err != nil {
		return nil, err
	}
	n := &Normalize[K, T]{relational: rel, equal: logic.Equal}
	if n.last, err = state.NewValueHandle[K, state.VoidNamespace, T](rel.store, nil, nil, "normalize-row", nil, rel.ttlConfig()); err != nil {
		rel.Close()
		return nil, err
	}
	if err := rel.restore(ctx.Restored); err != nil {
		rel.Close()
		return nil, err
	}
	return n, nil
}

// ProcessBatch applies every change to the row of its key.
func (n *Normalize[K, T]) ProcessBatch(b *runtime.Batch[changelog.Change[T]]) error {
	for i, c := range b.Data {
		n.setKeyOf(c)
		n.ts = b.TS[i]
		prev, ok := n.last.Value()
		if c.Kind.IsRetraction() {
			if !ok {
				n.retractedAbsent()
				continue
			}
			n.last.Clear()
			n.emit(changelog.Delete, prev)
			continue
		}
		switch {
		case !ok:
			n.last.Update(c.Row)
			n.emit(changelog.Insert, c.Row)
		case n.equal(prev, c.Row):
			if n.ttl > 0 {
				n.last.Update(c.Row)
			}
		default:
			n.last.Update(c.Row)
			n.emitUpdate(prev, c.Row)
		}
	}
	n.cleanup(b.Len())
	return n.flush()
}

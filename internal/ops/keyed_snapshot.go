package ops

import (
	"github.com/eddystream/eddy/internal/checkpoint"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// registerExtra adds an object table that lives outside the backend (a timer
// service) to the operator's snapshots.
func (k *keyedBase[K, T]) registerExtra(name string, t state.ObjectTable) {
	k.snapTables.AddExtra(name, t)
}

// restore loads the key groups of a restored state into the operator's
// tables, which must all be declared by now.
func (k *keyedBase[K, T]) restore(rs *runtime.RestoredState) error {
	if rs == nil {
		return nil
	}
	return k.snapTables.Restore(k.kgs, rs.KeyGroups)
}

// SnapshotStateAsync freezes the operator's tables copy-on-write, on the
// subtask's goroutine, and returns the function that encodes the frozen key
// groups on another goroutine while the subtask processes on. Tables that
// cannot freeze (a bytes backend's) are encoded here and now.
//
// A backend that snapshots natively (incrementalBackend: Pebble) does so for
// checkpoints, when the job has checkpoint storage. Savepoints encode every
// key group in the canonical format (state.CanonicalSection), on every
// backend, so that they are self-contained and restore into any backend;
// the snapshot says so (Canonical), which sets the checkpoint's format
// version.
func (k *keyedBase[K, T]) SnapshotStateAsync(id int64) (func() (*runtime.OperatorSnapshot, error), error) {
	var native func() (*checkpoint.BackendState, error)
	opts := state.SnapshotOptions{Canonical: k.ctx.IsSavepoint(id)}
	if ib, ok := k.backend.(incrementalBackend); ok && k.ctx.Shared != nil && !k.ctx.IsSavepoint(id) {
		opts.SkipBackend = true
		var err error
		if native, err = ib.Snapshot(id, k.ctx.Shared, sharedPrefix(k.ctx.Operator)); err != nil {
			return nil, err
		}
	}
	canonical := k.snapTables.Canonical(opts)
	encode, err := k.snapTables.BeginSnapshot(k.kgs, opts)
	if err != nil {
		return nil, err
	}
	return func() (*runtime.OperatorSnapshot, error) {
		kgs := encode()
		snap := &runtime.OperatorSnapshot{KeyGroups: kgs, Canonical: canonical}
		if native != nil {
			bs, err := native()
			if err != nil {
				return nil, err
			}
			snap.Backends = []*checkpoint.BackendState{bs}
		}
		return snap, nil
	}, nil
}

// incrementalBackend is a keyed state backend that snapshots in its own
// format, sharing files across checkpoints (the Pebble backend).
type incrementalBackend interface {
	Snapshot(id int64, shared checkpoint.SharedStorage, keyPrefix string) (func() (*checkpoint.BackendState, error), error)
	CheckpointComplete(id int64)
}

// NotifyCheckpointComplete tells an incremental backend that checkpoint id
// completed, so that the next snapshot reuses its files.
func (k *keyedBase[K, T]) NotifyCheckpointComplete(id int64) error {
	if ib, ok := k.backend.(incrementalBackend); ok {
		ib.CheckpointComplete(id)
	}
	return nil
}

// sharedPrefix is the folder of an operator's shared files.
func sharedPrefix(operator string) string {
	return checkpoint.SharedDir + "/" + checkpoint.SafeName(operator)
}

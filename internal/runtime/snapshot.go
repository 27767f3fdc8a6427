package runtime

import "github.com/eddystream/eddy/internal/checkpoint"

// OperatorSnapshot is the state of one operator subtask at a checkpoint.
//
// Keyed state is stored per key group, so that on a restore with another
// parallelism each subtask takes exactly the key groups it owns. Operator
// state is a set of named lists whose elements are dealt round-robin to the
// subtasks of a restore (as a source's splits are), unless the operator asks
// for every element (union redistribution, for state any subtask may act on).
//
// KeyGroups maps a key group to the encoding of all the operator's keyed
// state (tables and timers) in it; Lists holds named operator-state lists.
type OperatorSnapshot = checkpoint.SubtaskState

// Stateful is implemented by operators (and source drivers) that have state
// to checkpoint. SnapshotState is called on the subtask's goroutine when the
// barrier of checkpoint id passes the operator: after every record before
// the barrier and before any record after it. The snapshot must not share
// memory that the operator goes on changing.
type Stateful interface {
	SnapshotState(id int64) (*OperatorSnapshot, error)
}

// AsyncStateful is implemented by operators whose snapshots are taken in
// two parts: SnapshotStateAsync runs on the subtask's goroutine when the
// barrier passes and does only what must happen there (freezing state,
// copy-on-write); the function it returns completes the snapshot on another
// goroutine while the subtask goes on processing. The function is always
// called exactly once, even if the checkpoint is aborted.
type AsyncStateful interface {
	SnapshotStateAsync(id int64) (func() (*OperatorSnapshot, error), error)
}

// CheckpointListener is implemented by operators that act when a checkpoint
// completes, such as transactional sinks committing. The notification may be
// lost (a failure right after completion), so the action must also happen
// on restore from that checkpoint, and must be idempotent.
type CheckpointListener interface {
	NotifyCheckpointComplete(id int64) error
}

// RestoredState is what an operator subtask gets back on restore: the keyed
// state of exactly the key groups it owns, and its share of each
// operator-state list (every element of the lists its node names in
// UnionLists).
type RestoredState = checkpoint.SubtaskState

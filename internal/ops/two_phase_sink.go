package ops

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/eddystream/eddy/internal/runtime"
)

// TwoPhaseCommitter is the small interface of an exactly-once sink: it
// writes into transactions that become visible only when committed. TX must
// encode to JSON, because pending transactions travel in checkpoints.
//
// All methods are called on the sink subtask's goroutine, except that on a
// restore Commit and Abort are called for transactions of earlier runs,
// possibly written by other subtasks.
type TwoPhaseCommitter[T, TX any] interface {
	// Begin starts a transaction.
	Begin() (TX, error)
	// Write adds v to tx.
	Write(tx *TX, v T) error
	// PreCommit makes tx durable but not yet visible. After it, tx takes no
	// more writes.
	PreCommit(tx *TX) error
	// Commit makes a pre-committed transaction visible. It must be
	// idempotent: after a failure it is called again for transactions that
	// may have been committed already.
	Commit(tx TX) error
	// Abort discards a transaction that will never commit.
	Abort(tx TX) error
	// Recover is called once, before anything else, on the first subtask
	// of a fresh or restored job, with every transaction the checkpoint
	// knows; it discards leftovers of earlier runs that are in neither list
	// (files of transactions begun after the checkpoint, say).
	Recover(pending, current []TX) error
}

// pendingTx is a pre-committed transaction waiting for its checkpoint.
type pendingTx[TX any] struct {
	Checkpoint int64 `json:"checkpoint"`
	TX         TX    `json:"tx"`
}

// Lists of a two-phase sink's state; every subtask receives them whole on
// restore and the first one acts on them.
const (
	PendingList = "pending"
	CurrentList = "current"
)

// TwoPhaseSink runs a TwoPhaseCommitter: it pre-commits the current
// transaction when a checkpoint's barrier passes, commits the pre-committed
// transactions when the checkpoint completes, and on restore commits what
// the checkpoint had pre-committed and aborts the rest. At the end of input it
// pre-commits and commits on the job's final checkpoint. Output is therefore
// exactly once: visible once, and only what the checkpointed state accounts
// for.
type TwoPhaseSink[T, TX any] struct {
	c       TwoPhaseCommitter[T, TX]
	ctx     *runtime.Context
	cur     TX
	open    bool
	pending []pendingTx[TX]
	lastID  int64
}

// NewTwoPhaseSink returns the sink, after recovering what ctx.Restored
// holds.
func NewTwoPhaseSink[T, TX any](ctx *runtime.Context, c TwoPhaseCommitter[T, TX]) (*TwoPhaseSink[T, TX], error) {
	s := &TwoPhaseSink[T, TX]{c: c, ctx: ctx}
	if ctx.Subtask == 0 {
		var pending, current []TX
		if rs := ctx.Restored; rs != nil {
			s.lastID = 0
			for _, b := range rs.Lists[PendingList] {
				var p pendingTx[TX]
				if err := json.Unmarshal(b, &p); err != nil {
					return nil, fmt.Errorf("restoring a pending transaction: %w", err)
				}
				pending = append(pending, p.TX)
			}
			for _, b := range rs.Lists[CurrentList] {
				var tx TX
				if err := json.Unmarshal(b, &tx); err != nil {
					return nil, fmt.Errorf("restoring a current transaction: %w", err)
				}
				current = append(current, tx)
			}
		}
		if err := c.Recover(pending, current); err != nil {
			return nil, err
		}
		for _, tx := range pending {
			if err := c.Commit(tx); err != nil {
				return nil, fmt.Errorf("committing a transaction of the restored checkpoint: %w", err)
			}
		}
		for _, tx := range current {
			if err := c.Abort(tx); err != nil {
				return nil, fmt.Errorf("aborting a transaction of the restored checkpoint: %w", err)
			}
		}
	}
	return s, nil
}

func (s *TwoPhaseSink[T, TX]) begin() error {
	if s.open {
		return nil
	}
	tx, err := s.c.Begin()
	if err != nil {
		return err
	}
	s.cur, s.open = tx, true
	return nil
}

// ProcessBatch writes the records into the current transaction.
func (s *TwoPhaseSink[T, TX]) ProcessBatch(b *runtime.Batch[T]) error {
	if err := s.begin(); err != nil {
		return err
	}
	for _, v := range b.Data {
		if err := s.c.Write(&s.cur, v); err != nil {
			return err
		}
	}
	return nil
}

// ProcessWatermark does nothing: a sink has no output.
func (s *TwoPhaseSink[T, TX]) ProcessWatermark(int64) error { return nil }

// preCommit pre-commits the current transaction, if any, for checkpoint id.
func (s *TwoPhaseSink[T, TX]) preCommit(id int64) error {
	if !s.open {
		return nil
	}
	if err := s.c.PreCommit(&s.cur); err != nil {
		return err
	}
	s.pending = append(s.pending, pendingTx[TX]{Checkpoint: id, TX: s.cur})
	var zero TX
	s.cur, s.open = zero, false
	return nil
}

// EndInput pre-commits the last transaction; the job's final checkpoint
// commits it.
func (s *TwoPhaseSink[T, TX]) EndInput() error { return s.preCommit(s.lastID + 1) }

// SnapshotState pre-commits the current transaction for checkpoint id and
// records every transaction not yet committed.
func (s *TwoPhaseSink[T, TX]) SnapshotState(id int64) (*runtime.OperatorSnapshot, error) {
	s.lastID = id
	if err := s.preCommit(id); err != nil {
		return nil, err
	}
	snap := &runtime.OperatorSnapshot{Lists: map[string][][]byte{PendingList: {}}}
	for _, p := range s.pending {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encoding a pending transaction: %w", err)
		}
		snap.Lists[PendingList] = append(snap.Lists[PendingList], b)
	}
	return snap, nil
}

// NotifyCheckpointComplete commits every transaction pre-committed for a
// checkpoint up to id.
func (s *TwoPhaseSink[T, TX]) NotifyCheckpointComplete(id int64) error {
	sort.SliceStable(s.pending, func(i, j int) bool { return s.pending[i].Checkpoint < s.pending[j].Checkpoint })
	k := 0
	for _, p := range s.pending {
		if p.Checkpoint > id {
			break
		}
		if err := s.c.Commit(p.TX); err != nil {
			return err
		}
		k++
	}
	s.pending = s.pending[k:]
	return nil
}

// Close aborts the transaction in progress, if any: its records will be
// replayed from the last checkpoint.
func (s *TwoPhaseSink[T, TX]) Close() error {
	if s.open {
		s.open = false
		return s.c.Abort(s.cur)
	}
	return nil
}

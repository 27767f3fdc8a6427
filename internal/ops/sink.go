package ops

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/runtime"
)

// writerContext is the connector.WriterContext of a sink subtask.
type writerContext struct{ ctx *runtime.Context }

// NewWriterContext returns the writer context of the sink subtask ctx.
func NewWriterContext(ctx *runtime.Context) connector.WriterContext { return writerContext{ctx} }

func (w writerContext) SinkName() string      { return w.ctx.Operator }
func (w writerContext) Subtask() int          { return w.ctx.Subtask }
func (w writerContext) Parallelism() int      { return w.ctx.Parallelism }
func (w writerContext) ProcessingTime() int64 { return w.ctx.ProcessingTime() }
func (w writerContext) Log() *slog.Logger     { return w.ctx.Log }

// CountBytesOut implements connector.BytesOutCounter.
func (w writerContext) CountBytesOut(n int) { w.ctx.Metrics.BytesOut.Add(int64(n)) }

// WriterSink runs a connector writer: it writes every batch, flushes the
// writer when a checkpoint's barrier passes and at the end of the input.
//
// The two halves of an update arrive in one batch (see
// runtime.UpdateBeforeOf), so a checkpoint never falls between them.
type WriterSink[T any] struct {
	w connector.Writer[T]
}

// NewWriterSink returns the sink operator of w.
func NewWriterSink[T any](w connector.Writer[T]) *WriterSink[T] {
	return &WriterSink[T]{w: w}
}

// ProcessBatch writes the batch.
func (s *WriterSink[T]) ProcessBatch(b *runtime.Batch[T]) error {
	return s.w.Write(b.Data, b.TS)
}

// RetainsNoInput implements runtime.InputRetainer: the sink keeps nothing
// of its input when its writer keeps nothing (connector.NonRetainingWriter).
func (s *WriterSink[T]) RetainsNoInput() bool { return connector.RetainsNoRecords(s.w) }

// ProcessWatermark passes the watermark to the writer if it listens
// (connector.WatermarkListener); a sink has no output.
func (s *WriterSink[T]) ProcessWatermark(wm int64) error {
	return connector.PassWatermark(s.w, wm)
}

// EndInput flushes the writer.
func (s *WriterSink[T]) EndInput() error {
	return s.w.Flush()
}

// SnapshotState flushes the writer, so that everything the checkpoint
// accounts for is in the outside system. The writer keeps no state.
func (s *WriterSink[T]) SnapshotState(int64) (*runtime.OperatorSnapshot, error) {
	return nil, s.w.Flush()
}

// NotifyCheckpointComplete tells the writer, if it listens.
func (s *WriterSink[T]) NotifyCheckpointComplete(id int64) error {
	return connector.NotifyIfListening(s.w, id)
}

// Close closes the writer.
func (s *WriterSink[T]) Close() error { return s.w.Close() }

// Lists of a transactional sink's state; every subtask receives them whole
// on restore and the first one acts on them.
const (
	PendingList = "pending"
	CurrentList = "current"
)

// pendingTx is a pre-committed transaction waiting for its checkpoint.
type pendingTx struct {
	checkpoint int64
	tx         []byte
}

// encode writes the checkpoint as a varint, then the transaction.
func (p pendingTx) encode() []byte {
	return append(binary.AppendVarint(nil, p.checkpoint), p.tx...)
}

// decodePendingTx reads an entry of the pending list. Entries written by
// earlier versions are JSON objects {"checkpoint": n, "tx": …}.
func decodePendingTx(b []byte) (pendingTx, error) {
	if len(b) > 0 && b[0] == '{' {
		var old struct {
			Checkpoint int64           `json:"checkpoint"`
			TX         json.RawMessage `json:"tx"`
		}
		if err := json.Unmarshal(b, &old); err != nil {
			return pendingTx{}, err
		}
		return pendingTx{checkpoint: old.Checkpoint, tx: old.TX}, nil
	}
	id, n := binary.Varint(b)
	if n <= 0 {
		return pendingTx{}, fmt.Errorf("pending transaction entry is corrupt")
	}
	return pendingTx{checkpoint: id, tx: append([]byte(nil), b[n:]...)}, nil
}

// TransactionalSink runs a connector.TransactionalWriter: it pre-commits the
// open transaction when a checkpoint's barrier passes, commits the
// pre-committed transactions when the checkpoint completes, and on restore
// commits what the checkpoint had pre-committed and aborts the rest. At the
// end of input it pre-commits and commits on the job's final checkpoint.
// Output is therefore exactly once: visible once, and only what the
// checkpointed state accounts for. Both halves of an update arrive in one
// batch, so they are in the same transaction.
type TransactionalSink[T any] struct {
	w       connector.TransactionalWriter[T]
	pending []pendingTx
	lastID  int64
}

// NewTransactionalSink returns the sink, after recovering what ctx.Restored
// holds.
func NewTransactionalSink[T any](ctx *runtime.Context, w connector.TransactionalWriter[T]) (*TransactionalSink[T], error) {
	s := &TransactionalSink[T]{w: w}
	if ctx.Subtask != 0 {
		return s, nil
	}
	var pending, current [][]byte
	if rs := ctx.Restored; rs != nil {
		for _, b := range rs.Lists[PendingList] {
			p, err := decodePendingTx(b)
			if err != nil {
				return nil, errors.Join(fmt.Errorf("restoring a pending transaction: %w", err), w.Close())
			}
			pending = append(pending, p.tx)
		}
		current = rs.Lists[CurrentList]
	}
	// The subtask never runs if the restore fails: release the writer.
	fail := func(err error) (*TransactionalSink[T], error) {
		return nil, errors.Join(err, w.Close())
	}
	if err := w.Recover(pending, current); err != nil {
		return fail(err)
	}
	for _, tx := range pending {
		if err := w.Commit(tx); err != nil {
			return fail(fmt.Errorf("committing a transaction of the restored checkpoint: %w", err))
		}
	}
	for _, tx := range current {
		if err := w.Abort(tx); err != nil {
			return fail(fmt.Errorf("aborting a transaction of the restored checkpoint: %w", err))
		}
	}
	return s, nil
}

// ProcessBatch writes the records into the open transaction.
func (s *TransactionalSink[T]) ProcessBatch(b *runtime.Batch[T]) error {
	return s.w.Write(b.Data, b.TS)
}

// RetainsNoInput implements runtime.InputRetainer: the sink keeps nothing
// of its input when its writer keeps nothing (connector.NonRetainingWriter;
// connector.TwoPhase's writers say what their committers say).
func (s *TransactionalSink[T]) RetainsNoInput() bool { return connector.RetainsNoRecords(s.w) }

// ProcessWatermark passes the watermark to the writer if it listens
// (connector.WatermarkListener); a sink has no output.
func (s *TransactionalSink[T]) ProcessWatermark(wm int64) error {
	return connector.PassWatermark(s.w, wm)
}

// preCommit pre-commits the open transaction, if any, for checkpoint id.
func (s *TransactionalSink[T]) preCommit(id int64) error {
	tx, err := s.w.PreCommit()
	if err != nil || tx == nil {
		return err
	}
	s.pending = append(s.pending, pendingTx{checkpoint: id, tx: tx})
	return nil
}

// EndInput pre-commits the last transaction; the job's final checkpoint
// commits it.
func (s *TransactionalSink[T]) EndInput() error {
	return s.preCommit(s.lastID + 1)
}

// SnapshotState pre-commits the open transaction for checkpoint id and
// records every transaction not yet committed.
func (s *TransactionalSink[T]) SnapshotState(id int64) (*runtime.OperatorSnapshot, error) {
	s.lastID = id
	if err := s.preCommit(id); err != nil {
		return nil, err
	}
	snap := &runtime.OperatorSnapshot{Lists: map[string][][]byte{PendingList: {}}}
	for _, p := range s.pending {
		snap.Lists[PendingList] = append(snap.Lists[PendingList], p.encode())
	}
	return snap, nil
}

// NotifyCheckpointComplete commits every transaction pre-committed for a
// checkpoint up to id.
func (s *TransactionalSink[T]) NotifyCheckpointComplete(id int64) error {
	sort.SliceStable(s.pending, func(i, j int) bool { return s.pending[i].checkpoint < s.pending[j].checkpoint })
	k := 0
	for _, p := range s.pending {
		if p.checkpoint > id {
			break
		}
		if err := s.w.Commit(p.tx); err != nil {
			return err
		}
		k++
	}
	s.pending = s.pending[k:]
	return connector.NotifyIfListening(s.w, id)
}

// Close aborts the open transaction, if any: its records will be replayed
// from the last checkpoint.
func (s *TransactionalSink[T]) Close() error { return s.w.Close() }

package connector

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/eddystream/eddy/changelog"
)

// Sink writes records of type T to an outside system, through one Writer per
// parallel subtask. A sink that makes its writes visible atomically at
// checkpoints is a TransactionalSink (see TwoPhase).
//
// A sink of changelog rows (T a changelog.Change) may implement
// ChangelogSink to say which changes it can apply.
type Sink[T any] interface {
	// NewWriter returns the writer of one parallel subtask, on that
	// subtask's goroutine.
	NewWriter(ctx WriterContext) (Writer[T], error)
}

// Writer writes the records of one sink subtask. Its methods are called on
// the subtask's goroutine. A writer may also implement CheckpointListener.
type Writer[T any] interface {
	// Write writes a batch of records; timestamps[i] is the event time
	// (milliseconds) of records[i], or math.MinInt64 if it has none. The
	// slices are valid only during the call.
	Write(records []T, timestamps []int64) error
	// Flush makes everything written so far durable in the outside system.
	// It is called when a checkpoint's barrier reaches the sink, before the
	// checkpoint counts the records, and at the end of the input: a writer
	// whose writes are idempotent (upserts by key, messages with
	// deterministic ids) is therefore exactly-once in effect. The changes of
	// one update (-U and +U) always reach the writer in the same flush.
	Flush() error
	// Close releases the writer's resources when the subtask ends, whether
	// it ended well or not.
	Close() error
}

// WriterContext describes the subtask a writer runs in.
type WriterContext interface {
	// SinkName returns the name of the sink operator.
	SinkName() string
	// Subtask returns the index of the writer's subtask, in [0, Parallelism).
	Subtask() int
	// Parallelism returns the number of writers.
	Parallelism() int
	// ProcessingTime returns the current processing time in milliseconds
	// since the Unix epoch.
	ProcessingTime() int64
	// Log returns the subtask's logger.
	Log() *slog.Logger
}

// BytesOutCounter is implemented by the WriterContext that eddy gives a
// writer: it counts the bytes the writer writes to the external system, which
// eddy reports as the sink operator's bytes out (Flink's numBytesOut, a sink's
// numBytesSend). Writers call it through CountBytesOut, so that contexts that
// do not count bytes (a test's own context) need not implement it.
type BytesOutCounter interface {
	// CountBytesOut counts n bytes written to the external system. Count
	// the encoded payload of each record as written: a message's value (its
	// key and headers are not counted), the bytes of a file, an estimate of
	// a row's encoded columns where the client does not expose them. It is
	// safe to call on the subtask's goroutine and cheap (an atomic add), so
	// a writer may call it once per record.
	CountBytesOut(n int)
}

// CountBytesOut counts n bytes written to the external system on ctx (see
// BytesOutCounter) and does nothing if ctx does not count bytes. It is safe
// to call on the subtask's goroutine and cheap.
func CountBytesOut(ctx WriterContext, n int) {
	if c, ok := ctx.(BytesOutCounter); ok {
		c.CountBytesOut(n)
	}
}

// ChangelogSink is implemented by sinks of changelog rows to say which kinds
// of change they apply. A job whose stream carries kinds the sink does not
// accept fails to start, naming the sink.
type ChangelogSink interface {
	// ChangelogMode returns the kinds of change the sink applies.
	ChangelogMode() changelog.Mode
}

// TwoPhaseCommitter is the small interface of an exactly-once sink: it
// writes into transactions that become visible only when committed. TX must
// encode to JSON, because pre-committed transactions travel in checkpoints.
//
// All methods are called on the sink subtask's goroutine, except that on a
// restore Commit and Abort are called for transactions of earlier runs,
// possibly written by other subtasks. A committer that also has a
// Close() error method has it called when its subtask ends, to release
// its connections. A committer that keeps nothing of the records given to
// Write once it returns says so by implementing NonRetainingWriter, as
// writers do: it encodes or copies what it needs of each record at once,
// and its TX holds no record, nor rows or strings that share a record's
// memory (the open transaction stays until PreCommit).
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

// TransactionalSink is a sink whose writes become visible atomically: the
// runtime pre-commits each subtask's transaction when a checkpoint's barrier
// passes, commits it when the checkpoint completes, and on a restore commits
// what the checkpoint pre-committed and aborts the rest. What it makes
// visible is exactly the output of the records the checkpoint accounts for,
// once. TwoPhase makes one from a TwoPhaseCommitter.
type TransactionalSink[T any] interface {
	Sink[T]
	// NewTransactionalWriter returns the transactional writer of one
	// subtask.
	NewTransactionalWriter(ctx WriterContext) (TransactionalWriter[T], error)
}

// TransactionalWriter is the writer of a TransactionalSink, with its
// transactions encoded as bytes. Its methods are called as those of
// TwoPhaseCommitter are.
type TransactionalWriter[T any] interface {
	// Write writes records into the open transaction, beginning one if
	// none is open.
	Write(records []T, timestamps []int64) error
	// PreCommit pre-commits the open transaction and returns it, or nil if
	// none is open.
	PreCommit() (tx []byte, err error)
	// Commit makes a pre-committed transaction visible; it is idempotent.
	Commit(tx []byte) error
	// Abort discards a transaction.
	Abort(tx []byte) error
	// Recover discards leftovers of earlier runs that are in neither list;
	// it is called once, first, on subtask 0.
	Recover(pending, current [][]byte) error
	// Close aborts the open transaction, if any, and releases resources.
	Close() error
}

// TwoPhase returns the exactly-once sink that runs, in each subtask, the
// committer newCommitter returns.
func TwoPhase[T, TX any](newCommitter func(ctx WriterContext) (TwoPhaseCommitter[T, TX], error)) TransactionalSink[T] {
	return twoPhase[T, TX]{newCommitter}
}

type twoPhase[T, TX any] struct {
	newCommitter func(WriterContext) (TwoPhaseCommitter[T, TX], error)
}

func (s twoPhase[T, TX]) NewTransactionalWriter(ctx WriterContext) (TransactionalWriter[T], error) {
	c, err := s.newCommitter(ctx)
	if err != nil {
		return nil, err
	}
	return &txWriter[T, TX]{c: c}, nil
}

// NewWriter returns a writer that commits a transaction at every flush, for
// use outside the runtime's checkpoints.
func (s twoPhase[T, TX]) NewWriter(ctx WriterContext) (Writer[T], error) {
	w, err := s.NewTransactionalWriter(ctx)
	if err != nil {
		return nil, err
	}
	return flushCommitter[T]{w}, nil
}

type flushCommitter[T any] struct{ w TransactionalWriter[T] }

// RetainsNoRecords implements NonRetainingWriter: the writer keeps what its
// committer keeps.
func (f flushCommitter[T]) RetainsNoRecords() bool { return RetainsNoRecords(f.w) }

func (f flushCommitter[T]) Write(r []T, ts []int64) error { return f.w.Write(r, ts) }
func (f flushCommitter[T]) Close() error                  { return f.w.Close() }

// ProcessWatermark passes the watermark on to the committer if it listens.
func (f flushCommitter[T]) ProcessWatermark(wm int64) error { return PassWatermark(f.w, wm) }

func (f flushCommitter[T]) Flush() error {
	tx, err := f.w.PreCommit()
	if err != nil || tx == nil {
		return err
	}
	return f.w.Commit(tx)
}

// txWriter adapts a TwoPhaseCommitter to a TransactionalWriter.
type txWriter[T, TX any] struct {
	c    TwoPhaseCommitter[T, TX]
	cur  TX
	open bool
}

func (w *txWriter[T, TX]) Write(records []T, _ []int64) error {
	if !w.open {
		tx, err := w.c.Begin()
		if err != nil {
			return err
		}
		w.cur, w.open = tx, true
	}
	for _, v := range records {
		if err := w.c.Write(&w.cur, v); err != nil {
			return err
		}
	}
	return nil
}

// RetainsNoRecords implements NonRetainingWriter: the writer keeps what its
// committer keeps.
func (w *txWriter[T, TX]) RetainsNoRecords() bool { return RetainsNoRecords(w.c) }

// RetainsNoRecords reports whether writer w (or a TwoPhase committer) says
// it keeps nothing of the records given to Write once it returns: it is a
// NonRetainingWriter whose RetainsNoRecords is true.
func RetainsNoRecords(w any) bool {
	r, ok := w.(NonRetainingWriter)
	return ok && r.RetainsNoRecords()
}

func (w *txWriter[T, TX]) PreCommit() ([]byte, error) {
	if !w.open {
		return nil, nil
	}
	if err := w.c.PreCommit(&w.cur); err != nil {
		return nil, err
	}
	b, err := json.Marshal(w.cur)
	if err != nil {
		return nil, fmt.Errorf("connector: encoding a %T transaction: %w", w.cur, err)
	}
	var zero TX
	w.cur, w.open = zero, false
	return b, nil
}

func (w *txWriter[T, TX]) decode(b []byte) (TX, error) {
	var tx TX
	if err := json.Unmarshal(b, &tx); err != nil {
		return tx, fmt.Errorf("connector: decoding a %T transaction of a checkpoint: %w", tx, err)
	}
	return tx, nil
}

func (w *txWriter[T, TX]) Commit(b []byte) error {
	tx, err := w.decode(b)
	if err != nil {
		return err
	}
	return w.c.Commit(tx)
}

func (w *txWriter[T, TX]) Abort(b []byte) error {
	tx, err := w.decode(b)
	if err != nil {
		return err
	}
	return w.c.Abort(tx)
}

func (w *txWriter[T, TX]) Recover(pending, current [][]byte) error {
	var p, c []TX
	for _, b := range pending {
		tx, err := w.decode(b)
		if err != nil {
			return err
		}
		p = append(p, tx)
	}
	for _, b := range current {
		tx, err := w.decode(b)
		if err != nil {
			return err
		}
		c = append(c, tx)
	}
	return w.c.Recover(p, c)
}

func (w *txWriter[T, TX]) Close() error {
	var err error
	if w.open {
		w.open = false
		err = w.c.Abort(w.cur)
	}
	if c, ok := w.c.(interface{ Close() error }); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}

// NotifyCheckpointComplete passes the notification on to the committer if
// it listens.
func (w *txWriter[T, TX]) NotifyCheckpointComplete(id int64) error {
	return NotifyIfListening(w.c, id)
}

// WatermarkListener is implemented by writers, and by the committers of
// TwoPhase, that act on the progress of event time: a file sink commits a
// partition once the watermark passes its end. ProcessWatermark is called
// on the subtask's goroutine with each new watermark of the sink's input
// (math.MaxInt64 at the end of the input).
type WatermarkListener interface {
	ProcessWatermark(watermark int64) error
}

// PassWatermark passes watermark wm on to v if it is a WatermarkListener,
// and does nothing otherwise: a writer that wraps another calls it from
// its own ProcessWatermark.
func PassWatermark(v any, wm int64) error {
	if l, ok := v.(WatermarkListener); ok {
		return l.ProcessWatermark(wm)
	}
	return nil
}

// ProcessWatermark passes the watermark on to the committer if it listens.
func (w *txWriter[T, TX]) ProcessWatermark(wm int64) error {
	return PassWatermark(w.c, wm)
}

// sinkMode returns the changelog mode a sink declares, insert-only if it
// declares none.
func sinkMode(s any) changelog.Mode {
	if c, ok := s.(ChangelogSink); ok {
		return c.ChangelogMode()
	}
	return changelog.InsertOnly
}

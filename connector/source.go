package connector

import (
	"errors"
	"log/slog"
	"time"

	"github.com/eddystream/eddy/changelog"
)

// Source is a source of records of type T divided into splits. A job makes
// one Enumerator per run (a restart after a failure makes a new one) and one
// Reader per parallel subtask.
type Source[T any] interface {
	// NewEnumerator returns the source's enumerator. restored is the state
	// its SnapshotState returned in the checkpoint the job restores from,
	// nil on a fresh start, when the enumerator discovers the splits. It is
	// called on the enumerator's goroutine.
	NewEnumerator(ctx EnumeratorContext, restored []byte) (Enumerator, error)
	// NewReader returns the reader of one parallel subtask, on that
	// subtask's goroutine.
	NewReader(ctx ReaderContext) (Reader[T], error)
}

// Enumerator discovers a source's splits and assigns them to readers. All
// its methods are called on one goroutine of its own, so it needs no locks;
// slow work (listing files, querying a database) belongs in
// EnumeratorContext.CallAsync. An error returned by a method fails the job.
//
// An enumerator may also implement CheckpointListener.
type Enumerator interface {
	// AddReader tells the enumerator that the reader of subtask has
	// started. After a restore the reader already holds the splits the
	// checkpoint gave it.
	AddReader(subtask int) error
	// HandleSplitRequest is called when the reader of subtask asks for a
	// split (ReaderContext.RequestSplit), for sources that hand out splits
	// on demand.
	HandleSplitRequest(subtask int) error
	// HandleEvent receives an event a reader sent (ReaderContext.SendEvent).
	HandleEvent(subtask int, event []byte) error
	// SnapshotState returns the enumerator's state for checkpoint
	// checkpointID: the splits it has not assigned yet and what it needs to
	// go on after a restore. Assignments made after this call reach the
	// readers only after their own snapshots of the same checkpoint, so a
	// split is either here or in exactly one reader's state.
	SnapshotState(checkpointID int64) ([]byte, error)
	// Close releases the enumerator's resources when the job ends or fails.
	Close() error
}

// EnumeratorContext is what an enumerator can do. Its methods are safe to
// call from the enumerator's goroutine only, except where noted.
type EnumeratorContext interface {
	// SourceName returns the name of the source operator.
	SourceName() string
	// Parallelism returns the number of readers.
	Parallelism() int
	// AssignSplits hands splits to the reader of subtask.
	AssignSplits(subtask int, splits ...Split)
	// SignalNoMoreSplits tells the reader of subtask that it will get no
	// more splits: once it has finished those it has, its input ends.
	SignalNoMoreSplits(subtask int)
	// SendEvent sends an event to the reader of subtask
	// (ReaderEventHandler).
	SendEvent(subtask int, event []byte)
	// CallAsync runs fn on a goroutine of its own, then handler with its
	// result on the enumerator's goroutine.
	CallAsync(fn func() (any, error), handler func(result any, err error) error)
	// Every calls fn on the enumerator's goroutine every interval until the
	// job ends, for periodic discovery of new splits.
	Every(interval time.Duration, fn func() error)
	// Log returns the source's logger.
	Log() *slog.Logger
	// Checkpointing reports whether the job takes checkpoints. An
	// enumerator that waits for a checkpoint to complete before it goes on
	// (CheckpointListener) must not wait when there will be none.
	Checkpointing() bool
}

// Reader reads the splits of one parallel subtask. All its methods are
// called on the subtask's goroutine, never concurrently.
//
// The subtask's input ends once the enumerator has signalled that no more
// splits will come and every split the reader was given is finished
// (SplitOutput.Finish). A reader may also implement NoMoreSplitsHandler,
// ReaderEventHandler and CheckpointListener.
type Reader[T any] interface {
	// AddSplits gives the reader splits to read: first the splits a restored
	// checkpoint gives the subtask, then those the enumerator assigns.
	AddSplits(splits []Split) error
	// Read emits the records available now through out, until out.Room()
	// is 0 or nothing more is available. A reader with nothing to emit
	// returns within a few milliseconds, so that the subtask can take
	// checkpoints and process timers. An error fails the job.
	Read(out Output[T]) error
	// SnapshotState returns every split the reader holds and has not
	// finished, with its position, for checkpoint checkpointID.
	SnapshotState(checkpointID int64) ([]Split, error)
	// Close releases the reader's resources when the subtask ends, whether
	// it ended well or not.
	Close() error
}

// ReaderContext is what a reader can do.
type ReaderContext interface {
	// SourceName returns the name of the source operator.
	SourceName() string
	// Subtask returns the index of the reader's subtask, in [0, Parallelism).
	Subtask() int
	// Parallelism returns the number of readers.
	Parallelism() int
	// RequestSplit asks the enumerator for a split
	// (Enumerator.HandleSplitRequest).
	RequestSplit()
	// SendEvent sends an event to the enumerator (Enumerator.HandleEvent).
	SendEvent(event []byte)
	// ProcessingTime returns the current processing time in milliseconds
	// since the Unix epoch.
	ProcessingTime() int64
	// Log returns the subtask's logger.
	Log() *slog.Logger
}

// BytesInCounter is implemented by the ReaderContext that eddy gives a
// reader: it counts the bytes the reader reads from the external system, which
// eddy reports as the source operator's bytes in (Flink's numBytesIn). Readers
// call it through CountBytesIn, so that contexts that do not count bytes (a
// test's own context) need not implement it.
type BytesInCounter interface {
	// CountBytesIn counts n bytes read from the external system. Count the
	// encoded payload of each record as read: a message's value (its key
	// and headers are not counted), a file's bytes, a row's encoded
	// columns. It is safe to call on the subtask's goroutine and cheap (an
	// atomic add), so a reader may call it once per record.
	CountBytesIn(n int)
}

// CountBytesIn counts n bytes read from the external system on ctx (see
// BytesInCounter) and does nothing if ctx does not count bytes. It is safe to
// call on the subtask's goroutine and cheap.
func CountBytesIn(ctx ReaderContext, n int) {
	if c, ok := ctx.(BytesInCounter); ok {
		c.CountBytesIn(n)
	}
}

// Output is where a reader emits records. It is valid during Read only.
type Output[T any] interface {
	// Split returns the output of the split with the given id. Records of a
	// split go through its output, which timestamps them and tracks the
	// split's watermark: the source's watermark is the least over its
	// splits that are neither finished nor idle. The returned value stays
	// valid for the reader's life, so a reader may keep it.
	Split(id string) SplitOutput[T]
	// Room returns how many more records fit in the batch being filled.
	Room() int
	// BadRecord reports a record the reader could not decode. If the source
	// keeps bad records aside it counts d, sends it to the dead-letter output
	// and returns nil; otherwise it returns an error naming d.Location that
	// the reader returns from Read, which fails the job.
	BadRecord(d DeadLetter) error
}

// SplitOutput emits the records of one split.
type SplitOutput[T any] interface {
	// Emit adds a record of the split, timestamped by the source's
	// watermark strategy (or without a timestamp if it has none).
	Emit(v T)
	// EmitAt adds a record with the event timestamp ts (milliseconds); the
	// watermark strategy's timestamp function takes precedence if it has
	// one.
	EmitAt(v T, ts int64)
	// Finish marks the split as read to its end: it no longer holds back
	// the watermark and no longer belongs to the reader.
	Finish()
}

// NoMoreSplitsHandler is implemented by readers that want to know when the
// enumerator has signalled that no more splits will come.
type NoMoreSplitsHandler interface {
	NoMoreSplits()
}

// ReaderEventHandler is implemented by readers that receive events from
// their enumerator (EnumeratorContext.SendEvent).
type ReaderEventHandler interface {
	HandleEvent(event []byte) error
}

// CheckpointListener is implemented by readers, enumerators, writers and
// committers that act when a checkpoint completes: acknowledging messages
// to a broker, releasing a replication slot's WAL. The notification may be
// lost in a failure, so the action must also be safe to repeat or to skip.
type CheckpointListener interface {
	NotifyCheckpointComplete(checkpointID int64) error
}

// NotifyIfListening passes the completion of checkpoint id on to v if it
// is a CheckpointListener, and does nothing otherwise: a reader or writer
// that wraps another calls it from its own NotifyCheckpointComplete.
func NotifyIfListening(v any, id int64) error {
	if l, ok := v.(CheckpointListener); ok {
		return l.NotifyCheckpointComplete(id)
	}
	return nil
}

// DeadLetter is a malformed input record that a source set aside instead of
// failing the job.
type DeadLetter struct {
	// Source names the source operator.
	Source string `json:"source"`
	// Location says where the record was: "file.jsonl:17", a partition and
	// offset, a table and position.
	Location string `json:"location"`
	// Raw is the record as it was read.
	Raw string `json:"raw"`
	// Error says what was wrong with it.
	Error string `json:"error"`
}

// ErrEndOfInput may be returned from Reader.Read by a reader whose input has
// ended for good before its splits are finished (a bounded read that stops
// early); the subtask then ends as if every split were finished.
var ErrEndOfInput = errors.New("connector: end of input")

// ChangelogSource is implemented by sources of changelog rows (T a
// changelog.Change) to say which kinds of change they produce, so that the
// operators downstream know: a CDC source of a table with a primary key is
// an upsert or retract stream; a source of plain records is insert-only.
// A source of changes that does not implement it is taken to produce all
// four kinds.
type ChangelogSource interface {
	ChangelogMode() changelog.Mode
}

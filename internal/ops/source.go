package ops

import (
	"errors"
	"io"
	"time"

	"github.com/eddystream/eddy/internal/runtime"
)

// SplitReader reads the splits assigned to one source subtask. Its methods
// are called on the subtask's goroutine.
type SplitReader[T any] interface {
	// Read emits records through out until out.Full() or until it has
	// nothing more to give right now. It returns io.EOF once every split is
	// finished. A reader waiting for data returns after a few milliseconds
	// at most, having emitted nothing.
	Read(out *SourceOutput[T]) error
	// Close releases the reader's resources.
	Close() error
}

// splitState is the watermark bookkeeping of one split.
type splitState[T any] struct {
	gen      WatermarkGenerator[T]
	finished bool
	idle     bool
	lastSeen time.Time
	touched  bool
}

// SourceOutput is where a SplitReader emits records. It assigns timestamps,
// feeds each split's watermark generator and fills the batch that goes
// downstream.
type SourceOutput[T any] struct {
	batch   *runtime.Batch[T]
	size    int
	wm      Watermarks[T]
	splits  map[int]*splitState[T]
	dead    *Emitter[DeadLetter]
	metrics *runtime.OperatorMetrics
}

// DeadLetterTag is the side output of sources for malformed records.
const DeadLetterTag = "dead-letters"

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

// DeadLetter sets a malformed record aside: it is counted, and emitted on
// the dead-letter side output if anything consumes it.
func (o *SourceOutput[T]) DeadLetter(d DeadLetter) {
	o.metrics.DeadLetters.Add(1)
	if o.dead != nil {
		o.dead.Emit(d, runtime.NoTimestamp)
	}
}

func (o *SourceOutput[T]) split(i int) *splitState[T] {
	s := o.splits[i]
	if s == nil {
		s = &splitState[T]{}
		if o.wm.NewGenerator != nil {
			s.gen = o.wm.NewGenerator()
		}
		o.splits[i] = s
	}
	return s
}

// Emit adds a record of split i, timestamped by the watermark strategy.
func (o *SourceOutput[T]) Emit(i int, v T) {
	ts := runtime.NoTimestamp
	if o.wm.Timestamp != nil {
		ts = o.wm.Timestamp(v)
	}
	o.EmitAt(i, v, ts)
}

// EmitAt adds a record of split i with the timestamp the source gives it;
// the watermark strategy's timestamp extractor, if set, takes precedence.
func (o *SourceOutput[T]) EmitAt(i int, v T, ts int64) {
	if o.wm.Timestamp != nil {
		ts = o.wm.Timestamp(v)
	}
	s := o.split(i)
	s.touched = true
	if s.gen != nil {
		s.gen.OnEvent(v, ts)
	}
	o.batch.Data = append(o.batch.Data, v)
	o.batch.TS = append(o.batch.TS, ts)
}

// Room returns how many more records fit in the current batch.
func (o *SourceOutput[T]) Room() int { return o.size - len(o.batch.Data) }

// Full reports whether the current batch is full.
func (o *SourceOutput[T]) Full() bool { return len(o.batch.Data) >= o.size }

// AddSplit declares split i, so that it holds back the watermark from the
// start, before it has produced anything.
func (o *SourceOutput[T]) AddSplit(i int) { o.split(i) }

// FinishSplit marks split i as finished: it no longer holds back the
// watermark.
func (o *SourceOutput[T]) FinishSplit(i int) { o.split(i).finished = true }

// SourceDriver runs a SplitReader as the source of a subtask.
type SourceDriver[T any] struct {
	reader  SplitReader[T]
	out     runtime.Input[T]
	outs    map[string]any
	so      SourceOutput[T]
	lastWM  int64
	clock   func() time.Time
	ended   bool
	metrics *runtime.OperatorMetrics
	// checkpointed is the reader's checkpointing side, if it has one.
	checkpointed CheckpointedReader[T]
}

// NewSourceDriver returns a driver that reads from r and emits batches of
// up to size records to out.
func NewSourceDriver[T any](ctx *runtime.Context, r SplitReader[T], wm Watermarks[T], outs map[string]any, size int) *SourceDriver[T] {
	d := &SourceDriver[T]{
		reader: r, out: outs[""].(runtime.Input[T]), outs: outs, lastWM: runtime.MinWatermark, clock: time.Now, metrics: ctx.Metrics,
		so: SourceOutput[T]{batch: runtime.NewBatch[T](size), size: size, wm: wm, splits: map[int]*splitState[T]{}, metrics: ctx.Metrics},
	}
	if o, ok := outs[DeadLetterTag]; ok {
		d.so.dead = NewEmitter(o.(runtime.Input[DeadLetter]))
	}
	return d
}

// Step reads one batch, sends it downstream, and advances the watermark.
func (d *SourceDriver[T]) Step() (runtime.StepResult, error) {
	d.so.batch.Reset()
	err := d.reader.Read(&d.so)
	if err != nil && err != io.EOF {
		return runtime.StepResult{}, err
	}
	if d.so.dead != nil {
		if perr := d.so.dead.Flush(); perr != nil {
			return runtime.StepResult{}, perr
		}
	}
	n := d.so.batch.Len()
	if n > 0 {
		d.metrics.RecordsOut.Add(int64(n))
		if perr := d.out.ProcessBatch(d.so.batch); perr != nil {
			return runtime.StepResult{}, perr
		}
	}
	if err == io.EOF {
		if perr := d.out.ProcessWatermark(runtime.MaxWatermark); perr != nil {
			return runtime.StepResult{}, perr
		}
		if perr := ForwardWatermark(d.outs, runtime.MaxWatermark); perr != nil {
			return runtime.StepResult{}, perr
		}
		if perr := ForwardEnd(d.outs); perr != nil {
			return runtime.StepResult{}, perr
		}
		return runtime.StepResult{N: n, Done: true}, d.out.EndInput()
	}
	wm, idle := d.watermark()
	if wm > d.lastWM {
		d.lastWM = wm
		if perr := d.out.ProcessWatermark(wm); perr != nil {
			return runtime.StepResult{}, perr
		}
		if perr := ForwardWatermark(d.outs, wm); perr != nil {
			return runtime.StepResult{}, perr
		}
	}
	return runtime.StepResult{N: n, Idle: idle}, nil
}

// watermark combines the splits' watermarks: the minimum over the splits
// that are neither finished nor idle. When every unfinished split is idle,
// the source is idle.
func (d *SourceDriver[T]) watermark() (wm int64, idle bool) {
	if d.so.wm.NewGenerator == nil {
		return runtime.MinWatermark, false
	}
	var now time.Time
	if d.so.wm.Idleness > 0 {
		now = d.clock()
	}
	wm = runtime.MaxWatermark
	live, unfinished := 0, 0
	for _, s := range d.so.splits {
		if s.finished {
			continue
		}
		unfinished++
		if d.so.wm.Idleness > 0 {
			if s.touched || s.lastSeen.IsZero() {
				s.lastSeen, s.touched, s.idle = now, false, false
			} else if now.Sub(s.lastSeen) >= d.so.wm.Idleness {
				s.idle = true
			}
			if s.idle {
				continue
			}
		}
		live++
		wm = min(wm, s.gen.Watermark())
	}
	if unfinished == 0 {
		// Every split has finished but the reader has not said EOF yet:
		// hold the watermark where it is.
		return runtime.MinWatermark, false
	}
	if live == 0 {
		return runtime.MinWatermark, true
	}
	return wm, false
}

// Close closes the reader.
func (d *SourceDriver[T]) Close() error { return d.reader.Close() }

// CheckpointedReader is a SplitReader whose position can be checkpointed.
type CheckpointedReader[T any] interface {
	SplitReader[T]
	// SnapshotSplits returns the state of every split the reader has not
	// finished, each as the source's own encoding, which its NewReader
	// accepts back. It is called between Reads.
	SnapshotSplits() ([][]byte, error)
}

// SplitSource is a source whose input is divided into splits (files,
// partitions, ranges). Splits are enumerated once, when a job first starts;
// from then on their positions travel in checkpoints, and on a restore, with
// any parallelism, they are dealt round-robin to the subtasks.
type SplitSource[T any] interface {
	// Splits enumerates the splits of a fresh start with the given
	// parallelism. It must return the same splits in every subtask.
	Splits(parallelism int) ([][]byte, error)
	// NewReader returns the reader of one subtask for the given splits.
	NewReader(ctx *runtime.Context, splits [][]byte) (CheckpointedReader[T], error)
}

// SplitsList is the operator-state list that holds a source's splits.
const SplitsList = "splits"

// NewSplitSourceDriver returns the driver of subtask ctx.Subtask of src:
// on a fresh start it reads the splits i, i+p, … of src.Splits(p); on a
// restore, the splits the checkpoint deals it.
func NewSplitSourceDriver[T any](ctx *runtime.Context, src SplitSource[T], wm Watermarks[T], outs map[string]any, size int) (*SourceDriver[T], error) {
	var mine [][]byte
	if ctx.Restored != nil {
		mine = ctx.Restored.Lists[SplitsList]
	} else {
		all, err := src.Splits(ctx.Parallelism)
		if err != nil {
			return nil, err
		}
		for i := ctx.Subtask; i < len(all); i += ctx.Parallelism {
			mine = append(mine, all[i])
		}
	}
	r, err := src.NewReader(ctx, mine)
	if err != nil {
		return nil, err
	}
	d := NewSourceDriver[T](ctx, r, wm, outs, size)
	d.checkpointed = r
	return d, nil
}

// SnapshotState records the positions of the source's splits.
func (d *SourceDriver[T]) SnapshotState(int64) (*runtime.OperatorSnapshot, error) {
	if d.checkpointed == nil {
		return nil, errors.New("this source cannot be checkpointed: it does not record its position; use a split source")
	}
	splits, err := d.checkpointed.SnapshotSplits()
	if err != nil {
		return nil, err
	}
	if splits == nil {
		splits = [][]byte{}
	}
	return &runtime.OperatorSnapshot{Lists: map[string][][]byte{SplitsList: splits}}, nil
}

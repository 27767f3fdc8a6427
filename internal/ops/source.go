package ops

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/runtime"
)

// DeadLetterTag is the side output of sources for malformed records.
const DeadLetterTag = "dead-letters"

// BadRecordPolicy says what a source does with a record its reader could
// not decode.
type BadRecordPolicy uint8

const (
	// FailOnBadRecord fails the job with an error naming the record.
	FailOnBadRecord BadRecordPolicy = iota
	// DeadLetterBadRecords counts the record and sends it to the dead-letter
	// side output.
	DeadLetterBadRecords
)

// SourceConfig is how a source operator runs its reader.
type SourceConfig[T any] struct {
	// Watermarks timestamps records and generates watermarks per split.
	Watermarks Watermarks[T]
	// BatchSize is the number of records a batch holds.
	BatchSize int
	// BadRecords says what to do with records that do not decode.
	BadRecords BadRecordPolicy
	// BadRecordHint is appended to the error of a bad record that fails the
	// job: how to keep bad records aside instead.
	BadRecordHint string
	// NewTransform, when set, makes the function each subtask applies to
	// its records after the watermark generator has seen them: the record
	// it returns is emitted in their place, none if it returns false.
	// reuse tells whether the records it returns may be written into
	// memory that rewind, called before each read, hands out again
	// (runtime.Context.RecordsReused).
	NewTransform func(reuse bool) (transform func(T) (T, bool), rewind func())
}

// splitOutput is the output of one split: its watermark generator and the
// batch it emits into. It implements connector.SplitOutput.
type splitOutput[T any] struct {
	o        *sourceOutput[T]
	id       string
	gen      WatermarkGenerator[T]
	finished bool
	idle     bool
	lastSeen time.Time
	touched  bool
}

func (s *splitOutput[T]) Emit(v T) {
	ts := runtime.NoTimestamp
	if f := s.o.wm.Timestamp; f != nil {
		ts = f(v)
	}
	s.emit(v, ts)
}

func (s *splitOutput[T]) EmitAt(v T, ts int64) {
	if f := s.o.wm.Timestamp; f != nil {
		ts = f(v)
	}
	s.emit(v, ts)
}

func (s *splitOutput[T]) emit(v T, ts int64) {
	if !s.touched {
		// Written once per read, not at every record: a store would
		// take the cache line from another core reading its neighbours.
		s.touched = true
	}
	if s.gen != nil {
		s.gen.OnEvent(v, ts)
	}
	if tr := s.o.transform; tr != nil {
		var ok bool
		if v, ok = tr(v); !ok {
			return
		}
	}
	b := s.o.batch
	b.Data = append(b.Data, v)
	b.TS = append(b.TS, ts)
}

func (s *splitOutput[T]) Finish() {
	if !s.finished {
		s.finished = true
		s.o.finished = append(s.o.finished, s.id)
	}
}

// sourceOutput is where a reader emits records. It implements
// connector.Output.
type sourceOutput[T any] struct {
	batch    *runtime.Batch[T]
	size     int
	wm       Watermarks[T]
	splits   map[string]*splitOutput[T]
	finished []string // splits finished since the driver last looked
	dead     *Emitter[connector.DeadLetter]
	metrics  *runtime.OperatorMetrics
	policy   BadRecordPolicy
	hint     string
	// transform is the subtask's SourceConfig.NewTransform function.
	transform func(T) (T, bool)
	// before reports a -U for records that carry a change kind: Room
	// leaves space for the +U after it, so that an update is read into one
	// batch.
	before func(T) bool
}

func (o *sourceOutput[T]) Split(id string) connector.SplitOutput[T] { return o.split(id) }

func (o *sourceOutput[T]) split(id string) *splitOutput[T] {
	s := o.splits[id]
	if s == nil {
		s = &splitOutput[T]{o: o, id: id}
		if o.wm.NewGenerator != nil {
			s.gen = o.wm.NewGenerator()
		}
		o.splits[id] = s
	}
	return s
}

// Room is the number of records the batch has room for; after a -U it is
// at least one, so that the +U of the update joins it in the batch.
func (o *sourceOutput[T]) Room() int {
	r := o.size - len(o.batch.Data)
	if n := len(o.batch.Data); r <= 0 && o.before != nil && n > 0 && o.before(o.batch.Data[n-1]) {
		return 1
	}
	return r
}

func (o *sourceOutput[T]) BadRecord(d connector.DeadLetter) error {
	if o.policy == FailOnBadRecord {
		return fmt.Errorf("%s: %s%s", d.Location, d.Error, o.hint)
	}
	o.metrics.DeadLetters.Add(1)
	if o.dead != nil {
		o.dead.Emit(d, runtime.NoTimestamp)
	}
	return nil
}

// SourceDriver runs a connector reader as the source of one subtask: it
// hands the reader its splits (restored ones first, then the enumerator's
// assignments, held back around checkpoints), emits its batches, advances
// the watermark over the splits, and snapshots the reader's splits.
type SourceDriver[T any] struct {
	ctx    *runtime.Context
	reader connector.Reader[T]
	// status, if the reader reports its progress, is asked for it about
	// once a second (at lastStatus).
	status     connector.StatusReporter
	lastStatus time.Time
	host       *EnumeratorHost
	out        runtime.Input[T]
	outs       map[string]any
	so         sourceOutput[T]
	// keepOrder keeps the reader's splits together in checkpoints
	// (connector.OrderedSplits).
	keepOrder bool
	// rewind, when the transform reuses memory, is called before each read.
	rewind  func()
	lastWM  int64
	clock   func() time.Time
	metrics *runtime.OperatorMetrics

	owned map[string]bool // splits given to the reader and not finished
	// unnamed counts the splits of the first checkpoint format given to the
	// reader and not finished: they have no ID until the reader names them.
	unnamed   int
	noMore    bool  // the enumerator will assign no more splits
	lastTaken int64 // the newest checkpoint this subtask snapshotted
	ended     bool
}

// SplitsList is the operator-state list that holds a source subtask's
// splits.
const SplitsList = "splits"

// splitEntryVersion starts every entry of the splits list. Entries of the
// first checkpoint format hold a built-in source's split state alone, and
// start with a non-zero count of integers (see EncodeSplit).
const splitEntryVersion = 0

// splitGroupVersion starts an entry that holds all the splits of a reader
// of a source that keeps their order (connector.OrderedSplits), so that
// a restore at another parallelism deals them out together. No entry of
// the first format starts so: its first byte would begin a count of 126
// integers or more.
const splitGroupVersion = 0xfe

// decodeSplitEntry decodes an entry of the splits list. An entry of the
// first format becomes a split with no ID whose state is the entry: the
// built-in sources read it as their old encoding.
func decodeSplitEntry(b []byte) ([]connector.Split, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty split entry")
	}
	switch b[0] {
	case splitEntryVersion:
		s, _, err := connector.DecodeSplit(b[1:])
		return []connector.Split{s}, err
	case splitGroupVersion:
		return connector.DecodeSplits(b[1:])
	}
	return []connector.Split{{State: append([]byte(nil), b...)}}, nil
}

// encodeSplitEntries encodes the splits of a reader as entries of the
// splits list: one each, or, to keep them together, one for all.
func encodeSplitEntries(splits []connector.Split, together bool) [][]byte {
	out := [][]byte{}
	if together {
		if len(splits) > 0 {
			out = append(out, append([]byte{splitGroupVersion}, connector.EncodeSplits(splits)...))
		}
		return out
	}
	for _, s := range splits {
		out = append(out, connector.AppendSplit([]byte{splitEntryVersion}, s))
	}
	return out
}

// NewSourceDriver returns the driver of subtask ctx.Subtask of src: its
// reader gets the splits ctx.Restored holds (dealt over the subtasks of a
// restore), then what the enumerator of hosts assigns.
func NewSourceDriver[T any](ctx *runtime.Context, src connector.Source[T], hosts *EnumeratorHosts, cfg SourceConfig[T], outs map[string]any) (*SourceDriver[T], error) {
	host, err := hosts.get(ctx, src)
	if err != nil {
		return nil, err
	}
	rc := &readerContext{ctx: ctx, host: host}
	r, err := src.NewReader(rc)
	if err != nil {
		return nil, err
	}
	d := &SourceDriver[T]{
		ctx: ctx, reader: r, host: host, out: outs[""].(runtime.Input[T]), outs: outs,
		lastWM: runtime.MinWatermark, clock: time.Now, metrics: ctx.Metrics, owned: map[string]bool{},
		so: sourceOutput[T]{batch: runtime.NewBatch[T](cfg.BatchSize), size: cfg.BatchSize, wm: cfg.Watermarks,
			splits: map[string]*splitOutput[T]{}, metrics: ctx.Metrics, policy: cfg.BadRecords, hint: cfg.BadRecordHint,
			before: runtime.UpdateBeforeOf[T]()},
	}
	if o, ok := outs[DeadLetterTag]; ok {
		d.so.dead = NewEmitter(o.(runtime.Input[connector.DeadLetter]))
	}
	d.status, _ = r.(connector.StatusReporter)
	if o, ok := src.(connector.OrderedSplits); ok {
		d.keepOrder = o.KeepsSplitOrder()
	}
	if cfg.NewTransform != nil {
		d.so.transform, d.rewind = cfg.NewTransform(ctx.RecordsReused)
		if !ctx.RecordsReused {
			d.rewind = nil
		}
	}
	if rs := ctx.Restored; rs != nil {
		var splits []connector.Split
		for _, b := range rs.Lists[SplitsList] {
			s, err := decodeSplitEntry(b)
			if err != nil {
				r.Close()
				return nil, fmt.Errorf("restoring the splits of source %q: %w", ctx.Operator, err)
			}
			splits = append(splits, s...)
		}
		if err := d.addSplits(splits); err != nil {
			r.Close()
			return nil, err
		}
	}
	if rs := ctx.Restored; rs == nil || !rs.Finished {
		// A subtask that had finished does not run again: it is no reader.
		host.addReader(ctx.Subtask)
	}
	return d, nil
}

// addSplits gives splits to the reader and declares them, so that they hold
// back the watermark from the start.
func (d *SourceDriver[T]) addSplits(splits []connector.Split) error {
	if len(splits) == 0 {
		return nil
	}
	for _, s := range splits {
		if s.ID == "" {
			d.unnamed++
			continue
		}
		d.owned[s.ID] = true
		sp := d.so.split(s.ID)
		sp.finished = false
	}
	return d.reader.AddSplits(splits)
}

// deliver hands the reader the enumerator's messages stamped at or before
// limit.
func (d *SourceDriver[T]) deliver(limit int64) error {
	for _, m := range d.host.take(d.ctx.Subtask, limit) {
		switch {
		case m.splits != nil:
			if err := d.addSplits(m.splits); err != nil {
				return err
			}
		case m.noMore:
			d.noMore = true
			if h, ok := d.reader.(connector.NoMoreSplitsHandler); ok {
				h.NoMoreSplits()
			}
		case m.event != nil:
			h, ok := d.reader.(connector.ReaderEventHandler)
			if !ok {
				return fmt.Errorf("the enumerator sent an event but the %T reader handles none", d.reader)
			}
			if err := h.HandleEvent(m.event); err != nil {
				return err
			}
		}
	}
	return nil
}

// Step reads one batch, sends it downstream, and advances the watermark.
func (d *SourceDriver[T]) Step() (runtime.StepResult, error) {
	if err := d.host.failure(); err != nil {
		return runtime.StepResult{}, err
	}
	if err := d.deliver(d.lastTaken); err != nil {
		return runtime.StepResult{}, err
	}
	if d.status != nil || d.ctx.Subtask == 0 {
		d.reportStatus()
	}
	d.so.batch.Reset()
	if d.rewind != nil {
		d.rewind()
	}
	err := d.reader.Read(&d.so)
	eoi := errors.Is(err, connector.ErrEndOfInput)
	if err != nil && !eoi {
		return runtime.StepResult{}, err
	}
	for _, id := range d.so.finished {
		if d.owned[id] {
			delete(d.owned, id)
		} else if d.unnamed > 0 {
			d.unnamed--
		}
		// A finished split no longer counts for the watermark: forget it,
		// so that a source that reads split after split (a watched
		// directory) does not keep one output per split it ever read.
		delete(d.so.splits, id)
	}
	d.so.finished = d.so.finished[:0]
	if d.so.dead != nil {
		if perr := d.so.dead.Flush(); perr != nil {
			return runtime.StepResult{}, perr
		}
	}
	n := d.so.batch.Len()
	if n > 0 {
		if perr := d.out.ProcessBatch(d.so.batch); perr != nil {
			return runtime.StepResult{}, perr
		}
	}
	if eoi || (d.noMore && len(d.owned) == 0 && d.unnamed == 0) {
		return runtime.StepResult{N: n, Done: true}, d.end()
	}
	wm, idle := d.watermark()
	if wm > d.lastWM {
		d.lastWM = wm
		d.metrics.Watermark.Store(wm)
		if perr := d.out.ProcessWatermark(wm); perr != nil {
			return runtime.StepResult{}, perr
		}
		if perr := ForwardWatermark(d.outs, wm); perr != nil {
			return runtime.StepResult{}, perr
		}
	}
	if n == 0 && !idle && len(d.owned) == 0 && d.unnamed == 0 {
		// Waiting for splits: do not spin.
		time.Sleep(time.Millisecond)
	}
	return runtime.StepResult{N: n, Idle: idle}, nil
}

// reportStatus publishes, about once a second, the reader's progress report
// and, on subtask 0, the enumerator's.
func (d *SourceDriver[T]) reportStatus() {
	now := time.Now()
	if now.Sub(d.lastStatus) < time.Second {
		return
	}
	d.lastStatus = now
	if d.status != nil {
		st := d.status.Status()
		d.metrics.Status.Store(&st)
	}
	if d.ctx.Subtask == 0 {
		if st := d.host.status.Load(); st != nil {
			d.metrics.EnumeratorStatus.Store(st)
		}
	}
}

// end emits the final watermark and ends the outputs.
func (d *SourceDriver[T]) end() error {
	d.ended = true
	if err := d.out.ProcessWatermark(runtime.MaxWatermark); err != nil {
		return err
	}
	if err := ForwardWatermark(d.outs, runtime.MaxWatermark); err != nil {
		return err
	}
	if err := ForwardEnd(d.outs); err != nil {
		return err
	}
	return d.out.EndInput()
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
		// No split to read (yet, or any more before the input ends): hold
		// the watermark where it is, unless no split will ever come.
		if d.noMore {
			return runtime.MaxWatermark, false
		}
		return runtime.MinWatermark, false
	}
	if live == 0 {
		return runtime.MinWatermark, true
	}
	return wm, false
}

// SnapshotState records the reader's splits, and, if this subtask is the
// first to snapshot the checkpoint, the enumerator's state.
func (d *SourceDriver[T]) SnapshotState(id int64) (*runtime.OperatorSnapshot, error) {
	enumState, first, err := d.host.snapshot(id)
	if err != nil {
		return nil, err
	}
	// Assignments made before the enumerator's snapshot belong to this
	// subtask's snapshot; later ones wait until after it.
	if err := d.deliver(id - 1); err != nil {
		return nil, err
	}
	splits, err := d.reader.SnapshotState(id)
	if err != nil {
		return nil, err
	}
	d.lastTaken = max(d.lastTaken, id)
	snap := &runtime.OperatorSnapshot{Lists: map[string][][]byte{SplitsList: encodeSplitEntries(splits, d.keepOrder), EnumeratorList: {}}}
	if first {
		snap.Lists[EnumeratorList] = [][]byte{encodeEnumeratorState(id, enumState)}
	}
	return snap, nil
}

// NotifyCheckpointComplete tells the reader and the enumerator.
func (d *SourceDriver[T]) NotifyCheckpointComplete(id int64) error {
	d.host.checkpointComplete(id)
	return connector.NotifyIfListening(d.reader, id)
}

// Close closes the reader and, with the last reader, the enumerator.
func (d *SourceDriver[T]) Close() error {
	err := d.reader.Close()
	if herr := d.host.release(); err == nil {
		err = herr
	}
	return err
}

// readerContext is the connector.ReaderContext of a subtask.
type readerContext struct {
	ctx  *runtime.Context
	host *EnumeratorHost
}

func (r *readerContext) SourceName() string    { return r.ctx.Operator }
func (r *readerContext) Subtask() int          { return r.ctx.Subtask }
func (r *readerContext) Parallelism() int      { return r.ctx.Parallelism }
func (r *readerContext) RequestSplit()         { r.host.requestSplit(r.ctx.Subtask) }
func (r *readerContext) SendEvent(e []byte)    { r.host.readerEvent(r.ctx.Subtask, e) }
func (r *readerContext) ProcessingTime() int64 { return r.ctx.ProcessingTime() }
func (r *readerContext) Log() *slog.Logger     { return r.ctx.Log }

// CountBytesIn implements connector.BytesInCounter.
func (r *readerContext) CountBytesIn(n int) { r.ctx.Metrics.BytesIn.Add(int64(n)) }

// ReusesRecords implements connector.RecordReuser: a step's records reach
// operators that keep nothing of them before the next step reads.
func (r *readerContext) ReusesRecords() bool { return r.ctx.RecordsReused }

package eddy

import (
	"errors"
	"fmt"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// SourceOption configures a source.
type SourceOption func(*sourceConfig)

type sourceConfig struct {
	badRecords BadRecordPolicy
	// transform is a func(bool) (func(T) (T, bool), func()) of the
	// source's T (see TransformInSourceReusing).
	transform any
}

// TransformInSource applies a function to every record inside the source
// operator, after the watermark strategy has timestamped the record and
// seen it: the record fn returns is emitted in its place, and none if it
// returns false. A filter or projection applied so keeps the watermark of
// every record read (as a filter after the source would), but costs no
// operator of its own. newFn is called once per parallel subtask, so the
// function it returns may keep state of its own without locking. T must be
// the type of the source's records.
func TransformInSource[T any](newFn func() func(T) (T, bool)) SourceOption {
	return TransformInSourceReusing(func(bool) (func(T) (T, bool), func()) { return newFn(), nil })
}

// TransformInSourceReusing is TransformInSource for functions that can
// write the records they return into reused memory. newFn is told whether
// it may: reuse is true when every record the source emits reaches, in
// the source's goroutine, only sinks that keep nothing of it
// (connector.NonRetainingWriter). It then returns rewind too (or nil), which
// the source calls before each read: the records the function returned
// before are all consumed, and their memory may be handed out again.
func TransformInSourceReusing[T any](newFn func(reuse bool) (fn func(T) (T, bool), rewind func())) SourceOption {
	return func(c *sourceConfig) { c.transform = newFn }
}

// OnBadRecord says what the source does with a record it cannot decode
// (default FailOnBadRecord).
func OnBadRecord(p BadRecordPolicy) SourceOption {
	return func(c *sourceConfig) { c.badRecords = p }
}

// BadRecordPolicy says what a source does with a record it cannot decode.
type BadRecordPolicy uint8

const (
	// FailOnBadRecord fails the job with an error naming the record's
	// location. It is the default.
	FailOnBadRecord BadRecordPolicy = iota
	// DeadLetterBadRecords counts the record and sends it to the source's
	// dead-letter side output (see DeadLetters), and carries on.
	DeadLetterBadRecords
)

// FromSource adds a source reading src (see package connector). Its
// enumerator assigns splits to the source's subtasks; the splits' positions
// and the enumerator's state are checkpointed, so a restored job resumes
// each split where its checkpoint left it, at any parallelism. Records are
// timestamped and watermarked per split by ws.
func FromSource[T any](env *Environment, name string, src connector.Source[T], ws WatermarkStrategy[T], opts ...SourceOption) *Stream[T] {
	var cfg sourceConfig
	for _, o := range opts {
		o(&cfg)
	}
	n := newNode[T](env, "Source: "+name)
	n.UnionLists = []string{ops.EnumeratorList}
	wm := ws.internal()
	var transform func(bool) (func(T) (T, bool), func())
	if cfg.transform != nil {
		var ok bool
		if transform, ok = cfg.transform.(func(bool) (func(T) (T, bool), func())); !ok {
			env.fail(fmt.Errorf("eddy: source %s: TransformInSource of another type than its records (%T)", name, cfg.transform))
		}
	}
	hosts := &ops.EnumeratorHosts{}
	n.Source = func(ctx *runtime.Context, outs map[string]any) (runtime.SourceDriver, error) {
		sc := ops.SourceConfig[T]{Watermarks: wm, BatchSize: env.cfg.BatchSize, BadRecords: ops.BadRecordPolicy(cfg.badRecords),
			BadRecordHint: " (to keep bad records aside and go on, give the source eddy.OnBadRecord(eddy.DeadLetterBadRecords) and read eddy.DeadLetters of it)",
			NewTransform:  transform}
		return ops.NewSourceDriver(ctx, src, hosts, sc, outs)
	}
	mode := derivedMode[T](changelog.InsertOnly)
	if cs, ok := src.(connector.ChangelogSource); ok {
		mode = cs.ChangelogMode()
	}
	return (&Stream[T]{env: env, node: n}).withMode(mode)
}

// FromConnector adds a source made by the connector registered as name in
// connector.Default, with the given options (the keys of a SQL WITH
// clause: {"path": "/data/in", "format": "json"}). The options are checked
// against the connector's spec; a mistake fails Execute with an error naming
// the option.
func FromConnector[T any](env *Environment, name string, options map[string]string, ws WatermarkStrategy[T], opts ...SourceOption) *Stream[T] {
	src, err := connector.OpenSource[T](connector.Default, name, options)
	if err != nil {
		env.fail(fmt.Errorf("eddy: source: %w", err))
		src = failedSource[T]{err}
	}
	return FromSource(env, name, src, ws, opts...)
}

// failedSource stands in for a source that could not be made; the job
// fails before it runs.
type failedSource[T any] struct{ err error }

func (f failedSource[T]) NewEnumerator(connector.EnumeratorContext, []byte) (connector.Enumerator, error) {
	return nil, f.err
}
func (f failedSource[T]) NewReader(connector.ReaderContext) (connector.Reader[T], error) {
	return nil, f.err
}

// DeadLetters returns the dead-letter side output of a source: the records
// it could not decode, with where they were and what was wrong. The source
// must use OnBadRecord(DeadLetterBadRecords).
func DeadLetters[T any](s *Stream[T]) *Stream[connector.DeadLetter] {
	if s.node.OutTypes[ops.DeadLetterTag] == nil {
		s.node.OutTypes[ops.DeadLetterTag] = runtime.NewOutType[connector.DeadLetter]()
	}
	return &Stream[connector.DeadLetter]{env: s.env, node: s.node, tag: ops.DeadLetterTag}
}

// FromSlice adds a bounded source emitting the values of data. On a first
// start with parallelism p it cuts data into p contiguous splits, so records
// keep their order within a split. A slice of changes (records that carry a
// change kind, such as changelog.Change) is a log whose order matters
// across rows (a row's insertion before its retraction, the two halves of
// an update together), so it is read by one subtask; a larger parallelism
// set on the stream cuts it into splits read in parallel, out of order.
func FromSlice[T any](env *Environment, data []T, ws WatermarkStrategy[T]) *Stream[T] {
	s := FromSource[T](env, "Slice", &sliceSource[T]{data: data}, ws)
	if runtime.UpdateBeforeOf[T]() != nil {
		s.node.Parallelism = 1
	}
	return s
}

type sliceSource[T any] struct{ data []T }

// A slice split is "slice-<i>" with state (start, end, position).
func (s *sliceSource[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(p int) ([]connector.Split, error) {
		out := make([]connector.Split, p)
		for i := range out {
			lo, hi := int64(len(s.data)*i/p), int64(len(s.data)*(i+1)/p)
			out[i] = connector.Split{ID: fmt.Sprintf("slice-%d", i), State: ops.EncodeSplit("", lo, hi, lo)}
		}
		return out, nil
	})
}

func (s *sliceSource[T]) NewReader(connector.ReaderContext) (connector.Reader[T], error) {
	return &sliceReader[T]{data: s.data}, nil
}

type sliceSplit struct {
	id          string
	lo, hi, pos int64
}

type sliceReader[T any] struct {
	data   []T
	splits []sliceSplit
}

func (r *sliceReader[T]) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		if s.ID == "" {
			// A split of the first checkpoint format: (number, start, end, position).
			v, _, err := ops.DecodeSplit(s.State, 4)
			if err != nil {
				return fmt.Errorf("slice source: %w", err)
			}
			s = connector.Split{ID: fmt.Sprintf("slice-%d", v[0]), State: ops.EncodeSplit("", v[1], v[2], v[3])}
		}
		v, _, err := ops.DecodeSplit(s.State, 3)
		if err != nil {
			return fmt.Errorf("slice source: %w", err)
		}
		if v[1] > int64(len(r.data)) || v[2] > v[1] || v[0] > v[2] {
			return fmt.Errorf("slice source: split [%d,%d) does not fit a slice of %d values; the job's input changed since the checkpoint", v[0], v[1], len(r.data))
		}
		r.splits = append(r.splits, sliceSplit{id: s.ID, lo: v[0], hi: v[1], pos: v[2]})
	}
	return nil
}

func (r *sliceReader[T]) Read(out connector.Output[T]) error {
	for len(r.splits) > 0 {
		room := out.Room()
		if room <= 0 {
			break
		}
		sp := &r.splits[0]
		so := out.Split(sp.id)
		n := min(int64(room), sp.hi-sp.pos)
		for _, v := range r.data[sp.pos : sp.pos+n] {
			so.Emit(v)
		}
		sp.pos += n
		if sp.pos == sp.hi {
			so.Finish()
			r.splits = r.splits[1:]
		}
	}
	return nil
}

func (r *sliceReader[T]) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, sp := range r.splits {
		out[i] = connector.Split{ID: sp.id, State: ops.EncodeSplit("", sp.lo, sp.hi, sp.pos)}
	}
	return out, nil
}

func (r *sliceReader[T]) Close() error { return nil }

// GeneratorOptions configures FromGenerator.
type GeneratorOptions struct {
	// Count is the number of records; a negative count generates forever.
	Count int64
	// RatePerSecond limits the records per second over all subtasks; 0
	// means as fast as possible.
	RatePerSecond float64
}

// FromGenerator adds a source that emits fn(0), fn(1), … up to
// opts.Count records. On a first start with parallelism p it has p splits;
// split j generates the indices j, j+p, j+2p, …, so each split's indices
// increase. fn must be deterministic for checkpoints to replay the same
// records.
func FromGenerator[T any](env *Environment, opts GeneratorOptions, fn func(i int64) T, ws WatermarkStrategy[T]) *Stream[T] {
	if opts.RatePerSecond < 0 {
		env.fail(errors.New("eddy: FromGenerator: RatePerSecond is negative; use 0 for as fast as possible"))
	}
	return FromSource[T](env, "Generator", &generatorSource[T]{fn: fn, opts: opts}, ws)
}

type generatorSource[T any] struct {
	fn   func(int64) T
	opts GeneratorOptions
}

// A generator split is "gen-<j>" with state (step, next index).
func (g *generatorSource[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(p int) ([]connector.Split, error) {
		out := make([]connector.Split, p)
		for j := range out {
			out[j] = connector.Split{ID: fmt.Sprintf("gen-%d", j), State: ops.EncodeSplit("", int64(p), int64(j))}
		}
		return out, nil
	})
}

func (g *generatorSource[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	r := &generatorReader[T]{fn: g.fn, count: g.opts.Count}
	if g.opts.RatePerSecond > 0 {
		r.rate = g.opts.RatePerSecond / float64(ctx.Parallelism())
	}
	return r, nil
}

type genSplit struct {
	id         string
	step, next int64
}

type generatorReader[T any] struct {
	fn      func(int64) T
	count   int64
	rate    float64
	splits  []genSplit
	started time.Time
	emitted int64
}

func (r *generatorReader[T]) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		if s.ID == "" {
			// A split of the first checkpoint format: (number, step, next).
			v, _, err := ops.DecodeSplit(s.State, 3)
			if err != nil {
				return fmt.Errorf("generator source: %w", err)
			}
			s = connector.Split{ID: fmt.Sprintf("gen-%d", v[0]), State: ops.EncodeSplit("", v[1], v[2])}
		}
		v, _, err := ops.DecodeSplit(s.State, 2)
		if err != nil {
			return fmt.Errorf("generator source: %w", err)
		}
		r.splits = append(r.splits, genSplit{id: s.ID, step: v[0], next: v[1]})
	}
	return nil
}

func (r *generatorReader[T]) Read(out connector.Output[T]) error {
	if r.started.IsZero() {
		r.started = time.Now()
	}
	room := out.Room()
	if r.rate > 0 {
		allowed := int64(time.Since(r.started).Seconds()*r.rate) - r.emitted
		if allowed <= 0 {
			time.Sleep(time.Millisecond)
			return nil
		}
		room = int(min(int64(room), allowed))
	}
	if len(r.splits) == 0 {
		return nil
	}
	// Split the room among the splits so they advance together.
	share := max(room/len(r.splits), 1)
	live := r.splits[:0]
	for _, sp := range r.splits {
		so := out.Split(sp.id)
		for k := 0; k < share && out.Room() > 0; k++ {
			if r.count >= 0 && sp.next >= r.count {
				break
			}
			so.Emit(r.fn(sp.next))
			sp.next += sp.step
			r.emitted++
		}
		if r.count >= 0 && sp.next >= r.count {
			so.Finish()
			continue
		}
		live = append(live, sp)
	}
	r.splits = live
	return nil
}

func (r *generatorReader[T]) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, sp := range r.splits {
		out[i] = connector.Split{ID: sp.id, State: ops.EncodeSplit("", sp.step, sp.next)}
	}
	return out, nil
}

func (r *generatorReader[T]) Close() error { return nil }

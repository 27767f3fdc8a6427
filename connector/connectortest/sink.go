package connectortest

import (
	"fmt"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// Guarantee is what a sink promises the outside system holds once a job
// has written its input, whatever failures happened on the way.
type Guarantee uint8

const (
	// ExactlyOnce sinks hold every input record exactly once: transactional
	// sinks (connector.TwoPhase).
	ExactlyOnce Guarantee = iota
	// AtLeastOnce sinks hold every input record, some possibly more than
	// once after a failure (but exactly once in a run without failures).
	AtLeastOnce
	// Upsert sinks hold the last record of each key (SinkCase.UpsertKey),
	// and no record for a key whose last record is a deletion (a
	// changelog.Kinded record whose kind is a retraction).
	Upsert
	// Discards marks sinks that keep nothing: the suite only checks that
	// jobs writing to them run through failures.
	Discards
)

// SinkCase describes a sink to RunSink.
type SinkCase[T any] struct {
	// Open sets up the outside system for one test of the suite and
	// returns the sink that writes to it, which every job of the test uses,
	// and readBack, which returns what the system holds (nil for a sink
	// that Discards).
	Open func(t testing.TB) (sink connector.Sink[T], readBack func() []T)
	// Input is what the suite writes, in order: a job at parallelism 2
	// writes each half in order. It needs at least 8 records.
	Input []T
	// Guarantee is what the sink promises.
	Guarantee Guarantee
	// UpsertKey returns the key of a record of an Upsert sink. The suite
	// routes the input by it, so that the records of a key reach the sink
	// in input order.
	UpsertKey func(T) string
	// Mode is the changelog mode of Input, for a sink of changes; 0 means
	// the mode eddy gives a source of T.
	Mode changelog.Mode
	// Key renders a record to compare what the system holds with what it
	// should; nil uses fmt's "%+v".
	Key func(T) string
}

// RunSink runs the conformance suite on a sink, each test as a subtest of
// t:
//
//   - "write": a job without checkpoints or failures writes Input;
//   - "failures": a checkpointed job writes Input with two failures
//     injected after a checkpoint mid-stream, one in an operator upstream
//     of the sink and one in the sink's writer itself, and restarts;
//   - "crash and resume": a checkpointed job is stopped (as a crash would)
//     after a checkpoint mid-stream while it writes, and a new job resumes
//     from the checkpoint.
//
// After each, what readBack returns must match Input as the Guarantee
// says: the same multiset for ExactlyOnce (and for every sink after the
// run without failures), a superset for AtLeastOnce, the last record of
// each key for Upsert.
func RunSink[T any](t *testing.T, c SinkCase[T]) {
	t.Helper()
	if c.Open == nil {
		t.Fatal("connectortest: SinkCase.Open is nil")
	}
	if len(c.Input) < 8 {
		t.Fatalf("connectortest: SinkCase.Input has %d records; the suite needs at least 8", len(c.Input))
	}
	if c.Guarantee == Upsert && c.UpsertKey == nil {
		t.Fatal("connectortest: an Upsert SinkCase needs UpsertKey")
	}
	s := &sinkSuite[T]{c: c, key: keyOf(c.Key)}
	t.Run("write", s.write)
	t.Run("failures", s.failures)
	t.Run("crash and resume", s.crashResume)
}

type sinkSuite[T any] struct {
	c   SinkCase[T]
	key func(T) string
}

// open calls the case's Open.
func (s *sinkSuite[T]) open(t *testing.T) (connector.Sink[T], func() []T) {
	t.Helper()
	sink, readBack := s.c.Open(t)
	if sink == nil {
		t.Fatal("connectortest: SinkCase.Open returned a nil sink")
	}
	if readBack == nil && s.c.Guarantee != Discards {
		t.Fatal("connectortest: SinkCase.Open returned no readBack")
	}
	return sink, readBack
}

// start runs a job writing the input through upstream (a map that may
// fail) into sink, with writes counted (and a failure injected) by
// inWriter in the writers made once upstream has failed (all of them if
// upstream never fails), so that the two failures fall in different runs.
func (s *sinkSuite[T]) start(t *testing.T, sink connector.Sink[T], ctl *control[T], upstream, inWriter *failHook, opts ...eddy.Option) *job {
	t.Helper()
	return startJob(t, "sink conformance", 2, opts, func(env *eddy.Environment) {
		st := eddy.FromSource(env, "input", wrap(newSliceSource(s.c.Input, s.c.Mode), ctl), eddy.NoWatermarks[T]())
		if s.c.Guarantee == Upsert {
			// One split, routed by key: each key's records in order.
			st = st.Parallelism(1)
			st = eddy.Map(st, func(v T) T { upstream.see(); return v }).Name("failure hook").Parallelism(1)
			st = eddy.ProcessKeyed(eddy.KeyBy(st, s.c.UpsertKey), func() eddy.KeyedProcessFunction[string, T, T] {
				return passThrough[T]{}
			}).Name("by key")
		} else {
			st = eddy.Map(st, func(v T) T { upstream.see(); return v }).Name("failure hook")
		}
		eddy.WriteTo(st, "sink under test", failingSink(sink, inWriter, upstream))
	})
}

type passThrough[T any] struct{}

func (passThrough[T]) ProcessElement(ctx *eddy.KeyedContext[string, T], v T) error {
	ctx.Emit(v)
	return nil
}

// check compares what the outside system holds with the input, as g
// says.
func (s *sinkSuite[T]) check(t *testing.T, readBack func() []T, g Guarantee) {
	t.Helper()
	if g == Discards {
		return
	}
	got := readBack()
	var d string
	switch g {
	case ExactlyOnce:
		d = multisetDiff(got, s.c.Input, s.key)
	case AtLeastOnce:
		d = subsetDiff(s.c.Input, got, s.key)
		if d != "" {
			d = "records of the input are missing: " + d
		}
	case Upsert:
		d = multisetDiff(got, s.finalState(), s.key)
	}
	if d != "" {
		t.Errorf("the outside system does not hold what the sink promises: %s", d)
	}
}

// finalState is the last record of each key of the input, leaving out keys
// whose last record retracts.
func (s *sinkSuite[T]) finalState() []T {
	last := map[string]int{}
	for i, v := range s.c.Input {
		last[s.c.UpsertKey(v)] = i
	}
	var out []T
	for i, v := range s.c.Input {
		if last[s.c.UpsertKey(v)] != i {
			continue
		}
		if k, ok := any(v).(changelog.Kinded); ok && k.RowKind().IsRetraction() {
			continue
		}
		out = append(out, v)
	}
	return out
}

func (s *sinkSuite[T]) write(t *testing.T) {
	sink, readBack := s.open(t)
	ctl := newControl[T](0, false, nil)
	j := s.start(t, sink, ctl, &failHook{}, &failHook{})
	j.mustEnd(t)
	report(t, "input", ctl.Problems())
	g := s.c.Guarantee
	if g == AtLeastOnce {
		g = ExactlyOnce // nothing failed
	}
	s.check(t, readBack, g)
}

func (s *sinkSuite[T]) failures(t *testing.T) {
	n := len(s.c.Input)
	sink, readBack := s.open(t)
	ctl := newControl[T](n/4, true, nil)
	upstream := &failHook{at: int64(n / 2)}
	inWriter := &failHook{at: int64(n / 4)} // counted after the restart
	j := s.start(t, sink, ctl, upstream, inWriter, checkpointOpts(t.TempDir(), eddy.FixedDelayRestart(5, 10*time.Millisecond))...)
	j.await(t, ctl.reached, fmt.Sprintf("the input emitted %d records", n/4))
	j.await(t, ctl.checkpointed, "a checkpoint taken while the input was paused completed")
	ctl.release()
	j.mustEnd(t)
	report(t, "input", ctl.Problems())
	for _, h := range []struct {
		what string
		h    *failHook
	}{{"upstream of the sink", upstream}, {"in the sink's writer", inWriter}} {
		if !h.h.fired.Load() {
			t.Errorf("the failure meant to be injected %s at record %d never was (it saw %d)", h.what, h.h.at, h.h.seen.Load())
		}
	}
	if r := j.env.Restarts(); r != 2 {
		t.Errorf("the job restarted %d times; want 2, for the two injected failures", r)
	}
	s.check(t, readBack, s.c.Guarantee)
}

func (s *sinkSuite[T]) crashResume(t *testing.T) {
	n := len(s.c.Input)
	sink, readBack := s.open(t)
	dir := t.TempDir()
	ctl := newControl[T](n/2, true, nil)
	j1 := s.start(t, sink, ctl, &failHook{}, &failHook{}, checkpointOpts(dir, eddy.NoRestart())...)
	j1.await(t, ctl.reached, fmt.Sprintf("the input emitted %d records", n/2))
	j1.await(t, ctl.checkpointed, "a checkpoint taken while the input was paused completed")
	// Let records flow past the checkpoint into the sink, and crash while
	// the input is paused again, before it ends.
	ctl.pauseAgain(n/2 + n/4)
	j1.await(t, ctl.reached, fmt.Sprintf("the input emitted %d records", n/2+n/4))
	j1.stop(t)
	report(t, "input of the first job", ctl.Problems())
	ctl2 := newControl[T](0, false, nil)
	j2 := s.start(t, sink, ctl2, &failHook{}, &failHook{}, checkpointOpts(dir, eddy.NoRestart())...)
	j2.mustEnd(t)
	report(t, "input of the second job", ctl2.Problems())
	s.check(t, readBack, s.c.Guarantee)
}

// failingSink wraps sink so that its writers count the records they are
// given in h, which may fail one write. Writers made before after fired
// count nothing (after nil: all count).
func failingSink[T any](sink connector.Sink[T], h, after *failHook) connector.Sink[T] {
	mode := changelog.InsertOnly
	if m, ok := sink.(connector.ChangelogSink); ok {
		mode = m.ChangelogMode()
	}
	if ts, ok := sink.(connector.TransactionalSink[T]); ok {
		return failingTxSink[T]{ts, h, after, mode}
	}
	return failingPlainSink[T]{sink, h, after, mode}
}

// hookFor returns the hook a writer made now counts into.
func hookFor(h, after *failHook) *failHook {
	if after == nil || after.at == 0 || after.fired.Load() {
		return h
	}
	return &failHook{}
}

type failingPlainSink[T any] struct {
	s     connector.Sink[T]
	h     *failHook
	after *failHook
	mode  changelog.Mode
}

func (f failingPlainSink[T]) ChangelogMode() changelog.Mode { return f.mode }

func (f failingPlainSink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	w, err := f.s.NewWriter(ctx)
	if err != nil {
		return nil, err
	}
	return &failingWriter[T]{w, hookFor(f.h, f.after)}, nil
}

type failingWriter[T any] struct {
	connector.Writer[T]
	h *failHook
}

func (w *failingWriter[T]) Write(records []T, ts []int64) error {
	for range records {
		w.h.see()
	}
	return w.Writer.Write(records, ts)
}

func (w *failingWriter[T]) NotifyCheckpointComplete(id int64) error {
	return connector.NotifyIfListening(w.Writer, id)
}

// ProcessWatermark passes the watermark on to the writer it wraps.
func (w *failingWriter[T]) ProcessWatermark(wm int64) error {
	return connector.PassWatermark(w.Writer, wm)
}

type failingTxSink[T any] struct {
	s     connector.TransactionalSink[T]
	h     *failHook
	after *failHook
	mode  changelog.Mode
}

func (f failingTxSink[T]) ChangelogMode() changelog.Mode { return f.mode }

func (f failingTxSink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	return failingPlainSink[T]{f.s, f.h, f.after, f.mode}.NewWriter(ctx)
}

func (f failingTxSink[T]) NewTransactionalWriter(ctx connector.WriterContext) (connector.TransactionalWriter[T], error) {
	w, err := f.s.NewTransactionalWriter(ctx)
	if err != nil {
		return nil, err
	}
	return &failingTxWriter[T]{w, hookFor(f.h, f.after)}, nil
}

type failingTxWriter[T any] struct {
	connector.TransactionalWriter[T]
	h *failHook
}

func (w *failingTxWriter[T]) Write(records []T, ts []int64) error {
	for range records {
		w.h.see()
	}
	return w.TransactionalWriter.Write(records, ts)
}

func (w *failingTxWriter[T]) NotifyCheckpointComplete(id int64) error {
	return connector.NotifyIfListening(w.TransactionalWriter, id)
}

// ProcessWatermark passes the watermark on to the writer it wraps.
func (w *failingTxWriter[T]) ProcessWatermark(wm int64) error {
	return connector.PassWatermark(w.TransactionalWriter, wm)
}

package connectortest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
)

// StreamCase describes to RunStream a bounded source that is only
// available as a stream (eddy.FromSlice, eddy.FromGenerator), not as a
// connector.Source.
type StreamCase[T any] struct {
	// Build adds the source to env and returns its stream. Every job of
	// the suite calls it, and each call must read the same input.
	Build func(env *eddy.Environment) *eddy.Stream[T]
	// Want is what a full read yields, as a multiset; nil takes the output
	// of a run without failures.
	Want []T
	// Key renders a record to compare multisets; nil uses fmt's "%+v".
	Key func(T) string
	// PauseAfter is where mid-stream tests slow the stream down to take a
	// checkpoint or a savepoint; 0 means half of the reference.
	PauseAfter int
}

// RunStream runs the tests of RunSource that need no access to the
// source's readers on a source built as a stream: "full read", "checkpoint
// and restore", "kill and resume" and "rescale", each into an exactly-once
// MemorySink whose committed records must equal the reference. As the
// suite cannot pause the readers, it slows the records down right after the
// source once PauseAfter have passed, until a checkpoint completes or a
// savepoint is taken; where the source's positions then are depends on
// timing, but what the tests check does not.
func RunStream[T any](t *testing.T, c StreamCase[T]) {
	t.Helper()
	if c.Build == nil {
		t.Fatal("connectortest: StreamCase.Build is nil")
	}
	s := &streamSuite[T]{c: c, key: keyOf(c.Key), ref: c.Want}
	t.Run("full read", s.fullRead)
	t.Run("checkpoint and restore", s.checkpointRestore)
	t.Run("kill and resume", s.killResume)
	t.Run("rescale", s.rescale)
}

type streamSuite[T any] struct {
	c   StreamCase[T]
	key func(T) string
	ref []T
}

// gate is the map right after the source: it counts records, slows them
// down from its pause point until released, and may fail once.
type gate struct {
	at      int64
	failAt  int64
	seen    atomic.Int64
	fired   atomic.Bool
	slow    atomic.Bool
	once    sync.Once
	reached chan struct{}
}

func newGate(at, failAt int) *gate {
	return &gate{at: int64(at), failAt: int64(failAt), reached: make(chan struct{})}
}

func (g *gate) pass() {
	n := g.seen.Add(1)
	if g.at > 0 && n >= g.at {
		g.once.Do(func() {
			g.slow.Store(true)
			close(g.reached)
		})
	}
	if g.failAt > 0 && n == g.failAt && g.fired.CompareAndSwap(false, true) {
		panic(fmt.Sprintf("connectortest: failure injected at record %d", n))
	}
	if g.slow.Load() {
		time.Sleep(time.Millisecond)
	}
}

// streamBatch keeps the batches small, so that a slowed stream lets
// barriers through often.
const streamBatch = 32

func (s *streamSuite[T]) start(t *testing.T, g *gate, sink *MemorySink[T], p int, opts ...eddy.Option) *job {
	t.Helper()
	opts = append([]eddy.Option{eddy.WithBatchSize(streamBatch)}, opts...)
	return startJob(t, "stream conformance", p, opts, func(env *eddy.Environment) {
		st := eddy.Map(s.c.Build(env), func(v T) T { g.pass(); return v }).Name("gate")
		eddy.WriteTo(st, "memory sink", sink.Sink())
	})
}

func (s *streamSuite[T]) reference(t *testing.T) []T {
	t.Helper()
	if s.ref == nil {
		t.Fatal("no reference output: the full read failed, and the case gives no Want")
	}
	return s.ref
}

func (s *streamSuite[T]) pauseAfter(t *testing.T) int {
	t.Helper()
	ref := s.reference(t)
	at := s.c.PauseAfter
	if at == 0 {
		at = len(ref) / 2
	}
	if at <= 0 || at >= len(ref) {
		t.Fatalf("connectortest: the case pauses after %d of %d records; mid-stream tests need 0 < PauseAfter < %d", at, len(ref), len(ref))
	}
	return at
}

// awaitCheckpoint waits for a checkpoint to complete after the call.
func awaitCheckpoint(t *testing.T, j *job) {
	t.Helper()
	before := int64(0)
	for _, c := range j.env.CheckpointStats() {
		before = max(before, c.ID)
	}
	for {
		for _, c := range j.env.CheckpointStats() {
			if c.ID > before {
				return
			}
		}
		select {
		case <-j.ended:
			t.Fatalf("the job ended before a checkpoint taken mid-stream completed (error: %v)", j.err)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func (s *streamSuite[T]) check(t *testing.T, sink *MemorySink[T]) {
	t.Helper()
	report(t, "sink", sink.Problems())
	if d := multisetDiff(sink.Committed(), s.reference(t), s.key); d != "" {
		t.Errorf("the committed output differs from the reference: %s", d)
	}
}

func (s *streamSuite[T]) fullRead(t *testing.T) {
	sink := NewMemorySink[T]()
	s.start(t, newGate(0, 0), sink, 2).mustEnd(t)
	if s.ref == nil {
		report(t, "sink", sink.Problems())
		if s.ref = sink.Committed(); len(s.ref) < 2 {
			s.ref = nil
			t.Fatal("a full read yielded fewer than 2 records; the suite needs more input")
		}
		return
	}
	s.check(t, sink)
}

func (s *streamSuite[T]) checkpointRestore(t *testing.T) {
	at := s.pauseAfter(t)
	dir := t.TempDir()
	sink := NewMemorySink[T]()
	g := newGate(at, 0)
	j1 := s.start(t, g, sink, 2, checkpointOpts(dir, eddy.NoRestart())...)
	j1.await(t, g.reached, fmt.Sprintf("%d records passed", at))
	awaitCheckpoint(t, j1)
	j1.stop(t)
	s.start(t, newGate(0, 0), sink, 2, checkpointOpts(dir, eddy.NoRestart())...).mustEnd(t)
	s.check(t, sink)
}

func (s *streamSuite[T]) killResume(t *testing.T) {
	at := s.pauseAfter(t)
	total := len(s.ref)
	sink := NewMemorySink[T]()
	g := newGate(at, at+max(1, (total-at)/2))
	j := s.start(t, g, sink, 2, checkpointOpts(t.TempDir(), eddy.FixedDelayRestart(3, 10*time.Millisecond))...)
	j.await(t, g.reached, fmt.Sprintf("%d records passed", at))
	awaitCheckpoint(t, j)
	g.slow.Store(false)
	j.mustEnd(t)
	if !g.fired.Load() {
		t.Errorf("the failure meant to be injected at record %d never was: the records stopped at %d", g.failAt, g.seen.Load())
	} else if r := j.env.Restarts(); r != 1 {
		t.Errorf("the job restarted %d times; want 1, for the one injected failure", r)
	}
	s.check(t, sink)
}

func (s *streamSuite[T]) rescale(t *testing.T) {
	at := s.pauseAfter(t)
	sink := NewMemorySink[T]()
	g := newGate(at, 0)
	j1 := s.start(t, g, sink, 2)
	j1.await(t, g.reached, fmt.Sprintf("%d records passed", at))
	path := j1.savepoint(t)
	for _, p := range []int{1, 3} {
		t.Run(fmt.Sprintf("restore at parallelism %d", p), func(t *testing.T) {
			sk := sink.Clone()
			s.start(t, newGate(0, 0), sk, p, eddy.WithRestoreFrom(path)).mustEnd(t)
			s.check(t, sk)
		})
	}
}

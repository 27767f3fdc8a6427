package connectortest

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// SourceCase describes a source to RunSource.
type SourceCase[T any] struct {
	// Open sets up the input of one test of the suite (files under
	// t.TempDir(), say) and returns the source that reads it; every job of
	// the test uses that source. grow is nil for a source whose input is
	// all there when the first job starts; otherwise it adds the rest of
	// the input, for a source that discovers input while it runs: the suite
	// calls it once per test, in the first job, when the source has emitted
	// PauseAfter records.
	Open func(t testing.TB) (src connector.Source[T], grow func())
	// Want is what a full read yields, as a multiset (including what grow
	// adds). It may be nil for a bounded source without grow: the output of
	// a run without failures is then the reference the other tests compare
	// with.
	Want []T
	// Unbounded marks a source that does not end by itself. The suite stops
	// each of its jobs once len(Want) records are committed.
	Unbounded bool
	// RestoreOnce marks a source whose position the outside system keeps
	// too, and moves on as the jobs reading it complete checkpoints (a
	// PostgreSQL replication slot's confirmed_flush_lsn): a savepoint can
	// then be restored once, since a job restored from it confirms
	// positions past it. The "rescale" test takes a savepoint of its own,
	// from a job of a source Open makes anew, for each parallelism it
	// restores at.
	RestoreOnce bool
	// Seq, if set, says that the source emits the records of each split in
	// order: Seq of a record is never below Seq of the record the split
	// emitted before it.
	Seq func(T) int64
	// Key renders a record to compare multisets; nil uses fmt's "%+v".
	Key func(T) string
	// Watermarks is the source's watermark strategy; the zero value gives
	// none.
	Watermarks eddy.WatermarkStrategy[T]
	// PauseAfter is where the mid-stream tests stop the readers (to take a
	// checkpoint or a savepoint) and call grow: after that many records.
	// 0 means half of the reference.
	PauseAfter int
}

// RunSource runs the conformance suite on a source, each test as a subtest
// of t:
//
//   - "full read": a job at parallelism 2 reads the whole input, which
//     must be Want (as a multiset), each split in order if Seq says so;
//   - "checkpoint and restore": a job is stopped (as a crash would) after
//     a checkpoint taken mid-stream, and a new job resumes from that
//     checkpoint;
//   - "kill and resume": an operator downstream of the source fails after
//     a checkpoint taken mid-stream, and the job restarts from it;
//   - "rescale": a savepoint taken mid-stream at parallelism 2 stops the
//     job, and it is restored at parallelism 1 and 3 (from a savepoint
//     each if RestoreOnce).
//
// Every job writes into an exactly-once MemorySink, whose committed records
// must equal the reference exactly: a split lost or read twice by the
// enumerator or the readers, a position not restored, shows as missing or
// duplicate records. Throughout, the suite also checks what the readers do
// with their splits: a split held by two readers, records emitted into a
// split the reader does not hold, a snapshot that leaves out an unfinished
// split or lists a finished one, a split read to its end before a savepoint
// and read again after it.
func RunSource[T any](t *testing.T, c SourceCase[T]) {
	t.Helper()
	if c.Open == nil {
		t.Fatal("connectortest: SourceCase.Open is nil")
	}
	if c.Unbounded && len(c.Want) == 0 {
		t.Fatal("connectortest: an unbounded SourceCase needs Want, to know when its jobs have read everything")
	}
	s := &sourceSuite[T]{c: c, key: keyOf(c.Key), ref: c.Want}
	t.Run("full read", s.fullRead)
	t.Run("checkpoint and restore", s.checkpointRestore)
	t.Run("kill and resume", s.killResume)
	t.Run("rescale", s.rescale)
}

type sourceSuite[T any] struct {
	c   SourceCase[T]
	key func(T) string
	ref []T // the expected output
}

// reference returns the expected output, failing the test if there is none
// (when the full read failed).
func (s *sourceSuite[T]) reference(t *testing.T) []T {
	t.Helper()
	if s.ref == nil {
		t.Fatal("no reference output: the full read failed, and the case gives no Want")
	}
	return s.ref
}

// pauseAfter returns where mid-stream tests pause.
func (s *sourceSuite[T]) pauseAfter(t *testing.T) int {
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

// open calls the case's Open and checks that grow fits the case.
func (s *sourceSuite[T]) open(t *testing.T) (connector.Source[T], func()) {
	t.Helper()
	src, grow := s.c.Open(t)
	if src == nil {
		t.Fatal("connectortest: SourceCase.Open returned a nil source")
	}
	if grow != nil && len(s.c.Want) == 0 {
		t.Fatal("connectortest: a SourceCase that grows its input needs Want")
	}
	return src, grow
}

// start runs a job reading src through a failure hook into sink.
func (s *sourceSuite[T]) start(t *testing.T, src connector.Source[T], ctl *control[T], sink *MemorySink[T], hook *failHook, p int, opts ...eddy.Option) *job {
	t.Helper()
	if hook == nil {
		hook = &failHook{}
	}
	return startJob(t, "connector conformance", p, opts, func(env *eddy.Environment) {
		st := eddy.FromSource(env, "source under test", wrap(src, ctl), s.c.Watermarks)
		st = eddy.Map(st, func(v T) T { hook.see(); return v }).Name("failure hook")
		eddy.WriteTo(st, "memory sink", sink.Sink())
	})
}

// finish waits for a job of the source to end: a bounded source ends by
// itself; a job of an unbounded one is stopped once it has committed as
// many records as the reference holds.
func (s *sourceSuite[T]) finish(t *testing.T, j *job, sink *MemorySink[T]) {
	t.Helper()
	if !s.c.Unbounded {
		j.mustEnd(t)
		return
	}
	if err := sink.WaitFor(j.ctx, len(s.ref)); err != nil {
		if j.err != nil {
			t.Fatalf("the job failed: %v", j.err)
		}
		t.Fatalf("waiting for the output of the unbounded source: %v", err)
	}
	j.stop(t)
}

// checkOutput compares what sink committed with the reference, and reports
// the problems the controls and the sink saw.
func (s *sourceSuite[T]) checkOutput(t *testing.T, sink *MemorySink[T], ctls ...*control[T]) {
	t.Helper()
	for i, c := range ctls {
		report(t, fmt.Sprintf("job %d", i+1), c.Problems())
	}
	report(t, "sink", sink.Problems())
	if d := multisetDiff(sink.Committed(), s.reference(t), s.key); d != "" {
		t.Errorf("the committed output differs from the reference: %s", d)
	}
}

// checkpointOpts are the options of a job that checkpoints into dir and
// restarts as rs says.
func checkpointOpts(dir string, rs eddy.RestartStrategy) []eddy.Option {
	return []eddy.Option{eddy.WithCheckpointing(checkpointInterval), eddy.WithCheckpointDir(dir), eddy.WithRestartStrategy(rs)}
}

func (s *sourceSuite[T]) fullRead(t *testing.T) {
	src, grow := s.open(t)
	at := 0
	if grow != nil {
		at = s.pauseAfter(t)
	}
	ctl := newControl(at, false, s.c.Seq)
	sink := NewMemorySink[T]()
	var opts []eddy.Option
	if s.c.Unbounded {
		opts = checkpointOpts(t.TempDir(), eddy.NoRestart())
	}
	j := s.start(t, src, ctl, sink, nil, 2, opts...)
	if grow != nil {
		j.await(t, ctl.reached, fmt.Sprintf("the source emitted %d records", at))
		grow()
	}
	s.finish(t, j, sink)
	if !s.c.Unbounded {
		added, finished := ctl.splitSets()
		for _, id := range sortedKeys(added) {
			if finished[id] == 0 {
				t.Errorf("split %q was given to a reader and never finished, though the source ended", id)
			}
		}
	}
	if s.ref == nil {
		report(t, "job", ctl.Problems())
		report(t, "sink", sink.Problems())
		got := sink.Committed()
		if len(got) < 2 {
			t.Fatalf("a full read yielded %d records; the suite needs an input of at least 2", len(got))
		}
		s.ref = got
		return
	}
	s.checkOutput(t, sink, ctl)
}

func (s *sourceSuite[T]) checkpointRestore(t *testing.T) {
	at := s.pauseAfter(t)
	src, grow := s.open(t)
	dir := t.TempDir()
	sink := NewMemorySink[T]()
	ctl1 := newControl(at, true, s.c.Seq)
	j1 := s.start(t, src, ctl1, sink, nil, 2, checkpointOpts(dir, eddy.NoRestart())...)
	j1.await(t, ctl1.reached, fmt.Sprintf("the source emitted %d records", at))
	if grow != nil {
		grow()
	}
	j1.await(t, ctl1.checkpointed, "a checkpoint taken while the source was paused completed")
	j1.stop(t)
	if d := subsetDiff(sink.Committed(), s.ref, s.key); d != "" {
		t.Errorf("the first job committed records beyond the reference: %s", d)
	}
	ctl2 := newControl(0, false, s.c.Seq)
	j2 := s.start(t, src, ctl2, sink, nil, 2, checkpointOpts(dir, eddy.NoRestart())...)
	s.finish(t, j2, sink)
	s.checkOutput(t, sink, ctl1, ctl2)
}

func (s *sourceSuite[T]) killResume(t *testing.T) {
	at := s.pauseAfter(t)
	total := len(s.ref)
	src, grow := s.open(t)
	sink := NewMemorySink[T]()
	ctl := newControl(at, true, s.c.Seq)
	hook := &failHook{at: int64(at + max(1, (total-at)/2))}
	j := s.start(t, src, ctl, sink, hook, 2, checkpointOpts(t.TempDir(), eddy.FixedDelayRestart(3, 10*time.Millisecond))...)
	j.await(t, ctl.reached, fmt.Sprintf("the source emitted %d records", at))
	if grow != nil {
		grow()
	}
	j.await(t, ctl.checkpointed, "a checkpoint taken while the source was paused completed")
	ctl.release()
	s.finish(t, j, sink)
	if !hook.fired.Load() {
		t.Errorf("the failure meant to be injected at record %d never was: the records stopped at %d", hook.at, hook.seen.Load())
	} else if r := j.env.Restarts(); r != 1 {
		t.Errorf("the job restarted %d times; want 1, for the one injected failure", r)
	}
	s.checkOutput(t, sink, ctl)
}

func (s *sourceSuite[T]) rescale(t *testing.T) {
	if s.c.RestoreOnce {
		s.rescaleTo(t, 1)
		s.rescaleTo(t, 3)
		return
	}
	s.rescaleTo(t, 1, 3)
}

// rescaleTo stops a job at parallelism 2 of a source Open makes with a
// savepoint taken mid-stream, and restores it at each of parallelisms.
func (s *sourceSuite[T]) rescaleTo(t *testing.T, parallelisms ...int) {
	at := s.pauseAfter(t)
	src, grow := s.open(t)
	sink := NewMemorySink[T]()
	ctl1 := newControl(at, true, s.c.Seq)
	j1 := s.start(t, src, ctl1, sink, nil, 2)
	j1.await(t, ctl1.reached, fmt.Sprintf("the source emitted %d records", at))
	if grow != nil {
		grow()
	}
	path := j1.savepoint(t)
	report(t, "job at parallelism 2", ctl1.Problems())
	if d := subsetDiff(sink.Committed(), s.ref, s.key); d != "" {
		t.Errorf("the job at parallelism 2 committed records beyond the reference: %s", d)
	}
	added1, finished1 := ctl1.splitSets()
	for _, p := range parallelisms {
		t.Run(fmt.Sprintf("restore at parallelism %d", p), func(t *testing.T) {
			sk := sink.Clone()
			ctl2 := newControl(0, false, s.c.Seq)
			opts := []eddy.Option{eddy.WithRestoreFrom(path)}
			if s.c.Unbounded {
				opts = append(opts, checkpointOpts(t.TempDir(), eddy.NoRestart())...)
			}
			j2 := s.start(t, src, ctl2, sk, nil, p, opts...)
			s.finish(t, j2, sk)
			s.checkOutput(t, sk, ctl2)
			added2, finished2 := ctl2.splitSets()
			for _, id := range sortedKeys(added2) {
				if finished1[id] > 0 {
					t.Errorf("split %q was read to its end before the savepoint, and given to a reader again after the restore", id)
				}
			}
			if s.c.Unbounded {
				return
			}
			for _, id := range sortedKeys(added1) {
				if finished1[id] == 0 && finished2[id] == 0 {
					t.Errorf("split %q was given to a reader before the savepoint, and never finished, neither before nor after the restore", id)
				}
			}
		})
	}
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

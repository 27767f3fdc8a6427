package cdctest

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql/types"
)

// Job is a job that reads a CDC source into a memory sink.
type Job struct {
	// Connector names the source operator, such as "mysql-cdc".
	Connector string
	// Source is the source the job reads.
	Source connector.Source[connector.TableRecord]
	// Parallelism is the job's; 1 when 0.
	Parallelism int
	// Checkpoints is the checkpoint interval; 0 for no checkpoints.
	Checkpoints time.Duration
	// Restarts is how often the job restarts after a failure, 10ms
	// later; 0 for never.
	Restarts int
	// Timeout ends the job; a minute when 0.
	Timeout time.Duration
	// Hook, if not nil, is an operator between the source and the sink,
	// such as Failures.Hook.
	Hook func(connector.TableRecord) connector.TableRecord
	// BatchSize is the job's (eddy.WithBatchSize); the default when 0.
	BatchSize int
}

// Running is a started job.
type Running struct {
	// Sink holds what the job committed (nil for a job of SQL).
	Sink *connectortest.MemorySink[connector.TableRecord]
	// Env is the job's environment, whose Metrics hold the readers'
	// status reports.
	Env *eddy.Environment
	// Ctx is the job's context: done once the job times out or stops.
	Ctx      context.Context
	cancel   context.CancelFunc
	finished chan struct{}
	err      error
}

// Start starts j; the job stops, at the latest, when the test ends.
func (j Job) Start(t testing.TB) *Running {
	t.Helper()
	opts := []eddy.Option{eddy.WithParallelism(max(j.Parallelism, 1))}
	if j.Checkpoints > 0 {
		opts = append(opts, eddy.WithCheckpointing(j.Checkpoints), eddy.WithCheckpointDir(filepath.Join(t.TempDir(), "checkpoints")))
	}
	if j.Restarts > 0 {
		opts = append(opts, eddy.WithRestartStrategy(eddy.FixedDelayRestart(j.Restarts, 10*time.Millisecond)))
	}
	if j.BatchSize > 0 {
		opts = append(opts, eddy.WithBatchSize(j.BatchSize))
	}
	env := eddy.NewEnvironment(opts...)
	sink := connectortest.NewMemorySink[connector.TableRecord]()
	st := eddy.FromSource(env, j.Connector, j.Source, eddy.WatermarkStrategy[connector.TableRecord]{})
	if j.Hook != nil {
		st = eddy.Map(st, j.Hook).Name("failure hook")
	}
	eddy.WriteTo(st, "memory sink", sink.Sink())
	r := Execute(t, env, j.Connector, j.Timeout)
	r.Sink = sink
	return r
}

// Execute starts the job env holds, named name, with a timeout (a minute
// when 0); it stops, at the latest, when the test ends.
func Execute(t testing.TB, env *eddy.Environment, name string, timeout time.Duration) *Running {
	if timeout == 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	r := &Running{Env: env, Ctx: ctx, cancel: cancel, finished: make(chan struct{})}
	go func() {
		r.err = env.Execute(ctx, name)
		close(r.finished)
	}()
	t.Cleanup(func() { r.Stop() })
	return r
}

// Finished is closed once the job has ended.
func (r *Running) Finished() <-chan struct{} { return r.finished }

// Wait waits for the job to end and returns its error.
func (r *Running) Wait() error {
	<-r.finished
	return r.err
}

// Stop stops the job, waits for it to end, and returns its error.
func (r *Running) Stop() error {
	r.cancel()
	return r.Wait()
}

// Ended fails t if the job has ended.
func (r *Running) Ended(t testing.TB) {
	t.Helper()
	select {
	case <-r.finished:
		t.Fatalf("the job ended: %v", r.err)
	default:
	}
}

// WaitFor waits for the sink to hold n records, failing t if the job
// times out first.
func (r *Running) WaitFor(t testing.TB, n int) {
	t.Helper()
	if err := r.Sink.WaitFor(r.Ctx, n); err != nil {
		t.Fatalf("waiting for %d records: %v (got %d)", n, err, len(r.Sink.Committed()))
	}
}

// WaitStatus waits for a source reader's latest status report (the one
// the job's metrics publish about once a second) to satisfy ok, and
// returns it; it fails t if the job ends or times out first.
func (r *Running) WaitStatus(t testing.TB, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	var last []map[string]any
	for {
		last = last[:0]
		for _, m := range r.Env.Metrics() {
			if m.Status == nil {
				continue
			}
			if ok(m.Status) {
				return m.Status
			}
			last = append(last, m.Status)
		}
		select {
		case <-r.finished:
			t.Fatalf("the job ended before %s: %v (status: %v)", what, r.err, last)
		case <-r.Ctx.Done():
			t.Fatalf("the job timed out before %s (status: %v)", what, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Reading is what Read does with a job.
type Reading struct {
	// Schema is the row type of the source's records.
	Schema *types.RowType
	// Settle is how long the job gets to reach its start position before
	// During.
	Settle time.Duration
	// During, if not nil, is called once the job runs, after Settle.
	During func()
	// N is the count of records to wait for; with N < 0 Read waits for
	// the job to end by itself.
	N int
	// Linger is how long Read waits, after N records, for any more, which
	// would be wrong.
	Linger time.Duration
}

// Read runs j as rd says and returns the keys (Keys) of the records it
// committed.
func Read(t testing.TB, j Job, rd Reading) []string {
	t.Helper()
	r := j.Start(t)
	if rd.During != nil {
		time.Sleep(rd.Settle)
		rd.During()
	}
	if rd.N < 0 {
		if err := r.Wait(); err != nil {
			t.Fatal(err)
		}
	} else {
		r.WaitFor(t, rd.N)
		time.Sleep(rd.Linger)
		r.Stop()
	}
	return Keys(rd.Schema, r.Sink.Committed())
}

// RunFails runs a job of a source of the connector named name and returns
// its error, failing t if the job does not fail within a minute. An error
// of opening the source is returned as it is.
func RunFails(t testing.TB, name string, options map[string]string, tab *connector.Table) error {
	t.Helper()
	src, err := connector.OpenTableSource(connector.Default, name, options, tab)
	if err != nil {
		return err
	}
	r := Job{Connector: name, Source: src}.Start(t)
	err = r.Wait()
	if err == nil {
		t.Fatal("the job did not fail")
	}
	if r.Ctx.Err() != nil {
		t.Fatalf("the job did not fail within a minute: %v", err)
	}
	return err
}

// Failures injects failures into a job, as its Hook: a panic at each of
// the counts of records given, and, if asked, one at the first -U record
// (a snapshot's records are all inserts: it is the stream's first
// update). It is safe for concurrent use.
type Failures struct {
	seen        atomic.Int64
	mu          sync.Mutex
	at          map[int64]bool
	firstUpdate bool
}

// NewFailures returns the failures at the counts at, and one at the first
// update if firstUpdate.
func NewFailures(firstUpdate bool, at ...int64) *Failures {
	f := &Failures{at: map[int64]bool{}, firstUpdate: firstUpdate}
	for _, n := range at {
		f.at[n] = true
	}
	return f
}

// Hook passes r on, or panics where a failure is due.
func (f *Failures) Hook(r connector.TableRecord) connector.TableRecord {
	n := f.seen.Add(1)
	f.mu.Lock()
	fail := f.at[n]
	delete(f.at, n)
	update := !fail && f.firstUpdate && r.Kind == changelog.UpdateBefore
	if update {
		f.firstUpdate = false
	}
	f.mu.Unlock()
	if fail {
		panic(fmt.Sprintf("failure injected at record %d", n))
	}
	if update {
		panic(fmt.Sprintf("failure injected at record %d, the stream's first update", n))
	}
	return r
}

// Left returns the counts of records the job did not reach, sorted.
func (f *Failures) Left() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var left []int64
	for n := range f.at {
		left = append(left, n)
	}
	slices.Sort(left)
	return left
}

package eddy_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/checkpoint"
	"github.com/eddystream/eddy/window"
)

// txLog is an outside system with transactions: pre-committed transactions
// are durable, committed ones visible. It outlives the runs of a job, as a
// database would. If block is set, the first Commit blocks until that
// context is cancelled and returns without committing, as if the process
// died while the sinks committed.
type txLog struct {
	mu        sync.Mutex
	next      int64
	staged    map[int64][]string
	committed map[int64]bool
	visible   []string
	block     context.Context
	blocked   chan struct{} // closed when the first Commit blocks
	writes    atomic.Int64  // records written into transactions
}

func newTxLog(block context.Context) *txLog {
	return &txLog{staged: map[int64][]string{}, committed: map[int64]bool{}, block: block, blocked: make(chan struct{})}
}

type logTx struct{ ID int64 }

type logCommitter struct{ l *txLog }

func (c logCommitter) Begin() (logTx, error) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	c.l.next++
	c.l.staged[c.l.next] = nil
	return logTx{c.l.next}, nil
}

func (c logCommitter) Write(tx *logTx, v string) error {
	c.l.writes.Add(1)
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	c.l.staged[tx.ID] = append(c.l.staged[tx.ID], v)
	return nil
}

func (c logCommitter) PreCommit(*logTx) error { return nil }

// Commit makes tx visible once: it is idempotent, as the contract asks.
func (c logCommitter) Commit(tx logTx) error {
	c.l.mu.Lock()
	if ctx := c.l.block; ctx != nil {
		c.l.block = nil
		c.l.mu.Unlock()
		close(c.l.blocked)
		<-ctx.Done()
		return fmt.Errorf("the process died while committing transaction %d", tx.ID)
	}
	defer c.l.mu.Unlock()
	if c.l.committed[tx.ID] {
		return nil
	}
	lines, ok := c.l.staged[tx.ID]
	if !ok {
		return fmt.Errorf("commit of transaction %d, which was never begun", tx.ID)
	}
	c.l.committed[tx.ID] = true
	c.l.visible = append(c.l.visible, lines...)
	return nil
}

func (c logCommitter) Abort(tx logTx) error {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	if c.l.committed[tx.ID] {
		return fmt.Errorf("abort of the committed transaction %d", tx.ID)
	}
	delete(c.l.staged, tx.ID)
	return nil
}

func (c logCommitter) Recover(_, _ []logTx) error { return nil }

// output returns the visible lines, sorted.
func (l *txLog) output() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.visible))
}

// endingJob builds a bounded job of two sources of 2 subtasks whose records,
// and the counts of a keyed tumbling window over them (fired by the final
// watermark), go to an exactly-once sink of 2 subtasks writing into l.
// generated counts the records the sources generate.
func endingJob(env *eddy.Environment, l *txLog, generated *atomic.Int64) {
	type rec struct{ I, TS int64 }
	ts := eddy.BoundedOutOfOrder(time.Hour, func(r rec) int64 { return r.TS })
	gen := func(base int64) func(int64) rec {
		return func(i int64) rec {
			generated.Add(1)
			return rec{I: base + i, TS: i * 3}
		}
	}
	a := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: 500}, gen(0), ts).UID("a")
	b := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: 300}, gen(10_000), ts).UID("b")
	all := eddy.Union(a, b)
	counts := eddy.Aggregate(eddy.Window(eddy.KeyBy(all, func(r rec) int64 { return r.I % 7 }), window.Tumbling(time.Second)),
		agg.Count[rec]())
	lines := eddy.Union(
		eddy.Map(all, func(r rec) string { return fmt.Sprintf("rec %d", r.I) }),
		eddy.Map(counts, func(w eddy.Windowed[int64, int64]) string {
			return fmt.Sprintf("count %d %d %d", w.Key, w.Window.Start, w.Value)
		}))
	eddy.WriteTo(lines, "log", connector.TwoPhase(func(connector.WriterContext) (connector.TwoPhaseCommitter[string, logTx], error) {
		return logCommitter{l}, nil
	}))
}

// TestCrashAfterTheFinalCheckpointCommitsOnRestart kills a bounded job
// (cancels it) while its exactly-once sink commits the transactions of the
// end of its input, after the final checkpoint is written: the next run on
// the same checkpoint directory restores the final checkpoint, commits what
// it holds, generates and writes nothing, and ends; the output equals that
// of a run without failure, each line once. A third run changes nothing.
func TestCrashAfterTheFinalCheckpointCommitsOnRestart(t *testing.T) {
	for _, backend := range []string{"heap", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			opts := func(dir string) []eddy.Option {
				o := []eddy.Option{eddy.WithParallelism(2), eddy.WithCheckpointing(time.Hour), eddy.WithCheckpointDir(dir)}
				if backend == "pebble" {
					o = append(o, eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)))
				}
				return o
			}
			var generated atomic.Int64
			ref := newTxLog(nil)
			env := eddy.NewEnvironment(opts(t.TempDir())...)
			endingJob(env, ref, &generated)
			if err := env.Execute(context.Background(), "ending"); err != nil {
				t.Fatal(err)
			}
			want := ref.output()
			if len(want) != 800+14 {
				t.Fatalf("the failure-free run committed %d lines, want %d (800 records, 7 keys in 2 windows)", len(want), 800+14)
			}

			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			l := newTxLog(ctx)
			env = eddy.NewEnvironment(opts(dir)...)
			endingJob(env, l, &generated)
			done := make(chan error, 1)
			go func() { done <- env.Execute(ctx, "ending") }()
			select {
			case <-l.blocked:
				cancel()
				if err := <-done; err != nil {
					t.Fatalf("the cancelled run: %v", err)
				}
			case err := <-done:
				t.Fatalf("the run ended (%v) without committing", err)
			}
			if got := l.output(); len(got) >= len(want) {
				t.Fatalf("the crashed run committed %d lines of %d; the test needs a transaction left uncommitted", len(got), len(want))
			}

			for run := 2; run <= 3; run++ {
				generated.Store(0)
				w0 := l.writes.Load()
				env = eddy.NewEnvironment(opts(dir)...)
				endingJob(env, l, &generated)
				if err := env.Execute(context.Background(), "ending"); err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				if n, w := generated.Load(), l.writes.Load()-w0; n != 0 || w != 0 {
					t.Errorf("run %d generated %d records and wrote %d; a finished job must not run again", run, n, w)
				}
				if got := l.output(); !slices.Equal(got, want) {
					t.Fatalf("after run %d the committed output has %d lines, a failure-free run %d (missing or duplicated: %v)",
						run, len(got), len(want), diffLines(got, want))
				}
			}
		})
	}
}

// diffLines returns up to 10 lines that occur a different number of times
// in got and want, with the two counts.
func diffLines(got, want []string) []string {
	n := map[string][2]int{}
	for _, s := range got {
		c := n[s]
		c[0]++
		n[s] = c
	}
	for _, s := range want {
		c := n[s]
		c[1]++
		n[s] = c
	}
	var out []string
	for s, c := range n {
		if c[0] != c[1] && len(out) < 10 {
			out = append(out, fmt.Sprintf("%q got %d want %d", s, c[0], c[1]))
		}
	}
	slices.Sort(out)
	return out
}

// TestFinalCheckpointWithoutStateRunsNothing checks that a directory whose
// latest checkpoint is a final one holding no operators, as earlier
// versions wrote them, still means that the job has finished: restoring it
// would run the job again from the beginning.
func TestFinalCheckpointWithoutStateRunsNothing(t *testing.T) {
	dir := t.TempDir()
	d, err := checkpoint.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(checkpoint.Assemble("ending", 4, false, true, nil)); err != nil {
		t.Fatal(err)
	}
	var generated atomic.Int64
	l := newTxLog(nil)
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(time.Hour), eddy.WithCheckpointDir(dir))
	endingJob(env, l, &generated)
	if err := env.Execute(context.Background(), "ending"); err != nil {
		t.Fatal(err)
	}
	if n, out := generated.Load(), l.output(); n != 0 || len(out) != 0 {
		t.Fatalf("the finished job ran again: it generated %d records and committed %d lines", n, len(out))
	}
}

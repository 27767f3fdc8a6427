package eddy_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// This file is the harness of the relational operators' tests: random valid
// changelogs, a job run with checkpoints and an injected failure in the
// middle on either state backend, an exactly-once collector of the output,
// and the final table a changelog describes.

// relBackends are the state backends every relational test runs on.
var relBackends = []string{"heap", "pebble"}

// relRow is the row of the tests' input tables.
type relRow struct {
	ID int64 // unique per row version
	G  int64 // a group or join key
	V  int64 // a value
}

// randomChangelog returns a valid retract changelog of n changes over rows
// made by newRow: insertions of new rows, updates (-U old, +U new) and
// deletions of rows present, each retraction carrying the whole row.
func randomChangelog(rng *rand.Rand, n int, newRow func(id int64) relRow) []changelog.Change[relRow] {
	var out []changelog.Change[relRow]
	var live []relRow
	id := int64(0)
	for len(out) < n {
		switch p := rng.IntN(10); {
		case p < 5 || len(live) == 0:
			id++
			r := newRow(id)
			live = append(live, r)
			out = append(out, changelog.InsertOf(r))
		case p < 8:
			i := rng.IntN(len(live))
			old := live[i]
			id++
			nr := newRow(id)
			if rng.IntN(2) == 0 {
				nr.G = old.G // most updates stay in their group
			}
			live[i] = nr
			out = append(out, changelog.Of(changelog.UpdateBefore, old), changelog.Of(changelog.UpdateAfter, nr))
		default:
			i := rng.IntN(len(live))
			old := live[i]
			live = append(live[:i], live[i+1:]...)
			out = append(out, changelog.Of(changelog.Delete, old))
		}
	}
	return out
}

// insertOnly returns n insertions of rows made by newRow.
func insertOnly(n int, newRow func(id int64) relRow) []changelog.Change[relRow] {
	out := make([]changelog.Change[relRow], n)
	for i := range out {
		out[i] = changelog.InsertOf(newRow(int64(i + 1)))
	}
	return out
}

// table is the multiset of rows a changelog leaves.
func table[T comparable](t *testing.T, changes []changelog.Change[T]) map[T]int {
	t.Helper()
	m := map[T]int{}
	for _, c := range changes {
		if c.Kind.IsAddition() {
			m[c.Row]++
			continue
		}
		if m[c.Row] == 0 {
			t.Fatalf("the changelog retracts %v, which is not in the table", c)
		}
		m[c.Row]--
		if m[c.Row] == 0 {
			delete(m, c.Row)
		}
	}
	return m
}

// checkPairs fails the test if an update's -U is not followed by its +U, in
// the output of one sink subtask.
func checkPairs[T any](t *testing.T, changes []changelog.Change[T]) {
	t.Helper()
	for i, c := range changes {
		if c.Kind == changelog.UpdateBefore && (i+1 == len(changes) || changes[i+1].Kind != changelog.UpdateAfter) {
			t.Fatalf("change %d (%v) is a -U not followed by a +U", i, c)
		}
	}
}

// diffTables renders the differences of two multisets.
func diffTables[T comparable](got, want map[T]int) string {
	var lines []string
	for k, n := range want {
		if got[k] != n {
			lines = append(lines, fmt.Sprintf("  %v: got %d, want %d", k, got[k], n))
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			lines = append(lines, fmt.Sprintf("  %v: got %d, want 0", k, n))
		}
	}
	sort.Strings(lines)
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("  … and %d more", len(lines)-20))
	}
	return strings.Join(lines, "\n")
}

// relRun is one run of a relational job: how to build it and how to fail.
type relRun struct {
	backend string
	// failAfter, if positive, injects one failure once that many input
	// records have passed and a checkpoint has completed; the job restarts
	// from its latest checkpoint.
	failAfter int64
	// parallelism of the operators (sources run as one subtask, so that the
	// changes of a row stay in order).
	parallelism int
	// checkpointEvery, if positive, holds the input back after every that
	// many records until a checkpoint has completed, so that a run sees
	// many checkpoints however fast the machine (runSinkJob only).
	checkpointEvery int64
	// noChaining runs every operator in its own subtasks (runSinkJob only).
	noChaining bool
}

// relInput adds a source of the changes of input, one subtask, paced so that
// checkpoints happen while it runs, and passes each record through hook.
func relInput[T any](env *eddy.Environment, name string, input []changelog.Change[T], hook func()) *eddy.Stream[changelog.Change[T]] {
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(input)), RatePerSecond: 40000},
		func(i int64) changelog.Change[T] { return input[i] }, eddy.NoWatermarks[changelog.Change[T]]()).Parallelism(1).UID(name)
	s := eddy.Map(src, func(c changelog.Change[T]) changelog.Change[T] { hook(); return c }).Parallelism(1).Name("hook " + name)
	return eddy.AsChangelog(s, changelog.Retract)
}

// runRelational runs the job build makes, with checkpoints and an injected
// failure as r says, and returns what its exactly-once sink committed, per
// sink subtask.
func runRelational[O any](t *testing.T, r relRun, build func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[O]]) [][]changelog.Change[O] {
	t.Helper()
	opts := []eddy.Option{eddy.WithParallelism(max(r.parallelism, 1)), eddy.WithCheckpointing(20 * time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.FixedDelayRestart(3, 5*time.Millisecond))}
	if r.backend == "pebble" {
		opts = append(opts, eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)))
	}
	env := eddy.NewEnvironment(opts...)
	var seen atomic.Int64
	var failed atomic.Bool
	hook := func() {
		if r.failAfter <= 0 || seen.Add(1) < r.failAfter || failed.Load() {
			return
		}
		if len(env.CheckpointStats()) == 0 {
			// Hold the input back until a checkpoint has completed, so
			// that the failure restores one whatever the machine's speed:
			// each record waits, letting the barriers through between
			// records, long enough that the rest of the input (a thousand
			// records or more) spans many seconds of checkpointing even
			// on a loaded machine.
			time.Sleep(20 * time.Millisecond)
			return
		}
		failed.Store(true)
		panic("injected failure")
	}
	sink := newMemSink[changelog.Change[O]]()
	out := build(env, hook)
	eddy.WriteTo(out, "collect", sink)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := env.Execute(ctx, t.Name()); err != nil {
		t.Fatal(err)
	}
	if r.failAfter > 0 && !failed.Load() {
		t.Fatalf("the job ended before the failure was injected")
	}
	if r.failAfter > 0 && env.Restarts() != 1 {
		t.Fatalf("restarted %d times, want 1", env.Restarts())
	}
	return sink.committed()
}

// memSink is an exactly-once sink that keeps what it commits in memory.
// Transactions are staged in the sink (which outlives the job's restarts,
// as an outside system would) and made visible by Commit.
type memSink[T any] struct {
	mu     sync.Mutex
	next   int64
	staged map[int64][]T
	done   map[int64]bool
	bySub  map[int64]int
	out    map[int][]T
}

func newMemSink[T any]() *memSink[T] {
	return &memSink[T]{staged: map[int64][]T{}, done: map[int64]bool{}, bySub: map[int64]int{}, out: map[int][]T{}}
}

// memTx names a staged transaction.
type memTx struct{ ID int64 }

func (m *memSink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	return connector.TwoPhase(m.committer).NewWriter(ctx)
}

func (m *memSink[T]) NewTransactionalWriter(ctx connector.WriterContext) (connector.TransactionalWriter[T], error) {
	return connector.TwoPhase(m.committer).NewTransactionalWriter(ctx)
}

func (m *memSink[T]) committer(ctx connector.WriterContext) (connector.TwoPhaseCommitter[T, memTx], error) {
	return &memCommitter[T]{m: m, sub: ctx.Subtask()}, nil
}

type memCommitter[T any] struct {
	m   *memSink[T]
	sub int
}

func (c *memCommitter[T]) Begin() (memTx, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.next++
	c.m.staged[c.m.next] = nil
	c.m.bySub[c.m.next] = c.sub
	return memTx{c.m.next}, nil
}

func (c *memCommitter[T]) Write(tx *memTx, v T) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.staged[tx.ID] = append(c.m.staged[tx.ID], v)
	return nil
}

func (c *memCommitter[T]) PreCommit(*memTx) error { return nil }

func (c *memCommitter[T]) Commit(tx memTx) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.done[tx.ID] {
		return nil
	}
	rows, ok := c.m.staged[tx.ID]
	if !ok {
		return fmt.Errorf("commit of unknown transaction %d", tx.ID)
	}
	c.m.done[tx.ID] = true
	sub := c.m.bySub[tx.ID]
	c.m.out[sub] = append(c.m.out[sub], rows...)
	delete(c.m.staged, tx.ID)
	return nil
}

func (c *memCommitter[T]) Abort(tx memTx) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	delete(c.m.staged, tx.ID)
	return nil
}

func (c *memCommitter[T]) Recover(pending, _ []memTx) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	keep := map[int64]bool{}
	for _, tx := range pending {
		keep[tx.ID] = true
	}
	for id := range c.m.staged {
		if !keep[id] {
			delete(c.m.staged, id)
		}
	}
	return nil
}

// committed returns the committed records of each sink subtask.
func (m *memSink[T]) committed() [][]T {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out [][]T
	for _, sub := range slices.Sorted(maps.Keys(m.out)) {
		out = append(out, slices.Clone(m.out[sub]))
	}
	return out
}

// finalTable checks the changelogs of every sink subtask and returns the
// table they leave together.
func finalTable[T comparable](t *testing.T, parts [][]changelog.Change[T]) map[T]int {
	t.Helper()
	var all []changelog.Change[T]
	for _, p := range parts {
		checkPairs(t, p)
		all = append(all, p...)
	}
	// Subtasks' outputs interleave in any order; a row's changes stay in
	// one subtask, in order.
	return table(t, all)
}

package eddy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// upsertMemSink is a memSink that declares the changelog mode it applies.
type upsertMemSink[T any] struct {
	*memSink[T]
	mode changelog.Mode
}

func (s upsertMemSink[T]) ChangelogMode() changelog.Mode { return s.mode }

// checkedSink is a memSink that hands every transaction it commits to
// inspect, before it is committed.
type checkedSink[T any] struct {
	*memSink[T]
	inspect func(tx []T)
}

func (s *checkedSink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	return connector.TwoPhase(s.committer).NewWriter(ctx)
}

func (s *checkedSink[T]) NewTransactionalWriter(ctx connector.WriterContext) (connector.TransactionalWriter[T], error) {
	return connector.TwoPhase(s.committer).NewTransactionalWriter(ctx)
}

func (s *checkedSink[T]) committer(ctx connector.WriterContext) (connector.TwoPhaseCommitter[T, memTx], error) {
	return &checkedCommitter[T]{memCommitter: memCommitter[T]{m: s.memSink, sub: ctx.Subtask()}, s: s}, nil
}

type checkedCommitter[T any] struct {
	memCommitter[T]
	s *checkedSink[T]
}

func (c *checkedCommitter[T]) Commit(tx memTx) error {
	c.m.mu.Lock()
	rows, staged := c.m.staged[tx.ID]
	done := c.m.done[tx.ID]
	c.m.mu.Unlock()
	if staged && !done {
		c.s.inspect(rows)
	}
	return c.memCommitter.Commit(tx)
}

// runSinkJob runs the job build makes, which adds its own sinks, with
// checkpoints every interval and an injected failure as r says.
func runSinkJob(t *testing.T, r relRun, interval time.Duration, build func(env *eddy.Environment, hook func())) {
	t.Helper()
	opts := []eddy.Option{eddy.WithParallelism(max(r.parallelism, 1)), eddy.WithCheckpointing(interval),
		eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.FixedDelayRestart(3, 5*time.Millisecond))}
	if r.backend == "pebble" {
		opts = append(opts, eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)))
	}
	if r.checkpointEvery > 0 {
		// Small batches, so that a barrier gets past the held-back input.
		opts = append(opts, eddy.WithBatchSize(16))
	}
	if r.noChaining {
		opts = append(opts, eddy.WithoutChaining())
	}
	env := eddy.NewEnvironment(opts...)
	var seen, held atomic.Int64
	var failed, holding atomic.Bool
	build(env, func() {
		n := seen.Add(1)
		if r.checkpointEvery > 0 {
			// Hold the input back, a millisecond a record, until a
			// checkpoint completes after every checkpointEvery records.
			if n%r.checkpointEvery == 0 {
				held.Store(int64(len(env.CheckpointStats())))
				holding.Store(true)
			}
			if holding.Load() {
				if int64(len(env.CheckpointStats())) == held.Load() {
					time.Sleep(time.Millisecond)
				} else {
					holding.Store(false)
				}
			}
		}
		if r.failAfter <= 0 || n < r.failAfter || failed.Load() {
			return
		}
		if len(env.CheckpointStats()) == 0 {
			time.Sleep(2 * time.Millisecond)
			return
		}
		failed.Store(true)
		panic("injected failure")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := env.Execute(ctx, t.Name()); err != nil {
		t.Fatal(err)
	}
	if r.failAfter > 0 && env.Restarts() != 1 {
		t.Fatalf("restarted %d times, want 1", env.Restarts())
	}
}

// sinkTable applies what an upsert sink committed, subtask by subtask (a
// key's changes all reach one subtask), and returns the rows it holds by
// key.
func sinkTable[T comparable, K comparable](t *testing.T, parts [][]changelog.Change[T], key func(T) K) map[K]T {
	t.Helper()
	var all []changelog.Change[T]
	for _, p := range parts {
		all = append(all, p...)
	}
	return upsertTable(t, all, key, func(a, b T) bool { return a == b })
}

// materialized computes by brute force what a sink keyed by key holds after
// the retract changelog input: for each key, the last row to arrive of
// those still in the table.
func materialized(input []changelog.Change[relRow], key func(relRow) int64) map[int64]relRow {
	lists := map[int64][]relRow{}
	for _, c := range input {
		k := key(c.Row)
		if c.Kind.IsAddition() {
			lists[k] = append(lists[k], c.Row)
			continue
		}
		l := lists[k]
		for i, r := range l {
			if r == c.Row {
				lists[k] = append(l[:i:i], l[i+1:]...)
				break
			}
		}
	}
	out := map[int64]relRow{}
	for k, l := range lists {
		if len(l) > 0 {
			out[k] = l[len(l)-1]
		}
	}
	return out
}

func diffMaps[K comparable, V comparable](got, want map[K]V) string {
	g, w := map[string]int{}, map[string]int{}
	for k, v := range got {
		g[fmt.Sprintf("%v -> %v", k, v)] = 1
	}
	for k, v := range want {
		w[fmt.Sprintf("%v -> %v", k, v)] = 1
	}
	return diffTables(g, w)
}

// TestWriteUpsertsMaterializes writes random retract changelogs, whose rows
// map many at a time to each sink key, to an upsert sink, with a failure and
// a restore in the middle, on both backends: the sink must end up with the
// latest row of each key that is still in the input table, and every -D it
// receives must delete the row it holds.
func TestWriteUpsertsMaterializes(t *testing.T) {
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(17, 18))
			input := randomChangelog(rng, 4000, newRowIn(rng, 15))
			key := func(r relRow) int64 { return r.G }
			sink := newMemSink[changelog.Change[relRow]]()
			runSinkJob(t, relRun{backend: backend, failAfter: 1500, parallelism: 2}, 20*time.Millisecond, func(env *eddy.Environment, hook func()) {
				rows := relInput(env, "rows", input, hook)
				eddy.WriteUpserts(rows, "upserts", key, upsertMemSink[changelog.Change[relRow]]{sink, changelog.Upsert}).Parallelism(3)
			})
			if d := diffMaps(sinkTable(t, sink.committed(), key), materialized(input, key)); d != "" {
				t.Fatalf("the sink's table differs from brute force:\n%s", d)
			}
		})
	}
}

// TestWriteUpsertsKeyedBySinkKey writes the ranked top-N of random
// changelogs under its own key (partition, rank), declared with
// KeyedBySinkKey, to a sink of another parallelism, with a failure and a
// restore in the middle.
func TestWriteUpsertsKeyedBySinkKey(t *testing.T) {
	type slot struct{ G, Rank int64 }
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(19, 20))
			input := randomChangelog(rng, 4000, newRowIn(rng, 20))
			key := func(r eddy.Ranked[relRow]) slot { return slot{r.Row.G, r.Rank} }
			sink := newMemSink[changelog.Change[eddy.Ranked[relRow]]]()
			runSinkJob(t, relRun{backend: backend, failAfter: 1500, parallelism: 2}, 20*time.Millisecond, func(env *eddy.Environment, hook func()) {
				rows := relInput(env, "rows", input, hook)
				top := eddy.TopNRanked(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), 3, byValue)
				eddy.WriteUpserts(top, "upserts", key, upsertMemSink[changelog.Change[eddy.Ranked[relRow]]]{sink, changelog.Upsert}, eddy.KeyedBySinkKey()).Parallelism(3)
			})
			want := map[slot]eddy.Ranked[relRow]{}
			for g, rs := range topRows(table(t, input), 3, byValue) {
				for i, r := range rs {
					want[slot{g, int64(i + 1)}] = eddy.Ranked[relRow]{Row: r, Rank: int64(i + 1)}
				}
			}
			if d := diffMaps(sinkTable(t, sink.committed(), key), want); d != "" {
				t.Fatalf("the sink's table differs from brute force:\n%s", d)
			}
		})
	}
}

// TestWriteUpsertsUpdatesAcrossKeys writes a random retract changelog
// whose rows are unique by ID under the sink key ID, declared with
// KeyedBySinkKey: its updates replace a row by one of another ID, so the -U
// of each must become a deletion of the old key, not be dropped.
func TestWriteUpsertsUpdatesAcrossKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	input := randomChangelog(rng, 3000, newRowIn(rng, 10))
	key := func(r relRow) int64 { return r.ID }
	sink := newMemSink[changelog.Change[relRow]]()
	runSinkJob(t, relRun{backend: "heap", failAfter: 1000, parallelism: 2}, 20*time.Millisecond, func(env *eddy.Environment, hook func()) {
		rows := relInput(env, "rows", input, hook)
		eddy.WriteUpserts(rows, "upserts", key, upsertMemSink[changelog.Change[relRow]]{sink, changelog.Upsert}, eddy.KeyedBySinkKey())
	})
	want := map[int64]relRow{}
	for r := range table(t, input) {
		want[r.ID] = r
	}
	if d := diffMaps(sinkTable(t, sink.committed(), key), want); d != "" {
		t.Fatalf("the sink's table differs from brute force:\n%s", d)
	}
}

// TestWriteUpsertsInsertOnly writes an insert-only stream to an upsert sink:
// no materializer, and the sink holds the last row of each key.
func TestWriteUpsertsInsertOnly(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	input := insertOnly(3000, newRowIn(rng, 50))
	key := func(r relRow) int64 { return r.G }
	sink := newMemSink[changelog.Change[relRow]]()
	var plan string
	runSinkJob(t, relRun{backend: "heap", failAfter: 1000, parallelism: 2}, 20*time.Millisecond, func(env *eddy.Environment, hook func()) {
		rows := eddy.AsChangelog(relInput(env, "rows", input, hook), changelog.InsertOnly)
		eddy.WriteUpserts(rows, "upserts", key, sink)
		plan, _ = env.Plan()
	})
	if d := diffMaps(sinkTable(t, sink.committed(), key), materialized(input, key)); d != "" {
		t.Fatalf("the sink's table differs from brute force:\n%s", d)
	}
	if strings.Contains(plan, "UpsertMaterialize") {
		t.Fatalf("an insert-only stream got an upsert materializer:\n%s", plan)
	}
}

// TestUpdatesNeverSplitAcrossCommits writes the ranked top-N of a random
// changelog, an update-heavy retract stream, to an exactly-once sink with a
// checkpoint every 2 ms and a failure in the middle; every transaction the
// sink commits must hold both halves of each of its updates, right after
// each other. The sink runs chained to the top-N, and also at another
// behind a filter that splits some updates into deletions and insertions,
// with every operator in its own subtask (exchanges between them).
func TestUpdatesNeverSplitAcrossCommits(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	input := randomChangelog(rng, 6000, newRowIn(rng, 10))
	// The filter keeps rows of even value: it splits many updates.
	even := func(r eddy.Ranked[relRow]) bool { return r.Row.V%2 == 0 }
	for _, tc := range []struct {
		name     string
		filtered bool
		chained  bool
	}{{"chained", false, true}, {"filtered, not chained", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var commits, pairs int
			var broken []string
			sink := &checkedSink[changelog.Change[eddy.Ranked[relRow]]]{memSink: newMemSink[changelog.Change[eddy.Ranked[relRow]]](), inspect: func(tx []changelog.Change[eddy.Ranked[relRow]]) {
				mu.Lock()
				defer mu.Unlock()
				commits++
				for i, c := range tx {
					switch {
					case c.Kind == changelog.UpdateBefore && (i+1 == len(tx) || tx[i+1].Kind != changelog.UpdateAfter):
						broken = append(broken, fmt.Sprintf("a transaction of %d changes has %v at %d without its +U after it", len(tx), c, i))
					case c.Kind == changelog.UpdateAfter && (i == 0 || tx[i-1].Kind != changelog.UpdateBefore):
						broken = append(broken, fmt.Sprintf("a transaction of %d changes has %v at %d without its -U before it", len(tx), c, i))
					case c.Kind == changelog.UpdateAfter:
						pairs++
					}
				}
			}}
			run := relRun{backend: "heap", failAfter: 2500, parallelism: 2, checkpointEvery: 200, noChaining: !tc.chained}
			runSinkJob(t, run, 2*time.Millisecond, func(env *eddy.Environment, hook func()) {
				rows := relInput(env, "rows", input, hook)
				top := eddy.TopNRanked(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), 5, byValue)
				if tc.filtered {
					top = eddy.FilterRows(top, even)
				}
				eddy.WriteTo(top, "pairs", sink)
			})
			mu.Lock()
			defer mu.Unlock()
			if len(broken) > 0 {
				t.Fatalf("%d updates split across commits, such as:\n%s", len(broken), broken[0])
			}
			// The input waits for a checkpoint every 200 records, so many
			// transactions are committed.
			if commits < 10 || pairs < 100 {
				t.Fatalf("only %d transactions with %d updates were committed; the test needs many of both", commits, pairs)
			}
			want := map[eddy.Ranked[relRow]]int{}
			for _, rs := range topRows(table(t, input), 5, byValue) {
				for i, r := range rs {
					if r := (eddy.Ranked[relRow]{Row: r, Rank: int64(i + 1)}); !tc.filtered || even(r) {
						want[r]++
					}
				}
			}
			if d := diffTables(finalTable(t, sink.committed()), want); d != "" {
				t.Fatalf("result table differs from brute force:\n%s", d)
			}
		})
	}
}

// TestWriteUpsertsRefusesBadInput checks the build-time errors of
// WriteUpserts.
func TestWriteUpsertsRefusesBadInput(t *testing.T) {
	key := func(r relRow) int64 { return r.G }
	for name, c := range map[string]struct {
		mode     changelog.Mode
		sinkMode changelog.Mode
		opts     []eddy.TableOption
		want     string
	}{
		"upsert stream":       {changelog.Upsert, changelog.Upsert, nil, "say so with eddy.KeyedBySinkKey(), otherwise normalise it first with eddy.ChangelogNormalize"},
		"insert-only sink":    {changelog.Retract, changelog.InsertOnly, nil, "the sink applies insert-only changes, not upserts"},
		"TTL without state":   {changelog.Retract, changelog.Upsert, []eddy.TableOption{eddy.KeyedBySinkKey(), eddy.StateTTL(time.Hour)}, "StateTTL applies to the upsert materializer"},
		"option of no effect": {changelog.Retract, changelog.Upsert, []eddy.TableOption{eddy.UpsertOutput()}, "WriteUpserts does not take the UpsertOutput option"},
	} {
		t.Run(name, func(t *testing.T) {
			env := eddy.NewEnvironment()
			rows := eddy.AsChangelog(eddy.Inserts(eddy.FromSlice(env, []relRow{{}}, eddy.NoWatermarks[relRow]())), c.mode)
			eddy.WriteUpserts(rows, "upserts", key, upsertMemSink[changelog.Change[relRow]]{newMemSink[changelog.Change[relRow]](), c.sinkMode}, c.opts...)
			expectBuildError(t, env, c.want)
		})
	}
}

// TestChangelogSinkKeepsItsInputsParallelism checks that a sink of an
// updating stream refuses a parallelism other than its input's, which
// would rebalance the changes of a row over sink subtasks, out of order;
// an insert-only stream may be rebalanced.
func TestChangelogSinkKeepsItsInputsParallelism(t *testing.T) {
	for name, mode := range map[string]changelog.Mode{"retract": changelog.Retract, "insert-only": changelog.InsertOnly} {
		t.Run(name, func(t *testing.T) {
			env := eddy.NewEnvironment(eddy.WithParallelism(2))
			rows := eddy.AsChangelog(eddy.Inserts(eddy.FromSlice(env, []relRow{{}}, eddy.NoWatermarks[relRow]())), mode)
			eddy.WriteTo(rows, "three", newMemSink[changelog.Change[relRow]]()).Parallelism(3)
			if mode.IsInsertOnly() {
				if _, err := env.Plan(); err != nil {
					t.Fatal(err)
				}
				return
			}
			expectBuildError(t, env, `"Sink: three" runs with parallelism 3`)
			expectBuildError(t, env, "give the sink the parallelism of its input, or write it with WriteUpserts")
		})
	}
}

package eddy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// byValue orders rows by V, then by ID: a total order on rows of unique IDs.
func byValue(a, b relRow) bool { return a.V < b.V || a.V == b.V && a.ID < b.ID }

// topRows returns the first n rows of each group of the table in the order
// less gives (rows with counts above 1 appear that many times), each with
// its row number.
func topRows(rows map[relRow]int, n int, less func(a, b relRow) bool) map[int64][]relRow {
	groups := map[int64][]relRow{}
	for r, c := range rows {
		for range c {
			groups[r.G] = append(groups[r.G], r)
		}
	}
	for g, rs := range groups {
		slices.SortStableFunc(rs, func(a, b relRow) int {
			switch {
			case less(a, b):
				return -1
			case less(b, a):
				return 1
			}
			return 0
		})
		groups[g] = rs[:min(n, len(rs))]
	}
	return groups
}

// TestTopNMatchesBruteForce ranks random changelogs (insert-only and
// retracting) with a failure and a restore from a checkpoint in the middle,
// on both backends, with and without row numbers, and compares the final
// result table with the top n of each group of the final input table.
func TestTopNMatchesBruteForce(t *testing.T) {
	const n = 3
	for _, backend := range relBackends {
		for _, retract := range []bool{false, true} {
			for _, ranked := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/retract=%v/ranked=%v", backend, retract, ranked), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(3, uint64(len(backend))))
					input := insertOnly(4000, newRowIn(rng, 20))
					if retract {
						input = randomChangelog(rng, 4000, newRowIn(rng, 20))
					}
					top := topRows(table(t, input), n, byValue)
					r := relRun{backend: backend, failAfter: 1500, parallelism: 2}
					source := func(env *eddy.Environment, hook func()) *eddy.KeyedStream[int64, changelog.Change[relRow]] {
						rows := relInput(env, "rows", input, hook)
						if !retract {
							rows = eddy.AsChangelog(rows, changelog.InsertOnly)
						}
						return eddy.GroupBy(rows, func(r relRow) int64 { return r.G })
					}
					if !ranked {
						out := runRelational(t, r, func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[relRow]] {
							return eddy.TopN(source(env, hook), n, byValue)
						})
						want := map[relRow]int{}
						for _, rs := range top {
							for _, row := range rs {
								want[row]++
							}
						}
						if d := diffTables(finalTable(t, out), want); d != "" {
							t.Fatalf("result table differs from brute force:\n%s", d)
						}
						return
					}
					out := runRelational(t, r, func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[eddy.Ranked[relRow]]] {
						return eddy.TopNRanked(source(env, hook), n, byValue)
					})
					want := map[eddy.Ranked[relRow]]int{}
					for _, rs := range top {
						for i, row := range rs {
							want[eddy.Ranked[relRow]{Row: row, Rank: int64(i + 1)}]++
						}
					}
					if d := diffTables(finalTable(t, out), want); d != "" {
						t.Fatalf("result table differs from brute force:\n%s", d)
					}
				})
			}
		}
	}
}

// TestTopNTiesAndDuplicates ranks a changelog of few distinct rows, so that
// partitions hold many copies of equal rows and rows that tie, ordered by
// value alone; the values in each partition's top (by row number) must be
// those of the brute force, whichever tied rows hold them.
func TestTopNTiesAndDuplicates(t *testing.T) {
	const n = 4
	less := func(a, b relRow) bool { return a.V < b.V }
	// With CopyingKeptRows (here a copy of the value, which shares no
	// memory anyway), the operator keeps and emits the copies it made: the
	// retractions find them by value.
	copied := eddy.CopyingKeptRows(func(r relRow) relRow { return r })
	for _, backend := range relBackends {
		for _, copying := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/copying=%v", backend, copying), func(t *testing.T) {
				var opts []eddy.TableOption
				if copying {
					opts = append(opts, copied)
				}
				rng := rand.New(rand.NewPCG(11, 12))
				input := randomChangelog(rng, 4000, func(int64) relRow {
					return relRow{G: rng.Int64N(8), V: rng.Int64N(6), ID: rng.Int64N(2)}
				})
				out := runRelational(t, relRun{backend: backend, failAfter: 1500, parallelism: 2},
					func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[eddy.Ranked[relRow]]] {
						rows := relInput(env, "rows", input, hook)
						return eddy.TopNRanked(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), n, less, opts...)
					})
				type slot struct{ G, Rank, V int64 }
				got := map[slot]int{}
				for r, c := range finalTable(t, out) {
					got[slot{r.Row.G, r.Rank, r.Row.V}] += c
				}
				want := map[slot]int{}
				for g, rs := range topRows(table(t, input), n, less) {
					for i, row := range rs {
						want[slot{g, int64(i + 1), row.V}]++
					}
				}
				if d := diffTables(got, want); d != "" {
					t.Fatalf("ranked values differ from brute force:\n%s", d)
				}
			})
		}
	}
}

// TestTopNRescale takes a savepoint of a top-N job at parallelism 2 in the
// middle of its input, resumes it at parallelism 3, and compares the final
// result table with brute force.
func TestTopNRescale(t *testing.T) {
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) { testTopNRescale(t, backend) })
	}
}

func testTopNRescale(t *testing.T, backend string) {
	rng := rand.New(rand.NewPCG(5, 6))
	input := randomChangelog(rng, 4000, newRowIn(rng, 40))
	out := runRescaled(t, backend, 1500, func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[eddy.Ranked[relRow]]] {
		rows := relInput(env, "rows", input, hook)
		return eddy.TopNRanked(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), 3, byValue).UID("topn")
	})
	want := map[eddy.Ranked[relRow]]int{}
	for _, rs := range topRows(table(t, input), 3, byValue) {
		for i, row := range rs {
			want[eddy.Ranked[relRow]{Row: row, Rank: int64(i + 1)}]++
		}
	}
	if d := diffTables(table(t, out), want); d != "" {
		t.Fatalf("result table differs from brute force:\n%s", d)
	}
}

// TestTopNTTL checks that a top-N with a state TTL long enough for the test
// gives the brute-force result.
func TestTopNTTL(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	input := randomChangelog(rng, 3000, newRowIn(rng, 20))
	out := runRelational(t, relRun{backend: "pebble", failAfter: 1000, parallelism: 2},
		func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[relRow]] {
			rows := relInput(env, "rows", input, hook)
			return eddy.TopN(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), 2, byValue, eddy.StateTTL(time.Hour))
		})
	want := map[relRow]int{}
	for _, rs := range topRows(table(t, input), 2, byValue) {
		for _, row := range rs {
			want[row]++
		}
	}
	if d := diffTables(finalTable(t, out), want); d != "" {
		t.Fatalf("result table differs from brute force:\n%s", d)
	}
}

// TestTopNRefusesBadInput checks the build-time errors of TopN.
func TestTopNRefusesBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		mode changelog.Mode
		n    int
		opts []eddy.TableOption
		want string
	}{
		"upsert input": {changelog.Upsert, 3, nil, "normalise it first with eddy.ChangelogNormalize"},
		"n = 0":        {changelog.Retract, 0, nil, "keep at least 1 row per partition"},
		"mini-batch":   {changelog.Retract, 3, []eddy.TableOption{eddy.MiniBatch(10, time.Second)}, "TopN does not take the MiniBatch option"},
	} {
		t.Run(name, func(t *testing.T) {
			env := eddy.NewEnvironment()
			rows := eddy.AsChangelog(eddy.Inserts(eddy.FromSlice(env, []relRow{{}}, eddy.NoWatermarks[relRow]())), c.mode)
			eddy.Discard(eddy.TopN(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), c.n, byValue, c.opts...))
			expectBuildError(t, env, c.want)
		})
	}
}

// expectBuildError fails the test unless building the job of env fails with
// an error that contains want.
func expectBuildError(t *testing.T, env *eddy.Environment, want string) {
	t.Helper()
	_, err := env.Plan()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got error %v, want one that says %q", err, want)
	}
}

// runRescaled runs the job build makes at parallelism 2 on backend until
// savepointAfter input records have passed the hook, stops it with a
// savepoint, resumes it from the savepoint at parallelism 3, and returns
// what its exactly-once sink committed: the first run's changes, then the
// second's (within each, the changes of each sink subtask in order, which
// holds every change of a key in order).
func runRescaled[O any](t *testing.T, backend string, savepointAfter int64, build func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[O]]) []changelog.Change[O] {
	t.Helper()
	sink := newMemSink[changelog.Change[O]]()
	newEnv := func(p int, more ...eddy.Option) *eddy.Environment {
		opts := append([]eddy.Option{eddy.WithParallelism(p)}, more...)
		if backend == "pebble" {
			opts = append(opts, eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)))
		}
		return eddy.NewEnvironment(opts...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var seen atomic.Int64
	reached := make(chan struct{})
	var once sync.Once
	env := newEnv(2)
	eddy.WriteTo(build(env, func() {
		if seen.Add(1) >= savepointAfter {
			once.Do(func() { close(reached) })
			// Hold the input back while the savepoint is taken.
			time.Sleep(2 * time.Millisecond)
		}
	}), "collect", sink)
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, t.Name()) }()
	select {
	case <-reached:
	case err := <-done:
		t.Fatalf("the job ended before the savepoint: %v", err)
	}
	path, err := env.TriggerSavepoint(ctx, filepath.Join(t.TempDir(), "sp"), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	first := sink.committed()

	env = newEnv(3, eddy.WithRestoreFrom(path))
	eddy.WriteTo(build(env, func() {}), "collect", sink)
	if err := env.Execute(ctx, t.Name()+"-resumed"); err != nil {
		t.Fatal(err)
	}
	var all []changelog.Change[O]
	for _, part := range first {
		checkPairs(t, part)
		all = append(all, part...)
	}
	for i, part := range sink.committed() {
		if i < len(first) {
			part = part[len(first[i]):]
		}
		checkPairs(t, part)
		all = append(all, part...)
	}
	return all
}

package eddy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// joined is the result row of the join tests: the two rows, and which of
// them are there (an outer join's unmatched row has one).
type joined struct {
	L, R       relRow
	HasL, HasR bool
}

func joinedOf(a *relRow, b *relRow) joined {
	var j joined
	if a != nil {
		j.L, j.HasL = *a, true
	}
	if b != nil {
		j.R, j.HasR = *b, true
	}
	return j
}

// bruteJoin computes the join of two final tables on G: every pair of rows
// of a key that on accepts (nil: every pair), with the product of their
// multiplicities, and the unmatched rows of the outer sides.
func bruteJoin(left, right map[relRow]int, kind eddy.JoinKind, on func(a, b relRow) bool) map[joined]int {
	out := map[joined]int{}
	matchedR := map[relRow]bool{}
	for l, nl := range left {
		matched := false
		for r, nr := range right {
			if l.G != r.G || (on != nil && !on(l, r)) {
				continue
			}
			matched = true
			matchedR[r] = true
			out[joinedOf(&l, &r)] += nl * nr
		}
		if !matched && (kind == eddy.LeftJoin || kind == eddy.FullJoin) {
			out[joinedOf(&l, nil)] += nl
		}
	}
	if kind == eddy.RightJoin || kind == eddy.FullJoin {
		for r, nr := range right {
			if !matchedR[r] {
				out[joinedOf(nil, &r)] += nr
			}
		}
	}
	return out
}

// dupRowIn makes rows from a small domain, so that tables hold equal rows
// more than once.
func dupRowIn(rng *rand.Rand, groups int) func(id int64) relRow {
	return func(int64) relRow { return relRow{G: rng.Int64N(int64(groups)), V: rng.Int64N(4)} }
}

var joinKinds = []eddy.JoinKind{eddy.InnerJoin, eddy.LeftJoin, eddy.RightJoin, eddy.FullJoin}

// onCond is the further condition of the JoinOn tests.
func onCond(a, b relRow) bool { return (a.V+b.V)%3 != 0 }

// TestJoinMatchesBruteForce joins two random changelogs (random
// interleavings from two paced sources), with a failure and a restore from
// a checkpoint in the middle, on both backends, for every join kind, with
// and without a further condition and with rows that repeat, and compares
// the final result table with the join of the final input tables.
func TestJoinMatchesBruteForce(t *testing.T) {
	type variant struct {
		on   bool
		dups bool
	}
	variants := map[string]variant{"key": {}, "on": {on: true}, "dups": {dups: true}, "on-dups": {on: true, dups: true}}
	for _, backend := range relBackends {
		for _, kind := range joinKinds {
			for vname, v := range variants {
				t.Run(fmt.Sprintf("%s/%v/%s", backend, kind, vname), func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(kind)+3, uint64(len(vname))))
					newRow := newRowIn(rng, 60)
					if v.dups {
						newRow = dupRowIn(rng, 60)
					}
					left := randomChangelog(rng, 2500, newRow)
					right := randomChangelog(rng, 2500, newRow)
					var on func(a, b relRow) bool
					if v.on {
						on = onCond
					}
					out := runRelational(t, relRun{backend: backend, failAfter: 2000, parallelism: 2},
						func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[joined]] {
							l := eddy.GroupBy(relInput(env, "left", left, hook), func(r relRow) int64 { return r.G })
							r := eddy.GroupBy(relInput(env, "right", right, hook), func(r relRow) int64 { return r.G })
							if on != nil {
								return eddy.JoinOn(l, r, kind, on, joinedOf)
							}
							return eddy.Join(l, r, kind, joinedOf)
						})
					got := finalTable(t, out)
					want := bruteJoin(table(t, left), table(t, right), kind, on)
					if d := diffTables(got, want); d != "" {
						t.Fatalf("result table differs from brute force:\n%s", d)
					}
				})
			}
		}
	}
}

// TestJoinInsertOnly checks the modes and results of joins of two
// insert-only streams: an inner join stays insert-only, an outer join
// retracts its padded rows.
func TestJoinInsertOnly(t *testing.T) {
	for _, kind := range []eddy.JoinKind{eddy.InnerJoin, eddy.LeftJoin} {
		t.Run(kind.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 5))
			left := insertOnly(1500, newRowIn(rng, 100))
			right := insertOnly(1500, newRowIn(rng, 100))
			var mode changelog.Mode
			out := runRelational(t, relRun{backend: "heap", failAfter: 1000, parallelism: 2},
				func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[joined]] {
					l := eddy.AsChangelog(relInput(env, "left", left, hook), changelog.InsertOnly)
					r := eddy.AsChangelog(relInput(env, "right", right, hook), changelog.InsertOnly)
					s := eddy.Join(eddy.GroupBy(l, func(r relRow) int64 { return r.G }), eddy.GroupBy(r, func(r relRow) int64 { return r.G }), kind, joinedOf)
					mode = s.ChangelogMode()
					return s
				})
			wantMode := changelog.Retract
			if kind == eddy.InnerJoin {
				wantMode = changelog.InsertOnly
			}
			if mode != wantMode {
				t.Fatalf("mode %v, want %v", mode, wantMode)
			}
			for _, part := range out {
				for _, c := range part {
					if !mode.Contains(c.Kind) {
						t.Fatalf("%v in a %v stream", c, mode)
					}
				}
			}
			got := finalTable(t, out)
			if d := diffTables(got, bruteJoin(table(t, left), table(t, right), kind, nil)); d != "" {
				t.Fatalf("result table differs from brute force:\n%s", d)
			}
		})
	}
}

// TestJoinUpdatesStayPaired checks that an update of an input row comes out
// as updates of its result rows, each -U followed by its +U.
func TestJoinUpdatesStayPaired(t *testing.T) {
	left := []changelog.Change[relRow]{changelog.InsertOf(relRow{ID: 1, G: 1, V: 1})}
	var right []changelog.Change[relRow]
	for i := range int64(5) {
		right = append(right, changelog.InsertOf(relRow{ID: 10 + i, G: 1}))
	}
	// After the right rows are in, the left row is updated in place.
	updates := []changelog.Change[relRow]{
		changelog.Of(changelog.UpdateBefore, relRow{ID: 1, G: 1, V: 1}), changelog.Of(changelog.UpdateAfter, relRow{ID: 1, G: 1, V: 2}),
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	sink := newMemSink[changelog.Change[joined]]()
	// joins counts the join's results; the update waits for the five
	// results of the left row, so that it reaches the join after them. It
	// comes from a source of its own, so that waiting holds nothing else
	// back.
	var joins atomic.Int64
	gen := func(rows []changelog.Change[relRow], wait bool) *eddy.Stream[changelog.Change[relRow]] {
		return eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(rows))}, func(i int64) changelog.Change[relRow] {
			for wait && i == 0 && joins.Load() < 5 {
				time.Sleep(time.Millisecond)
			}
			return rows[i]
		}, eddy.NoWatermarks[changelog.Change[relRow]]())
	}
	key := func(r relRow) int64 { return r.G }
	l := eddy.Union(gen(left, false), gen(updates, true))
	j := eddy.Join(eddy.GroupBy(eddy.AsChangelog(l, changelog.Retract), key), eddy.GroupBy(eddy.AsChangelog(gen(right, false), changelog.InsertOnly), key), eddy.InnerJoin, joinedOf)
	counted := eddy.Map(j, func(c changelog.Change[joined]) changelog.Change[joined] { joins.Add(1); return c })
	eddy.WriteTo(eddy.AsChangelog(counted, changelog.Retract), "collect", sink)
	if err := env.Execute(context.Background(), t.Name()); err != nil {
		t.Fatal(err)
	}
	out := sink.committed()
	var changes []changelog.Change[joined]
	for _, p := range out {
		changes = append(changes, p...)
	}
	checkPairs(t, changes)
	updatesSeen := 0
	for _, c := range changes {
		if c.Kind == changelog.UpdateAfter {
			updatesSeen++
		}
		if c.Kind == changelog.Delete {
			t.Fatalf("the update of the left row came out as a deletion: %v", changes)
		}
	}
	if updatesSeen != 5 {
		t.Fatalf("%d updates, want 5: %v", updatesSeen, changes)
	}
	if d := diffTables(table(t, changes), bruteJoin(map[relRow]int{{ID: 1, G: 1, V: 2}: 1}, table(t, right), eddy.InnerJoin, nil)); d != "" {
		t.Fatalf("result table differs:\n%s", d)
	}
}

// TestJoinRejectsUpsertInput checks that an upsert input is refused with an
// error that names the fix.
func TestJoinRejectsUpsertInput(t *testing.T) {
	env := eddy.NewEnvironment()
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: 1}, func(int64) changelog.Change[relRow] { return changelog.InsertOf(relRow{}) }, eddy.NoWatermarks[changelog.Change[relRow]]())
	up := eddy.AsChangelog(src, changelog.Upsert)
	key := func(r relRow) int64 { return r.G }
	eddy.Discard(eddy.Join(eddy.GroupBy(up, key), eddy.GroupBy(eddy.Inserts(eddy.Map(src, func(c changelog.Change[relRow]) relRow { return c.Row })), key), eddy.InnerJoin, joinedOf))
	err := env.Execute(context.Background(), t.Name())
	if err == nil || !strings.Contains(err.Error(), "upsert") || !strings.Contains(err.Error(), "ChangelogNormalize") {
		t.Fatalf("got %v, want an error about the upsert input naming ChangelogNormalize", err)
	}
}

// rescaledJoinRun runs the job build makes at parallelism 2 on backend
// until savepointAfter input records have passed the hook, stops it with a
// savepoint, resumes it from the savepoint at parallelism 3, and returns
// what its exactly-once sink committed in both runs: the first run's
// changes, then the second's, each sink subtask's in order.
func rescaledJoinRun[O any](t *testing.T, backend string, savepointAfter int64, build func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[O]]) []changelog.Change[O] {
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
	if len(first) == 0 {
		t.Fatalf("nothing was committed before the savepoint")
	}
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

// TestJoinRescale stops a full outer join with a savepoint at parallelism
// 2, resumes it at parallelism 3, and compares the final result table with
// brute force, on both backends.
func TestJoinRescale(t *testing.T) {
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 12))
			left := randomChangelog(rng, 2500, newRowIn(rng, 200))
			right := randomChangelog(rng, 2500, newRowIn(rng, 200))
			out := rescaledJoinRun(t, backend, 2500, func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[joined]] {
				l := eddy.GroupBy(relInput(env, "left", left, hook), func(r relRow) int64 { return r.G })
				r := eddy.GroupBy(relInput(env, "right", right, hook), func(r relRow) int64 { return r.G })
				return eddy.Join(l, r, eddy.FullJoin, joinedOf).UID("join")
			})
			got := table(t, out)
			want := bruteJoin(table(t, left), table(t, right), eddy.FullJoin, nil)
			if d := diffTables(got, want); d != "" {
				t.Fatalf("result table differs from brute force:\n%s", d)
			}
		})
	}
}

// TestJoinStateTTL checks, on both backends, that rows not written for
// longer than the state TTL are forgotten: a right row that arrives after
// the TTL has passed joins no left row, and the deletion of an expired left
// row changes nothing (its padded result stays, as StateTTL documents).
func TestJoinStateTTL(t *testing.T) {
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) {
			const keys = 50
			var inserts, deletes, right []changelog.Change[relRow]
			for k := range int64(keys) {
				inserts = append(inserts, changelog.InsertOf(relRow{ID: k, G: k}))
				deletes = append(deletes, changelog.Of(changelog.Delete, relRow{ID: k, G: k}))
				right = append(right, changelog.InsertOf(relRow{ID: 100 + k, G: k}))
			}
			opts := []eddy.Option{eddy.WithParallelism(2)}
			if backend == "pebble" {
				opts = append(opts, eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)))
			}
			env := eddy.NewEnvironment(opts...)
			// joined counts the join's results: each insertion gives one
			// (padded) result as the join processes it.
			var joinedN atomic.Int64
			var paused atomic.Bool
			// The deletions and the right rows wait until the join has
			// processed every insertion, then for twice the TTL.
			wait := func() {
				for !paused.Load() {
					if joinedN.Load() >= keys {
						time.Sleep(100 * time.Millisecond)
						paused.Store(true)
					}
					time.Sleep(time.Millisecond)
				}
			}
			gen := func(rows []changelog.Change[relRow], before func()) *eddy.Stream[changelog.Change[relRow]] {
				return eddy.AsChangelog(eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(rows))}, func(i int64) changelog.Change[relRow] {
					if before != nil && i == 0 {
						before()
					}
					return rows[i]
				}, eddy.NoWatermarks[changelog.Change[relRow]]()).Parallelism(1), changelog.Retract)
			}
			key := func(r relRow) int64 { return r.G }
			left := eddy.Union(gen(inserts, nil), gen(deletes, wait))
			j := eddy.Join(eddy.GroupBy(left, key), eddy.GroupBy(gen(right, wait), key), eddy.FullJoin, joinedOf, eddy.StateTTL(50*time.Millisecond))
			counted := eddy.Map(j, func(c changelog.Change[joined]) changelog.Change[joined] { joinedN.Add(1); return c })
			sink := newMemSink[changelog.Change[joined]]()
			eddy.WriteTo(eddy.AsChangelog(counted, changelog.Retract), "collect", sink)
			if err := env.Execute(context.Background(), t.Name()); err != nil {
				t.Fatal(err)
			}
			var all []changelog.Change[joined]
			for _, p := range sink.committed() {
				all = append(all, p...)
			}
			want := map[joined]int{}
			for k := range int64(keys) {
				want[joined{L: relRow{ID: k, G: k}, HasL: true}] = 1
				want[joined{R: relRow{ID: 100 + k, G: k}, HasR: true}] = 1
			}
			if d := diffTables(table(t, all), want); d != "" {
				t.Fatalf("result table differs from one where the left rows expired:\n%s", d)
			}
		})
	}
}

// bruteSemiJoin computes a semi (or anti) join of two final tables on G:
// every left row with at least one right row of its key that on accepts
// (with none, for an anti join), with its own multiplicity.
func bruteSemiJoin(left, right map[relRow]int, kind eddy.JoinKind, on func(a, b relRow) bool) map[joined]int {
	out := map[joined]int{}
	for l, nl := range left {
		matched := false
		for r := range right {
			if l.G == r.G && (on == nil || on(l, r)) {
				matched = true
				break
			}
		}
		if matched == (kind == eddy.LeftSemiJoin) {
			out[joinedOf(&l, nil)] += nl
		}
	}
	return out
}

// TestSemiAntiJoinMatchesBruteForce runs left semi and anti joins of two
// random changelogs with a failure and a restore from a checkpoint in the
// middle, on both backends, with and without a further condition and with
// rows that repeat, and compares the final result table with brute force.
func TestSemiAntiJoinMatchesBruteForce(t *testing.T) {
	type variant struct {
		on   bool
		dups bool
	}
	variants := map[string]variant{"key": {}, "on": {on: true}, "dups": {dups: true}, "on-dups": {on: true, dups: true}}
	for _, backend := range relBackends {
		for _, kind := range []eddy.JoinKind{eddy.LeftSemiJoin, eddy.LeftAntiJoin} {
			for vname, v := range variants {
				t.Run(fmt.Sprintf("%s/%v/%s", backend, kind, vname), func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(kind)+13, uint64(len(vname))))
					// About as many keys as live rows: at the end, a third
					// of the keys have no right row, and right rows of a key
					// come and go while its left rows wait.
					newRow := newRowIn(rng, 600)
					if v.dups {
						newRow = dupRowIn(rng, 600)
					}
					left := randomChangelog(rng, 2500, newRow)
					right := randomChangelog(rng, 2500, newRow)
					var on func(a, b relRow) bool
					if v.on {
						on = onCond
					}
					out := runRelational(t, relRun{backend: backend, failAfter: 2000, parallelism: 2},
						func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[joined]] {
							l := eddy.GroupBy(relInput(env, "left", left, hook), func(r relRow) int64 { return r.G })
							r := eddy.GroupBy(relInput(env, "right", right, hook), func(r relRow) int64 { return r.G })
							if on != nil {
								return eddy.JoinOn(l, r, kind, on, joinedOf)
							}
							return eddy.Join(l, r, kind, joinedOf)
						})
					for _, part := range out {
						checkPairs(t, part)
					}
					got := finalTable(t, out)
					want := bruteSemiJoin(table(t, left), table(t, right), kind, on)
					if len(want) == 0 {
						t.Fatal("the expected result is empty: the test checks nothing")
					}
					if d := diffTables(got, want); d != "" {
						t.Fatalf("result table differs from brute force:\n%s", d)
					}
				})
			}
		}
	}
}

// TestSemiJoinInsertOnly checks the modes of semi and anti joins of two
// insert-only streams: a semi join's results are insertions only, an anti
// join retracts a row when its first match comes.
func TestSemiJoinInsertOnly(t *testing.T) {
	for _, kind := range []eddy.JoinKind{eddy.LeftSemiJoin, eddy.LeftAntiJoin} {
		t.Run(kind.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(15, 16))
			left := insertOnly(1500, newRowIn(rng, 300))
			right := insertOnly(300, newRowIn(rng, 300))
			var mode changelog.Mode
			out := runRelational(t, relRun{backend: "heap", failAfter: 1000, parallelism: 2},
				func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[joined]] {
					l := eddy.AsChangelog(relInput(env, "left", left, hook), changelog.InsertOnly)
					r := eddy.AsChangelog(relInput(env, "right", right, hook), changelog.InsertOnly)
					s := eddy.Join(eddy.GroupBy(l, func(r relRow) int64 { return r.G }), eddy.GroupBy(r, func(r relRow) int64 { return r.G }), kind, joinedOf)
					mode = s.ChangelogMode()
					return s
				})
			wantMode := changelog.Retract
			if kind == eddy.LeftSemiJoin {
				wantMode = changelog.InsertOnly
			}
			if mode != wantMode {
				t.Fatalf("mode %v, want %v", mode, wantMode)
			}
			for _, part := range out {
				for _, c := range part {
					if !mode.Contains(c.Kind) {
						t.Fatalf("%v in a %v stream", c, mode)
					}
				}
			}
			got := finalTable(t, out)
			want := bruteSemiJoin(table(t, left), table(t, right), kind, nil)
			if d := diffTables(got, want); d != "" {
				t.Fatalf("result table differs from brute force:\n%s", d)
			}
		})
	}
}

// TestSemiJoinRefusesUniqueDeclaration checks that a semi join refuses
// JoinKeyContainsUniqueKey with an error that says to drop it.
func TestSemiJoinRefusesUniqueDeclaration(t *testing.T) {
	env := eddy.NewEnvironment()
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: 1}, func(int64) changelog.Change[relRow] { return changelog.InsertOf(relRow{}) }, eddy.NoWatermarks[changelog.Change[relRow]]())
	key := func(r relRow) int64 { return r.G }
	in := eddy.AsChangelog(src, changelog.Retract)
	eddy.Discard(eddy.Join(eddy.GroupBy(in, key), eddy.GroupBy(in, key), eddy.LeftSemiJoin, joinedOf, eddy.JoinKeyContainsUniqueKey(eddy.RightSide)))
	err := env.Execute(context.Background(), t.Name())
	if err == nil || !strings.Contains(err.Error(), "JoinKeyContainsUniqueKey") || !strings.Contains(err.Error(), "drop the option") {
		t.Fatalf("got %v, want an error naming JoinKeyContainsUniqueKey and saying to drop it", err)
	}
}

// TestAntiJoinRescale stops an anti join with a condition with a savepoint
// at parallelism 2, resumes it at parallelism 3, and compares the final
// result table with brute force, on both backends.
func TestAntiJoinRescale(t *testing.T) {
	for _, backend := range relBackends {
		t.Run(backend, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(17, 18))
			left := randomChangelog(rng, 2500, newRowIn(rng, 100))
			right := randomChangelog(rng, 2500, newRowIn(rng, 100))
			out := rescaledJoinRun(t, backend, 2500, func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[joined]] {
				l := eddy.GroupBy(relInput(env, "left", left, hook), func(r relRow) int64 { return r.G })
				r := eddy.GroupBy(relInput(env, "right", right, hook), func(r relRow) int64 { return r.G })
				return eddy.JoinOn(l, r, eddy.LeftAntiJoin, onCond, joinedOf).UID("join")
			})
			got := table(t, out)
			want := bruteSemiJoin(table(t, left), table(t, right), eddy.LeftAntiJoin, onCond)
			if d := diffTables(got, want); d != "" {
				t.Fatalf("result table differs from brute force:\n%s", d)
			}
		})
	}
}

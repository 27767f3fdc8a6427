package eddy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
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
	var rightDone atomic.Bool
	r := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(right))}, func(i int64) changelog.Change[relRow] {
		if i == int64(len(right))-1 {
			defer rightDone.Store(true)
		}
		return right[i]
	}, eddy.NoWatermarks[changelog.Change[relRow]]())
	all := append(left, updates...)
	l := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(all))}, func(i int64) changelog.Change[relRow] {
		for i == 1 && !rightDone.Load() {
			time.Sleep(time.Millisecond)
		}
		if i == 1 {
			// Let the right rows reach the join before the update.
			time.Sleep(50 * time.Millisecond)
		}
		return all[i]
	}, eddy.NoWatermarks[changelog.Change[relRow]]())
	key := func(r relRow) int64 { return r.G }
	j := eddy.Join(eddy.GroupBy(eddy.AsChangelog(l, changelog.Retract), key), eddy.GroupBy(eddy.AsChangelog(r, changelog.InsertOnly), key), eddy.InnerJoin, joinedOf)
	eddy.WriteTo(j, "collect", sink)
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

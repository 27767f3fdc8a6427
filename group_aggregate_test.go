package eddy_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
)

// groupStats is the result of the aggregation the tests run: COUNT(*),
// SUM(v), MIN(v), MAX(v), and COUNT(DISTINCT v) FILTER (WHERE v >= 50).
type groupStats struct {
	Count, Sum, Min, Max, DistinctHigh int64
}

func statsFunction() agg.Function[relRow, agg.Tuple4[int64, int64, agg.Tuple2[agg.Optional[int64], agg.Optional[int64]], int64], groupStats] {
	v := func(r relRow) int64 { return r.V }
	return agg.Combine4(
		agg.Count[relRow](),
		agg.Sum(v),
		agg.Combine2(agg.MinRetract(v), agg.MaxRetract(v), func(a, b int64) [2]int64 { return [2]int64{a, b} }),
		agg.Filter(func(r relRow) bool { return r.V >= 50 }, agg.Distinct(v, agg.Count[int64]())),
		func(c, s int64, mm [2]int64, d int64) groupStats {
			return groupStats{Count: c, Sum: s, Min: mm[0], Max: mm[1], DistinctHigh: d}
		})
}

// bruteStats computes the expected result table from the final input table.
func bruteStats(rows map[relRow]int) map[eddy.Grouped[int64, groupStats]]int {
	type acc struct {
		s        groupStats
		distinct map[int64]bool
		any      bool
	}
	groups := map[int64]*acc{}
	for r, n := range rows {
		a := groups[r.G]
		if a == nil {
			a = &acc{distinct: map[int64]bool{}}
			groups[r.G] = a
		}
		for range n {
			a.s.Count++
			a.s.Sum += r.V
			if !a.any || r.V < a.s.Min {
				a.s.Min = r.V
			}
			if !a.any || r.V > a.s.Max {
				a.s.Max = r.V
			}
			a.any = true
			if r.V >= 50 {
				a.distinct[r.V] = true
			}
		}
	}
	out := map[eddy.Grouped[int64, groupStats]]int{}
	for g, a := range groups {
		a.s.DistinctHigh = int64(len(a.distinct))
		out[eddy.Grouped[int64, groupStats]{Key: g, Value: a.s}] = 1
	}
	return out
}

func newRowIn(rng *rand.Rand, groups int) func(id int64) relRow {
	return func(id int64) relRow { return relRow{ID: id, G: rng.Int64N(int64(groups)), V: rng.Int64N(100)} }
}

// TestGroupAggregateMatchesBruteForce runs GROUP BY over random changelogs,
// with a failure and a restore from a checkpoint in the middle, on both
// backends, with and without mini-batches, and compares the final result
// table with one computed from the final input table.
func TestGroupAggregateMatchesBruteForce(t *testing.T) {
	variants := map[string][]eddy.TableOption{
		"plain":      nil,
		"mini-batch": {eddy.MiniBatch(64, 5*time.Millisecond)},
		"ttl":        {eddy.StateTTL(time.Hour)},
	}
	for _, backend := range relBackends {
		for name, opts := range variants {
			t.Run(backend+"/"+name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, uint64(len(name))))
				input := randomChangelog(rng, 4000, newRowIn(rng, 30))
				out := runRelational(t, relRun{backend: backend, failAfter: 1500, parallelism: 2},
					func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[eddy.Grouped[int64, groupStats]]] {
						rows := relInput(env, "rows", input, hook)
						return eddy.GroupAggregate(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), statsFunction(), opts...)
					})
				got := finalTable(t, out)
				want := bruteStats(table(t, input))
				if d := diffTables(got, want); d != "" {
					t.Fatalf("result table differs from brute force:\n%s", d)
				}
			})
		}
	}
}

// statsRow is a flat result row of the tests' aggregation: the group's key
// and its statistics, as GroupAggregateRows makes them.
type statsRow struct {
	G int64
	groupStats
}

// TestGroupAggregateRowsMatchesBruteForce runs the aggregation of
// TestGroupAggregateMatchesBruteForce through GroupAggregateRows, whose
// rows are flat structs made from each group's key and accumulator, with
// a failure and a restore in the middle, and compares the result table
// with brute force.
func TestGroupAggregateRowsMatchesBruteForce(t *testing.T) {
	variants := map[string][]eddy.TableOption{
		"plain":      nil,
		"mini-batch": {eddy.MiniBatch(64, 5*time.Millisecond)},
	}
	for _, backend := range relBackends {
		for name, opts := range variants {
			t.Run(backend+"/"+name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, uint64(len(name))))
				input := randomChangelog(rng, 4000, newRowIn(rng, 30))
				f := statsFunction()
				out := runRelational(t, relRun{backend: backend, failAfter: 1500, parallelism: 2},
					func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[statsRow]] {
						rows := relInput(env, "rows", input, hook)
						return eddy.GroupAggregateRows(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), f,
							func(g int64, acc agg.Tuple4[int64, int64, agg.Tuple2[agg.Optional[int64], agg.Optional[int64]], int64]) statsRow {
								return statsRow{G: g, groupStats: f.Result(acc)}
							}, opts...)
					})
				got := finalTable(t, out)
				want := map[statsRow]int{}
				for g, n := range bruteStats(table(t, input)) {
					want[statsRow{G: g.Key, groupStats: g.Value}] = n
				}
				if len(want) == 0 {
					t.Fatal("the input leaves no group")
				}
				if d := diffTables(got, want); d != "" {
					t.Fatalf("result table differs from brute force:\n%s", d)
				}
			})
		}
	}
}

// TestGroupAggregateRowsLocalGlobal runs GroupAggregateRows as a
// two-phase aggregation over a retracting input and checks the result
// table against brute force. Its rows hold the key and the parity of the
// sum: a change that leaves a group's row as it was must emit nothing.
func TestGroupAggregateRowsLocalGlobal(t *testing.T) {
	type parity struct{ G, Odd int64 }
	f := agg.Sum(func(r relRow) int64 { return r.V })
	rng := rand.New(rand.NewPCG(11, 4))
	input := randomChangelog(rng, 3000, newRowIn(rng, 10))
	out := runRelational(t, relRun{backend: "heap", failAfter: 1200, parallelism: 2},
		func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[parity]] {
			rows := relInput(env, "rows", input, hook)
			return eddy.GroupAggregateRows(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), f,
				func(g int64, sum int64) parity { return parity{G: g, Odd: sum & 1} },
				eddy.MiniBatch(100, 5*time.Millisecond), eddy.LocalGlobal())
		})
	for _, part := range out {
		for i := 1; i < len(part); i++ {
			if part[i-1].Kind == changelog.UpdateBefore && part[i].Kind == changelog.UpdateAfter && part[i-1].Row == part[i].Row {
				t.Fatalf("an update retracts and adds the same row %+v", part[i].Row)
			}
		}
	}
	sums, counts := map[int64]int64{}, map[int64]int{}
	for r, n := range table(t, input) {
		sums[r.G] += int64(n) * r.V
		counts[r.G] += n
	}
	want := map[parity]int{}
	for g, s := range sums {
		if counts[g] > 0 {
			want[parity{G: g, Odd: s & 1}] = 1
		}
	}
	if d := diffTables(finalTable(t, out), want); d != "" {
		t.Fatalf("result table differs from brute force:\n%s", d)
	}
}

// TestGroupAggregateLocalGlobal checks the two-phase aggregation against
// brute force, over an insert-only input and over a retracting one.
func TestGroupAggregateLocalGlobal(t *testing.T) {
	type cs struct{ Count, Sum int64 }
	f := agg.Combine2(agg.Count[relRow](), agg.Sum(func(r relRow) int64 { return r.V }), func(c, s int64) cs { return cs{c, s} })
	for _, backend := range relBackends {
		for _, retract := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/retract=%v", backend, retract), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(7, 9))
				input := insertOnly(3000, newRowIn(rng, 10))
				if retract {
					input = randomChangelog(rng, 3000, newRowIn(rng, 10))
				}
				out := runRelational(t, relRun{backend: backend, failAfter: 1200, parallelism: 2},
					func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[eddy.Grouped[int64, cs]]] {
						rows := relInput(env, "rows", input, hook)
						return eddy.GroupAggregate(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), f,
							eddy.MiniBatch(100, 5*time.Millisecond), eddy.LocalGlobal())
					})
				got := finalTable(t, out)
				want := map[eddy.Grouped[int64, cs]]int{}
				sums := map[int64]cs{}
				for r, n := range table(t, input) {
					s := sums[r.G]
					s.Count += int64(n)
					s.Sum += int64(n) * r.V
					sums[r.G] = s
				}
				for g, s := range sums {
					want[eddy.Grouped[int64, cs]{Key: g, Value: s}] = 1
				}
				if d := diffTables(got, want); d != "" {
					t.Fatalf("result table differs from brute force:\n%s", d)
				}
			})
		}
	}
}

// TestGroupAggregateRefusesBadInput checks the build-time errors of
// GroupAggregate: each names the problem and the fix.
func TestGroupAggregateRefusesBadInput(t *testing.T) {
	byG := func(r relRow) int64 { return r.G }
	count := agg.Count[relRow]()
	noRetract := agg.Of(func() int64 { return 0 }, func(a int64, _ relRow) int64 { return a + 1 },
		func(a, b int64) int64 { return a + b }, func(a int64) int64 { return a })
	for name, c := range map[string]struct {
		mode changelog.Mode
		f    agg.Function[relRow, int64, int64]
		opts []eddy.TableOption
		want string
	}{
		"upsert input":          {changelog.Upsert, count, nil, "normalise it first with eddy.ChangelogNormalize"},
		"no retraction":         {changelog.Retract, noRetract, nil, "cannot take rows back"},
		"LocalGlobal alone":     {changelog.InsertOnly, count, []eddy.TableOption{eddy.LocalGlobal()}, "LocalGlobal needs MiniBatch"},
		"insert-only is fine":   {changelog.InsertOnly, count, nil, ""},
		"retract input is fine": {changelog.Retract, count, nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			env := eddy.NewEnvironment()
			rows := eddy.AsChangelog(eddy.Inserts(eddy.FromSlice(env, []relRow{{}}, eddy.NoWatermarks[relRow]())), c.mode)
			eddy.Discard(eddy.GroupAggregate(eddy.GroupBy(rows, byG), c.f, c.opts...))
			if c.want == "" {
				if _, err := env.Plan(); err != nil {
					t.Fatal(err)
				}
				return
			}
			expectBuildError(t, env, c.want)
		})
	}
}

package eddy_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
)

// oRow is a row of the OVER aggregation tests: its partition G, a value V
// and its event time At.
type oRow struct {
	ID, G, V, At int64
}

// oAgg is the aggregate of a frame in the tests: its row count, the sum
// and the greatest of its values.
type oAgg struct {
	N, Sum, Max int64
}

// oFunc aggregates the frames of the tests; its MaxRetract keeps its
// values in a view.
func oFunc() agg.Function[oRow, agg.Tuple3[int64, int64, agg.Optional[int64]], oAgg] {
	v := func(r oRow) int64 { return r.V }
	return agg.Combine3(agg.Count[oRow](), agg.Sum(v), agg.MaxRetract(v), func(n, s, m int64) oAgg { return oAgg{n, s, m} })
}

// oRows returns n insertions of rows of keys partitions, 10 ms apart, each
// moved by up to timeJitter*10 ms either way and rounded to 10 ms, so that
// rows arrive out of order (within the watermark's delay, oDelay) and rows
// of a partition share times.
func oRows(rng *rand.Rand, n, keys int) []changelog.Change[oRow] {
	out := make([]changelog.Change[oRow], n)
	for i := range out {
		at := (int64(i)*10 + rng.Int64N(2*timeJitter*10+1) - timeJitter*10) / 10 * 10
		out[i] = changelog.InsertOf(oRow{ID: int64(i), G: rng.Int64N(int64(keys)), V: rng.Int64N(1000), At: at})
	}
	return out
}

// oDelay is the watermark delay of the tests' input: no row is late.
const oDelay = 2 * timeJitter * 10 * time.Millisecond

// oInput adds a paced source of input (one subtask) whose records carry
// their At as event time, and passes each through hook.
func oInput(env *eddy.Environment, input []changelog.Change[oRow], hook func()) *eddy.Stream[changelog.Change[oRow]] {
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(input)), RatePerSecond: 40000},
		func(i int64) oRow { return input[i].Row },
		eddy.BoundedOutOfOrder(oDelay, func(r oRow) int64 { return r.At })).Parallelism(1).UID("rows")
	// One subtask up to the exchange by key, so that the rows of a
	// partition arrive in order.
	s := eddy.Map(src, func(r oRow) changelog.Change[oRow] { hook(); return changelog.InsertOf(r) }).Parallelism(1).Name("hook")
	return eddy.AsChangelog(s, changelog.InsertOnly)
}

// bruteOverFrames computes every row of input with the aggregate of its
// frame: the rows of its partition in order of time (of arrival on
// processing time), rows of equal times in arrival order.
func bruteOverFrames(input []changelog.Change[oRow], frame eddy.OverFrame) map[eddy.OverRow[oRow, oAgg]]int {
	parts := map[int64][]oRow{}
	for _, c := range input {
		parts[c.Row.G] = append(parts[c.Row.G], c.Row)
	}
	want := map[eddy.OverRow[oRow, oAgg]]int{}
	for _, rs := range parts {
		if frame.Domain == eddy.EventTime {
			slices.SortStableFunc(rs, func(a, b oRow) int { return int(a.At - b.At) })
		}
		for j, r := range rs {
			var a oAgg
			for i, x := range rs {
				in := false
				if frame.Rows {
					in = i <= j && (frame.Preceding < 0 || int64(j-i) <= frame.Preceding)
				} else {
					in = x.At <= r.At && (frame.Preceding < 0 || r.At-x.At <= frame.Preceding)
				}
				if in {
					if a.N == 0 || x.V > a.Max {
						a.Max = x.V
					}
					a.N++
					a.Sum += x.V
				}
			}
			want[eddy.OverRow[oRow, oAgg]{Row: r, Value: a}]++
		}
	}
	return want
}

var oFrames = []eddy.OverFrame{
	{Domain: eddy.EventTime, Rows: true, Preceding: 3},
	{Domain: eddy.EventTime, Rows: false, Preceding: 50},
	{Domain: eddy.EventTime, Rows: true, Preceding: eddy.UnboundedPreceding},
	{Domain: eddy.EventTime, Rows: false, Preceding: eddy.UnboundedPreceding},
	{Domain: eddy.ProcessingTime, Rows: true, Preceding: 2},
}

// TestOverAggregateMatchesBruteForce runs OVER aggregations of ROWS and
// RANGE frames, bounded and not, on event time and (ROWS, whose frames
// follow the arrival order) processing time, with a failure and a restore
// from a checkpoint in the middle, on both backends, and compares every
// output row with its frame computed by brute force.
func TestOverAggregateMatchesBruteForce(t *testing.T) {
	for _, backend := range relBackends {
		for _, frame := range oFrames {
			t.Run(fmt.Sprintf("%s/%v/%s", backend, frame.Domain, frame), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(21, 22))
				input := oRows(rng, 2000, 8)
				var mode changelog.Mode
				out := runRelational(t, relRun{backend: backend, failAfter: 1200, parallelism: 2},
					func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[eddy.OverRow[oRow, oAgg]]] {
						rows := oInput(env, input, hook)
						s := eddy.OverAggregate(eddy.GroupBy(rows, func(r oRow) int64 { return r.G }), frame, oFunc())
						mode = s.ChangelogMode()
						return s
					})
				if mode != changelog.InsertOnly {
					t.Fatalf("mode %v, want insert-only", mode)
				}
				if d := diffTables(finalTable(t, out), bruteOverFrames(input, frame)); d != "" {
					t.Fatalf("result differs from brute force:\n%s", d)
				}
			})
		}
	}
}

// TestOverAggregateRescale stops OVER aggregations with a savepoint at
// parallelism 2 (rows waiting for the watermark, frames and timers in
// state), resumes them at parallelism 3, and compares the rows with brute
// force, on both backends.
func TestOverAggregateRescale(t *testing.T) {
	for _, backend := range relBackends {
		for _, frame := range oFrames[:2] {
			t.Run(fmt.Sprintf("%s/%s", backend, frame), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(23, 24))
				input := oRows(rng, 3000, 50)
				out := runRescaled(t, backend, 1500, func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[eddy.OverRow[oRow, oAgg]]] {
					rows := oInput(env, input, hook)
					return eddy.OverAggregate(eddy.GroupBy(rows, func(r oRow) int64 { return r.G }), frame, oFunc()).UID("over")
				})
				if d := diffTables(table(t, out), bruteOverFrames(input, frame)); d != "" {
					t.Fatalf("result differs from brute force:\n%s", d)
				}
			})
		}
	}
}

// TestOverAggregateRefusesBadInput checks the build-time errors of
// OverAggregate.
func TestOverAggregateRefusesBadInput(t *testing.T) {
	noRetract := agg.Of(func() int64 { return 0 }, func(a int64, r oRow) int64 { return a + r.V },
		func(a, b int64) int64 { return a + b }, func(a int64) int64 { return a })
	for name, c := range map[string]struct {
		mode  changelog.Mode
		frame eddy.OverFrame
		f     agg.Function[oRow, int64, int64]
		want  string
	}{
		"retract input":  {changelog.Retract, eddy.OverFrame{Rows: true, Preceding: 2}, agg.Count[oRow](), "an OVER aggregation needs an insert-only one"},
		"no retraction":  {changelog.InsertOnly, eddy.OverFrame{Rows: true, Preceding: 2}, noRetract, "cannot take rows back"},
		"bad preceding":  {changelog.InsertOnly, eddy.OverFrame{Preceding: -5}, agg.Count[oRow](), "eddy.UnboundedPreceding"},
		"bad domain":     {changelog.InsertOnly, eddy.OverFrame{Domain: 7, Preceding: 1}, agg.Count[oRow](), "use eddy.EventTime or eddy.ProcessingTime"},
		"unbounded only": {changelog.InsertOnly, eddy.OverFrame{Preceding: eddy.UnboundedPreceding}, noRetract, ""},
	} {
		t.Run(name, func(t *testing.T) {
			env := eddy.NewEnvironment()
			rows := eddy.AsChangelog(eddy.Inserts(eddy.FromSlice(env, []oRow{{}}, eddy.NoWatermarks[oRow]())), c.mode)
			eddy.Discard(eddy.OverAggregate(eddy.GroupBy(rows, func(r oRow) int64 { return r.G }), c.frame, c.f))
			if c.want == "" {
				if _, err := env.Plan(); err != nil {
					t.Fatalf("an unbounded frame needs no retraction, but: %v", err)
				}
				return
			}
			expectBuildError(t, env, c.want)
		})
	}
}

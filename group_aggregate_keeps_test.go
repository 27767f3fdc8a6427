package eddy_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// countedMax is MAX(v) over values 0 to 99 with retraction: its
// accumulator counts each value. It tells when an input leaves its result
// as it is (agg.ResultKeeper), counting the times it said so in kept.
type countedMax struct{ kept *atomic.Int64 }

func (countedMax) Create() [100]int64 { return [100]int64{} }
func (countedMax) Add(acc [100]int64, r relRow) [100]int64 {
	acc[r.V]++
	return acc
}
func (countedMax) Retract(acc [100]int64, r relRow) [100]int64 {
	acc[r.V]--
	return acc
}
func (countedMax) Merge(a, b [100]int64) [100]int64 {
	for i := range a {
		a[i] += b[i]
	}
	return a
}
func (countedMax) Result(acc [100]int64) int64 {
	for v := len(acc) - 1; v >= 0; v-- {
		if acc[v] > 0 {
			return int64(v)
		}
	}
	return -1
}
func (f countedMax) KeepsResult(acc [100]int64, r relRow) bool {
	m := f.Result(acc)
	if m >= r.V {
		f.kept.Add(1)
		return true
	}
	return false
}

// TestGroupAggregateKeepsResult runs a function that tells which inputs
// leave its result as it is over random changelogs, with a failure and a
// restore in the middle, on both backends, with and without mini-batches:
// the operator folds those inputs in without making the group's row, and
// the final result table must still be the brute-force one (a group whose
// count missed them would be dropped too early by their retractions).
func TestGroupAggregateKeepsResult(t *testing.T) {
	for _, backend := range relBackends {
		for _, batch := range []int{0, 64} {
			t.Run(fmt.Sprintf("%s/batch-%d", backend, batch), func(t *testing.T) {
				var kept atomic.Int64
				var opts []eddy.TableOption
				if batch > 0 {
					opts = append(opts, eddy.MiniBatch(batch, 5*time.Millisecond))
				}
				rng := rand.New(rand.NewPCG(11, uint64(batch)))
				input := randomChangelog(rng, 4000, newRowIn(rng, 30))
				out := runRelational(t, relRun{backend: backend, failAfter: 1500, parallelism: 2},
					func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[eddy.Grouped[int64, int64]]] {
						rows := relInput(env, "rows", input, hook)
						return eddy.GroupAggregate(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), countedMax{&kept}, opts...)
					})
				want := map[eddy.Grouped[int64, int64]]int{}
				for g, n := range bruteStats(table(t, input)) {
					want[eddy.Grouped[int64, int64]{Key: g.Key, Value: g.Value.Max}] = n
				}
				if d := diffTables(finalTable(t, out), want); d != "" {
					t.Fatalf("result table differs from brute force:\n%s", d)
				}
				if kept.Load() == 0 {
					t.Fatal("no input was said to keep its group's result")
				}
			})
		}
	}
}

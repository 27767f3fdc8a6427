package eddy_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
)

// sliceSum is COUNT(*) and SUM(v) in an accumulator that holds a slice:
// Add and Retract copy it, AddInPlace and RetractInPlace change it
// (agg.Mutating), counting their calls in inPlace.
type sliceSum struct{ inPlace *atomic.Int64 }

func (sliceSum) Create() []int64 { return make([]int64, 2) }
func (f sliceSum) Add(acc []int64, r relRow) []int64 {
	return f.AddInPlace(append([]int64(nil), acc...), r, nil, 0)
}
func (f sliceSum) Retract(acc []int64, r relRow) []int64 {
	return f.RetractInPlace(append([]int64(nil), acc...), r, nil, 0)
}
func (sliceSum) Merge(a, b []int64) []int64  { return []int64{a[0] + b[0], a[1] + b[1]} }
func (sliceSum) Result(acc []int64) [2]int64 { return [2]int64{acc[0], acc[1]} }
func (f sliceSum) AddInPlace(acc []int64, r relRow, _ agg.Views, _ int) []int64 {
	f.inPlace.Add(1)
	acc[0]++
	acc[1] += r.V
	return acc
}
func (f sliceSum) RetractInPlace(acc []int64, r relRow, _ agg.Views, _ int) []int64 {
	f.inPlace.Add(1)
	acc[0]--
	acc[1] -= r.V
	return acc
}

// TestGroupAggregateInPlace runs a function whose accumulators change in
// place over random changelogs, with a failure and a restore from a
// checkpoint in the middle, on both backends: the group aggregation must
// call AddInPlace and RetractInPlace, and an accumulator changed in place
// must never be one a checkpoint holds (the restored run would then count
// rows twice).
func TestGroupAggregateInPlace(t *testing.T) {
	for _, backend := range relBackends {
		for _, batch := range []int{0, 64} {
			t.Run(fmt.Sprintf("%s/batch-%d", backend, batch), func(t *testing.T) {
				var calls atomic.Int64
				var opts []eddy.TableOption
				if batch > 0 {
					opts = append(opts, eddy.MiniBatch(batch, 5*time.Millisecond))
				}
				rng := rand.New(rand.NewPCG(7, uint64(batch)))
				input := randomChangelog(rng, 4000, newRowIn(rng, 30))
				out := runRelational(t, relRun{backend: backend, failAfter: 1500, parallelism: 2},
					func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[eddy.Grouped[int64, [2]int64]]] {
						rows := relInput(env, "rows", input, hook)
						return eddy.GroupAggregate(eddy.GroupBy(rows, func(r relRow) int64 { return r.G }), agg.Function[relRow, []int64, [2]int64](sliceSum{&calls}), opts...)
					})
				if calls.Load() == 0 {
					t.Fatal("AddInPlace and RetractInPlace were never called")
				}
				want := map[eddy.Grouped[int64, [2]int64]]int{}
				sums := map[int64][2]int64{}
				for r, n := range table(t, input) {
					s := sums[r.G]
					s[0] += int64(n)
					s[1] += int64(n) * r.V
					sums[r.G] = s
				}
				for g, s := range sums {
					if s[0] > 0 {
						want[eddy.Grouped[int64, [2]int64]{Key: g, Value: s}] = 1
					}
				}
				if d := diffTables(finalTable(t, out), want); d != "" {
					t.Fatalf("result table differs from brute force:\n%s", d)
				}
			})
		}
	}
}

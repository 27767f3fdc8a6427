package queries

import (
	"slices"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ11(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		times := map[int64][]int64{}
		for _, b := range d.bids {
			times[b.Bidder] = append(times[b.Bidder], b.DateTime)
		}
		var want []Q11Result
		for bidder, ts := range times {
			slices.Sort(ts)
			// Sessions [first, last+gap) merge when they overlap or touch,
			// as Flink's TimeWindow.intersects has it.
			start, end, n := ts[0], ts[0]+10_000, int64(1)
			for _, x := range ts[1:] {
				if x <= end {
					end, n = max(end, x+10_000), n+1
					continue
				}
				want = append(want, Q11Result{bidder, n, Time(start), Time(end)})
				start, end, n = x, x+10_000, 1
			}
			want = append(want, Q11Result{bidder, n, Time(start), Time(end)})
		}
		nonEmpty(t, want, 100)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q11Result] { return Q11(env, cfg) })
		sameMultiset(t, got, want)
	})
}

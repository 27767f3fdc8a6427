package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ4(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		// The inner query: per auction, the highest bid in its time range.
		type group struct{ id, category int64 }
		final := map[group]int64{}
		for _, a := range d.auctions {
			for _, b := range d.bids {
				if a.ID == b.Auction && b.DateTime >= a.DateTime && b.DateTime <= a.Expires {
					g := group{a.ID, a.Category}
					if m, ok := final[g]; !ok || b.Price > m {
						final[g] = b.Price
					}
				}
			}
		}
		sum, count := map[int64]int64{}, map[int64]int64{}
		for g, m := range final {
			sum[g.category] += m
			count[g.category]++
		}
		want := map[int64]Q4Result{}
		for c, s := range sum {
			want[c] = Q4Result{Op: Insert, Category: c, Final: s / count[c]}
		}
		if len(final) < 50 {
			t.Fatalf("only %d auctions have bids", len(final))
		}
		log := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q4Result] { return Q4(env, cfg) })
		got := materialize(t, log, func(r Q4Result) int64 { return r.Category })
		sameTable(t, got, want)
	})
}

package queries

import (
	"slices"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ19(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		byAuction := map[int64][]nexmark.Bid{}
		for _, b := range d.bids {
			byAuction[b.Auction] = append(byAuction[b.Auction], b)
		}
		type key struct{ auction, rank int64 }
		want := map[key]Q19Result{}
		full := 0
		for a, bids := range byAuction {
			slices.SortFunc(bids, func(x, y nexmark.Bid) int {
				switch {
				case betterBid(&x, &y):
					return -1
				case betterBid(&y, &x):
					return 1
				}
				return 0
			})
			if len(bids) > 10 {
				full++
				bids = bids[:10]
			}
			for i := range bids {
				want[key{a, int64(i + 1)}] = q19Row(Insert, &bids[i], i+1)
			}
		}
		if full < 10 {
			t.Fatalf("only %d auctions have more than 10 bids", full)
		}
		log := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q19Result] { return Q19(env, cfg) })
		sameTable(t, materialize(t, log, func(r Q19Result) key { return key{r.Auction, r.RankNumber} }), want)
	})
}

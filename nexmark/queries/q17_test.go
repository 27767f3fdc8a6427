package queries

import (
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ17(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		type key struct {
			auction int64
			day     string
		}
		want := map[key]Q17Result{}
		for _, b := range d.bids {
			k := key{b.Auction, time.UnixMilli(b.DateTime).UTC().Format("2006-01-02")}
			r, ok := want[k]
			if !ok {
				r = Q17Result{Auction: k.auction, Day: k.day, MinPrice: b.Price, MaxPrice: b.Price}
			}
			r.TotalBids++
			switch {
			case b.Price < 10000:
				r.Rank1Bids++
			case b.Price < 1000000:
				r.Rank2Bids++
			default:
				r.Rank3Bids++
			}
			r.MinPrice, r.MaxPrice = min(r.MinPrice, b.Price), max(r.MaxPrice, b.Price)
			r.SumPrice += b.Price
			r.AvgPrice = r.SumPrice / r.TotalBids
			want[k] = r
		}
		if len(want) < 100 {
			t.Fatalf("only %d groups", len(want))
		}
		log := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q17Result] { return Q17(env, cfg) })
		sameTable(t, materialize(t, log, func(r Q17Result) key { return key{r.Auction, r.Day} }), want)
	})
}

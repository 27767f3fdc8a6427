package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ20(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		auctions := map[int64][]nexmark.Auction{}
		for _, a := range d.auctions {
			if a.Category == 10 {
				auctions[a.ID] = append(auctions[a.ID], a)
			}
		}
		var want []Q20Result
		for _, b := range d.bids {
			for _, a := range auctions[b.Auction] {
				want = append(want, q20Row(&b, &a))
			}
		}
		nonEmpty(t, want, 100)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q20Result] { return Q20(env, cfg) })
		sameMultiset(t, got, want)
	})
}

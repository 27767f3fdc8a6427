package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ2(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		var want []Q2Result
		for _, b := range d.bids {
			if b.Auction%123 == 0 {
				want = append(want, Q2Result{b.Auction, b.Price})
			}
		}
		nonEmpty(t, want, 10)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q2Result] { return Q2(env, cfg) })
		sameMultiset(t, got, want)
	})
}

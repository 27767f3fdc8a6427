package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ0(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		var want []Q0Result
		for _, b := range d.bids {
			want = append(want, Q0Result{b.Auction, b.Bidder, b.Price, Time(b.DateTime), b.Extra})
		}
		nonEmpty(t, want, 1000)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q0Result] { return Q0(env, cfg) })
		sameMultiset(t, got, want)
	})
}

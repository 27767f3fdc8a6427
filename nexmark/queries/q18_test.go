package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ18(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		// The latest bid per (bidder, auction); of equal dateTime, the
		// later one of its part.
		last := map[q18Key]nexmark.Bid{}
		for _, part := range d.byPart {
			for _, b := range part {
				k := q18Key{b.Bidder, b.Auction}
				if old, ok := last[k]; !ok || b.DateTime >= old.DateTime {
					last[k] = b
				}
			}
		}
		want := map[q18Key]Q18Result{}
		for k, b := range last {
			want[k] = q18Row(Insert, &b)
		}
		if len(want) >= len(d.bids) {
			t.Fatal("no bidder bids twice on an auction")
		}
		log := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q18Result] { return Q18(env, cfg) })
		sameTable(t, materialize(t, log, func(r Q18Result) q18Key { return q18Key{r.Bidder, r.Auction} }), want)
	})
}

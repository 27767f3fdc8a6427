package queries

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

func TestQ7(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		maxPrice := map[int64]int64{} // by window start
		for _, b := range d.bids {
			s := floorDiv(b.DateTime, 10_000) * 10_000
			if m, ok := maxPrice[s]; !ok || b.Price > m {
				maxPrice[s] = b.Price
			}
		}
		var want []Q7Result
		for s, m := range maxPrice {
			for _, b := range d.bids {
				if b.Price == m && b.DateTime >= s && b.DateTime <= s+10_000 {
					want = append(want, q7Row(b))
				}
			}
		}
		nonEmpty(t, want, 3)
		got := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q7Result] { return Q7(env, cfg) })
		sameMultiset(t, got, want)
	})
}

// TestQ7WindowEnd checks that a bid at exactly the end of a window with the
// window's highest price is joined to that window too, as the SQL's BETWEEN
// includes the end.
func TestQ7WindowEnd(t *testing.T) {
	bids := []nexmark.Bid{
		{Auction: 1, Price: 50, DateTime: 1000},
		{Auction: 2, Price: 70, DateTime: 9000},
		{Auction: 3, Price: 70, DateTime: 10_000}, // the end of [0, 10 s) and in [10 s, 20 s)
		{Auction: 4, Price: 60, DateTime: 12_000},
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	src := eddy.FromSlice(env, bids, eddy.Monotonous(func(b nexmark.Bid) int64 { return b.DateTime }))
	got := runStream(t, env, q7Stream(src))
	want := []Q7Result{q7Row(bids[1]), q7Row(bids[2]), q7Row(bids[2])}
	sameMultiset(t, got, want)
}

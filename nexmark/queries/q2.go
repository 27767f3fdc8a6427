package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// Q2Result is a row of q2.
type Q2Result struct {
	Auction int64 `json:"auction"`
	Price   int64 `json:"price"`
}

// Q2 selects the bids of every 123rd auction:
//
//	SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
func Q2(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q2Result] {
	return eddy.FlatMap(bidSource(env, cfg), func(b nexmark.Bid, emit func(Q2Result)) {
		if b.Auction%123 == 0 {
			emit(Q2Result{Auction: b.Auction, Price: b.Price})
		}
	}).Name("q2")
}

package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// Q0Result is a row of q0: a bid passed through.
type Q0Result struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	DateTime Time   `json:"dateTime"`
	Extra    string `json:"extra"`
}

// Q0 is the pass-through query, which measures the source and the
// framework:
//
//	SELECT auction, bidder, price, dateTime, extra FROM bid;
func Q0(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q0Result] {
	return eddy.Map(bidSource(env, cfg), func(b nexmark.Bid) Q0Result {
		return Q0Result{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: Time(b.DateTime), Extra: b.Extra}
	}).Name("q0")
}

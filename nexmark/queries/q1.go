package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// Q1Result is a row of q1: a bid with its price in euros.
type Q1Result struct {
	Auction int64 `json:"auction"`
	Bidder  int64 `json:"bidder"`
	// Price is 0.908 * price, exact (DECIMAL(23, 3) in the reference).
	Price    Decimal3 `json:"price"`
	DateTime Time     `json:"dateTime"`
	Extra    string   `json:"extra"`
}

// Q1 converts bid prices from dollars to euros:
//
//	SELECT auction, bidder, 0.908 * price as price, dateTime, extra FROM bid;
//
// The product is exact, as Flink's DECIMAL arithmetic is (see Decimal3).
func Q1(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q1Result] {
	return eddy.Map(bidSource(env, cfg), func(b nexmark.Bid) Q1Result {
		return Q1Result{Auction: b.Auction, Bidder: b.Bidder, Price: euros(b.Price), DateTime: Time(b.DateTime), Extra: b.Extra}
	}).Name("q1")
}

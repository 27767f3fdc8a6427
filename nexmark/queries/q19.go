package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/nexmark"
)

// Q19Result is a change of q19's result table, keyed by (Auction,
// RankNumber).
type Q19Result struct {
	Op         RowKind `json:"op"`
	Auction    int64   `json:"auction"`
	Bidder     int64   `json:"bidder"`
	Price      int64   `json:"price"`
	Channel    string  `json:"channel"`
	URL        string  `json:"url"`
	DateTime   Time    `json:"dateTime"`
	Extra      string  `json:"extra"`
	RankNumber int64   `json:"rank_number"`
}

// q19N is the N of q19's top-N.
const q19N = 10

func q19Row(op RowKind, b *nexmark.Bid, rank int) Q19Result {
	return Q19Result{Op: op, Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel,
		URL: b.URL, DateTime: Time(b.DateTime), Extra: b.Extra, RankNumber: int64(rank)}
}

// Q19 finds the 10 highest bids of every auction (a top-N):
//
//	SELECT * FROM
//	(SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid)
//	WHERE rank_number <= 10;
//
// It emits the changelog of the result table. It is a TopNRanked over the
// bids as an insert-only changelog, as Flink plans the query (an
// append-only top-N whose state is each auction's top 10): a bid that
// enters the top 10 at rank r updates the rows of ranks r to 10. Bids of
// equal price are ranked by dateTime, bidder and extra (Flink ranks them by
// arrival).
func Q19(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q19Result] {
	bids := eddy.GroupBy(bidChanges(env, cfg), func(b nexmark.Bid) int64 { return b.Auction })
	top := eddy.TopNRanked(bids, q19N, func(a, b nexmark.Bid) bool { return betterBid(&a, &b) }).Name("q19")
	return changeRows(top, func(c changelog.Change[eddy.Ranked[nexmark.Bid]], _ *dayNames) Q19Result {
		return q19Row(c.Kind, &c.Row.Row, int(c.Row.Rank))
	})
}

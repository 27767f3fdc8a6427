package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// Q16Result is a change of q16's result table, keyed by (Channel, Day).
type Q16Result struct {
	Op      RowKind `json:"op"`
	Channel string  `json:"channel"`
	Day     string  `json:"day"`
	// Minute is the latest HH:mm of the group's bids.
	Minute        string `json:"minute"`
	TotalBids     int64  `json:"total_bids"`
	Rank1Bids     int64  `json:"rank1_bids"`
	Rank2Bids     int64  `json:"rank2_bids"`
	Rank3Bids     int64  `json:"rank3_bids"`
	TotalBidders  int64  `json:"total_bidders"`
	Rank1Bidders  int64  `json:"rank1_bidders"`
	Rank2Bidders  int64  `json:"rank2_bidders"`
	Rank3Bidders  int64  `json:"rank3_bidders"`
	TotalAuctions int64  `json:"total_auctions"`
	Rank1Auctions int64  `json:"rank1_auctions"`
	Rank2Auctions int64  `json:"rank2_auctions"`
	Rank3Auctions int64  `json:"rank3_auctions"`
}

// q16Key is q16's grouping key.
type q16Key struct {
	Channel string
	Day     int64
}

// q16Stats is q16's aggregation.
type q16Stats struct {
	d    distinctStats
	days dayNames
}

func (f *q16Stats) Open(ctx *eddy.KeyedContext[q16Key, Q16Result]) error {
	f.d = newDistinctStats(ctx.Store())
	return nil
}

func (f *q16Stats) ProcessElement(ctx *eddy.KeyedContext[q16Key, Q16Result], b nexmark.Bid) error {
	before, after, existed := f.d.add(&b)
	k := ctx.Key()
	day := f.days.get(k.Day)
	if existed {
		ctx.Emit(q16Row(UpdateBefore, k.Channel, day, &before))
		ctx.Emit(q16Row(UpdateAfter, k.Channel, day, &after))
	} else {
		ctx.Emit(q16Row(Insert, k.Channel, day, &after))
	}
	return nil
}

func q16Row(op RowKind, channel, day string, s *bidStats) Q16Result {
	return Q16Result{
		Op: op, Channel: channel, Day: day, Minute: hhmmNames[s.MaxMinute],
		TotalBids: s.Bids, Rank1Bids: s.RankBids[0], Rank2Bids: s.RankBids[1], Rank3Bids: s.RankBids[2],
		TotalBidders: s.Bidders, Rank1Bidders: s.RankBidders[0], Rank2Bidders: s.RankBidders[1], Rank3Bidders: s.RankBidders[2],
		TotalAuctions: s.Auctions, Rank1Auctions: s.RankAuctions[0], Rank2Auctions: s.RankAuctions[1], Rank3Auctions: s.RankAuctions[2],
	}
}

// Q16 reports bidding statistics per channel and day:
//
//	SELECT channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd') as day,
//	  max(DATE_FORMAT(dateTime, 'HH:mm')) as minute,
//	  count(*) AS total_bids, … (as q15)
//	FROM bid GROUP BY channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd');
//
// It emits the changelog of the result table: every bid updates its
// group's row.
func Q16(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q16Result] {
	return eddy.ProcessKeyed(eddy.KeyBy(bidSource(env, cfg), func(b nexmark.Bid) q16Key { return q16Key{b.Channel, dayOf(b.DateTime)} }),
		func() eddy.KeyedProcessFunction[q16Key, nexmark.Bid, Q16Result] { return &q16Stats{} }).Name("q16")
}

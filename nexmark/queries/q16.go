package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
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
//
// It is a GroupAggregate over the bids as an insert-only changelog.
func Q16(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q16Result] {
	bids := eddy.Inserts(bidSource(env, cfg))
	groups := eddy.GroupAggregate(eddy.GroupBy(bids, func(b nexmark.Bid) q16Key { return q16Key{b.Channel, dayOf(b.DateTime)} }), agg.ViewFunction[nexmark.Bid, bidStats, bidStats](bidStatsFunction{}))
	return changeRows(groups.Name("q16"), func(c changelog.Change[eddy.Grouped[q16Key, bidStats]], names *dayNames) Q16Result {
		return q16Row(c.Kind, c.Row.Key.Channel, names.get(c.Row.Key.Day), &c.Row.Value)
	})
}

package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
)

// Q15Result is a change of q15's result table, keyed by Day.
type Q15Result struct {
	Op            RowKind `json:"op"`
	Day           string  `json:"day"`
	TotalBids     int64   `json:"total_bids"`
	Rank1Bids     int64   `json:"rank1_bids"`
	Rank2Bids     int64   `json:"rank2_bids"`
	Rank3Bids     int64   `json:"rank3_bids"`
	TotalBidders  int64   `json:"total_bidders"`
	Rank1Bidders  int64   `json:"rank1_bidders"`
	Rank2Bidders  int64   `json:"rank2_bidders"`
	Rank3Bidders  int64   `json:"rank3_bidders"`
	TotalAuctions int64   `json:"total_auctions"`
	Rank1Auctions int64   `json:"rank1_auctions"`
	Rank2Auctions int64   `json:"rank2_auctions"`
	Rank3Auctions int64   `json:"rank3_auctions"`
}

// priceRank is the price bucket of q15 to q17: 0 below 10 000, 1 below
// 1 000 000, 2 from there.
func priceRank(price int64) int {
	switch {
	case price < 10_000:
		return 0
	case price < 1_000_000:
		return 1
	}
	return 2
}

// bidStats are the counts of q15 and q16: bids, distinct bidders and
// distinct auctions, in total and per price rank; and, for q16, the latest
// minute of the day.
type bidStats struct {
	Bids, Bidders, Auctions             int64
	RankBids, RankBidders, RankAuctions [3]int64
	MaxMinute                           int
}

// distinctStats maintains bidStats with keyed state: per bidder and per
// auction the set of ranks (a bit each) it has been seen in. Bidders and
// auctions share one map state, told apart by the low bit of the user key,
// so that a bid touches one map per group.
type distinctStats struct {
	stats state.Value[bidStats]
	seen  state.Map[int64, uint8]
}

func newDistinctStats[K comparable](s state.Store[K]) distinctStats {
	return distinctStats{
		stats: state.NewValue(s, state.ValueDescriptor[bidStats]{Name: "stats"}),
		seen:  state.NewMap(s, state.MapDescriptor[int64, uint8]{Name: "ranks-seen"}),
	}
}

// The user keys of distinctStats.seen.
func bidderKey(id int64) int64  { return id << 1 }
func auctionKey(id int64) int64 { return id<<1 | 1 }

// add counts bid b and returns the statistics before and after it, and
// whether there were any before.
func (d *distinctStats) add(b *nexmark.Bid) (before, after bidStats, existed bool) {
	before, existed = d.stats.Value()
	after = before
	r := priceRank(b.Price)
	bit := uint8(1) << r
	after.Bids++
	after.RankBids[r]++
	if m, _ := d.seen.Get(bidderKey(b.Bidder)); m&bit == 0 {
		if m == 0 {
			after.Bidders++
		}
		after.RankBidders[r]++
		d.seen.Put(bidderKey(b.Bidder), m|bit)
	}
	if m, _ := d.seen.Get(auctionKey(b.Auction)); m&bit == 0 {
		if m == 0 {
			after.Auctions++
		}
		after.RankAuctions[r]++
		d.seen.Put(auctionKey(b.Auction), m|bit)
	}
	if mm := minuteOfDay(b.DateTime); !existed || mm > after.MaxMinute {
		after.MaxMinute = mm
	}
	d.stats.Update(after)
	return before, after, existed
}

// q15Stats is q15's aggregation, keyed by day number.
type q15Stats struct {
	d    distinctStats
	days dayNames
}

func (f *q15Stats) Open(ctx *eddy.KeyedContext[int64, Q15Result]) error {
	f.d = newDistinctStats(ctx.Store())
	return nil
}

func (f *q15Stats) ProcessElement(ctx *eddy.KeyedContext[int64, Q15Result], b nexmark.Bid) error {
	before, after, existed := f.d.add(&b)
	day := f.days.get(ctx.Key())
	if existed {
		ctx.Emit(q15Row(UpdateBefore, day, &before))
		ctx.Emit(q15Row(UpdateAfter, day, &after))
	} else {
		ctx.Emit(q15Row(Insert, day, &after))
	}
	return nil
}

func q15Row(op RowKind, day string, s *bidStats) Q15Result {
	return Q15Result{
		Op: op, Day: day,
		TotalBids: s.Bids, Rank1Bids: s.RankBids[0], Rank2Bids: s.RankBids[1], Rank3Bids: s.RankBids[2],
		TotalBidders: s.Bidders, Rank1Bidders: s.RankBidders[0], Rank2Bidders: s.RankBidders[1], Rank3Bidders: s.RankBidders[2],
		TotalAuctions: s.Auctions, Rank1Auctions: s.RankAuctions[0], Rank2Auctions: s.RankAuctions[1], Rank3Auctions: s.RankAuctions[2],
	}
}

// Q15 reports bidding statistics per day:
//
//	SELECT DATE_FORMAT(dateTime, 'yyyy-MM-dd') as day,
//	  count(*) AS total_bids,
//	  count(*) filter (where price < 10000) AS rank1_bids,
//	  count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,
//	  count(*) filter (where price >= 1000000) AS rank3_bids,
//	  count(distinct bidder) AS total_bidders,
//	  count(distinct bidder) filter (where price < 10000) AS rank1_bidders,
//	  … (rank2_bidders, rank3_bidders, and the same for auction)
//	FROM bid GROUP BY DATE_FORMAT(dateTime, 'yyyy-MM-dd');
//
// It emits the changelog of the result table: every bid updates its day's
// row.
func Q15(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q15Result] {
	return eddy.ProcessKeyed(eddy.KeyBy(bidSource(env, cfg), func(b nexmark.Bid) int64 { return dayOf(b.DateTime) }),
		func() eddy.KeyedProcessFunction[int64, nexmark.Bid, Q15Result] { return &q15Stats{} }).Name("q15")
}

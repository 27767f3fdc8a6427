package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/nexmark"
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

// bidStatsFunction computes bidStats as an aggregate function for
// GroupAggregate. The distinct counts keep two views (multisets in keyed
// state), of the bidders and of the auctions seen, each counted once in
// total and once per price rank, so that a bid costs at most four state
// accesses whatever the group's size, and a retracted bid is taken back.
// On an insert-only input (the queries' own), an id has one entry, the set
// of ranks it has been seen in, and an id already seen in the bid's rank
// costs one read.
type bidStatsFunction struct{}

func (bidStatsFunction) Create() bidStats { return bidStats{} }

// Add and Merge are not used: GroupAggregate calls AddWith.
func (bidStatsFunction) Add(bidStats, nexmark.Bid) bidStats {
	panic("queries: bidStatsFunction runs with views only")
}

func (bidStatsFunction) Merge(bidStats, bidStats) bidStats {
	panic("queries: bidStatsFunction runs with views only")
}

func (bidStatsFunction) Result(s bidStats) bidStats { return s }
func (bidStatsFunction) NumViews() int              { return 2 }

// distinctEntries are the view entries of an id: itself (total), and itself
// with the price rank r.
func distinctEntries(id int64, r int) [2]int64 { return [2]int64{id << 2, id<<2 | int64(r+1)} }

// count adds delta to the bid's entries in the views and updates the
// distinct counts of the entries whose count crossed zero.
func (bidStatsFunction) count(s *bidStats, b *nexmark.Bid, v agg.Views, first int, delta int64) {
	r := priceRank(b.Price)
	insertOnly := delta > 0 && v.InsertOnly()
	for view, id := range [2]int64{b.Bidder, b.Auction} {
		total, rank := &s.Bidders, &s.RankBidders[r]
		if view == 1 {
			total, rank = &s.Auctions, &s.RankAuctions[r]
		}
		if insertOnly {
			// Nothing is taken back, so an id's entry need not count: it
			// holds the set of ranks (a bit each) the id has been seen in,
			// and a repeat costs one read.
			bit := int64(1) << r
			m := v.CountInt(first+view, id)
			if m&bit != 0 {
				continue
			}
			v.AddInt(first+view, id, bit)
			*rank++
			if m == 0 {
				*total++
			}
			continue
		}
		e := distinctEntries(id, r)
		for i, e := range e {
			before, after := v.AddInt(first+view, e, delta)
			if (before == 0) != (after == 0) {
				c := total
				if i == 1 {
					c = rank
				}
				*c += delta
			}
		}
	}
}

func (f bidStatsFunction) AddWith(s bidStats, b nexmark.Bid, v agg.Views, first int) bidStats {
	f.count(&s, &b, v, first, 1)
	s.Bids++
	s.RankBids[priceRank(b.Price)]++
	if mm := minuteOfDay(b.DateTime); s.Bids == 1 || mm > s.MaxMinute {
		s.MaxMinute = mm
	}
	return s
}

// RetractWith takes a bid back. The latest minute is not taken back: the
// queries' input is insert-only.
func (f bidStatsFunction) RetractWith(s bidStats, b nexmark.Bid, v agg.Views, first int) bidStats {
	f.count(&s, &b, v, first, -1)
	s.Bids--
	s.RankBids[priceRank(b.Price)]--
	return s
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
//
// It is a GroupAggregate over the bids as an insert-only changelog.
func Q15(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q15Result] {
	bids := eddy.Inserts(bidSource(env, cfg))
	days := eddy.GroupAggregate(eddy.GroupBy(bids, func(b nexmark.Bid) int64 { return dayOf(b.DateTime) }), agg.ViewFunction[nexmark.Bid, bidStats, bidStats](bidStatsFunction{}))
	return changeRows(days.Name("q15"), func(c changelog.Change[eddy.Grouped[int64, bidStats]], names *dayNames) Q15Result {
		return q15Row(c.Kind, names.get(c.Row.Key), &c.Row.Value)
	})
}

package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/nexmark"
)

// Q17Result is a change of q17's result table, keyed by (Auction, Day).
type Q17Result struct {
	Op        RowKind `json:"op"`
	Auction   int64   `json:"auction"`
	Day       string  `json:"day"`
	TotalBids int64   `json:"total_bids"`
	Rank1Bids int64   `json:"rank1_bids"`
	Rank2Bids int64   `json:"rank2_bids"`
	Rank3Bids int64   `json:"rank3_bids"`
	MinPrice  int64   `json:"min_price"`
	MaxPrice  int64   `json:"max_price"`
	// AvgPrice is truncated to an integer, as AVG of a BIGINT is.
	AvgPrice int64 `json:"avg_price"`
	SumPrice int64 `json:"sum_price"`
}

// q17Key is q17's grouping key.
type q17Key struct{ Auction, Day int64 }

// q17Agg is the aggregate of one group.
type q17Agg struct {
	Count, Min, Max, Sum int64
	Rank                 [3]int64
}

// q17Function is q17's SELECT list as one aggregate function over bids,
// with one accumulator: COUNT(*), the three filtered counts, MIN, MAX and
// SUM of the price.
type q17Function struct{}

func (q17Function) Create() q17Agg { return q17Agg{} }

func (q17Function) Add(a q17Agg, b nexmark.Bid) q17Agg {
	if a.Count == 0 {
		a.Min, a.Max = b.Price, b.Price
	} else {
		a.Min, a.Max = min(a.Min, b.Price), max(a.Max, b.Price)
	}
	a.Count++
	a.Sum += b.Price
	a.Rank[priceRank(b.Price)]++
	return a
}

func (q17Function) Merge(a, b q17Agg) q17Agg {
	switch {
	case a.Count == 0:
		return b
	case b.Count == 0:
		return a
	}
	a.Min, a.Max = min(a.Min, b.Min), max(a.Max, b.Max)
	a.Count += b.Count
	a.Sum += b.Sum
	for i := range a.Rank {
		a.Rank[i] += b.Rank[i]
	}
	return a
}

func (q17Function) Result(a q17Agg) q17Agg { return a }

func q17Row(op RowKind, auction int64, day string, a *q17Agg) Q17Result {
	return Q17Result{
		Op: op, Auction: auction, Day: day, TotalBids: a.Count,
		Rank1Bids: a.Rank[0], Rank2Bids: a.Rank[1], Rank3Bids: a.Rank[2],
		MinPrice: a.Min, MaxPrice: a.Max, AvgPrice: a.Sum / a.Count, SumPrice: a.Sum,
	}
}

// Q17 reports auction statistics per day, an unbounded group aggregation:
//
//	SELECT auction, DATE_FORMAT(dateTime, 'yyyy-MM-dd') as day,
//	  count(*) AS total_bids,
//	  count(*) filter (where price < 10000) AS rank1_bids,
//	  count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,
//	  count(*) filter (where price >= 1000000) AS rank3_bids,
//	  min(price) AS min_price, max(price) AS max_price,
//	  avg(price) AS avg_price, sum(price) AS sum_price
//	FROM bid GROUP BY auction, DATE_FORMAT(dateTime, 'yyyy-MM-dd');
//
// It emits the changelog of the result table: every bid updates its
// group's row. It is a GroupAggregate over the bids as an insert-only
// changelog.
func Q17(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q17Result] {
	bids := eddy.Inserts(bidSource(env, cfg))
	groups := eddy.GroupAggregate(eddy.GroupBy(bids, func(b nexmark.Bid) q17Key { return q17Key{b.Auction, dayOf(b.DateTime)} }), q17Function{})
	return changeRows(groups.Name("q17"), func(c changelog.Change[eddy.Grouped[q17Key, q17Agg]], days *dayNames) Q17Result {
		return q17Row(c.Kind, c.Row.Key.Auction, days.get(c.Row.Key.Day), &c.Row.Value)
	})
}

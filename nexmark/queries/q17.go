package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
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

// q17Stats is q17's aggregation.
type q17Stats struct {
	agg  state.Value[q17Agg]
	days dayNames
}

func (f *q17Stats) Open(ctx *eddy.KeyedContext[q17Key, Q17Result]) error {
	f.agg = state.NewValue(ctx.Store(), state.ValueDescriptor[q17Agg]{Name: "agg"})
	return nil
}

func (f *q17Stats) ProcessElement(ctx *eddy.KeyedContext[q17Key, Q17Result], b nexmark.Bid) error {
	before, existed := f.agg.Value()
	after := before
	if !existed {
		after.Min, after.Max = b.Price, b.Price
	} else {
		after.Min, after.Max = min(after.Min, b.Price), max(after.Max, b.Price)
	}
	after.Count++
	after.Sum += b.Price
	after.Rank[priceRank(b.Price)]++
	f.agg.Update(after)
	k := ctx.Key()
	day := f.days.get(k.Day)
	if existed {
		ctx.Emit(q17Row(UpdateBefore, k.Auction, day, &before))
		ctx.Emit(q17Row(UpdateAfter, k.Auction, day, &after))
	} else {
		ctx.Emit(q17Row(Insert, k.Auction, day, &after))
	}
	return nil
}

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
// group's row.
func Q17(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q17Result] {
	return eddy.ProcessKeyed(eddy.KeyBy(bidSource(env, cfg), func(b nexmark.Bid) q17Key { return q17Key{b.Auction, dayOf(b.DateTime)} }),
		func() eddy.KeyedProcessFunction[q17Key, nexmark.Bid, Q17Result] { return &q17Stats{} }).Name("q17")
}

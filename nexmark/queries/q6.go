package queries

import (
	"cmp"
	"slices"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
)

// Q6Result is a row of q6: a seller's average selling price after one of
// their auctions closed.
type Q6Result struct {
	Seller int64 `json:"seller"`
	// AvgPrice is the average winning price of the seller's last (up to)
	// 10 closed auctions, truncated to an integer.
	AvgPrice int64 `json:"avg_price"`
}

// q6Auctions is the number of closed auctions q6 averages over.
const q6Auctions = 10

// q6Closed is a closed auction with its winning price.
type q6Closed struct{ Expires, ID, Price int64 }

// q6Avg keeps, per seller, the winning prices of the last closed auctions.
// Closed auctions are applied in order of closing time when the watermark
// passes it, so the order does not depend on how the stages interleave.
type q6Avg struct {
	pending state.List[q6Closed]
	last    state.Value[[]int64]
}

func (f *q6Avg) Open(ctx *eddy.KeyedContext[int64, Q6Result]) error {
	f.pending = state.NewList(ctx.Store(), state.ListDescriptor[q6Closed]{Name: "pending"})
	f.last = state.NewValue(ctx.Store(), state.ValueDescriptor[[]int64]{Name: "last-prices"})
	return nil
}

func (f *q6Avg) ProcessElement(ctx *eddy.KeyedContext[int64, Q6Result], w Q9Result) error {
	f.pending.Add(q6Closed{Expires: int64(w.Expires), ID: w.ID, Price: w.Price})
	ctx.RegisterEventTimeTimer(int64(w.Expires))
	return nil
}

func (f *q6Avg) OnTimer(ctx *eddy.KeyedContext[int64, Q6Result], ts int64) error {
	pending := f.pending.Get()
	slices.SortFunc(pending, func(a, b q6Closed) int { return cmp.Or(cmp.Compare(a.Expires, b.Expires), cmp.Compare(a.ID, b.ID)) })
	n := 0
	for n < len(pending) && pending[n].Expires <= ts {
		n++
	}
	if n == 0 {
		return nil
	}
	last, _ := f.last.Value()
	for _, c := range pending[:n] {
		if len(last) == q6Auctions {
			last = append(last[:0], last[1:]...)
		}
		last = append(last, c.Price)
		var sum int64
		for _, p := range last {
			sum += p
		}
		ctx.Emit(Q6Result{Seller: ctx.Key(), AvgPrice: sum / int64(len(last))})
	}
	f.last.Update(last)
	if n == len(pending) {
		f.pending.Clear()
	} else {
		f.pending.Update(pending[n:])
	}
	return nil
}

// Q6 computes the average selling price per seller over their last 10
// closed auctions. Flink SQL cannot run the reference's query (an OVER
// window over a retracting ROW_NUMBER):
//
//	SELECT Q.seller, AVG(Q.price) OVER
//	  (PARTITION BY Q.seller ORDER BY Q.dateTime ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
//	FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price DESC) AS rownum
//	      FROM (SELECT A.id, A.seller, B.price, B.dateTime FROM auction AS A, bid AS B
//	            WHERE A.id = B.auction and B.dateTime between A.dateTime and A.expires)
//	      WHERE rownum <= 1) AS Q;
//
// Here, as in the original Nexmark query, an auction closes at its expiry
// with its winning bid (q9's), and each closing emits the seller's average
// of the winning prices of their last 10 closed auctions (ordered by
// expiry, then auction id), truncated to an integer as AVG of a BIGINT is.
// Auctions without a bid in their time range do not count.
func Q6(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q6Result] {
	winners := winningBids(eventSource(env, cfg, auctionKind|bidKind)).Name("q6 winners")
	return eddy.ProcessKeyed(eddy.KeyBy(winners, func(w Q9Result) int64 { return w.Seller }),
		func() eddy.KeyedProcessFunction[int64, Q9Result, Q6Result] { return &q6Avg{} }).Name("q6")
}

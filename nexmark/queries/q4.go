package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
)

// Q4Result is a change of q4's result table, keyed by Category.
type Q4Result struct {
	Op       RowKind `json:"op"`
	Category int64   `json:"category"`
	// Final is the average of the winning prices of the category's
	// auctions, truncated to an integer as Flink's AVG of a BIGINT is.
	Final int64 `json:"final"`
}

// q4Auction is what q4 reads of an auction, and keeps in state with its
// highest bid so far.
type q4Auction struct {
	ID, Category, DateTime, Expires int64
	Max                             int64
	HasMax                          bool
}

// q4Bid is what q4 reads of a bid; a bid that arrives before its auction
// waits as one.
type q4Bid struct{ Auction, Price, DateTime int64 }

// q4Final is a row of the inner query: an auction's category and its
// highest price.
type q4Final struct{ Category, Final int64 }

// q4Max keeps, per auction, the highest price of the bids made between the
// auction's dateTime and expires, and emits the changelog of the inner
// query's table: +I of an auction's first maximum, -U of the old and +U of
// the new when it rises. Auction ids are unique, so it keeps the auction
// and its maximum alone, and a bid only until its auction arrives.
type q4Max struct {
	auction state.Value[q4Auction]
	pending state.List[q4Bid]
}

func (f *q4Max) Open(ctx *eddy.KeyedContext[int64, changelog.Change[q4Final]]) error {
	f.auction = state.NewValue(ctx.Store(), state.ValueDescriptor[q4Auction]{Name: "auction"})
	f.pending = state.NewList(ctx.Store(), state.ListDescriptor[q4Bid]{Name: "pending-bids"})
	return nil
}

func (f *q4Max) ProcessElement1(ctx *eddy.KeyedContext[int64, changelog.Change[q4Final]], a q4Auction) error {
	s := a
	if bids := f.pending.Get(); len(bids) > 0 {
		for _, b := range bids {
			if b.DateTime >= s.DateTime && b.DateTime <= s.Expires && (!s.HasMax || b.Price > s.Max) {
				s.Max, s.HasMax = b.Price, true
			}
		}
		f.pending.Clear()
		if s.HasMax {
			ctx.Emit(changelog.InsertOf(q4Final{s.Category, s.Max}))
		}
	}
	f.auction.Update(s)
	return nil
}

func (f *q4Max) ProcessElement2(ctx *eddy.KeyedContext[int64, changelog.Change[q4Final]], b q4Bid) error {
	s, ok := f.auction.Value()
	if !ok {
		f.pending.Add(b)
		return nil
	}
	if b.DateTime < s.DateTime || b.DateTime > s.Expires || (s.HasMax && b.Price <= s.Max) {
		return nil
	}
	if s.HasMax {
		ctx.Emit(changelog.Change[q4Final]{Kind: UpdateBefore, Row: q4Final{s.Category, s.Max}})
		ctx.Emit(changelog.Change[q4Final]{Kind: UpdateAfter, Row: q4Final{s.Category, b.Price}})
	} else {
		ctx.Emit(changelog.InsertOf(q4Final{s.Category, b.Price}))
	}
	s.Max, s.HasMax = b.Price, true
	f.auction.Update(s)
	return nil
}

// q4Sum is a category's AVG accumulator.
type q4Sum struct{ Sum, Count int64 }

// q4Avg is AVG(final) with retraction as one aggregate function; its
// result is truncated to an integer, as AVG of a BIGINT is.
type q4Avg struct{}

func (q4Avg) Create() q4Sum                    { return q4Sum{} }
func (q4Avg) Add(s q4Sum, f q4Final) q4Sum     { return q4Sum{s.Sum + f.Final, s.Count + 1} }
func (q4Avg) Retract(s q4Sum, f q4Final) q4Sum { return q4Sum{s.Sum - f.Final, s.Count - 1} }
func (q4Avg) Merge(a, b q4Sum) q4Sum           { return q4Sum{a.Sum + b.Sum, a.Count + b.Count} }
func (q4Avg) Result(s q4Sum) int64 {
	if s.Count == 0 {
		return 0
	}
	return s.Sum / s.Count
}

// Q4 computes the average winning price of the auctions of each category:
//
//	SELECT Q.category, AVG(Q.final)
//	FROM (SELECT MAX(B.price) AS final, A.category
//	      FROM auction A, bid B
//	      WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
//	      GROUP BY A.id, A.category) Q
//	GROUP BY Q.category;
//
// It emits the changelog of the result table (see RowKind). A first stage
// keyed by auction joins bids to their auction and tracks the highest
// price (the join and the inner GROUP BY in one, since auction ids are
// unique: see q4Max); its changelog feeds a GroupAggregate of the average
// per category, which takes an auction's old maximum back when it rises,
// as Flink's plan does. Without mini-batches, as here, a rise updates the
// average twice: once without the auction, once with its new maximum.
func Q4(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q4Result] {
	events := eventSource(env, cfg, auctionKind|bidKind)
	bids := eddy.FlatMap(events, func(e event, emit func(q4Bid)) {
		if e.kind == nexmark.BidEvent {
			emit(q4Bid{Auction: e.bid.Auction, Price: e.bid.Price, DateTime: e.bid.DateTime})
		}
	}).Name("q4 bids")
	auctions := eddy.FlatMap(events, func(e event, emit func(q4Auction)) {
		if a := e.auction; e.kind == nexmark.AuctionEvent {
			emit(q4Auction{ID: a.ID, Category: a.Category, DateTime: a.DateTime, Expires: a.Expires})
		}
	}).Name("q4 auctions")
	maxima := eddy.AsChangelog(eddy.CoProcessKeyed(eddy.ConnectKeyed(
		eddy.KeyBy(auctions, func(a q4Auction) int64 { return a.ID }),
		eddy.KeyBy(bids, func(b q4Bid) int64 { return b.Auction })),
		func() eddy.KeyedCoProcessFunction[int64, q4Auction, q4Bid, changelog.Change[q4Final]] {
			return &q4Max{}
		}).Name("q4 maxima"),
		changelog.ModeOf(changelog.Insert, changelog.UpdateBefore, changelog.UpdateAfter))
	avgs := eddy.GroupAggregate(eddy.GroupBy(maxima, func(f q4Final) int64 { return f.Category }), q4Avg{}).Name("q4 averages")
	return changeRows(avgs, func(c changelog.Change[eddy.Grouped[int64, int64]], _ *dayNames) Q4Result {
		return Q4Result{Op: c.Kind, Category: c.Row.Key, Final: c.Row.Value}
	})
}

package queries

import (
	"github.com/eddystream/eddy"
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

// q4Update is a change of an auction's highest bid: Old (if HasOld) is
// replaced by New.
type q4Update struct {
	Category, Old, New int64
	HasOld             bool
}

// q4Max keeps, per auction, the highest price of the bids made between the
// auction's dateTime and expires, and emits every change of it.
type q4Max struct {
	auction state.Value[q4Auction]
	pending state.List[q4Bid]
}

func (f *q4Max) Open(ctx *eddy.KeyedContext[int64, q4Update]) error {
	f.auction = state.NewValue(ctx.Store(), state.ValueDescriptor[q4Auction]{Name: "auction"})
	f.pending = state.NewList(ctx.Store(), state.ListDescriptor[q4Bid]{Name: "pending-bids"})
	return nil
}

func (f *q4Max) ProcessElement1(ctx *eddy.KeyedContext[int64, q4Update], a q4Auction) error {
	s := a
	if bids := f.pending.Get(); len(bids) > 0 {
		for _, b := range bids {
			if b.DateTime >= s.DateTime && b.DateTime <= s.Expires && (!s.HasMax || b.Price > s.Max) {
				s.Max, s.HasMax = b.Price, true
			}
		}
		f.pending.Clear()
		if s.HasMax {
			ctx.Emit(q4Update{Category: s.Category, New: s.Max})
		}
	}
	f.auction.Update(s)
	return nil
}

func (f *q4Max) ProcessElement2(ctx *eddy.KeyedContext[int64, q4Update], b q4Bid) error {
	s, ok := f.auction.Value()
	if !ok {
		f.pending.Add(b)
		return nil
	}
	if b.DateTime < s.DateTime || b.DateTime > s.Expires || (s.HasMax && b.Price <= s.Max) {
		return nil
	}
	ctx.Emit(q4Update{Category: s.Category, Old: s.Max, HasOld: s.HasMax, New: b.Price})
	s.Max, s.HasMax = b.Price, true
	f.auction.Update(s)
	return nil
}

// q4Sum is a category's aggregate in q4.
type q4Sum struct{ Sum, Count int64 }

// q4Avg averages the auctions' highest prices per category and emits the
// changes of the average.
type q4Avg struct {
	sum state.Value[q4Sum]
}

func (f *q4Avg) Open(ctx *eddy.KeyedContext[int64, Q4Result]) error {
	f.sum = state.NewValue(ctx.Store(), state.ValueDescriptor[q4Sum]{Name: "sum"})
	return nil
}

func (f *q4Avg) ProcessElement(ctx *eddy.KeyedContext[int64, Q4Result], u q4Update) error {
	s, _ := f.sum.Value()
	before := s
	if u.HasOld {
		s.Sum += u.New - u.Old
	} else {
		s.Sum += u.New
		s.Count++
	}
	f.sum.Update(s)
	after := s.Sum / s.Count
	if before.Count == 0 {
		ctx.Emit(Q4Result{Op: Insert, Category: u.Category, Final: after})
		return nil
	}
	if old := before.Sum / before.Count; old != after {
		ctx.Emit(Q4Result{Op: UpdateBefore, Category: u.Category, Final: old})
		ctx.Emit(Q4Result{Op: UpdateAfter, Category: u.Category, Final: after})
	}
	return nil
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
// price; a change of an auction's maximum reaches the category stage as one
// update (old and new value together, as Flink's mini-batches combine the
// retraction and the new value), which emits -U/+U when the average
// changes.
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
	maxima := eddy.CoProcessKeyed(eddy.ConnectKeyed(
		eddy.KeyBy(auctions, func(a q4Auction) int64 { return a.ID }),
		eddy.KeyBy(bids, func(b q4Bid) int64 { return b.Auction })),
		func() eddy.KeyedCoProcessFunction[int64, q4Auction, q4Bid, q4Update] { return &q4Max{} }).Name("q4 maxima")
	return eddy.ProcessKeyed(eddy.KeyBy(maxima, func(u q4Update) int64 { return u.Category }),
		func() eddy.KeyedProcessFunction[int64, q4Update, Q4Result] { return &q4Avg{} }).Name("q4 averages")
}

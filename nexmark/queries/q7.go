package queries

import (
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
	"github.com/eddystream/eddy/window"
)

// Q7Result is a row of q7: a bid with the highest price of a window.
type Q7Result struct {
	Auction  int64  `json:"auction"`
	Price    int64  `json:"price"`
	Bidder   int64  `json:"bidder"`
	DateTime Time   `json:"dateTime"`
	Extra    string `json:"extra"`
}

// q7Window is q7's tumbling window size.
const q7Window = 10 * time.Second

// q7Max is the highest price among some bids and the bids that have it.
type q7Max struct {
	Max   int64
	Bids  []nexmark.Bid
	Valid bool
}

// q7MaxBids is the aggregate function of q7's first stage: the bids with
// the highest price.
func q7MaxBids() agg.Function[nexmark.Bid, q7Max, q7Max] {
	return agg.Of(
		func() q7Max { return q7Max{} },
		func(a q7Max, b nexmark.Bid) q7Max {
			switch {
			case !a.Valid || b.Price > a.Max:
				return q7Max{Max: b.Price, Bids: append(a.Bids[:0], b), Valid: true}
			case b.Price == a.Max:
				a.Bids = append(a.Bids, b)
			}
			return a
		},
		func(a, b q7Max) q7Max {
			switch {
			case !b.Valid || (a.Valid && a.Max > b.Max):
				return a
			case !a.Valid || b.Max > a.Max:
				return b
			}
			a.Bids = append(a.Bids[:len(a.Bids):len(a.Bids)], b.Bids...)
			return a
		},
		func(a q7Max) q7Max { return a })
}

// q7Join is q7's second stage, keyed by the end of a window: it merges the
// per-bucket maxima of the window and, once the watermark has passed the
// window's end, emits the bids of the window with the highest price and
// the bids at exactly the end with that price (the SQL's BETWEEN includes
// both ends).
type q7Join struct {
	top      state.Value[q7Max]
	boundary state.List[nexmark.Bid]
}

func (f *q7Join) Open(ctx *eddy.KeyedContext[int64, Q7Result]) error {
	f.top = state.NewValue(ctx.Store(), state.ValueDescriptor[q7Max]{Name: "top"})
	f.boundary = state.NewList(ctx.Store(), state.ListDescriptor[nexmark.Bid]{Name: "boundary"})
	return nil
}

// ProcessElement1 merges the maxima of a bucket in the window ending at
// the key.
func (f *q7Join) ProcessElement1(ctx *eddy.KeyedContext[int64, Q7Result], w eddy.Windowed[int64, q7Max]) error {
	t, ok := f.top.Value()
	if !ok {
		ctx.RegisterEventTimeTimer(w.Window.End)
	}
	m := w.Value
	switch {
	case !ok || m.Max > t.Max:
		t = q7Max{Max: m.Max, Bids: append([]nexmark.Bid(nil), m.Bids...), Valid: true}
	case m.Max == t.Max:
		t.Bids = append(t.Bids, m.Bids...)
	default:
		return nil
	}
	f.top.Update(t)
	return nil
}

// ProcessElement2 keeps a bid made at exactly the end of the window (the
// key).
func (f *q7Join) ProcessElement2(ctx *eddy.KeyedContext[int64, Q7Result], b nexmark.Bid) error {
	f.boundary.Add(b)
	ctx.RegisterEventTimeTimer(b.DateTime)
	return nil
}

func (f *q7Join) OnTimer(ctx *eddy.KeyedContext[int64, Q7Result], _ int64) error {
	if t, ok := f.top.Value(); ok {
		for _, b := range t.Bids {
			ctx.Emit(q7Row(b))
		}
		for _, b := range f.boundary.Get() {
			if b.Price == t.Max {
				ctx.Emit(q7Row(b))
			}
		}
	}
	f.top.Clear()
	f.boundary.Clear()
	return nil
}

func q7Row(b nexmark.Bid) Q7Result {
	return Q7Result{Auction: b.Auction, Price: b.Price, Bidder: b.Bidder, DateTime: Time(b.DateTime), Extra: b.Extra}
}

// Q7 finds the bids with the highest price of every 10 s window:
//
//	SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra
//	from bid B
//	JOIN (SELECT MAX(price) AS maxprice, window_end as dateTime
//	      FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
//	      GROUP BY window_start, window_end) B1
//	ON B.price = B1.maxprice
//	WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime;
//
// A tumbling window keyed by a bucket of the auction (preAggBuckets) keeps
// the highest price of the bucket's bids and the bids that have it; a
// second stage keyed by window merges the buckets'. As
// BETWEEN includes the window's end, a bid at exactly the end of a window
// (the first instant of the next) that has the window's highest price is
// emitted for that window too; such bids reach the second stage directly.
func Q7(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q7Result] {
	return q7Stream(bidSource(env, cfg))
}

// q7Stream is q7 over a stream of bids.
func q7Stream(bids *eddy.Stream[nexmark.Bid]) *eddy.Stream[Q7Result] {
	maxima := eddy.Aggregate(eddy.Window(eddy.KeyBy(bids, func(b nexmark.Bid) int64 { return bucketOf(b.Auction) }),
		window.Tumbling(q7Window)), q7MaxBids()).Name("q7 maxima")
	size := q7Window.Milliseconds()
	boundary := eddy.Filter(bids, func(b nexmark.Bid) bool { return b.DateTime%size == 0 }).Name("q7 window ends")
	return eddy.CoProcessKeyed(eddy.ConnectKeyed(
		eddy.KeyBy(maxima, func(w eddy.Windowed[int64, q7Max]) int64 { return w.Window.End }),
		eddy.KeyBy(boundary, func(b nexmark.Bid) int64 { return b.DateTime })),
		func() eddy.KeyedCoProcessFunction[int64, eddy.Windowed[int64, q7Max], nexmark.Bid, Q7Result] {
			return &q7Join{}
		}).Name("q7 highest")
}

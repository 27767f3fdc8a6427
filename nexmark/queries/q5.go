package queries

import (
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
	"github.com/eddystream/eddy/window"
)

// Q5Result is a row of q5: an auction with the most bids in a window.
type Q5Result struct {
	Auction int64 `json:"auction"`
	Num     int64 `json:"num"`
}

// q5Top is the state of one window in q5's second stage: the largest count
// so far and the auctions that have it.
type q5Top struct {
	Max      int64
	Auctions []int64
}

// q5Hot keeps, per window (keyed by its end), the auctions with the
// largest count and emits them when the window is complete.
type q5Hot struct {
	top state.Value[q5Top]
}

func (f *q5Hot) Open(ctx *eddy.KeyedContext[int64, Q5Result]) error {
	f.top = state.NewValue(ctx.Store(), state.ValueDescriptor[q5Top]{Name: "top"})
	return nil
}

func (f *q5Hot) ProcessElement(ctx *eddy.KeyedContext[int64, Q5Result], c eddy.Windowed[int64, int64]) error {
	t, ok := f.top.Value()
	if !ok {
		// The counts of a window carry its last timestamp; once the
		// watermark reaches it, every count of the window is in.
		ctx.RegisterEventTimeTimer(c.Window.MaxTimestamp())
	}
	switch {
	case !ok || c.Value > t.Max:
		t.Max = c.Value
		t.Auctions = append(t.Auctions[:0], c.Key)
	case c.Value == t.Max:
		t.Auctions = append(t.Auctions, c.Key)
	default:
		return nil
	}
	f.top.Update(t)
	return nil
}

func (f *q5Hot) OnTimer(ctx *eddy.KeyedContext[int64, Q5Result], _ int64) error {
	t, _ := f.top.Value()
	for _, a := range t.Auctions {
		ctx.Emit(Q5Result{Auction: a, Num: t.Max})
	}
	f.top.Clear()
	return nil
}

// Q5 finds the hot items: per window of 10 s sliding every 2 s, the
// auctions with at least as many bids as every other auction:
//
//	SELECT AuctionBids.auction, AuctionBids.num
//	FROM (SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
//	      FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
//	      GROUP BY auction, window_start, window_end) AS AuctionBids
//	JOIN (SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
//	      FROM (…the same counts…) AS CountBids
//	      GROUP BY CountBids.starttime, CountBids.endtime) AS MaxBids
//	ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime
//	   AND AuctionBids.num >= MaxBids.maxn;
//
// The counts per auction and window come from a sliding window keyed by
// auction; a second stage keyed by window keeps the largest count's
// auctions and emits them when the watermark completes the window.
func Q5(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q5Result] {
	bids := bidSource(env, cfg)
	counts := eddy.Aggregate(eddy.Window(eddy.KeyBy(bids, func(b nexmark.Bid) int64 { return b.Auction }),
		window.Sliding(10*time.Second, 2*time.Second)), agg.Count[nexmark.Bid]()).Name("q5 counts")
	return eddy.ProcessKeyed(eddy.KeyBy(counts, func(c eddy.Windowed[int64, int64]) int64 { return c.Window.End }),
		func() eddy.KeyedProcessFunction[int64, eddy.Windowed[int64, int64], Q5Result] { return &q5Hot{} }).Name("q5 hot")
}

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

// preAggBuckets is the number of keys the windowed queries pre-aggregate
// under (q5, q7): records are keyed by a bucket of their auction, so that a
// window fires once per bucket rather than once per auction, and a second
// stage keyed by window combines the buckets' results.
const preAggBuckets = 128

// bucketOf returns the pre-aggregation bucket of an auction.
func bucketOf(auction int64) int64 { return auction % preAggBuckets }

// q5Counts is the accumulator of q5's first stage: the bid counts per
// auction of one pane, or, once panes are merged for a window, of each of
// the window's panes (merging only collects the panes' maps; Result adds
// them up).
type q5Counts struct {
	panes []map[int64]int64
}

// q5Top is the auctions with the most bids in a window (of a bucket, or of
// all of them) and their count.
type q5Top struct {
	Max      int64
	Auctions []int64
}

// offer adds an auction with n bids.
func (t *q5Top) offer(auction, n int64) {
	switch {
	case n > t.Max:
		t.Max = n
		t.Auctions = append(t.Auctions[:0], auction)
	case n == t.Max:
		t.Auctions = append(t.Auctions, auction)
	}
}

// q5CountBids is the aggregate function of q5's first stage.
func q5CountBids() agg.Function[nexmark.Bid, q5Counts, q5Top] {
	return agg.Of(
		func() q5Counts { return q5Counts{} },
		func(a q5Counts, b nexmark.Bid) q5Counts {
			if len(a.panes) == 0 {
				a.panes = []map[int64]int64{make(map[int64]int64)}
			}
			a.panes[0][b.Auction]++
			return a
		},
		func(a, b q5Counts) q5Counts {
			a.panes = append(a.panes[:len(a.panes):len(a.panes)], b.panes...)
			return a
		},
		func(a q5Counts) q5Top {
			var t q5Top
			for i, m := range a.panes {
			auctions:
				for auction, n := range m {
					// Count each auction once, from the first pane it is in.
					for _, earlier := range a.panes[:i] {
						if _, ok := earlier[auction]; ok {
							continue auctions
						}
					}
					for _, later := range a.panes[i+1:] {
						n += later[auction]
					}
					t.offer(auction, n)
				}
			}
			return t
		})
}

// q5Hot keeps, per window (keyed by its end), the auctions with the
// largest count over all buckets and emits them when the window is
// complete.
type q5Hot struct {
	top state.Value[q5Top]
}

func (f *q5Hot) Open(ctx *eddy.KeyedContext[int64, Q5Result]) error {
	f.top = state.NewValue(ctx.Store(), state.ValueDescriptor[q5Top]{Name: "top"})
	return nil
}

func (f *q5Hot) ProcessElement(ctx *eddy.KeyedContext[int64, Q5Result], c eddy.Windowed[int64, q5Top]) error {
	t, ok := f.top.Value()
	if !ok {
		// The results of a window carry its last timestamp; once the
		// watermark reaches it, every bucket's result is in.
		ctx.RegisterEventTimeTimer(c.Window.MaxTimestamp())
	}
	if ok && c.Value.Max < t.Max {
		return nil
	}
	if !ok || c.Value.Max > t.Max {
		t = q5Top{Max: c.Value.Max}
	}
	t.Auctions = append(t.Auctions, c.Value.Auctions...)
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
// A sliding window keyed by a bucket of the auction (preAggBuckets) counts
// the bids per auction in each pane and, when a window fires, adds up its
// panes and emits the bucket's most-bid auctions; a second stage keyed by
// window keeps the overall largest count's auctions and emits them when the
// watermark completes the window.
func Q5(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q5Result] {
	bids := bidSource(env, cfg)
	tops := eddy.Aggregate(eddy.Window(eddy.KeyBy(bids, func(b nexmark.Bid) int64 { return bucketOf(b.Auction) }),
		window.Sliding(10*time.Second, 2*time.Second)), q5CountBids()).Name("q5 counts")
	return eddy.ProcessKeyed(eddy.KeyBy(tops, func(c eddy.Windowed[int64, q5Top]) int64 { return c.Window.End }),
		func() eddy.KeyedProcessFunction[int64, eddy.Windowed[int64, q5Top], Q5Result] { return &q5Hot{} }).Name("q5 hot")
}

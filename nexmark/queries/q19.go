package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
)

// Q19Result is a change of q19's result table, keyed by (Auction,
// RankNumber).
type Q19Result struct {
	Op         RowKind `json:"op"`
	Auction    int64   `json:"auction"`
	Bidder     int64   `json:"bidder"`
	Price      int64   `json:"price"`
	Channel    string  `json:"channel"`
	URL        string  `json:"url"`
	DateTime   Time    `json:"dateTime"`
	Extra      string  `json:"extra"`
	RankNumber int64   `json:"rank_number"`
}

// q19N is the N of q19's top-N.
const q19N = 10

// q19Top keeps the top bids of every auction, best first.
type q19Top struct {
	top state.Value[[]nexmark.Bid]
	old []nexmark.Bid
}

func (f *q19Top) Open(ctx *eddy.KeyedContext[int64, Q19Result]) error {
	f.top = state.NewValue(ctx.Store(), state.ValueDescriptor[[]nexmark.Bid]{Name: "top"})
	return nil
}

func (f *q19Top) ProcessElement(ctx *eddy.KeyedContext[int64, Q19Result], b nexmark.Bid) error {
	top, _ := f.top.Value()
	// The rank the bid takes: after every bid that ranks before it.
	r := len(top)
	for r > 0 && betterBid(&b, &top[r-1]) {
		r--
	}
	if r >= q19N {
		return nil
	}
	// The rows from rank r on move down by one; the last falls out if the
	// list is full.
	f.old = append(f.old[:0], top[r:]...)
	if len(top) < q19N {
		top = append(top, nexmark.Bid{})
	}
	copy(top[r+1:], top[r:])
	top[r] = b
	for i := r; i < len(top); i++ {
		if k := i - r; k < len(f.old) {
			ctx.Emit(q19Row(UpdateBefore, &f.old[k], i+1))
			ctx.Emit(q19Row(UpdateAfter, &top[i], i+1))
		} else {
			ctx.Emit(q19Row(Insert, &top[i], i+1))
		}
	}
	clear(f.old)
	f.top.Update(top)
	return nil
}

func q19Row(op RowKind, b *nexmark.Bid, rank int) Q19Result {
	return Q19Result{Op: op, Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel,
		URL: b.URL, DateTime: Time(b.DateTime), Extra: b.Extra, RankNumber: int64(rank)}
}

// Q19 finds the 10 highest bids of every auction (a top-N):
//
//	SELECT * FROM
//	(SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid)
//	WHERE rank_number <= 10;
//
// It emits the changelog of the result table: a bid that enters the top 10
// at rank r updates the rows of ranks r to 10, as Flink's top-N with a row
// number does. Bids of equal price are ranked by dateTime, bidder and extra
// (Flink ranks them by arrival).
func Q19(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q19Result] {
	return eddy.ProcessKeyed(eddy.KeyBy(bidSource(env, cfg), func(b nexmark.Bid) int64 { return b.Auction }),
		func() eddy.KeyedProcessFunction[int64, nexmark.Bid, Q19Result] { return &q19Top{} }).Name("q19")
}

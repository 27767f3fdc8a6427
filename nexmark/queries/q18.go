package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
)

// Q18Result is a change of q18's result table, keyed by (Bidder, Auction).
type Q18Result struct {
	Op       RowKind `json:"op"`
	Auction  int64   `json:"auction"`
	Bidder   int64   `json:"bidder"`
	Price    int64   `json:"price"`
	Channel  string  `json:"channel"`
	URL      string  `json:"url"`
	DateTime Time    `json:"dateTime"`
	Extra    string  `json:"extra"`
}

// q18Key is q18's partition key.
type q18Key struct{ Bidder, Auction int64 }

// q18Last keeps the last bid per bidder and auction.
type q18Last struct {
	last state.Value[nexmark.Bid]
}

func (f *q18Last) Open(ctx *eddy.KeyedContext[q18Key, Q18Result]) error {
	f.last = state.NewValue(ctx.Store(), state.ValueDescriptor[nexmark.Bid]{Name: "last"})
	return nil
}

func (f *q18Last) ProcessElement(ctx *eddy.KeyedContext[q18Key, Q18Result], b nexmark.Bid) error {
	old, ok := f.last.Value()
	switch {
	case !ok:
		ctx.Emit(q18Row(Insert, &b))
	case b.DateTime >= old.DateTime:
		ctx.Emit(q18Row(UpdateBefore, &old))
		ctx.Emit(q18Row(UpdateAfter, &b))
	default:
		return nil
	}
	f.last.Update(b)
	return nil
}

func q18Row(op RowKind, b *nexmark.Bid) Q18Result {
	return Q18Result{Op: op, Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel,
		URL: b.URL, DateTime: Time(b.DateTime), Extra: b.Extra}
}

// Q18 finds the last bid of every bidder on every auction (a deduplication
// keeping the last row by event time):
//
//	SELECT auction, bidder, price, channel, url, dateTime, extra
//	FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC) AS rank_number
//	      FROM bid)
//	WHERE rank_number <= 1;
//
// It emits the changelog of the result table. As in Flink's event-time
// deduplication, a bid replaces the kept one if its dateTime is not
// earlier.
func Q18(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q18Result] {
	return eddy.ProcessKeyed(eddy.KeyBy(bidSource(env, cfg), func(b nexmark.Bid) q18Key { return q18Key{b.Bidder, b.Auction} }),
		func() eddy.KeyedProcessFunction[q18Key, nexmark.Bid, Q18Result] { return &q18Last{} }).Name("q18")
}

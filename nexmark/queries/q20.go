package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
)

// Q20Result is a row of q20: a bid with its auction.
type Q20Result struct {
	Auction         int64  `json:"auction"`
	Bidder          int64  `json:"bidder"`
	Price           int64  `json:"price"`
	Channel         string `json:"channel"`
	URL             string `json:"url"`
	BidDateTime     Time   `json:"bid_dateTime"`
	BidExtra        string `json:"bid_extra"`
	ItemName        string `json:"itemName"`
	Description     string `json:"description"`
	InitialBid      int64  `json:"initialBid"`
	Reserve         int64  `json:"reserve"`
	AuctionDateTime Time   `json:"auction_dateTime"`
	Expires         Time   `json:"expires"`
	Seller          int64  `json:"seller"`
	Category        int64  `json:"category"`
	AuctionExtra    string `json:"auction_extra"`
}

// q20Join joins bids to their auction, keyed by auction id. kind says
// whether the auction has arrived and whether it is in category 10 (a
// small value without pointers, read for every bid); the auction itself is
// kept only if it is in category 10.
type q20Join struct {
	kind    state.Value[int8]
	auction state.Value[nexmark.Auction]
	pending state.List[nexmark.Bid]
}

// The values of q20Join.kind.
const (
	q20Other    int8 = 1 // the auction is not in category 10
	q20Category int8 = 2 // the auction is in category 10
)

func (f *q20Join) Open(ctx *eddy.KeyedContext[int64, Q20Result]) error {
	f.kind = state.NewValue(ctx.Store(), state.ValueDescriptor[int8]{Name: "kind"})
	f.auction = state.NewValue(ctx.Store(), state.ValueDescriptor[nexmark.Auction]{Name: "auction"})
	f.pending = state.NewList(ctx.Store(), state.ListDescriptor[nexmark.Bid]{Name: "pending-bids"})
	return nil
}

func (f *q20Join) ProcessElement1(ctx *eddy.KeyedContext[int64, Q20Result], b nexmark.Bid) error {
	switch k, _ := f.kind.Value(); k {
	case 0:
		f.pending.Add(b)
	case q20Category:
		a, _ := f.auction.Value()
		ctx.Emit(q20Row(&b, &a))
	}
	return nil
}

func (f *q20Join) ProcessElement2(ctx *eddy.KeyedContext[int64, Q20Result], a nexmark.Auction) error {
	match := a.Category == 10
	if match {
		f.kind.Update(q20Category)
		f.auction.Update(a)
	} else {
		f.kind.Update(q20Other)
	}
	if bids := f.pending.Get(); len(bids) > 0 {
		if match {
			for i := range bids {
				ctx.Emit(q20Row(&bids[i], &a))
			}
		}
		f.pending.Clear()
	}
	return nil
}

func q20Row(b *nexmark.Bid, a *nexmark.Auction) Q20Result {
	return Q20Result{
		Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel, URL: b.URL,
		BidDateTime: Time(b.DateTime), BidExtra: b.Extra,
		ItemName: a.ItemName, Description: a.Description, InitialBid: a.InitialBid, Reserve: a.Reserve,
		AuctionDateTime: Time(a.DateTime), Expires: Time(a.Expires), Seller: a.Seller, Category: a.Category,
		AuctionExtra: a.Extra,
	}
}

// Q20 joins bids to their auction where the auction is in category 10, an
// unbounded regular join:
//
//	SELECT auction, bidder, price, channel, url, B.dateTime, B.extra,
//	  itemName, description, initialBid, reserve, A.dateTime, expires, seller, category, A.extra
//	FROM bid AS B INNER JOIN auction AS A on B.auction = A.id
//	WHERE A.category = 10;
//
// Keyed by auction id: an auction is kept (a marker if it is not in
// category 10, so its bids are dropped on arrival); a bid is kept only until
// its auction arrives (auction ids are unique).
func Q20(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q20Result] {
	events := eventSource(env, cfg, auctionKind|bidKind)
	return eddy.CoProcessKeyed(eddy.ConnectKeyed(
		eddy.KeyBy(bidsOf(events), func(b nexmark.Bid) int64 { return b.Auction }),
		eddy.KeyBy(auctionsOf(events, nil), func(a nexmark.Auction) int64 { return a.ID })),
		func() eddy.KeyedCoProcessFunction[int64, nexmark.Bid, nexmark.Auction, Q20Result] { return &q20Join{} }).Name("q20")
}

// q20Auction is what the join keeps of an auction: the whole row if it is
// in category 10, and otherwise its id and category alone, which the join
// condition rejects; so that a bid of such an auction finds it and is
// dropped, without keeping its columns.
func q20Auction(a nexmark.Auction) nexmark.Auction {
	if a.Category == 10 {
		return a
	}
	return nexmark.Auction{ID: a.ID, Category: a.Category}
}

// q20OnJoin is q20 as Flink plans it, on the regular join: the bids joined
// with the auctions, which are unique on their id
// (JoinKeyContainsUniqueKey), so that the join keeps a bid only until its
// auction arrives. The category is a condition of the join rather than a
// filter before it, so that a bid of an auction in another category finds
// its auction and is dropped instead of waiting for one for ever; such an
// auction is kept as its id and category alone (q20Auction). Its results
// are Q20's; Q20 stays a keyed function, which is faster (see
// BenchmarkQ20Variants).
func q20OnJoin(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q20Result] {
	return q20Plan(env, cfg, eddy.JoinKeyContainsUniqueKey(eddy.RightSide))
}

// q20Plan is q20OnJoin with the join's options opts.
func q20Plan(env *eddy.Environment, cfg nexmark.Config, opts ...eddy.TableOption) *eddy.Stream[Q20Result] {
	events := eventSource(env, cfg, auctionKind|bidKind)
	bids := eddy.AsChangelog(eddy.FlatMap(events, func(e event, emit func(changelog.Change[nexmark.Bid])) {
		if e.kind == nexmark.BidEvent {
			emit(changelog.InsertOf(e.bid))
		}
	}).Name("bids"), changelog.InsertOnly)
	auctions := eddy.AsChangelog(eddy.FlatMap(events, func(e event, emit func(changelog.Change[nexmark.Auction])) {
		if e.kind == nexmark.AuctionEvent {
			emit(changelog.InsertOf(q20Auction(*e.auction)))
		}
	}).Name("auctions"), changelog.InsertOnly)
	joined := eddy.JoinOn(
		eddy.GroupBy(bids, func(b nexmark.Bid) int64 { return b.Auction }),
		eddy.GroupBy(auctions, func(a nexmark.Auction) int64 { return a.ID }),
		eddy.InnerJoin, func(_ nexmark.Bid, a nexmark.Auction) bool { return a.Category == 10 }, q20Row,
		opts...).Name("q20")
	return eddy.Map(joined, func(c changelog.Change[Q20Result]) Q20Result { return c.Row }).Name("result rows")
}

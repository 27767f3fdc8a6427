package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
)

// Q9Result is a row of q9: an auction and its winning bid.
type Q9Result struct {
	ID          int64  `json:"id"`
	ItemName    string `json:"itemName"`
	Description string `json:"description"`
	InitialBid  int64  `json:"initialBid"`
	Reserve     int64  `json:"reserve"`
	DateTime    Time   `json:"dateTime"`
	Expires     Time   `json:"expires"`
	Seller      int64  `json:"seller"`
	Category    int64  `json:"category"`
	Extra       string `json:"extra"`
	Auction     int64  `json:"auction"`
	Bidder      int64  `json:"bidder"`
	Price       int64  `json:"price"`
	BidDateTime Time   `json:"bid_dateTime"`
	BidExtra    string `json:"bid_extra"`
}

// betterBid reports whether bid a ranks before bid b in q9's order: price
// descending, then dateTime ascending; then, where the SQL leaves the order
// to arrival, bidder and extra ascending.
func betterBid(a, b *nexmark.Bid) bool {
	if a.Price != b.Price {
		return a.Price > b.Price
	}
	if a.DateTime != b.DateTime {
		return a.DateTime < b.DateTime
	}
	if a.Bidder != b.Bidder {
		return a.Bidder < b.Bidder
	}
	return a.Extra < b.Extra
}

// q9State is an auction in q9's state with its best bid so far; once the
// auction has closed only Closed is kept, so that later bids are dropped.
type q9State struct {
	Auction nexmark.Auction
	Best    nexmark.Bid
	HasBest bool
	Closed  bool
}

// q9Winner tracks, per auction, the best bid made between its dateTime and
// expires, and emits it when the watermark passes expires.
type q9Winner struct {
	auction state.Value[q9State]
	pending state.List[nexmark.Bid]
}

func (f *q9Winner) Open(ctx *eddy.KeyedContext[int64, Q9Result]) error {
	f.auction = state.NewValue(ctx.Store(), state.ValueDescriptor[q9State]{Name: "auction"})
	f.pending = state.NewList(ctx.Store(), state.ListDescriptor[nexmark.Bid]{Name: "pending-bids"})
	return nil
}

func (s *q9State) offer(b *nexmark.Bid) bool {
	if b.DateTime < s.Auction.DateTime || b.DateTime > s.Auction.Expires {
		return false
	}
	if s.HasBest && !betterBid(b, &s.Best) {
		return false
	}
	s.Best, s.HasBest = *b, true
	return true
}

func (f *q9Winner) ProcessElement1(ctx *eddy.KeyedContext[int64, Q9Result], a nexmark.Auction) error {
	s := q9State{Auction: a}
	if bids := f.pending.Get(); len(bids) > 0 {
		for i := range bids {
			s.offer(&bids[i])
		}
		f.pending.Clear()
	}
	f.auction.Update(s)
	// A bid at exactly expires still counts; the watermark passes expires
	// once every such bid has arrived.
	ctx.RegisterEventTimeTimer(a.Expires)
	return nil
}

func (f *q9Winner) ProcessElement2(_ *eddy.KeyedContext[int64, Q9Result], b nexmark.Bid) error {
	s, ok := f.auction.Value()
	switch {
	case !ok:
		f.pending.Add(b)
	case !s.Closed && s.offer(&b):
		f.auction.Update(s)
	}
	return nil
}

func (f *q9Winner) OnTimer(ctx *eddy.KeyedContext[int64, Q9Result], _ int64) error {
	s, ok := f.auction.Value()
	if !ok || s.Closed {
		return nil
	}
	if s.HasBest {
		a, b := &s.Auction, &s.Best
		ctx.Emit(Q9Result{
			ID: a.ID, ItemName: a.ItemName, Description: a.Description, InitialBid: a.InitialBid,
			Reserve: a.Reserve, DateTime: Time(a.DateTime), Expires: Time(a.Expires), Seller: a.Seller,
			Category: a.Category, Extra: a.Extra,
			Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, BidDateTime: Time(b.DateTime), BidExtra: b.Extra,
		})
	}
	f.auction.Update(q9State{Closed: true})
	return nil
}

// Q9 finds the winning bid of every auction: the highest bid (the earliest
// of equal ones) made between the auction's dateTime and expires:
//
//	SELECT id, itemName, description, initialBid, reserve, dateTime, expires, seller, category, extra,
//	       auction, bidder, price, bid_dateTime, bid_extra
//	FROM (SELECT A.*, B.auction, B.bidder, B.price, B.dateTime AS bid_dateTime, B.extra AS bid_extra,
//	        ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.dateTime ASC) AS rownum
//	      FROM auction A, bid B
//	      WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires)
//	WHERE rownum <= 1;
//
// Bids and auctions are keyed by auction id. The winner is emitted once,
// when the watermark passes the auction's expiry (timestamped then); the
// auction then leaves only a marker in state. Auctions without a bid in
// their time range have no row.
func Q9(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q9Result] {
	return winningBids(eventSource(env, cfg, auctionKind|bidKind)).Name("q9")
}

// winningBids is q9 over an event stream.
func winningBids(events *eddy.Stream[event]) *eddy.Stream[Q9Result] {
	return eddy.CoProcessKeyed(eddy.ConnectKeyed(
		eddy.KeyBy(auctionsOf(events, nil), func(a nexmark.Auction) int64 { return a.ID }),
		eddy.KeyBy(bidsOf(events), func(b nexmark.Bid) int64 { return b.Auction })),
		func() eddy.KeyedCoProcessFunction[int64, nexmark.Auction, nexmark.Bid, Q9Result] { return &q9Winner{} })
}

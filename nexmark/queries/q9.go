package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
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

// q9Meta is what q9 keeps of an auction to check every bid against: its
// time range and the price and time of its best bid so far. It holds no
// pointers, so the garbage collector need not scan its table. Once the
// auction has closed, only Closed is set, so that later bids are dropped.
type q9Meta struct {
	DateTime, Expires   int64
	BestPrice, BestTime int64
	HasBest, Closed     bool
}

// q9Winner tracks, per auction, the best bid made between its dateTime and
// expires, and emits it when the watermark passes expires.
type q9Winner struct {
	meta    state.Value[q9Meta]
	auction state.Value[nexmark.Auction]
	best    state.Value[nexmark.Bid]
	pending state.List[nexmark.Bid]
}

func (f *q9Winner) Open(ctx *eddy.KeyedContext[int64, Q9Result]) error {
	f.meta = state.NewValue(ctx.Store(), state.ValueDescriptor[q9Meta]{Name: "meta"})
	f.auction = state.NewValue(ctx.Store(), state.ValueDescriptor[nexmark.Auction]{Name: "auction"})
	f.best = state.NewValue(ctx.Store(), state.ValueDescriptor[nexmark.Bid]{Name: "best"})
	f.pending = state.NewList(ctx.Store(), state.ListDescriptor[nexmark.Bid]{Name: "pending-bids"})
	return nil
}

// offer makes b the auction's best bid if it is in the auction's time range
// and ranks before the best so far, and reports whether it did.
func (f *q9Winner) offer(m *q9Meta, b *nexmark.Bid) bool {
	if b.DateTime < m.DateTime || b.DateTime > m.Expires {
		return false
	}
	if m.HasBest {
		if b.Price < m.BestPrice || (b.Price == m.BestPrice && b.DateTime > m.BestTime) {
			return false
		}
		if b.Price == m.BestPrice && b.DateTime == m.BestTime {
			if best, _ := f.best.Value(); !betterBid(b, &best) {
				return false
			}
		}
	}
	m.BestPrice, m.BestTime, m.HasBest = b.Price, b.DateTime, true
	f.best.Update(*b)
	return true
}

func (f *q9Winner) ProcessElement1(ctx *eddy.KeyedContext[int64, Q9Result], a nexmark.Auction) error {
	m := q9Meta{DateTime: a.DateTime, Expires: a.Expires}
	if bids := f.pending.Get(); len(bids) > 0 {
		for i := range bids {
			f.offer(&m, &bids[i])
		}
		f.pending.Clear()
	}
	f.meta.Update(m)
	f.auction.Update(a)
	// A bid at exactly expires still counts; the watermark passes expires
	// once every such bid has arrived.
	ctx.RegisterEventTimeTimer(a.Expires)
	return nil
}

func (f *q9Winner) ProcessElement2(_ *eddy.KeyedContext[int64, Q9Result], b nexmark.Bid) error {
	m, ok := f.meta.Value()
	switch {
	case !ok:
		f.pending.Add(b)
	case !m.Closed && f.offer(&m, &b):
		f.meta.Update(m)
	}
	return nil
}

func (f *q9Winner) OnTimer(ctx *eddy.KeyedContext[int64, Q9Result], _ int64) error {
	m, ok := f.meta.Value()
	if !ok || m.Closed {
		return nil
	}
	if m.HasBest {
		a, _ := f.auction.Value()
		b, _ := f.best.Value()
		ctx.Emit(Q9Result{
			ID: a.ID, ItemName: a.ItemName, Description: a.Description, InitialBid: a.InitialBid,
			Reserve: a.Reserve, DateTime: Time(a.DateTime), Expires: Time(a.Expires), Seller: a.Seller,
			Category: a.Category, Extra: a.Extra,
			Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, BidDateTime: Time(b.DateTime), BidExtra: b.Extra,
		})
	}
	f.meta.Update(q9Meta{Closed: true})
	f.auction.Clear()
	f.best.Clear()
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
// auction then leaves only a small marker in state, so that its later bids
// are dropped. Auctions without a bid in
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

// q9Pair is a row of q9's join: an auction and one of its bids.
type q9Pair struct {
	A nexmark.Auction
	B nexmark.Bid
}

// q9OnJoin is q9 as Flink plans it: the auctions (unique on their id,
// insert-only) joined with their bids on the id and the auction's time
// range, then the first row of every auction in q9's order (TopN, n = 1).
// Its result is the changelog of the winning bids: a new best bid of an
// auction updates its row, and the final table is Q9's result. The join
// keeps a bid only until its auction arrives, but the auctions and the top
// bid of each stay for ever. Q9 stays a keyed function, which is faster and
// forgets an auction when it closes (see BenchmarkQ9Variants).
func q9OnJoin(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[changelog.Change[Q9Result]] {
	events := eventSource(env, cfg, auctionKind|bidKind)
	bids := eddy.AsChangelog(eddy.FlatMap(events, func(e event, emit func(changelog.Change[nexmark.Bid])) {
		if e.kind == nexmark.BidEvent {
			emit(changelog.InsertOf(e.bid))
		}
	}).Name("bids"), changelog.InsertOnly)
	auctions := eddy.AsChangelog(eddy.FlatMap(events, func(e event, emit func(changelog.Change[nexmark.Auction])) {
		if e.kind == nexmark.AuctionEvent {
			emit(changelog.InsertOf(*e.auction))
		}
	}).Name("auctions"), changelog.InsertOnly)
	pairs := eddy.JoinOn(
		eddy.GroupBy(auctions, func(a nexmark.Auction) int64 { return a.ID }),
		eddy.GroupBy(bids, func(b nexmark.Bid) int64 { return b.Auction }),
		eddy.InnerJoin, func(a nexmark.Auction, b nexmark.Bid) bool {
			return b.DateTime >= a.DateTime && b.DateTime <= a.Expires
		},
		func(a *nexmark.Auction, b *nexmark.Bid) q9Pair { return q9Pair{*a, *b} },
		eddy.JoinKeyContainsUniqueKey(eddy.LeftSide)).Name("q9 join")
	best := eddy.TopN(eddy.GroupBy(pairs, func(p q9Pair) int64 { return p.A.ID }), 1,
		func(x, y q9Pair) bool { return betterBid(&x.B, &y.B) }).Name("q9 top 1")
	return eddy.MapRows(best, func(p q9Pair) Q9Result {
		a, b := &p.A, &p.B
		return Q9Result{
			ID: a.ID, ItemName: a.ItemName, Description: a.Description, InitialBid: a.InitialBid,
			Reserve: a.Reserve, DateTime: Time(a.DateTime), Expires: Time(a.Expires), Seller: a.Seller,
			Category: a.Category, Extra: a.Extra,
			Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, BidDateTime: Time(b.DateTime), BidExtra: b.Extra,
		}
	})
}

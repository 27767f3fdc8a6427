package nexmark_test

import (
	"fmt"
	"os"

	"github.com/eddystream/eddy/nexmark"
)

func Example() {
	cfg := nexmark.DefaultConfig()
	cfg.MaxEvents = 6
	g, err := nexmark.NewGenerator(cfg, 0, 1)
	if err != nil {
		panic(err)
	}
	batch := make([]nexmark.Event, 4)
	for {
		n := g.NextBatch(batch)
		if n == 0 {
			break
		}
		for i := range batch[:n] {
			e := &batch[i]
			switch e.Type {
			case nexmark.AuctionEvent:
				fmt.Printf("auction %d by seller %d in category %d\n", e.Auction.ID, e.Auction.Seller, e.Auction.Category)
			case nexmark.BidEvent:
				fmt.Printf("bid on auction %d by bidder %d at %s\n", e.Bid.Auction, e.Bid.Bidder, e.Bid.Time().Format("15:04:05.000"))
			}
		}
	}
	fmt.Println("events:", g.Position())

	// One JSON line per event, in the shape of the reference DDL.
	e := nexmark.Event{Type: nexmark.BidEvent, Bid: nexmark.Bid{
		Auction: 1000, Bidder: 2001, Price: 4242, Channel: "Apple",
		URL: "https://www.nexmark.com/a/b/c/item.htm?query=1", DateTime: nexmark.DefaultBaseTime,
	}}
	if err := nexmark.WriteJSON(os.Stdout, &e); err != nil {
		panic(err)
	}
	// Output:
	// auction 1001 by seller 1006 in category 14
	// auction 1002 by seller 1000 in category 14
	// bid on auction 1000 by bidder 2007 at 00:00:00.000
	// bid on auction 1000 by bidder 2001 at 00:00:00.000
	// bid on auction 1000 by bidder 2001 at 00:00:00.000
	// bid on auction 1006 by bidder 2001 at 00:00:00.000
	// events: 6
	// {"event_type":2,"person":null,"auction":null,"bid":{"auction":1000,"bidder":2001,"price":4242,"channel":"Apple","url":"https://www.nexmark.com/a/b/c/item.htm?query=1","dateTime":"2026-01-01T00:00:00.000Z","extra":""}}
}

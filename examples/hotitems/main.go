// Command hotitems is the Go API in a dozen lines: it counts the bids per
// auction of the built-in Nexmark generator in 10-second windows sliding
// every 2 seconds, and prints the counts of auctions with many bids.
//
//	go run ./examples/hotitems -events 1000000
package main

import (
	"context"
	"flag"
	"log"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/window"
)

func main() {
	events := flag.Int64("events", 1_000_000, "Nexmark events to generate")
	flag.Parse()

	cfg := nexmark.DefaultConfig()
	cfg.MaxEvents = *events
	cfg.FirstEventRate = 100_000 // events per second of event time

	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	bids := nexmark.Bids(env, cfg)
	perAuction := eddy.KeyBy(bids, func(b nexmark.Bid) int64 { return b.Auction })
	counts := eddy.Aggregate(eddy.Window(perAuction, window.Sliding(10*time.Second, 2*time.Second)), agg.Count[nexmark.Bid]())
	hot := eddy.Filter(counts, func(w eddy.Windowed[int64, int64]) bool { return w.Value >= 800 })
	eddy.Print(hot)
	if err := env.Execute(context.Background(), "hot-items"); err != nil {
		log.Fatal(err)
	}
}

package queries

import (
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/window"
)

// Q12Result is a row of q12: a bidder's bids in a processing-time window.
type Q12Result struct {
	Bidder    int64 `json:"bidder"`
	BidCount  int64 `json:"bid_count"`
	Starttime Time  `json:"starttime"`
	Endtime   Time  `json:"endtime"`
}

// Q12 counts the bids of every bidder in tumbling windows of 10 s of
// processing time:
//
//	CREATE VIEW B AS SELECT *, PROCTIME() as p_time FROM bid;
//	SELECT bidder, count(*) as bid_count, window_start AS starttime, window_end AS endtime
//	FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
//	GROUP BY bidder, window_start, window_end;
//
// Windows still open when the input ends fire then.
func Q12(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q12Result] {
	bids := bidSource(env, cfg)
	counts := eddy.Aggregate(eddy.Window(eddy.KeyBy(bids, func(b nexmark.Bid) int64 { return b.Bidder }),
		window.Tumbling(10*time.Second).InProcessingTime()), agg.Count[nexmark.Bid]()).Name("q12 counts")
	return eddy.Map(counts, func(w eddy.Windowed[int64, int64]) Q12Result {
		return Q12Result{Bidder: w.Key, BidCount: w.Value, Starttime: Time(w.Window.Start), Endtime: Time(w.Window.End)}
	}).Name("q12")
}

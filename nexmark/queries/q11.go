package queries

import (
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/window"
)

// Q11Result is a row of q11: a bidder's session.
type Q11Result struct {
	Bidder   int64 `json:"bidder"`
	BidCount int64 `json:"bid_count"`
	// Starttime is the time of the session's first bid.
	Starttime Time `json:"starttime"`
	// Endtime is the time of its last bid plus the 10 s gap.
	Endtime Time `json:"endtime"`
}

// Q11 counts the bids of every bidder's sessions (a gap of 10 s closes a
// session):
//
//	SELECT B.bidder, count(*) as bid_count,
//	  SESSION_START(B.dateTime, INTERVAL '10' SECOND) as starttime,
//	  SESSION_END(B.dateTime, INTERVAL '10' SECOND) as endtime
//	FROM bid B GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND);
func Q11(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q11Result] {
	bids := bidSource(env, cfg)
	sessions := eddy.Aggregate(eddy.Window(eddy.KeyBy(bids, func(b nexmark.Bid) int64 { return b.Bidder }),
		window.Session(10*time.Second)), agg.Count[nexmark.Bid]()).Name("q11 sessions")
	return eddy.Map(sessions, func(w eddy.Windowed[int64, int64]) Q11Result {
		return Q11Result{Bidder: w.Key, BidCount: w.Value, Starttime: Time(w.Window.Start), Endtime: Time(w.Window.End)}
	}).Name("q11")
}

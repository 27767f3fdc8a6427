package queries

import (
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// bruteStats computes the counts of q15 and q16 over bids.
func bruteStats(bids []nexmark.Bid) bidStats {
	var s bidStats
	bidders := [4]map[int64]bool{{}, {}, {}, {}}
	auctions := [4]map[int64]bool{{}, {}, {}, {}}
	for _, b := range bids {
		r := 2
		if b.Price < 10000 {
			r = 0
		} else if b.Price < 1000000 {
			r = 1
		}
		s.Bids++
		s.RankBids[r]++
		bidders[3][b.Bidder], bidders[r][b.Bidder] = true, true
		auctions[3][b.Auction], auctions[r][b.Auction] = true, true
	}
	s.Bidders, s.Auctions = int64(len(bidders[3])), int64(len(auctions[3]))
	for r := range 3 {
		s.RankBidders[r], s.RankAuctions[r] = int64(len(bidders[r])), int64(len(auctions[r]))
	}
	return s
}

func TestQ15(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		byDay := map[string][]nexmark.Bid{}
		for _, b := range d.bids {
			day := time.UnixMilli(b.DateTime).UTC().Format("2006-01-02")
			byDay[day] = append(byDay[day], b)
		}
		if len(byDay) < 2 {
			t.Fatalf("the test data spans %d days", len(byDay))
		}
		want := map[string]Q15Result{}
		for day, bids := range byDay {
			s := bruteStats(bids)
			want[day] = q15Row(Insert, day, &s)
		}
		log := run(t, p, func(env *eddy.Environment) *eddy.Stream[Q15Result] { return Q15(env, cfg) })
		sameTable(t, materialize(t, log, func(r Q15Result) string { return r.Day }), want)
	})
}

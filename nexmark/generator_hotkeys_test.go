package nexmark

import (
	"math"
	"strings"
	"testing"
)

// within fails the test unless got is within tol of want.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.4f, want %.4f ± %.4f", what, got, want, tol)
	}
}

// The generator is deterministic, so these frequencies are fixed numbers;
// the bounds are several standard deviations wide so that they also hold
// for other seeds.
func TestHotKeyFrequencies(t *testing.T) {
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	if err := g.SetPosition(10_000_000); err != nil {
		t.Fatal(err)
	}
	var bids, hotAuction, hotBidder, hotChannel, channelID float64
	var auctions, hotSeller float64
	perHot := map[string]float64{}
	for _, e := range generateIDs(t, g, 400_000) {
		epoch := e.id / 50
		switch e.Type {
		case BidEvent:
			bids++
			if e.Bid.Auction-FirstAuctionID == (epoch*3+2)/100*100 {
				hotAuction++
			}
			if e.Bid.Bidder-2*FirstPersonID == epoch/100*100+1 {
				hotBidder++
			}
			if strings.HasPrefix(e.Bid.Channel, "channel-") {
				if strings.Contains(e.Bid.URL, "&channel_id=") {
					channelID++
				}
			} else {
				hotChannel++
				perHot[e.Bid.Channel]++
			}
		case AuctionEvent:
			auctions++
			if e.Auction.Seller-FirstPersonID == epoch/100*100 {
				hotSeller++
			}
		}
	}
	// P(hot) = 1 - 1/ratio, plus the small chance that the uniform choice
	// picks the hot key (1 in 111 auctions, 1 in 1010 people).
	within(t, "hot auction share", hotAuction/bids, 0.5+0.5/111, 0.006)
	within(t, "hot bidder share", hotBidder/bids, 0.75+0.25/1010, 0.006)
	within(t, "hot seller share", hotSeller/auctions, 0.75+0.25/1010, 0.02)
	within(t, "hot channel share", hotChannel/bids, 0.5, 0.006)
	for _, name := range hotChannels {
		within(t, "share of hot channel "+name, perHot[name]/hotChannel, 0.25, 0.01)
	}
	within(t, "share of cached channels with channel_id", channelID/(bids-hotChannel), 0.9, 0.01)
}

func TestHotRatioOneDisablesHotKeys(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HotAuctionRatio, cfg.HotBiddersRatio, cfg.HotSellersRatio = 1, 1, 1
	g := newTestGenerator(t, cfg, 0, 1)
	if err := g.SetPosition(10_000_000); err != nil {
		t.Fatal(err)
	}
	var bids, hotAuction float64
	for _, e := range generateIDs(t, g, 100_000) {
		if e.Type == BidEvent {
			bids++
			if e.Bid.Auction-FirstAuctionID == (e.id/50*3+2)/100*100 {
				hotAuction++
			}
		}
	}
	// Only the uniform choice can hit the hot auction now.
	within(t, "hot auction share", hotAuction/bids, 1.0/111, 0.004)
}

func TestNonHotChoicesAreUniform(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HotAuctionRatio = 1
	g := newTestGenerator(t, cfg, 0, 1)
	if err := g.SetPosition(10_000_000); err != nil {
		t.Fatal(err)
	}
	// Offsets from the lowest in-flight auction are uniform over 0..110.
	var counts [111]float64
	var n float64
	for _, e := range generateIDs(t, g, 300_000) {
		if e.Type == BidEvent {
			last := e.id/50*3 + 2
			counts[e.Bid.Auction-FirstAuctionID-(last-100)]++
			n++
		}
	}
	for i, c := range counts {
		within(t, "share of auction offset "+string(rune('0'+i%10)), c/n, 1.0/111, 0.0015)
	}
}

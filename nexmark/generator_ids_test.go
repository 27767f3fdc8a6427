package nexmark

import "testing"

// checkIDs verifies the id formulas of the reference for every event.
func checkIDs(t *testing.T, cfg Config, evs []idEvent) {
	t.Helper()
	bidderBase := int64(FirstPersonID)
	if cfg.BidderDoubleOffset {
		bidderBase += FirstPersonID
	}
	active := int64(cfg.NumActivePeople)
	inFlight := int64(cfg.NumInFlightAuctions)
	for _, e := range evs {
		epoch, off := e.id/50, e.id%50
		lastPerson := epoch // base 0, one person per epoch
		lastAuction := epoch*3 + 2
		numPeople := lastPerson + 1
		peopleLo := numPeople - min(numPeople, active)
		peopleHi := numPeople + 10 // exclusive
		switch e.Type {
		case PersonEvent:
			if want := e.id/50 + 1000; e.Person.ID != want {
				t.Fatalf("event %d: person id %d, want %d", e.id, e.Person.ID, want)
			}
		case AuctionEvent:
			a := e.Auction
			if want := epoch*3 + (off - 1) + 1000; a.ID != want {
				t.Fatalf("event %d: auction id %d, want %d", e.id, a.ID, want)
			}
			s := a.Seller - FirstPersonID
			if s != lastPerson/100*100 && (s < peopleLo || s >= peopleHi) {
				t.Fatalf("event %d: seller %d (base 0 %d) neither hot nor in [%d, %d)", e.id, a.Seller, s, peopleLo, peopleHi)
			}
			if a.Category < 10 || a.Category > 14 {
				t.Fatalf("event %d: category %d outside 10..14", e.id, a.Category)
			}
			if a.Reserve < a.InitialBid+100 || a.Expires <= a.DateTime {
				t.Fatalf("event %d: reserve %d initialBid %d expires %d dateTime %d", e.id, a.Reserve, a.InitialBid, a.Expires, a.DateTime)
			}
		case BidEvent:
			b := e.Bid
			au := b.Auction - FirstAuctionID
			lo := max(lastAuction-inFlight, 0)
			if au != lastAuction/100*100 && (au < lo || au > lastAuction+10) {
				t.Fatalf("event %d: auction %d (base 0 %d) neither hot nor in [%d, %d]", e.id, b.Auction, au, lo, lastAuction+10)
			}
			bi := b.Bidder - bidderBase
			if bi != lastPerson/100*100+1 && (bi < peopleLo || bi >= peopleHi) {
				t.Fatalf("event %d: bidder %d (base 0 %d) neither hot nor in [%d, %d)", e.id, b.Bidder, bi, peopleLo, peopleHi)
			}
		}
	}
}

func TestIDFormulas(t *testing.T) {
	for _, double := range []bool{true, false} {
		cfg := DefaultConfig()
		cfg.BidderDoubleOffset = double
		g := newTestGenerator(t, cfg, 0, 1)
		checkIDs(t, cfg, generateIDs(t, g, 20000))
		// Far into the stream, where the active-people window is full.
		if err := g.SetPosition(500_000_000); err != nil {
			t.Fatal(err)
		}
		checkIDs(t, cfg, generateIDs(t, g, 20000))
	}
}

func TestBidderDoubleOffset(t *testing.T) {
	// The same event gets a bidder 1000 higher with the reference's quirk.
	on, off := DefaultConfig(), DefaultConfig()
	off.BidderDoubleOffset = false
	a := generateIDs(t, newTestGenerator(t, on, 0, 1), 1000)
	b := generateIDs(t, newTestGenerator(t, off, 0, 1), 1000)
	bids := 0
	for i := range a {
		if a[i].Type != BidEvent {
			continue
		}
		bids++
		if a[i].Bid.Bidder != b[i].Bid.Bidder+FirstPersonID {
			t.Fatalf("event %d: bidder %d with the double offset, %d without; want a difference of %d",
				a[i].id, a[i].Bid.Bidder, b[i].Bid.Bidder, FirstPersonID)
		}
		a[i].Bid.Bidder = b[i].Bid.Bidder
		if a[i].Event != b[i].Event {
			t.Fatalf("event %d differs in more than the bidder", a[i].id)
		}
	}
	if bids == 0 {
		t.Fatal("no bids generated")
	}
}

func TestHotBidderJoinsPersonWithoutDoubleOffset(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BidderDoubleOffset = false
	evs := generateIDs(t, newTestGenerator(t, cfg, 0, 1), 20000)
	persons := map[int64]bool{}
	joined, bids := 0, 0
	for _, e := range evs {
		switch e.Type {
		case PersonEvent:
			persons[e.Person.ID] = true
		case BidEvent:
			bids++
			if persons[e.Bid.Bidder] {
				joined++
			}
		}
	}
	// Most bidders are people generated before the bid (hot bidders are the
	// second person of the last batch of 100, which may not exist yet).
	if joined < bids/2 {
		t.Fatalf("only %d of %d bids name an earlier person", joined, bids)
	}
}

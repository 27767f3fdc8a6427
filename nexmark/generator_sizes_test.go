package nexmark

import "testing"

// referenceSize is the byte count the reference pads to: 8 per number it
// counts plus the string lengths.
func referenceSize(e *Event) int {
	switch e.Type {
	case PersonEvent:
		p := &e.Person
		return 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State) + len(p.Extra)
	case AuctionEvent:
		a := &e.Auction
		return 48 + len(a.ItemName) + len(a.Description) + len(a.Extra)
	default:
		return 32 + len(e.Bid.Extra)
	}
}

func TestAverageSizes(t *testing.T) {
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	var size, jsonSize, count [3]float64
	var buf []byte
	minBidExtra, maxBidExtra := 1<<30, 0
	for _, e := range generateIDs(t, g, 200_000) {
		size[e.Type] += float64(referenceSize(&e.Event))
		buf = AppendJSON(buf[:0], &e.Event)
		jsonSize[e.Type] += float64(len(buf))
		count[e.Type]++
		if e.Type == BidEvent {
			minBidExtra = min(minBidExtra, len(e.Bid.Extra))
			maxBidExtra = max(maxBidExtra, len(e.Bid.Extra))
		}
	}
	want := [3]float64{200, 500, 100}
	for typ := range size {
		avg := size[typ] / count[typ]
		within(t, EventType(typ).String()+" average size", avg, want[typ], want[typ]*0.01)
		t.Logf("%s: average size %.1f B, JSON %.1f B", EventType(typ), avg, jsonSize[typ]/count[typ])
	}
	// Bid padding: 68 B to fill, ±round(68·0.2) = 14: 54 + [0, 28).
	if minBidExtra != 54 || maxBidExtra != 81 {
		t.Errorf("bid extra lengths %d..%d, want 54..81", minBidExtra, maxBidExtra)
	}
}

func TestExtraRange(t *testing.T) {
	for _, c := range []struct{ current, avg, lo int }{
		{32, 100, 54}, {100, 100, 0}, {101, 100, 0}, {0, 3, 2},
	} {
		lo, span := extraRange(c.current, c.avg)
		d := max(c.avg-c.current, 0)
		delta := int(float64(d)*0.2 + 0.5)
		if lo != c.lo || int(span) != 2*delta {
			t.Errorf("extraRange(%d, %d) = %d, %d; want %d, %d", c.current, c.avg, lo, span, c.lo, 2*delta)
		}
	}
}

func TestLargeAverageSizesStillPad(t *testing.T) {
	cfg := DefaultConfig()
	cfg.AvgAuctionByteSize = 2 << 20 // more than the shared string can give
	g := newTestGenerator(t, cfg, 0, 1)
	var e Event
	for g.Next(&e) && e.Type != AuctionEvent {
	}
	if n := referenceSize(&e); n < 1<<20 {
		t.Fatalf("auction size %d, want about %d", n, 2<<20)
	}
}

package nexmark

import (
	"math"
	"testing"
)

func TestPriceMatchesPow(t *testing.T) {
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	r := splitmix{s: 42}
	differ := 0
	check := func(bits64 uint64) {
		u := float64(bits64>>11) * 0x1p-53
		exact := math.Pow(10, u*6) * 100
		got := g.price(bits64)
		if float64(got) != math.Floor(exact+0.5) {
			differ++
			if math.Abs(float64(got)-exact) > 0.5+1e-6 {
				t.Fatalf("price(%#x) = %d, want round(%v)", bits64, got, exact)
			}
		}
	}
	check(0)
	check(math.MaxUint64)
	for range 1_000_000 {
		check(r.next())
	}
	// Only values within rounding noise of a .5 tie may round differently.
	if differ > 2 {
		t.Errorf("%d of 1e6 prices round differently from math.Pow", differ)
	}
	if p := g.price(0); p != 100 {
		t.Errorf("lowest price %d, want 100", p)
	}
	if p := g.price(math.MaxUint64); p != 100_000_000 {
		t.Errorf("highest price %d, want 100000000", p)
	}
}

func TestPricesAreLogUniform(t *testing.T) {
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	var deciles [10]float64
	var n float64
	add := func(p int64) {
		if p < 100 || p > 100_000_000 {
			t.Fatalf("price %d outside [100, 1e8]", p)
		}
		d := int(math.Log10(float64(p)/100) / 6 * 10)
		deciles[min(d, 9)]++
		n++
	}
	for _, e := range generateIDs(t, g, 300_000) {
		switch e.Type {
		case BidEvent:
			add(e.Bid.Price)
		case AuctionEvent:
			add(e.Auction.InitialBid)
			add(e.Auction.Reserve - e.Auction.InitialBid)
		}
	}
	for i, c := range deciles {
		within(t, "share of price decile "+string(rune('0'+i)), c/n, 0.1, 0.004)
	}
}

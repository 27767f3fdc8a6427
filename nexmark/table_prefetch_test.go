package nexmark

import (
	"slices"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// TestTablePrefetchReadsTheCopiedStrings checks which strings a nexmark
// table's source reads ahead of writing its rows: those of the fields its
// rows copy, each once, of the events that have rows (of the kinds kept,
// passing the conditions), and no others.
func TestTablePrefetchReadsTheCopiedStrings(t *testing.T) {
	tbl := &connector.Table{Schema: types.MustRowType(
		types.F("event_type", types.Int()),
		types.F("person", types.MustParseType("ROW<id BIGINT, name VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>")),
		types.F("auction", types.MustParseType("ROW<id BIGINT, category BIGINT>")),
		types.F("bid", types.MustParseType("ROW<auction BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, extra VARCHAR>")),
	)}
	cfg := DefaultConfig()
	opened, err := newTableSource(cfg, tbl)
	if err != nil {
		t.Fatal(err)
	}
	src := opened.(*tableSource)
	off := func(f eventField) uintptr { return f.off }
	whole := src.tw.strs
	if want := []uintptr{off(personColumns["name"]), off(personColumns["extra"])}; !slices.Equal(whole[PersonEvent], want) {
		t.Errorf("person strings %v, want %v", whole[PersonEvent], want)
	}
	if len(whole[AuctionEvent]) != 0 {
		t.Errorf("auction strings %v, want none", whole[AuctionEvent])
	}
	if want := []uintptr{off(bidColumns["channel"]), off(bidColumns["url"]), off(bidColumns["extra"])}; !slices.Equal(whole[BidEvent], want) {
		t.Errorf("bid strings %v, want %v", whole[BidEvent], want)
	}

	// The bids' auction and extra, filtered to the bids.
	filtered, accepted := src.ApplyFilters([]connector.Predicate{{Path: []int{0}, Op: connector.OpEqual, Value: int32(BidEvent)}})
	if len(accepted) != 1 {
		t.Fatalf("the filter on event_type was not accepted: %v", accepted)
	}
	narrow, ok := filtered.(connector.ProjectableSource).ProjectFields([][]int{{3, 0}, {3, 4}})
	if !ok {
		t.Fatal("the projection was refused")
	}
	tw := narrow.(*tableSource).tw
	if want := []uintptr{off(bidColumns["extra"])}; !slices.Equal(tw.strs[BidEvent], want) || len(tw.strs[PersonEvent])+len(tw.strs[AuctionEvent]) != 0 {
		t.Fatalf("projected strings %v, want %v for bids alone", tw.strs, want)
	}

	// A field projected on its own and in its whole row is read once.
	both, ok := filtered.(connector.ProjectableSource).ProjectFields([][]int{{3, 4}, {3}})
	if !ok {
		t.Fatal("the projection of a field and its row was refused")
	}
	if got, want := both.(*tableSource).tw.strs[BidEvent], []uintptr{off(bidColumns["extra"]), off(bidColumns["channel"]), off(bidColumns["url"])}; !slices.Equal(got, want) {
		t.Errorf("strings of a field and its row %v, want %v", got, want)
	}

	// The bids above a price: the others have no rows.
	const minPrice = 1000000
	pricey, accepted := src.ApplyFilters([]connector.Predicate{
		{Path: []int{0}, Op: connector.OpEqual, Value: int32(BidEvent)},
		{Path: []int{3, 1}, Op: connector.OpGreater, Value: int64(minPrice)},
	})
	if len(accepted) != 2 {
		t.Fatalf("the filters on event_type and bid.price were not both accepted: %v", accepted)
	}

	g, err := NewGenerator(cfg, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	events := make([]Event, 500)
	events = events[:g.NextBatch(events)]
	ends := func(s string) byte {
		if s == "" {
			return 0
		}
		return s[0] ^ s[len(s)-1]
	}
	var all, bids, priceyBids, bidExtras byte
	for _, e := range events {
		switch e.Type {
		case PersonEvent:
			all += ends(e.Person.Name) + ends(e.Person.Extra)
		case BidEvent:
			all += ends(e.Bid.Channel) + ends(e.Bid.URL) + ends(e.Bid.Extra)
			bids += ends(e.Bid.Channel) + ends(e.Bid.URL) + ends(e.Bid.Extra)
			bidExtras += ends(e.Bid.Extra)
			if e.Bid.Price > minPrice {
				priceyBids += ends(e.Bid.Channel) + ends(e.Bid.URL) + ends(e.Bid.Extra)
			}
		}
	}
	if got := src.tw.prefetch(events); got != all {
		t.Errorf("the whole table read %#x of its strings, want %#x", got, all)
	}
	if got := filtered.(*tableSource).tw.prefetch(events); got != bids {
		t.Errorf("the table filtered to bids read %#x of its strings, want %#x", got, bids)
	}
	if got := pricey.(*tableSource).tw.prefetch(events); got != priceyBids || priceyBids == bids {
		t.Errorf("the bids above %d read %#x of their strings, want %#x (all bids: %#x)", minPrice, got, priceyBids, bids)
	}
	if got := tw.prefetch(events); got != bidExtras {
		t.Errorf("the projected bids read %#x of their strings, want %#x", got, bidExtras)
	}
}

package nexmark

import (
	"slices"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// TestTablePrefetchReadsTheCopiedStrings checks which strings a nexmark
// table's source reads ahead of writing its rows: those of the fields its
// rows copy, of the events that have rows, and no others.
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
	var all, bids, bidExtras byte
	for _, e := range events {
		switch e.Type {
		case PersonEvent:
			all += ends(e.Person.Name) + ends(e.Person.Extra)
		case BidEvent:
			all += ends(e.Bid.Channel) + ends(e.Bid.URL) + ends(e.Bid.Extra)
			bids += ends(e.Bid.Channel) + ends(e.Bid.URL) + ends(e.Bid.Extra)
			bidExtras += ends(e.Bid.Extra)
		}
	}
	if got := src.tw.prefetch(events); got != all {
		t.Errorf("the whole table read %#x of its strings, want %#x", got, all)
	}
	if got := filtered.(*tableSource).tw.prefetch(events); got != bids {
		t.Errorf("the table filtered to bids read %#x of its strings, want %#x", got, bids)
	}
	if got := tw.prefetch(events); got != bidExtras {
		t.Errorf("the projected bids read %#x of their strings, want %#x", got, bidExtras)
	}
}

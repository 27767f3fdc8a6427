package nexmark

import (
	"testing"
	"time"
)

func TestEventTypeString(t *testing.T) {
	for typ, want := range map[EventType]string{PersonEvent: "person", AuctionEvent: "auction", BidEvent: "bid", 7: "EventType(7)"} {
		if got := typ.String(); got != want {
			t.Errorf("EventType(%d).String() = %q, want %q", typ, got, want)
		}
	}
}

func TestTimeHelpers(t *testing.T) {
	want := time.Date(2026, 1, 1, 0, 0, 1, 500e6, time.UTC)
	ms := want.UnixMilli()
	p, a, b := Person{DateTime: ms}, Auction{DateTime: ms, Expires: ms + 1}, Bid{DateTime: ms}
	if !p.Time().Equal(want) || !a.Time().Equal(want) || !b.Time().Equal(want) ||
		!a.ExpiresTime().Equal(want.Add(time.Millisecond)) || p.Time().Location() != time.UTC {
		t.Fatal("Time helpers do not convert milliseconds to UTC times")
	}
	for _, e := range []Event{{Type: PersonEvent, Person: p}, {Type: AuctionEvent, Auction: a}, {Type: BidEvent, Bid: b}} {
		if e.Timestamp() != ms {
			t.Errorf("%v: Timestamp() = %d, want %d", e.Type, e.Timestamp(), ms)
		}
	}
}

package nexmark

import (
	"strings"
	"testing"
)

func TestJSONRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BaseTime = 0
	g := newTestGenerator(t, cfg, 0, 1)
	var buf []byte
	backslashes := 0
	for _, e := range generateIDs(t, g, 20000) {
		buf = AppendJSON(buf[:0], &e.Event)
		backslashes += strings.Count(string(buf), `\\`)
		var got Event
		if err := ParseJSON(buf, &got); err != nil {
			t.Fatalf("event %d: %v\n%s", e.id, err, buf)
		}
		if got != e.Event {
			t.Fatalf("event %d does not round trip:\n%+v\n%+v", e.id, e.Event, got)
		}
	}
	if backslashes == 0 {
		t.Fatal("no escaped characters exercised")
	}
}

func TestParseJSONAcceptsVariants(t *testing.T) {
	want := Bid{Auction: 1, Bidder: 2, Price: 3, Channel: "A\"é😀\n", URL: "u", DateTime: 1767225601500, Extra: ""}
	for _, in := range []string{
		`{"bid":{"extra":"","dateTime":"2026-01-01T00:00:01.500Z","url":"u","channel":"A\"\u00e9\ud83d\ude00\n","price":3,"bidder":2,"auction":1},"event_type":2}`,
		" {\n \"event_type\" : 2 , \"person\" : null , \"bid\" : {\"auction\":1,\"bidder\":2,\"price\":3,\"channel\":\"A\\\"é😀\\n\",\"url\":\"u\",\"dateTime\":\"2026-01-01 00:00:01.500\",\"extra\":\"\",\"more\":[1,{\"x\":null}]}, \"other\": true }\n",
		`{"event_type":2,"bid":{"auction":1,"bidder":2,"price":3,"channel":"A\"é😀\n","url":"u","dateTime":1767225601500,"extra":""}}`,
		`{"event_type":2,"bid":{"auction":1,"bidder":2,"price":3,"channel":"A\"é😀\n","url":"u","dateTime":"2026-01-01T01:00:01.5+01:00","extra":""}}`,
	} {
		var e Event
		if err := ParseJSON([]byte(in), &e); err != nil {
			t.Fatalf("ParseJSON(%s): %v", in, err)
		}
		if e.Type != BidEvent || e.Bid != want {
			t.Fatalf("ParseJSON(%s) = %+v, want %+v", in, e.Bid, want)
		}
	}
}

func TestParseJSONErrorsNameTheField(t *testing.T) {
	bid := `"bid":{"auction":1,"bidder":2,"price":3,"channel":"c","url":"u","dateTime":"2026-01-01T00:00:00.000Z","extra":""}`
	for _, c := range []struct{ in, field string }{
		{`{` + bid + `}`, "event_type"},
		{`{"event_type":5,` + bid + `}`, "event_type"},
		{`{"event_type":"2",` + bid + `}`, "event_type"},
		{`{"event_type":1,` + bid + `}`, "auction"},
		{`{"event_type":2,"bid":null}`, "bid"},
		{`{"event_type":2,` + strings.Replace(bid, `"price":3`, `"price":3.5`, 1) + `}`, "bid.price"},
		{`{"event_type":2,` + strings.Replace(bid, `"price":3`, `"price":99999999999999999999`, 1) + `}`, "bid.price"},
		{`{"event_type":2,` + strings.Replace(bid, `"price":3,`, ``, 1) + `}`, "bid.price"},
		{`{"event_type":2,` + strings.Replace(bid, `"channel":"c"`, `"channel":7`, 1) + `}`, "bid.channel"},
		{`{"event_type":2,` + strings.Replace(bid, `"url":"u"`, `"url":"u\x"`, 1) + `}`, "bid.url"},
		{`{"event_type":2,` + strings.Replace(bid, `2026-01-01T00:00:00.000Z`, `yesterday`, 1) + `}`, "bid.dateTime"},
		{`{"event_type":2,` + strings.Replace(bid, `2026-01-01T00:00:00.000Z`, `2026-02-30T00:00:00.000Z`, 1) + `}`, "bid.dateTime"},
		{`{"event_type":0,"person":{"id":1,"name":"n","emailAddress":"e","creditCard":"c","city":"c","state":"s","extra":""}}`, "person.dateTime"},
		{`{"event_type":1,"auction":{"id":1,"itemName":"n","description":"d","initialBid":1,"reserve":2,"dateTime":0,"expires":"x","seller":1,"category":10,"extra":""}}`, "auction.expires"},
		{`{"event_type":2,` + bid + `} trailing`, "event"},
		{`[1]`, "event"},
		{`{"event_type":2,` + bid, "event"},
	} {
		var e Event
		err := ParseJSON([]byte(c.in), &e)
		if err == nil || !strings.Contains(err.Error(), `"`+c.field+`"`) {
			t.Errorf("ParseJSON(%s) error = %v, want one naming %q", c.in, err, c.field)
		}
	}
}

package nexmark

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestAppendJSONShape(t *testing.T) {
	ms := DefaultBaseTime + 1500
	cases := []struct {
		e    Event
		want string
	}{
		{Event{Type: PersonEvent, Person: Person{ID: 1000, Name: "Peter Shultz", EmailAddress: "ab@cd.com",
			CreditCard: "0001 0002 0003 0004", City: "Bend", State: "OR", DateTime: ms, Extra: "x"}},
			`{"event_type":0,"person":{"id":1000,"name":"Peter Shultz","emailAddress":"ab@cd.com","creditCard":"0001 0002 0003 0004","city":"Bend","state":"OR","dateTime":"2026-01-01T00:00:01.500Z","extra":"x"},"auction":null,"bid":null}`},
		{Event{Type: AuctionEvent, Auction: Auction{ID: 1001, ItemName: "it", Description: "de", InitialBid: 100,
			Reserve: 250, DateTime: ms, Expires: ms + 1, Seller: 1000, Category: 10, Extra: ""}},
			`{"event_type":1,"person":null,"auction":{"id":1001,"itemName":"it","description":"de","initialBid":100,"reserve":250,"dateTime":"2026-01-01T00:00:01.500Z","expires":"2026-01-01T00:00:01.501Z","seller":1000,"category":10,"extra":""},"bid":null}`},
		{Event{Type: BidEvent, Bid: Bid{Auction: 1002, Bidder: 2001, Price: 12345, Channel: "Google",
			URL: "https://www.nexmark.com/a/b/c/item.htm?query=1", DateTime: ms, Extra: `a\b`}},
			`{"event_type":2,"person":null,"auction":null,"bid":{"auction":1002,"bidder":2001,"price":12345,"channel":"Google","url":"https://www.nexmark.com/a/b/c/item.htm?query=1","dateTime":"2026-01-01T00:00:01.500Z","extra":"a\\b"}}`},
	}
	for _, c := range cases {
		if got := string(AppendJSON(nil, &c.e)); got != c.want {
			t.Errorf("AppendJSON(%v):\n got %s\nwant %s", c.e.Type, got, c.want)
		}
		if !json.Valid([]byte(c.want)) {
			t.Errorf("expected output for %v is not valid JSON", c.e.Type)
		}
	}
}

func TestAppendJSONEscaping(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "ctl \x00\x01\x1f\n\r\t\b\f", "ünïcödé ✓ \u2028", "bad \xff utf8 \xe2\x82"} {
		e := Event{Type: BidEvent, Bid: Bid{Channel: s}}
		out := AppendJSON(nil, &e)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON for %q: %s", s, out)
		}
		var v struct {
			Bid struct{ Channel string } `json:"bid"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		// Like encoding/json, every invalid byte becomes U+FFFD.
		ref, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if v.Bid.Channel != want {
			t.Errorf("channel %q came back as %q, want %q", s, v.Bid.Channel, want)
		}
	}
}

func TestAppendTimestamp(t *testing.T) {
	for _, tm := range []time.Time{
		time.Unix(0, 0),
		time.Date(1969, 12, 31, 23, 59, 59, 999e6, time.UTC),
		time.Date(2000, 2, 29, 12, 34, 56, 789e6, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2100, 3, 1, 0, 0, 0, 1e6, time.UTC),
		time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC),
	} {
		want := tm.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		if got := string(appendTimestamp(nil, tm.UnixMilli())); got != want {
			t.Errorf("appendTimestamp(%d) = %s, want %s", tm.UnixMilli(), got, want)
		}
		if ms, ok := parseTimestamp(want); !ok || ms != tm.UnixMilli() {
			t.Errorf("parseTimestamp(%s) = %d, %v; want %d", want, ms, ok, tm.UnixMilli())
		}
	}
	// Every day over several centuries agrees with the time package.
	for d := int64(-200_000); d < 200_000; d += 37 {
		ms := d*86_400_000 + 3_723_004
		want := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
		if got := string(appendTimestamp(nil, ms)); got != want {
			t.Fatalf("appendTimestamp(%d) = %s, want %s", ms, got, want)
		}
	}
}

func TestWriteJSONWritesLines(t *testing.T) {
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	var buf bytes.Buffer
	for _, e := range generateIDs(t, g, 100) {
		if err := WriteJSON(&buf, &e.Event); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 100 {
		t.Fatalf("%d lines, want 100", len(lines))
	}
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("line %d is not valid JSON: %s", i, l)
		}
	}
}

func TestGeneratedJSONIsValid(t *testing.T) {
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	var buf []byte
	for _, e := range generateIDs(t, g, 5000) {
		buf = AppendJSON(buf[:0], &e.Event)
		var v map[string]any
		if err := json.Unmarshal(buf, &v); err != nil {
			t.Fatalf("event %d: %v: %s", e.id, err, buf)
		}
		for i, k := range []string{"person", "auction", "bid"} {
			if (v[k] != nil) != (int(e.Type) == i) {
				t.Fatalf("event %d of type %v: %q is %v", e.id, e.Type, k, v[k])
			}
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	g := newTestGenerator(b, DefaultConfig(), 0, 1)
	evs := make([]Event, 4096)
	g.NextBatch(evs)
	buf := make([]byte, 0, 4096)
	bytes := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		buf = AppendJSON(buf[:0], &evs[i%len(evs)])
		bytes += len(buf) + 1
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.SetBytes(int64(bytes / max(b.N, 1)))
}

package nexmark

import (
	"strings"
	"testing"
)

// newTestGenerator returns a generator of part part of parts for cfg and
// fails the test if cfg is invalid.
func newTestGenerator(t testing.TB, cfg Config, part, parts int) *Generator {
	t.Helper()
	g, err := NewGenerator(cfg, part, parts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// idEvent is a generated event with its event id.
type idEvent struct {
	id int64
	Event
}

// generateIDs returns the next n events of g with their event ids.
func generateIDs(t testing.TB, g *Generator, n int) []idEvent {
	t.Helper()
	out := make([]idEvent, n)
	for i := range out {
		out[i].id = g.NextEventID()
		if !g.Next(&out[i].Event) {
			t.Fatalf("generator exhausted after %d events, want %d", i, n)
		}
	}
	return out
}

func TestMixIsExactOverEveryFiftyIDs(t *testing.T) {
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	evs := generateIDs(t, g, 5000)
	for i := 0; i+50 <= len(evs); i++ {
		var n [3]int
		for _, e := range evs[i : i+50] {
			n[e.Type]++
		}
		if n != [3]int{1, 3, 46} {
			t.Fatalf("events %d..%d (ids %d..%d): persons, auctions, bids = %v, want [1 3 46]",
				i, i+49, evs[i].id, evs[i+49].id, n)
		}
	}
	for _, e := range evs {
		var want EventType
		switch r := e.id % 50; {
		case r < 1:
			want = PersonEvent
		case r < 4:
			want = AuctionEvent
		default:
			want = BidEvent
		}
		if e.Type != want {
			t.Fatalf("event id %d: type %v, want %v", e.id, e.Type, want)
		}
	}
}

func TestCustomProportions(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PersonProportion, cfg.AuctionProportion, cfg.BidProportion = 2, 5, 3
	g := newTestGenerator(t, cfg, 0, 1)
	evs := generateIDs(t, g, 1000)
	for _, e := range evs[:990] {
		if r := e.id % 10; (r < 2) != (e.Type == PersonEvent) || (r >= 2 && r < 7) != (e.Type == AuctionEvent) {
			t.Fatalf("event id %d: type %v does not fit proportions 2:5:3", e.id, e.Type)
		}
	}
}

func TestFirstEventsMatchFlinkSource(t *testing.T) {
	// The Flink source uses firstEventId 1 and firstEventNumber 1, so its
	// first event has id 2, an auction.
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	if id := g.NextEventID(); id != 2 {
		t.Fatalf("first event id %d, want 2", id)
	}
	var e Event
	g.Next(&e)
	if e.Type != AuctionEvent || e.Auction.ID != 1001 {
		t.Fatalf("first event %v id %d, want auction 1001", e.Type, e.Auction.ID)
	}
}

func TestDeterministic(t *testing.T) {
	a := newTestGenerator(t, DefaultConfig(), 0, 1)
	b := newTestGenerator(t, DefaultConfig(), 0, 1)
	ea, eb := make([]Event, 3000), make([]Event, 3000)
	a.NextBatch(ea)
	for i := range eb {
		b.Next(&eb[i])
	}
	for i := range ea {
		if ea[i] != eb[i] {
			t.Fatalf("event %d differs:\n%+v\n%+v", i, ea[i], eb[i])
		}
	}
}

func TestMaxEventsEndsThePart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEvents = 1234
	g := newTestGenerator(t, cfg, 0, 1)
	if g.Len() != 1234 {
		t.Fatalf("Len() = %d, want 1234", g.Len())
	}
	buf := make([]Event, 1000)
	total := 0
	for {
		n := g.NextBatch(buf)
		if n == 0 {
			break
		}
		total += n
	}
	var e Event
	if total != 1234 || g.Next(&e) || g.Position() != 1234 {
		t.Fatalf("generated %d events, Position %d; want 1234 and exhausted", total, g.Position())
	}
}

func TestNewGeneratorRejectsBadParts(t *testing.T) {
	for _, c := range []struct{ part, parts int }{{0, 0}, {-1, 2}, {2, 2}} {
		_, err := NewGenerator(DefaultConfig(), c.part, c.parts)
		if err == nil || !strings.Contains(err.Error(), "part") {
			t.Errorf("NewGenerator(part=%d, parts=%d) error = %v, want one naming the part", c.part, c.parts, err)
		}
	}
	if _, err := NewGenerator(Config{}, 0, 1); err == nil {
		t.Error("NewGenerator accepted the zero Config")
	}
}

func TestStringShapes(t *testing.T) {
	g := newTestGenerator(t, DefaultConfig(), 0, 1)
	for _, e := range generateIDs(t, g, 20000) {
		switch e.Type {
		case PersonEvent:
			p := e.Person
			user, domain, ok := strings.Cut(p.EmailAddress, "@")
			if !ok || !strings.HasSuffix(domain, ".com") || len(user) > 6 || len(domain) > 4+4 {
				t.Fatalf("person %d: email %q has the wrong shape", p.ID, p.EmailAddress)
			}
			if len(p.CreditCard) != 19 || strings.Count(p.CreditCard, " ") != 3 {
				t.Fatalf("person %d: credit card %q has the wrong shape", p.ID, p.CreditCard)
			}
			first, last, _ := strings.Cut(p.Name, " ")
			if !contains(firstNames[:], first) || !contains(lastNames[:], last) {
				t.Fatalf("person %d: name %q not from the name lists", p.ID, p.Name)
			}
			if !contains(usCities[:], p.City) || !contains(usStates[:], p.State) {
				t.Fatalf("person %d: city %q or state %q not from the lists", p.ID, p.City, p.State)
			}
		case AuctionEvent:
			a := e.Auction
			if len(a.ItemName) > 19 || len(a.Description) > 99 || strings.TrimSpace(a.ItemName) != a.ItemName {
				t.Fatalf("auction %d: item name %q or description %q too long or untrimmed", a.ID, a.ItemName, a.Description)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func BenchmarkGenerator(b *testing.B) {
	g := newTestGenerator(b, DefaultConfig(), 0, 1)
	batch := make([]Event, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	for events < b.N {
		events += g.NextBatch(batch[:min(len(batch), b.N-events)])
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

package nexmark_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/nexmark"
)

// conformanceEvents is the size of the sequences the conformance suite
// reads.
const conformanceEvents = 4000

// eventsOfParts generates the sequence of cfg in parts parallel parts, as
// the source does on a first start at parallelism parts.
func eventsOfParts(t testing.TB, cfg nexmark.Config, parts int) []nexmark.Event {
	t.Helper()
	cfg.NumEventGenerators = parts
	var out []nexmark.Event
	for j := 0; j < parts; j++ {
		g, err := nexmark.NewGenerator(cfg, j, parts)
		if err != nil {
			t.Fatal(err)
		}
		var e nexmark.Event
		for g.Next(&e) {
			out = append(out, e)
		}
	}
	return out
}

func eventKey(e nexmark.Event) string {
	switch e.Type {
	case nexmark.PersonEvent:
		return fmt.Sprintf("person %+v", e.Person)
	case nexmark.AuctionEvent:
		return fmt.Sprintf("auction %+v", e.Auction)
	}
	return fmt.Sprintf("bid %+v", e.Bid)
}

// TestConnectorConformance runs the conformance suite on the source the
// registry makes from a table's options: the suite's jobs start at
// parallelism 2, so the sequence is generated in two parts.
func TestConnectorConformance(t *testing.T) {
	cfg := nexmark.DefaultConfig()
	cfg.MaxEvents = conformanceEvents
	connectortest.RunSource(t, connectortest.SourceCase[nexmark.Event]{
		Open: func(t testing.TB) (connector.Source[nexmark.Event], func()) {
			src, err := connector.OpenSource[nexmark.Event](connector.Default, "nexmark", map[string]string{
				"events.num": fmt.Sprint(conformanceEvents), "first-event.rate": "10000000", "next-event.rate": "10000000",
			})
			if err != nil {
				t.Fatal(err)
			}
			return src, nil
		},
		Want: eventsOfParts(t, cfg, 2),
		Key:  eventKey,
		Seq:  func(e nexmark.Event) int64 { return e.Timestamp() },
	})
}

// TestTypedSourceConformance runs the suite on a typed source of bids.
func TestTypedSourceConformance(t *testing.T) {
	cfg := nexmark.DefaultConfig()
	cfg.MaxEvents = conformanceEvents
	var want []nexmark.Bid
	for _, e := range eventsOfParts(t, cfg, 2) {
		if e.Type == nexmark.BidEvent {
			want = append(want, e.Bid)
		}
	}
	connectortest.RunSource(t, connectortest.SourceCase[nexmark.Bid]{
		Open: func(t testing.TB) (connector.Source[nexmark.Bid], func()) {
			return nexmark.NewSource(cfg, nexmark.SourceOptions[nexmark.Bid]{NewPicker: func() nexmark.Picker[nexmark.Bid] {
				return func(e *nexmark.Event, out connector.SplitOutput[nexmark.Bid]) {
					if e.Type == nexmark.BidEvent {
						out.EmitAt(e.Bid, e.Bid.DateTime)
					}
				}
			}}), nil
		},
		Want: want,
		Seq:  func(b nexmark.Bid) int64 { return b.DateTime },
	})
}

func TestConnectorOptions(t *testing.T) {
	connectortest.RunOptions[nexmark.Event](t, connectortest.OptionsCase{Name: "nexmark", Valid: map[string]string{"events.num": "10"}})
	for _, c := range []struct {
		options map[string]string
		want    string
	}{
		{map[string]string{"first-event.rate": "0"}, "option 'first-event.rate' = '0': want a positive number"},
		{map[string]string{"events.num": "-1"}, "option 'events.num' = '-1': want a number, 0 or more"},
		{map[string]string{"first-event.rate": "1000"}, "option 'next-event.rate' = 10000000 differs from first-event.rate = 1000"},
	} {
		_, err := connector.OpenSource[nexmark.Event](connector.Default, "nexmark", c.options)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("OpenSource(nexmark, %v) = %v; want an error saying %q", c.options, err, c.want)
		}
	}
	if _, err := connector.OpenSource[nexmark.Bid](connector.Default, "nexmark", nil); err == nil || !strings.Contains(err.Error(), "makes records of type nexmark.Event, not nexmark.Bid") {
		t.Errorf("a nexmark source of bids: %v", err)
	}
}

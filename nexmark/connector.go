package nexmark

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/connector"
)

// spec is the "nexmark" connector's spec: the options of the reference's
// Flink table source.
var spec = connector.Spec{
	Name:        "nexmark",
	Kind:        connector.SourceKind,
	Description: "The Nexmark online-auction event generator (persons, auctions and bids), as the reference's Flink source; records are nexmark.Event values.",
	Options: []connector.Option{
		{Key: "first-event.rate", Type: connector.Int, Default: "10000000", Check: connector.Positive,
			Description: "Events per second of event time over all parts: how densely events are spaced in event time (it does not limit how fast they are generated)."},
		{Key: "next-event.rate", Type: connector.Int, Default: "10000000", Check: connector.Positive,
			Description: "The rate after the first; eddy's generator keeps one rate, so it must equal first-event.rate."},
		{Key: "events.num", Type: connector.Int, Default: "0", Check: connector.NonNegative,
			Description: "The number of events to generate; 0 generates without end."},
		{Key: "person.proportion", Type: connector.Int, Default: "1", Check: connector.Positive,
			Description: "Persons in every cycle of person.proportion + auction.proportion + bid.proportion events."},
		{Key: "auction.proportion", Type: connector.Int, Default: "3", Check: connector.Positive,
			Description: "Auctions in every cycle."},
		{Key: "bid.proportion", Type: connector.Int, Default: "46", Check: connector.NonNegative,
			Description: "Bids in every cycle."},
		{Key: "stop-at", Type: connector.Int, Default: "-1", Check: minusOneOrPositive,
			Description: "Stop after this many events, as the reference's source does; -1 (or a value at or above events.num) leaves events.num in charge."},
		{Key: "keep-alive", Type: connector.Bool, Default: "false", Check: notTrue("eddy's nexmark source ends after its last event, and a job ends when its sources have; set 'keep-alive' = 'false'"),
			Description: "The reference's option to keep the source open after its last event; eddy accepts 'false' only: the source ends, and with it the job."},
		{Key: "max-emit-speed", Type: connector.Bool, Default: "true",
			Description: "The reference's option to emit events as fast as possible; eddy's generator always does (the rates space the events' times, not their emission), so both values mean that."},
	},
}

func minusOneOrPositive(v string) error {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n != -1 && n <= 0 {
		return fmt.Errorf("must be -1 (no stop) or positive")
	}
	return nil
}

// notTrue refuses the value 'true' with the reason given.
func notTrue(reason string) func(v string) error {
	return func(v string) error {
		if strings.EqualFold(v, "true") {
			return fmt.Errorf("%s", reason)
		}
		return nil
	}
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

// ConfigOf returns the generator configuration the options of a "nexmark"
// table give.
func ConfigOf(o connector.Options) (Config, error) {
	c := DefaultConfig()
	c.FirstEventRate = o.Int("first-event.rate")
	if next := o.Int("next-event.rate"); next != c.FirstEventRate {
		return c, &connector.OptionError{Connector: spec.Name, Key: "next-event.rate",
			Problem: fmt.Sprintf("= %d differs from first-event.rate = %d; eddy's generator keeps one rate: set both alike", next, c.FirstEventRate)}
	}
	c.MaxEvents = o.Int("events.num")
	if stop := o.Int("stop-at"); stop > 0 && (c.MaxEvents == 0 || stop < c.MaxEvents) {
		c.MaxEvents = stop
	}
	c.PersonProportion = int(o.Int("person.proportion"))
	c.AuctionProportion = int(o.Int("auction.proportion"))
	c.BidProportion = int(o.Int("bid.proportion"))
	c.NumEventGenerators = 0
	return c, c.Validate()
}

func (factory) NewSource(ctx connector.Context) (any, error) {
	if ctx.Table != nil {
		cfg, err := ConfigOf(ctx.Options)
		if err != nil {
			return nil, err
		}
		return newTableSource(cfg, ctx.Table)
	}
	if ctx.RecordType != reflect.TypeFor[Event]() {
		return nil, fmt.Errorf("connector %q makes records of type nexmark.Event, not %v", spec.Name, ctx.RecordType)
	}
	cfg, err := ConfigOf(ctx.Options)
	if err != nil {
		return nil, err
	}
	return NewSource(cfg, SourceOptions[Event]{NewPicker: func() Picker[Event] {
		return func(e *Event, out connector.SplitOutput[Event]) { out.EmitAt(*e, e.Timestamp()) }
	}}), nil
}

func init() { connector.Register(factory{}) }

package nexmark

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultConfigMatchesReference(t *testing.T) {
	c := DefaultConfig()
	want := Config{
		FirstEventRate: 10_000_000, NumEventGenerators: 1,
		PersonProportion: 1, AuctionProportion: 3, BidProportion: 46,
		HotAuctionRatio: 2, HotBiddersRatio: 4, HotSellersRatio: 4,
		NumInFlightAuctions: 100, NumActivePeople: 1000, OutOfOrderGroupSize: 1,
		AvgPersonByteSize: 200, AvgAuctionByteSize: 500, AvgBidByteSize: 100,
		BaseTime: DefaultBaseTime, FirstEventID: 1, FirstEventNumber: 1,
		BidderDoubleOffset: true,
	}
	if c != want {
		t.Fatalf("DefaultConfig() = %+v\nwant %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := time.UnixMilli(DefaultBaseTime).UTC(); !got.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("DefaultBaseTime is %v, want 2026-01-01T00:00:00Z", got)
	}
}

func TestValidateNamesTheOption(t *testing.T) {
	cases := []struct {
		field string
		set   func(*Config)
	}{
		{"FirstEventRate", func(c *Config) { c.FirstEventRate = 0 }},
		{"NumEventGenerators", func(c *Config) { c.NumEventGenerators = -1 }},
		{"PersonProportion", func(c *Config) { c.PersonProportion = 0 }},
		{"AuctionProportion", func(c *Config) { c.AuctionProportion = 0 }},
		{"BidProportion", func(c *Config) { c.BidProportion = -1 }},
		{"HotAuctionRatio", func(c *Config) { c.HotAuctionRatio = 0 }},
		{"HotBiddersRatio", func(c *Config) { c.HotBiddersRatio = 0 }},
		{"HotSellersRatio", func(c *Config) { c.HotSellersRatio = 0 }},
		{"NumInFlightAuctions", func(c *Config) { c.NumInFlightAuctions = 0 }},
		{"NumActivePeople", func(c *Config) { c.NumActivePeople = 0 }},
		{"OutOfOrderGroupSize", func(c *Config) { c.OutOfOrderGroupSize = 0 }},
		{"OutOfOrderGroupSize", func(c *Config) { c.OutOfOrderGroupSize = 2 * 953 }},
		{"AvgPersonByteSize", func(c *Config) { c.AvgPersonByteSize = -1 }},
		{"AvgAuctionByteSize", func(c *Config) { c.AvgAuctionByteSize = -1 }},
		{"AvgBidByteSize", func(c *Config) { c.AvgBidByteSize = -1 }},
		{"BaseTime", func(c *Config) { c.BaseTime = -1 }},
		{"FirstEventID", func(c *Config) { c.FirstEventID = -1 }},
		{"FirstEventNumber", func(c *Config) { c.FirstEventNumber = -1 }},
		{"MaxEvents", func(c *Config) { c.MaxEvents = -1 }},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.set(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "Config."+tc.field) || !strings.Contains(err.Error(), "set it") && !strings.Contains(err.Error(), "choose") && !strings.Contains(err.Error(), "keep") {
			t.Errorf("%s: Validate() = %v, want an error naming Config.%s and the fix", tc.field, err, tc.field)
		}
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	var c Config
	err := c.Validate()
	if err == nil {
		t.Fatal("the zero Config is valid")
	}
	for _, f := range []string{"FirstEventRate", "PersonProportion", "HotAuctionRatio", "OutOfOrderGroupSize"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %s", err, f)
		}
	}
}

func TestUnboundedMaxEventsUsesReferenceCap(t *testing.T) {
	c := DefaultConfig()
	// Long.MAX_VALUE / (50 · 500)
	if got, want := c.maxEvents(), int64(9223372036854775807/(50*500)); got != want {
		t.Fatalf("maxEvents() = %d, want %d", got, want)
	}
}

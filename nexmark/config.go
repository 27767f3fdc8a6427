package nexmark

import (
	"errors"
	"fmt"
	"math"
)

// Id bases used by the reference so that queries find matches even in small
// data sets.
const (
	// FirstPersonID is the id of the first person (event id 0).
	FirstPersonID = 1000
	// FirstAuctionID is the id of the first auction.
	FirstAuctionID = 1000
	// FirstCategoryID is the lowest category id; categories are
	// FirstCategoryID to FirstCategoryID+NumCategories-1.
	FirstCategoryID = 10
	// NumCategories is the number of auction categories.
	NumCategories = 5
)

// DefaultBaseTime is the default Config.BaseTime: 2026-01-01T00:00:00Z in
// milliseconds since the Unix epoch. The reference uses the wall clock; a fixed
// instant makes runs reproducible.
const DefaultBaseTime int64 = 1767225600000

// maxOutOfOrderGroupSize keeps the scrambling arithmetic within int64.
const maxOutOfOrderGroupSize = 1 << 40

// maxBaseTime is 9999-12-31T23:59:59.999Z, the last instant RFC 3339 can
// represent.
const maxBaseTime int64 = 253402300799999

// Config controls the generated stream. Start from DefaultConfig and change
// fields; the zero Config is not valid.
type Config struct {
	// FirstEventRate is the event rate, in events per second of event time,
	// that sets how densely events are spaced in event time (the reference's
	// "TPS"). It does not limit how fast events are generated. Default
	// 10 000 000, the reference V1 setting.
	FirstEventRate int64
	// NumEventGenerators is the number of generators sharing FirstEventRate;
	// each advances its event time by 1e6/FirstEventRate·NumEventGenerators
	// µs per event. The reference sets it to the source parallelism. 0 means
	// the number of parts given to NewGenerator. Default 1.
	NumEventGenerators int

	// PersonProportion is the number of persons in every cycle of
	// PersonProportion+AuctionProportion+BidProportion consecutive event ids;
	// they come first in the cycle. Default 1.
	PersonProportion int
	// AuctionProportion is the number of auctions in every cycle; they follow
	// the persons. Default 3.
	AuctionProportion int
	// BidProportion is the number of bids in every cycle; they end it.
	// Default 46.
	BidProportion int

	// HotAuctionRatio makes a bid go to the hot auction with probability
	// 1 - 1/HotAuctionRatio. Default 2.
	HotAuctionRatio int
	// HotBiddersRatio makes a bid come from the hot bidder with probability
	// 1 - 1/HotBiddersRatio. Default 4.
	HotBiddersRatio int
	// HotSellersRatio makes an auction come from the hot seller with
	// probability 1 - 1/HotSellersRatio. Default 4.
	HotSellersRatio int

	// NumInFlightAuctions is the number of recent auctions a non-hot bid
	// chooses from; it also sets the average auction length. Default 100.
	NumInFlightAuctions int
	// NumActivePeople is the number of recent people a non-hot bidder or
	// seller is chosen from. Default 1000.
	NumActivePeople int

	// OutOfOrderGroupSize is the size of the groups of consecutive events that
	// are emitted in a scrambled order (event number n becomes
	// (n/g)*g + (n*953)%g, which also sets its event time). 1, the default,
	// means in order. It must not be a multiple of 953, or ids would repeat.
	// As in the reference, when a part does not end on a group boundary its
	// last group may yield ids past the end of the part (overlapping the next
	// part) and skip some of its own.
	OutOfOrderGroupSize int64

	// AvgPersonByteSize is the average size of a person that Extra pads to,
	// in the reference's accounting (8 bytes per number plus the string
	// lengths); each person's padding varies by ±20%. Default 200.
	AvgPersonByteSize int
	// AvgAuctionByteSize is the average size of an auction, accounted as for
	// AvgPersonByteSize. Default 500.
	AvgAuctionByteSize int
	// AvgBidByteSize is the average size of a bid, accounted as for
	// AvgPersonByteSize. Default 100.
	AvgBidByteSize int

	// BaseTime is the event time of event number 0, in milliseconds since the
	// Unix epoch. Default DefaultBaseTime.
	BaseTime int64
	// FirstEventID is added to the event number to form the event id, from
	// which everything else in the event is derived. Default 1, as in the
	// reference's Flink source.
	FirstEventID int64
	// FirstEventNumber is the event number of the first event of every part;
	// the event time of event number n is BaseTime + n·interEventDelay.
	// Default 1, as in the reference's Flink source, so with the defaults the
	// first event has id 2.
	FirstEventNumber int64
	// MaxEvents is the number of events to generate over all parts. 0 means
	// unbounded (in practice the reference's cap of MaxInt64 divided by the
	// total proportion and the largest average size).
	MaxEvents int64

	// BidderDoubleOffset reproduces the reference quirk of adding
	// FirstPersonID to Bid.Bidder twice, so bidders are offset by 2000 from
	// base-0 person ids while Person.ID and Auction.Seller are offset by 1000.
	// Keep it true (the default) to match Flink's output exactly; set it
	// false to make bidders join with person ids.
	BidderDoubleOffset bool
}

// DefaultConfig returns the reference's default configuration with a fixed
// BaseTime and an unbounded number of events.
func DefaultConfig() Config {
	return Config{
		FirstEventRate:      10_000_000,
		NumEventGenerators:  1,
		PersonProportion:    1,
		AuctionProportion:   3,
		BidProportion:       46,
		HotAuctionRatio:     2,
		HotBiddersRatio:     4,
		HotSellersRatio:     4,
		NumInFlightAuctions: 100,
		NumActivePeople:     1000,
		OutOfOrderGroupSize: 1,
		AvgPersonByteSize:   200,
		AvgAuctionByteSize:  500,
		AvgBidByteSize:      100,
		BaseTime:            DefaultBaseTime,
		FirstEventID:        1,
		FirstEventNumber:    1,
		MaxEvents:           0,
		BidderDoubleOffset:  true,
	}
}

// Validate reports every invalid field of c in one error, naming the field
// and how to fix it. It returns nil if c can be used by NewGenerator.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("nexmark: "+format, args...))
	}
	if c.FirstEventRate <= 0 {
		bad("Config.FirstEventRate is %d; set it to the event rate in events per second of event time (> 0, e.g. 10000000)", c.FirstEventRate)
	}
	if c.NumEventGenerators < 0 {
		bad("Config.NumEventGenerators is %d; set it to the number of parallel parts (> 0), or 0 to use the parts count", c.NumEventGenerators)
	}
	if c.PersonProportion < 1 {
		bad("Config.PersonProportion is %d; set it to at least 1 (default 1)", c.PersonProportion)
	}
	if c.AuctionProportion < 1 {
		bad("Config.AuctionProportion is %d; set it to at least 1 (default 3)", c.AuctionProportion)
	}
	if c.BidProportion < 0 {
		bad("Config.BidProportion is %d; set it to 0 or more (default 46)", c.BidProportion)
	}
	if c.HotAuctionRatio < 1 {
		bad("Config.HotAuctionRatio is %d; set it to at least 1 (1 disables hot auctions; default 2)", c.HotAuctionRatio)
	}
	if c.HotBiddersRatio < 1 {
		bad("Config.HotBiddersRatio is %d; set it to at least 1 (1 disables hot bidders; default 4)", c.HotBiddersRatio)
	}
	if c.HotSellersRatio < 1 {
		bad("Config.HotSellersRatio is %d; set it to at least 1 (1 disables hot sellers; default 4)", c.HotSellersRatio)
	}
	if c.NumInFlightAuctions < 1 {
		bad("Config.NumInFlightAuctions is %d; set it to at least 1 (default 100)", c.NumInFlightAuctions)
	}
	if c.NumActivePeople < 1 {
		bad("Config.NumActivePeople is %d; set it to at least 1 (default 1000)", c.NumActivePeople)
	}
	if c.OutOfOrderGroupSize < 1 {
		bad("Config.OutOfOrderGroupSize is %d; set it to at least 1 (1 means in order)", c.OutOfOrderGroupSize)
	} else if c.OutOfOrderGroupSize > maxOutOfOrderGroupSize {
		bad("Config.OutOfOrderGroupSize is %d; keep it at most %d", c.OutOfOrderGroupSize, maxOutOfOrderGroupSize)
	} else if c.OutOfOrderGroupSize%953 == 0 {
		bad("Config.OutOfOrderGroupSize is %d, a multiple of 953, which would repeat event ids; choose a size that is not a multiple of 953", c.OutOfOrderGroupSize)
	}
	if c.AvgPersonByteSize < 0 {
		bad("Config.AvgPersonByteSize is %d; set it to 0 or more (default 200)", c.AvgPersonByteSize)
	}
	if c.AvgAuctionByteSize < 0 {
		bad("Config.AvgAuctionByteSize is %d; set it to 0 or more (default 500)", c.AvgAuctionByteSize)
	}
	if c.AvgBidByteSize < 0 {
		bad("Config.AvgBidByteSize is %d; set it to 0 or more (default 100)", c.AvgBidByteSize)
	}
	if c.BaseTime < 0 || c.BaseTime > maxBaseTime {
		bad("Config.BaseTime is %d; set it to milliseconds since the Unix epoch between 0 and %d (year 9999), e.g. DefaultBaseTime", c.BaseTime, maxBaseTime)
	}
	if c.FirstEventID < 0 {
		bad("Config.FirstEventID is %d; set it to 0 or more (default 1)", c.FirstEventID)
	}
	if c.FirstEventNumber < 0 {
		bad("Config.FirstEventNumber is %d; set it to 0 or more (default 1)", c.FirstEventNumber)
	}
	if c.MaxEvents < 0 {
		bad("Config.MaxEvents is %d; set it to the number of events to generate, or 0 for unbounded", c.MaxEvents)
	}
	if len(errs) == 0 {
		// Keep every event id and number within int64.
		limit := int64(math.MaxInt64 / 4)
		if c.FirstEventID > limit || c.FirstEventNumber > limit || c.maxEvents() > limit {
			bad("Config.FirstEventID, FirstEventNumber or MaxEvents is too large; keep each below %d", limit)
		}
	}
	return errors.Join(errs...)
}

// totalProportion is the length of one person/auction/bid cycle of event ids.
func (c *Config) totalProportion() int64 {
	return int64(c.PersonProportion) + int64(c.AuctionProportion) + int64(c.BidProportion)
}

// maxEvents returns MaxEvents, or for 0 the reference's cap.
func (c *Config) maxEvents() int64 {
	if c.MaxEvents != 0 {
		return c.MaxEvents
	}
	largest := max(c.AvgPersonByteSize, c.AvgAuctionByteSize, c.AvgBidByteSize, 1)
	return math.MaxInt64 / (c.totalProportion() * int64(largest))
}

package nexmark

import (
	"strconv"
	"time"
)

// EventType tells which of the three records an Event carries. Its values are
// the reference's event_type column.
type EventType int8

// The event types, numbered as in the reference DDL.
const (
	// PersonEvent is a new person registering (event_type 0).
	PersonEvent EventType = 0
	// AuctionEvent is a new auction being opened (event_type 1).
	AuctionEvent EventType = 1
	// BidEvent is a bid on an auction (event_type 2).
	BidEvent EventType = 2
)

// String returns "person", "auction" or "bid".
func (t EventType) String() string {
	switch t {
	case PersonEvent:
		return "person"
	case AuctionEvent:
		return "auction"
	case BidEvent:
		return "bid"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Person is a person who registered to buy or sell.
type Person struct {
	// ID is the person id: eventId/totalProportion + 1000 for the defaults.
	ID int64
	// Name is a first and a last name from fixed lists, joined by a space.
	Name string
	// EmailAddress is "<random>@<random>.com".
	EmailAddress string
	// CreditCard is four groups of four digits separated by spaces.
	CreditCard string
	// City is one of ten US cities.
	City string
	// State is one of six US state codes.
	State string
	// DateTime is the event time in milliseconds since the Unix epoch (UTC).
	DateTime int64
	// Extra is padding that brings the record to its average size.
	Extra string
}

// Time returns DateTime as a time.Time in UTC.
func (p *Person) Time() time.Time { return time.UnixMilli(p.DateTime).UTC() }

// Auction is an item put up for auction.
type Auction struct {
	// ID is the auction id, derived from the event id.
	ID int64
	// ItemName is a random string of up to 19 characters.
	ItemName string
	// Description is a random string of up to 99 characters.
	Description string
	// InitialBid is the starting price in cents.
	InitialBid int64
	// Reserve is InitialBid plus a random price, in cents.
	Reserve int64
	// DateTime is the event time in milliseconds since the Unix epoch (UTC).
	DateTime int64
	// Expires is when the auction closes, in milliseconds since the Unix
	// epoch (UTC); it is always after DateTime.
	Expires int64
	// Seller is the id of the person selling the item.
	Seller int64
	// Category is the category id, 10 to 14.
	Category int64
	// Extra is padding that brings the record to its average size.
	Extra string
}

// Time returns DateTime as a time.Time in UTC.
func (a *Auction) Time() time.Time { return time.UnixMilli(a.DateTime).UTC() }

// ExpiresTime returns Expires as a time.Time in UTC.
func (a *Auction) ExpiresTime() time.Time { return time.UnixMilli(a.Expires).UTC() }

// Bid is a bid for an auction.
type Bid struct {
	// Auction is the id of the auction bid on.
	Auction int64
	// Bidder is the id of the person bidding; see Config.BidderDoubleOffset.
	Bidder int64
	// Price is the bid in cents, from 100 to 10^8.
	Price int64
	// Channel is the channel the bid came through: a hot channel name
	// (Google, Facebook, Baidu, Apple) or "channel-<n>".
	Channel string
	// URL is the URL the bid came from.
	URL string
	// DateTime is the event time in milliseconds since the Unix epoch (UTC).
	DateTime int64
	// Extra is padding that brings the record to its average size.
	Extra string
}

// Time returns DateTime as a time.Time in UTC.
func (b *Bid) Time() time.Time { return time.UnixMilli(b.DateTime).UTC() }

// Event is one element of the Nexmark stream. Type selects which of Person,
// Auction and Bid is meaningful; the generator fills only that one, so when
// an Event is reused the other two may still hold an earlier event's values.
// The records are stored inline so that a slice of Events can be refilled
// without allocating.
type Event struct {
	// Type selects the record this event carries.
	Type EventType
	// Person is meaningful when Type is PersonEvent.
	Person Person
	// Auction is meaningful when Type is AuctionEvent.
	Auction Auction
	// Bid is meaningful when Type is BidEvent.
	Bid Bid
}

// Timestamp returns the event time of the record selected by Type, in
// milliseconds since the Unix epoch.
func (e *Event) Timestamp() int64 {
	switch e.Type {
	case PersonEvent:
		return e.Person.DateTime
	case AuctionEvent:
		return e.Auction.DateTime
	default:
		return e.Bid.DateTime
	}
}

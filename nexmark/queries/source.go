package queries

import (
	"sync/atomic"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/nexmark"
)

// generated counts the events the sources of this package have generated.
var generated atomic.Int64

// GeneratedEvents returns the number of Nexmark events the sources of this
// package have generated in this process, over all jobs and subtasks, to
// show the progress of a run. It counts every generated event, whatever the
// query keeps.
func GeneratedEvents() int64 { return generated.Load() }

// event is one generated event as queries over several tables read it: a
// bid inline, an auction or a person by pointer (they are a twelfth of the
// events, and copying all three records inline would triple the bytes every
// event moves).
type event struct {
	bid     nexmark.Bid
	auction *nexmark.Auction
	person  *nexmark.Person
	kind    nexmark.EventType
}

// timestamp returns the event time of the record the event carries.
func (e *event) timestamp() int64 {
	switch e.kind {
	case nexmark.PersonEvent:
		return e.person.DateTime
	case nexmark.AuctionEvent:
		return e.auction.DateTime
	}
	return e.bid.DateTime
}

// kinds is a set of event types, a bit per nexmark.EventType.
type kinds uint8

const (
	personKind  kinds = 1 << nexmark.PersonEvent
	auctionKind kinds = 1 << nexmark.AuctionEvent
	bidKind     kinds = 1 << nexmark.BidEvent
)

// has reports whether t is in the set.
func (k kinds) has(t nexmark.EventType) bool { return k&(1<<t) != 0 }

// slab hands out auctions and persons in blocks, to allocate once per block
// instead of once per record. It belongs to one source subtask.
type slab struct {
	auctions []nexmark.Auction
	persons  []nexmark.Person
}

const slabSize = 64

func (s *slab) auction(a *nexmark.Auction) *nexmark.Auction {
	if len(s.auctions) == 0 {
		s.auctions = make([]nexmark.Auction, slabSize)
	}
	p := &s.auctions[0]
	s.auctions = s.auctions[1:]
	*p = *a
	return p
}

func (s *slab) person(p *nexmark.Person) *nexmark.Person {
	if len(s.persons) == 0 {
		s.persons = make([]nexmark.Person, slabSize)
	}
	q := &s.persons[0]
	s.persons = s.persons[1:]
	*q = *p
	return q
}

// generatorSource adds a source of the Nexmark sequence of cfg (see
// nexmark.SourceOf); newPick is called once per subtask.
func generatorSource[T any](env *eddy.Environment, name string, cfg nexmark.Config, ts func(T) int64,
	newPick func() func(e *nexmark.Event, out connector.SplitOutput[T])) *eddy.Stream[T] {
	return nexmark.SourceOf(env, name, cfg, nexmark.SourceOptions[T]{
		Timestamp:   ts,
		NewPicker:   func() nexmark.Picker[T] { return newPick() },
		OnGenerated: func(n int) { generated.Add(int64(n)) },
	})
}

// bidSource adds a source of the bids of the sequence (the reference's bid
// view).
func bidSource(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[nexmark.Bid] {
	return generatorSource(env, "Nexmark bids", cfg, func(b nexmark.Bid) int64 { return b.DateTime },
		func() func(e *nexmark.Event, out connector.SplitOutput[nexmark.Bid]) {
			return func(e *nexmark.Event, out connector.SplitOutput[nexmark.Bid]) {
				if e.Type == nexmark.BidEvent {
					out.Emit(e.Bid)
				}
			}
		})
}

// eventSource adds a source of the events of the types in want.
func eventSource(env *eddy.Environment, cfg nexmark.Config, want kinds) *eddy.Stream[event] {
	return generatorSource(env, "Nexmark events", cfg, func(e event) int64 { return e.timestamp() },
		func() func(e *nexmark.Event, out connector.SplitOutput[event]) {
			var s slab
			return func(e *nexmark.Event, out connector.SplitOutput[event]) {
				if !want.has(e.Type) {
					return
				}
				switch e.Type {
				case nexmark.BidEvent:
					out.Emit(event{kind: nexmark.BidEvent, bid: e.Bid})
				case nexmark.AuctionEvent:
					out.Emit(event{kind: nexmark.AuctionEvent, auction: s.auction(&e.Auction)})
				case nexmark.PersonEvent:
					out.Emit(event{kind: nexmark.PersonEvent, person: s.person(&e.Person)})
				}
			}
		})
}

// bidsOf returns the bids of an event stream.
func bidsOf(s *eddy.Stream[event]) *eddy.Stream[nexmark.Bid] {
	return eddy.FlatMap(s, func(e event, emit func(nexmark.Bid)) {
		if e.kind == nexmark.BidEvent {
			emit(e.bid)
		}
	}).Name("bids")
}

// auctionsOf returns the auctions of an event stream that keep passes (nil
// keeps all).
func auctionsOf(s *eddy.Stream[event], keep func(a *nexmark.Auction) bool) *eddy.Stream[nexmark.Auction] {
	return eddy.FlatMap(s, func(e event, emit func(nexmark.Auction)) {
		if e.kind == nexmark.AuctionEvent && (keep == nil || keep(e.auction)) {
			emit(*e.auction)
		}
	}).Name("auctions")
}

// personsOf returns the persons of an event stream.
func personsOf(s *eddy.Stream[event]) *eddy.Stream[nexmark.Person] {
	return eddy.FlatMap(s, func(e event, emit func(nexmark.Person)) {
		if e.kind == nexmark.PersonEvent {
			emit(*e.person)
		}
	}).Name("persons")
}

// Generate adds a source that generates every event of the sequence of cfg
// and emits only its type: the "gen" pseudo-query, which measures the
// generator and the engine's source path, the ceiling of every query.
func Generate(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[nexmark.EventType] {
	return generatorSource(env, "Nexmark events", cfg, nil,
		func() func(e *nexmark.Event, out connector.SplitOutput[nexmark.EventType]) {
			return func(e *nexmark.Event, out connector.SplitOutput[nexmark.EventType]) {
				out.EmitAt(e.Type, e.Timestamp())
			}
		})
}

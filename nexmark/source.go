package nexmark

import (
	"io"
	"time"

	"github.com/eddystream/eddy"
)

// DDLWatermarkDelay is the out-of-orderness the reference DDL declares for
// the Nexmark tables: WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND.
const DDLWatermarkDelay = 4 * time.Second

// source adds a Nexmark source to env: with parallelism p, subtask i
// generates part i of p (so NumEventGenerators is set to p, keeping the
// configured rate over all parts), and pick turns each event it keeps into a
// record.
func source[T any](env *eddy.Environment, name string, cfg Config, keep func(*Event) bool, pick func(*Event) T, ts func(T) int64) *eddy.Stream[T] {
	ws := eddy.BoundedOutOfOrder(DDLWatermarkDelay, ts)
	return eddy.FromReader(env, "Nexmark "+name, ws, func(i, p int) (eddy.SplitReader[T], error) {
		c := cfg
		c.NumEventGenerators = p
		g, err := NewGenerator(c, i, p)
		if err != nil {
			return nil, err
		}
		return &reader[T]{g: g, split: i, keep: keep, pick: pick, buf: make([]Event, 256)}, nil
	})
}

type reader[T any] struct {
	g     *Generator
	split int
	keep  func(*Event) bool
	pick  func(*Event) T
	buf   []Event
	init  bool
}

func (r *reader[T]) Read(out *eddy.SourceOutput[T]) error {
	if !r.init {
		r.init = true
		out.AddSplit(r.split)
	}
	for !out.Full() {
		n := r.g.NextBatch(r.buf[:min(len(r.buf), out.Room())])
		if n == 0 {
			out.FinishSplit(r.split)
			return io.EOF
		}
		for i := range r.buf[:n] {
			if e := &r.buf[i]; r.keep(e) {
				out.Emit(r.split, r.pick(e))
			}
		}
	}
	return nil
}

func (r *reader[T]) Close() error { return nil }

// Events adds a source of all Nexmark events (persons, auctions and bids),
// timestamped by their dateTime with the reference DDL's 4 s watermark
// delay.
func Events(env *eddy.Environment, cfg Config) *eddy.Stream[Event] {
	return source(env, "Events", cfg, func(*Event) bool { return true }, func(e *Event) Event { return *e }, func(e Event) int64 { return e.Timestamp() })
}

// Bids adds a source of the bids of the Nexmark event sequence.
func Bids(env *eddy.Environment, cfg Config) *eddy.Stream[Bid] {
	return source(env, "Bids", cfg, func(e *Event) bool { return e.Type == BidEvent }, func(e *Event) Bid { return e.Bid }, func(b Bid) int64 { return b.DateTime })
}

// Auctions adds a source of the auctions of the Nexmark event sequence.
func Auctions(env *eddy.Environment, cfg Config) *eddy.Stream[Auction] {
	return source(env, "Auctions", cfg, func(e *Event) bool { return e.Type == AuctionEvent }, func(e *Event) Auction { return e.Auction }, func(a Auction) int64 { return a.DateTime })
}

// Persons adds a source of the persons of the Nexmark event sequence.
func Persons(env *eddy.Environment, cfg Config) *eddy.Stream[Person] {
	return source(env, "Persons", cfg, func(e *Event) bool { return e.Type == PersonEvent }, func(e *Event) Person { return e.Person }, func(p Person) int64 { return p.DateTime })
}

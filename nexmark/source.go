package nexmark

import (
	"fmt"
	"io"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// DDLWatermarkDelay is the out-of-orderness the reference DDL declares for
// the Nexmark tables: WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND.
const DDLWatermarkDelay = 4 * time.Second

// splitSource is the Nexmark generator as a split source: on a first start
// with parallelism p there are p splits, split j generating part j of p of
// the sequence (NumEventGenerators = p keeps the configured rate over all
// parts). A split is (part, parts, position); a restored split resumes its
// part exactly, whatever the new parallelism.
type splitSource[T any] struct {
	cfg  Config
	keep func(*Event) bool
	pick func(*Event) T
}

func (s *splitSource[T]) Splits(p int) ([][]byte, error) {
	var out [][]byte
	for j := 0; j < p; j++ {
		out = append(out, ops.EncodeSplit("", int64(j), int64(p), 0))
	}
	return out, nil
}

func (s *splitSource[T]) NewReader(_ *runtime.Context, splits [][]byte) (eddy.CheckpointedReader[T], error) {
	r := &reader[T]{keep: s.keep, pick: s.pick, buf: make([]Event, 256)}
	for _, b := range splits {
		v, _, err := ops.DecodeSplit(b, 3)
		if err != nil {
			return nil, fmt.Errorf("nexmark source: %w", err)
		}
		c := s.cfg
		c.NumEventGenerators = int(v[1])
		g, err := NewGenerator(c, int(v[0]), int(v[1]))
		if err != nil {
			return nil, err
		}
		if err := g.SetPosition(v[2]); err != nil {
			return nil, err
		}
		r.parts = append(r.parts, part{num: int(v[0]), of: int(v[1]), g: g})
	}
	return r, nil
}

type part struct {
	num, of int
	g       *Generator
}

type reader[T any] struct {
	parts []part
	cur   int
	keep  func(*Event) bool
	pick  func(*Event) T
	buf   []Event
	init  bool
}

func (r *reader[T]) Read(out *eddy.SourceOutput[T]) error {
	if !r.init {
		r.init = true
		for _, p := range r.parts {
			out.AddSplit(p.num)
		}
	}
	for !out.Full() {
		if r.cur == len(r.parts) {
			return io.EOF
		}
		p := r.parts[r.cur]
		n := p.g.NextBatch(r.buf[:min(len(r.buf), out.Room())])
		if n == 0 {
			out.FinishSplit(p.num)
			r.cur++
			continue
		}
		for i := range r.buf[:n] {
			if e := &r.buf[i]; r.keep(e) {
				out.Emit(p.num, r.pick(e))
			}
		}
	}
	return nil
}

func (r *reader[T]) SnapshotSplits() ([][]byte, error) {
	var out [][]byte
	for _, p := range r.parts[r.cur:] {
		out = append(out, ops.EncodeSplit("", int64(p.num), int64(p.of), p.g.Position()))
	}
	return out, nil
}

func (r *reader[T]) Close() error { return nil }

func source[T any](env *eddy.Environment, name string, cfg Config, keep func(*Event) bool, pick func(*Event) T, ts func(T) int64) *eddy.Stream[T] {
	return eddy.FromSource[T](env, "Nexmark "+name, &splitSource[T]{cfg: cfg, keep: keep, pick: pick}, eddy.BoundedOutOfOrder(DDLWatermarkDelay, ts))
}

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

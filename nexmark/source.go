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

// Picker turns a generated event into the records a source emits for it
// (none, one or several), emitting them through out for split.
type Picker[T any] func(e *Event, out *eddy.SourceOutput[T], split int)

// SourceOptions configures SourceOf.
type SourceOptions[T any] struct {
	// Timestamp gives a record's event time; nil leaves the timestamps the
	// picker gives with EmitAt.
	Timestamp func(T) int64
	// NewPicker is called once per reader (so a picker may keep state).
	NewPicker func() Picker[T]
	// OnGenerated, if set, is told how many events were generated, after
	// every batch, for progress reports.
	OnGenerated func(n int)
}

// SourceOf adds a source of the Nexmark sequence of cfg to env. On a first
// start with parallelism p the sequence has p splits, split j generating
// part j of p (NumEventGenerators = p keeps the configured rate over all
// parts). A split's position is checkpointed; a restored split resumes its
// part exactly, whatever the new parallelism. Records are timestamped with
// the reference DDL's 4 s watermark delay.
func SourceOf[T any](env *eddy.Environment, name string, cfg Config, o SourceOptions[T]) *eddy.Stream[T] {
	ws := eddy.BoundedOutOfOrder(DDLWatermarkDelay, o.Timestamp)
	if o.Timestamp == nil {
		ws = eddy.CustomWatermarks(nil, func() eddy.WatermarkGenerator[T] { return &eventTimeWatermark[T]{} })
	}
	return eddy.FromSource[T](env, name, &splitSource[T]{cfg: cfg, o: o}, ws)
}

// eventTimeWatermark trails the largest timestamp the source gave by the
// DDL's delay, for pickers that timestamp records themselves.
type eventTimeWatermark[T any] struct {
	max  int64
	seen bool
}

func (w *eventTimeWatermark[T]) OnEvent(_ T, ts int64) {
	if !w.seen || ts > w.max {
		w.max, w.seen = ts, true
	}
}

func (w *eventTimeWatermark[T]) Watermark() int64 {
	if !w.seen {
		return runtime.MinWatermark
	}
	return w.max - DDLWatermarkDelay.Milliseconds() - 1
}

// splitSource is the Nexmark generator as a split source. A split is
// (part, parts, position).
type splitSource[T any] struct {
	cfg Config
	o   SourceOptions[T]
}

func (s *splitSource[T]) Splits(p int) ([][]byte, error) {
	var out [][]byte
	for j := 0; j < p; j++ {
		out = append(out, ops.EncodeSplit("", int64(j), int64(p), 0))
	}
	return out, nil
}

func (s *splitSource[T]) NewReader(_ *runtime.Context, splits [][]byte) (eddy.CheckpointedReader[T], error) {
	r := &reader[T]{pick: s.o.NewPicker(), onGen: s.o.OnGenerated, buf: make([]Event, 256)}
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
	pick  Picker[T]
	onGen func(int)
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
		if r.onGen != nil {
			r.onGen(n)
		}
		for i := range r.buf[:n] {
			r.pick(&r.buf[i], out, p.num)
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
	return SourceOf(env, "Nexmark "+name, cfg, SourceOptions[T]{Timestamp: ts, NewPicker: func() Picker[T] {
		return func(e *Event, out *eddy.SourceOutput[T], split int) {
			if keep(e) {
				out.Emit(split, pick(e))
			}
		}
	}})
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

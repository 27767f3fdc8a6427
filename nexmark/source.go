package nexmark

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// DDLWatermarkDelay is the out-of-orderness the reference DDL declares for
// the Nexmark tables: WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND.
const DDLWatermarkDelay = 4 * time.Second

// minWatermark is the watermark before any event.
const minWatermark = -1 << 63

// Picker turns a generated event into the records a source emits for it
// (none, one or several), emitting them through out, the output of the
// generator part the event belongs to.
type Picker[T any] func(e *Event, out connector.SplitOutput[T])

// SourceOptions configures NewSource and SourceOf.
type SourceOptions[T any] struct {
	// Timestamp gives a record's event time; nil leaves the timestamps the
	// picker gives with EmitAt.
	Timestamp func(T) int64
	// NewPicker is called once per reader (so a picker may keep state).
	NewPicker func() Picker[T]
	// OnGenerated, if set, is told how many events were generated, after
	// every batch, for progress reports.
	OnGenerated func(n int)

	// eventTypes, if not 0, holds a bit per EventType (1<<t) whose events
	// the picker wants: the others reach it with only their Type and event
	// time set, as the generator skips their fields (a table source with a
	// filter on event_type).
	eventTypes uint8
	// newReusingPicker, if set, is called instead of NewPicker when the
	// reader may reuse its records' memory (connector.ReusesRecords): the
	// picker writes into memory that rewind, called before every read,
	// hands out again.
	newReusingPicker func() (pick Picker[T], rewind func())
	// prefetch, if set, is given every batch of events before the picker
	// sees them; what it returns is kept, so that its reads stay.
	prefetch func(events []Event) byte
}

// NewSource returns the Nexmark sequence of cfg as a connector source. On a
// first start with parallelism p the sequence has p splits, split j
// generating part j of p (NumEventGenerators = p keeps the configured rate
// over all parts). A split's position is checkpointed; a restored split
// resumes its part exactly, whatever the new parallelism.
func NewSource[T any](cfg Config, o SourceOptions[T]) connector.Source[T] {
	return &source[T]{cfg: cfg, o: o}
}

// SourceOf adds a source of the Nexmark sequence of cfg (NewSource) to env,
// with records timestamped with the reference DDL's 4 s watermark delay.
func SourceOf[T any](env *eddy.Environment, name string, cfg Config, o SourceOptions[T]) *eddy.Stream[T] {
	ws := eddy.BoundedOutOfOrder(DDLWatermarkDelay, o.Timestamp)
	if o.Timestamp == nil {
		ws = eddy.CustomWatermarks(nil, func() eddy.WatermarkGenerator[T] { return &eventTimeWatermark[T]{} })
	}
	return eddy.FromSource(env, name, NewSource(cfg, o), ws)
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
		return minWatermark
	}
	return w.max - DDLWatermarkDelay.Milliseconds() - 1
}

// source is the Nexmark generator as a connector source. A split is
// "part-<j>-of-<p>" with state (part, parts, position).
type source[T any] struct {
	cfg Config
	o   SourceOptions[T]
}

func (s *source[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	if err := s.cfg.Validate(); err != nil {
		return nil, err
	}
	return connector.NewStaticEnumerator(ctx, restored, func(p int) ([]connector.Split, error) {
		out := make([]connector.Split, p)
		for j := range out {
			out[j] = connector.Split{ID: fmt.Sprintf("part-%d-of-%d", j, p), State: encodeSplit(int64(j), int64(p), 0)}
		}
		return out, nil
	})
}

func (s *source[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	if s.o.NewPicker == nil {
		return nil, fmt.Errorf("nexmark source: SourceOptions.NewPicker is not set")
	}
	r := &reader[T]{cfg: s.cfg, onGen: s.o.OnGenerated, eventTypes: s.o.eventTypes, buf: make([]Event, 256), prefetch: s.o.prefetch}
	if s.o.newReusingPicker != nil && connector.ReusesRecords(ctx) {
		r.pick, r.rewind = s.o.newReusingPicker()
	} else {
		r.pick = s.o.NewPicker()
	}
	return r, nil
}

// encodeSplit encodes a split's part, number of parts and position.
func encodeSplit(part, parts, pos int64) []byte {
	b := binary.AppendVarint(nil, part)
	b = binary.AppendVarint(b, parts)
	return binary.AppendVarint(b, pos)
}

func decodeSplit(b []byte) ([3]int64, error) {
	var v [3]int64
	if len(b) > 0 && b[0] == 3 && len(b) > 1 {
		// eddy's first checkpoint format put a count of three first.
		if w, err := decodeSplit(b[1:]); err == nil {
			return w, nil
		}
	}
	for i := range v {
		x, n := binary.Varint(b)
		if n <= 0 {
			return v, errors.New("split state is corrupt or from another source")
		}
		v[i], b = x, b[n:]
	}
	if len(b) != 0 {
		return v, errors.New("split state is corrupt or from another source")
	}
	return v, nil
}

type part struct {
	id      string
	num, of int
	g       *Generator
}

type reader[T any] struct {
	cfg        Config
	parts      []part
	pick       Picker[T]
	rewind     func() // nil unless the picker reuses memory read to read
	onGen      func(int)
	eventTypes uint8
	buf        []Event
	prefetch   func([]Event) byte
	prefetched byte
}

func (r *reader[T]) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		v, err := decodeSplit(s.State)
		if err != nil {
			return fmt.Errorf("nexmark source: split %s: %w", s.ID, err)
		}
		c := r.cfg
		c.NumEventGenerators = int(v[1])
		g, err := NewGenerator(c, int(v[0]), int(v[1]))
		if err != nil {
			return err
		}
		if err := g.SetPosition(v[2]); err != nil {
			return err
		}
		if r.eventTypes != 0 {
			g.skip = ^r.eventTypes
		}
		r.parts = append(r.parts, part{id: s.ID, num: int(v[0]), of: int(v[1]), g: g})
	}
	return nil
}

func (r *reader[T]) Read(out connector.Output[T]) error {
	if r.rewind != nil {
		r.rewind()
	}
	for len(r.parts) > 0 {
		// Room is asked once a round: a split is finished only when a
		// request for at least one event yields none.
		room := out.Room()
		if room <= 0 {
			break
		}
		p := r.parts[0]
		so := out.Split(p.id)
		n := p.g.NextBatch(r.buf[:min(len(r.buf), room)])
		if n == 0 {
			so.Finish()
			r.parts = r.parts[1:]
			continue
		}
		if r.onGen != nil {
			r.onGen(n)
		}
		if r.prefetch != nil {
			r.prefetched += r.prefetch(r.buf[:n])
		}
		for i := range r.buf[:n] {
			r.pick(&r.buf[i], so)
		}
	}
	return nil
}

func (r *reader[T]) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.parts))
	for i, p := range r.parts {
		out[i] = connector.Split{ID: p.id, State: encodeSplit(int64(p.num), int64(p.of), p.g.Position())}
	}
	return out, nil
}

func (r *reader[T]) Close() error { return nil }

func typedSource[T any](env *eddy.Environment, name string, cfg Config, keep func(*Event) bool, pick func(*Event) T, ts func(T) int64) *eddy.Stream[T] {
	return SourceOf(env, "Nexmark "+name, cfg, SourceOptions[T]{Timestamp: ts, NewPicker: func() Picker[T] {
		return func(e *Event, out connector.SplitOutput[T]) {
			if keep(e) {
				out.Emit(pick(e))
			}
		}
	}})
}

// Events adds a source of all Nexmark events (persons, auctions and bids),
// timestamped by their dateTime with the reference DDL's 4 s watermark
// delay.
func Events(env *eddy.Environment, cfg Config) *eddy.Stream[Event] {
	return typedSource(env, "Events", cfg, func(*Event) bool { return true }, func(e *Event) Event { return *e }, func(e Event) int64 { return e.Timestamp() })
}

// Bids adds a source of the bids of the Nexmark event sequence.
func Bids(env *eddy.Environment, cfg Config) *eddy.Stream[Bid] {
	return typedSource(env, "Bids", cfg, func(e *Event) bool { return e.Type == BidEvent }, func(e *Event) Bid { return e.Bid }, func(b Bid) int64 { return b.DateTime })
}

// Auctions adds a source of the auctions of the Nexmark event sequence.
func Auctions(env *eddy.Environment, cfg Config) *eddy.Stream[Auction] {
	return typedSource(env, "Auctions", cfg, func(e *Event) bool { return e.Type == AuctionEvent }, func(e *Event) Auction { return e.Auction }, func(a Auction) int64 { return a.DateTime })
}

// Persons adds a source of the persons of the Nexmark event sequence.
func Persons(env *eddy.Environment, cfg Config) *eddy.Stream[Person] {
	return typedSource(env, "Persons", cfg, func(e *Event) bool { return e.Type == PersonEvent }, func(e *Event) Person { return e.Person }, func(p Person) int64 { return p.DateTime })
}

package nexmark

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unsafe"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// The columns a "nexmark" table may declare, as the reference's DDL does:
//
//	event_type INT,
//	person  ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR,
//	            city VARCHAR, state VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
//	auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT,
//	            reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3),
//	            seller BIGINT, category BIGINT, extra VARCHAR>,
//	bid     ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR,
//	            url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>
//
// plus, optionally, a physical dateTime TIMESTAMP(3) column: the event's
// time. Any subset in any order; the row of an event of another kind is
// NULL. Names match without regard to case.
var (
	personColumns = map[string]eventField{
		"id":           intField(personOff + unsafe.Offsetof(Person{}.ID)),
		"name":         strField(personOff + unsafe.Offsetof(Person{}.Name)),
		"emailaddress": strField(personOff + unsafe.Offsetof(Person{}.EmailAddress)),
		"creditcard":   strField(personOff + unsafe.Offsetof(Person{}.CreditCard)),
		"city":         strField(personOff + unsafe.Offsetof(Person{}.City)),
		"state":        strField(personOff + unsafe.Offsetof(Person{}.State)),
		"datetime":     timeField(personOff + unsafe.Offsetof(Person{}.DateTime)),
		"extra":        strField(personOff + unsafe.Offsetof(Person{}.Extra)),
	}
	auctionColumns = map[string]eventField{
		"id":          intField(auctionOff + unsafe.Offsetof(Auction{}.ID)),
		"itemname":    strField(auctionOff + unsafe.Offsetof(Auction{}.ItemName)),
		"description": strField(auctionOff + unsafe.Offsetof(Auction{}.Description)),
		"initialbid":  intField(auctionOff + unsafe.Offsetof(Auction{}.InitialBid)),
		"reserve":     intField(auctionOff + unsafe.Offsetof(Auction{}.Reserve)),
		"datetime":    timeField(auctionOff + unsafe.Offsetof(Auction{}.DateTime)),
		"expires":     timeField(auctionOff + unsafe.Offsetof(Auction{}.Expires)),
		"seller":      intField(auctionOff + unsafe.Offsetof(Auction{}.Seller)),
		"category":    intField(auctionOff + unsafe.Offsetof(Auction{}.Category)),
		"extra":       strField(auctionOff + unsafe.Offsetof(Auction{}.Extra)),
	}
	bidColumns = map[string]eventField{
		"auction":  intField(bidOff + unsafe.Offsetof(Bid{}.Auction)),
		"bidder":   intField(bidOff + unsafe.Offsetof(Bid{}.Bidder)),
		"price":    intField(bidOff + unsafe.Offsetof(Bid{}.Price)),
		"channel":  strField(bidOff + unsafe.Offsetof(Bid{}.Channel)),
		"url":      strField(bidOff + unsafe.Offsetof(Bid{}.URL)),
		"datetime": timeField(bidOff + unsafe.Offsetof(Bid{}.DateTime)),
		"extra":    strField(bidOff + unsafe.Offsetof(Bid{}.Extra)),
	}
	eventRows = map[string]struct {
		kind   EventType
		fields map[string]eventField
	}{
		"person":  {PersonEvent, personColumns},
		"auction": {AuctionEvent, auctionColumns},
		"bid":     {BidEvent, bidColumns},
	}
)

// The offsets of an Event's records.
const (
	personOff  = unsafe.Offsetof(Event{}.Person)
	auctionOff = unsafe.Offsetof(Event{}.Auction)
	bidOff     = unsafe.Offsetof(Event{}.Bid)
)

// The classes of types of the events' fields.
const (
	classInteger   = iota // an int64 field, a BIGINT column
	classString           // a string field, a VARCHAR column
	classTimestamp        // an int64 field of milliseconds, a TIMESTAMP(3) column
)

// eventField is a field of an event that a column can hold: its class of
// types and its offset in an Event (an int64 for integers and timestamps,
// a string for strings).
type eventField struct {
	class int
	off   uintptr
}

func intField(off uintptr) eventField { return eventField{class: classInteger, off: off} }

func strField(off uintptr) eventField { return eventField{class: classString, off: off} }

func timeField(off uintptr) eventField { return eventField{class: classTimestamp, off: off} }

// write sets field i of w to the field of e.
func (f eventField) write(e *Event, w *types.RowWriter, i int) {
	p := unsafe.Add(unsafe.Pointer(e), f.off)
	switch f.class {
	case classInteger:
		w.SetInt64(i, *(*int64)(p))
	case classString:
		w.SetStringRef(i, *(*string)(p))
	default:
		w.SetTimestampMillis(i, *(*int64)(p))
	}
}

// fieldColumn is a column of a projected row holding a field of the
// events of one kind, NULL in the rows of the others.
type fieldColumn struct {
	eventField
	kind EventType
	out  int
}

// fits tells whether a column of type t can hold the field.
func (f eventField) fits(t types.Type) bool {
	switch f.class {
	case classInteger:
		return t.Kind() == types.KindBigInt
	case classString:
		return t.Kind() == types.KindVarChar || t.Kind() == types.KindChar
	}
	return (t.Kind() == types.KindTimestamp || t.Kind() == types.KindTimestampLTZ) && t.Precision() <= types.MaxCompactTimestampPrecision
}

func (f eventField) want() string {
	switch f.class {
	case classInteger:
		return "BIGINT"
	case classString:
		return "VARCHAR"
	}
	return "TIMESTAMP(3)"
}

func fieldNames(m map[string]eventField) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// tableWriter writes the row of an event for a table's schema (or a
// projection of it).
type tableWriter struct {
	rt *types.RowType
	// fields are the columns holding a field of the events, written
	// before cols, the others.
	fields []fieldColumn
	cols   []func(e *Event, w *types.RowWriter, nested []*types.RowWriter)
	// nested are the types of the event rows written whole, each with a
	// writer of its own.
	nested []*types.RowType
	// transient writes every row into the memory of the one before (see
	// connector.TransientRowSource).
	transient bool
	// keep holds a bit per EventType (1<<t) whose events have rows; the
	// others are left out (see tableSource.ApplyFilters). 0 keeps all.
	keep uint8
	// conds are the comparisons an event must pass to have a row.
	conds []fieldCond
	// strs[t] are the offsets in an Event of type t of the strings its
	// row copies (see prefetch).
	strs [BidEvent + 1][]uintptr
}

// newTableWriter checks the columns of t against the events' fields and
// returns the writer of its rows.
func newTableWriter(t *connector.Table) (*tableWriter, error) {
	if len(t.Metadata) > 0 {
		return nil, connector.UnknownMetadata(spec.Name, t.Metadata[0])
	}
	tw := &tableWriter{rt: t.Schema}
	for i, f := range t.Schema.Fields() {
		if err := tw.addColumn(f, i); err != nil {
			return nil, err
		}
	}
	return tw, nil
}

// addColumn adds the writer of a column of the events, f, into field out.
func (tw *tableWriter) addColumn(f types.Field, out int) error {
	name := strings.ToLower(f.Name)
	switch {
	case name == "event_type":
		if !f.Type.IsIntegral() {
			return fmt.Errorf("nexmark table: column event_type is %s; declare it INT", f.Type)
		}
		tw.cols = append(tw.cols, func(e *Event, w *types.RowWriter, _ []*types.RowWriter) { w.SetInt64(out, int64(e.Type)) })
	case name == "datetime":
		if !timeField(0).fits(f.Type) {
			return fmt.Errorf("nexmark table: column %s is %s; declare it TIMESTAMP(3)", f.Name, f.Type)
		}
		tw.cols = append(tw.cols, func(e *Event, w *types.RowWriter, _ []*types.RowWriter) { w.SetTimestampMillis(out, e.Timestamp()) })
	default:
		er, ok := eventRows[name]
		if !ok {
			return fmt.Errorf("nexmark table: no column %q in the events; a nexmark table has the columns event_type, person, auction, bid (and dateTime)", f.Name)
		}
		if f.Type.Kind() != types.KindRow {
			return fmt.Errorf("nexmark table: column %s is %s; declare it a ROW of the %s's fields (%s)", f.Name, f.Type, name, fieldNames(er.fields))
		}
		nt := f.Type.Row()
		var writes []func(e *Event, w *types.RowWriter)
		for j, nf := range nt.Fields() {
			j := j
			ef, ok := er.fields[strings.ToLower(nf.Name)]
			if !ok {
				return fmt.Errorf("nexmark table: column %s has a field %q that a %s has not; its fields are %s", f.Name, nf.Name, name, fieldNames(er.fields))
			}
			if !ef.fits(nf.Type) {
				return fmt.Errorf("nexmark table: field %s.%s is %s; declare it %s", f.Name, nf.Name, nf.Type, ef.want())
			}
			write := ef.write
			writes = append(writes, func(e *Event, w *types.RowWriter) { write(e, w, j) })
			tw.copies(er.kind, ef)
		}
		slot, kind := len(tw.nested), er.kind
		tw.nested = append(tw.nested, nt)
		tw.cols = append(tw.cols, func(e *Event, w *types.RowWriter, nested []*types.RowWriter) {
			if e.Type != kind {
				w.SetNull(out)
				return
			}
			nw := nested[slot]
			nw.Reset()
			for _, wr := range writes {
				wr(e, nw)
			}
			w.SetRowFrom(out, nw)
		})
	}
	return nil
}

// picker returns a picker that emits the row of every event.
func (tw *tableWriter) picker() Picker[connector.TableRecord] {
	arena := types.NewArena(0)
	if tw.transient {
		arena = types.NewScratchArena()
	}
	return tw.pickerIn(arena)
}

// reusingPicker returns a picker that emits the row of every event into
// memory that rewind hands out again (connector.ReusesRecords).
func (tw *tableWriter) reusingPicker() (Picker[connector.TableRecord], func()) {
	if tw.transient {
		return tw.picker(), func() {}
	}
	arena := types.NewRecyclingArena(0)
	return tw.pickerIn(arena), arena.Rewind
}

// pickerIn returns a picker that writes its rows into arena.
func (tw *tableWriter) pickerIn(arena *types.Arena) Picker[connector.TableRecord] {
	w := types.NewRowWriter(tw.rt, arena)
	nested := make([]*types.RowWriter, len(tw.nested))
	for k, nt := range tw.nested {
		nested[k] = types.NewRowWriter(nt, arena)
	}
	keep := tw.keep
	if keep == 0 {
		keep = 0xff
	}
	fields, cols, conds := tw.fields, tw.cols, tw.conds
	return func(e *Event, out connector.SplitOutput[connector.TableRecord]) {
		if keep&(1<<e.Type) == 0 {
			return
		}
		for i := range conds {
			if !conds[i].holds(e) {
				return
			}
		}
		w.Reset()
		for i := range fields {
			// eventField.write, inlined.
			f := &fields[i]
			if e.Type != f.kind {
				w.SetNull(f.out)
				continue
			}
			p := unsafe.Add(unsafe.Pointer(e), f.off)
			switch f.class {
			case classInteger:
				w.SetInt64(f.out, *(*int64)(p))
			case classString:
				w.SetStringRef(f.out, *(*string)(p))
			default:
				w.SetTimestampMillis(f.out, *(*int64)(p))
			}
		}
		for _, c := range cols {
			c(e, w, nested)
		}
		out.EmitAt(changelog.Change[types.Row]{Kind: changelog.Insert, Row: w.Finish()}, e.Timestamp())
	}
}

// newTableSource returns the source of a "nexmark" table.
func newTableSource(cfg Config, t *connector.Table) (connector.Source[connector.TableRecord], error) {
	tw, err := newTableWriter(t)
	if err != nil {
		return nil, err
	}
	return newTableSourceOf(cfg, t, tw), nil
}

// newTableSourceOf returns the source of table t writing its rows with tw.
func newTableSourceOf(cfg Config, t *connector.Table, tw *tableWriter) *tableSource {
	o := SourceOptions[connector.TableRecord]{NewPicker: tw.picker, newReusingPicker: tw.reusingPicker, eventTypes: tw.keep, prefetch: tw.prefetch}
	return &tableSource{Source: NewSource(cfg, o), cfg: cfg, t: t, tw: tw}
}

// tableSource is the source of a "nexmark" table; it can project, filter
// on the event type, and write its rows into reused memory.
type tableSource struct {
	connector.Source[connector.TableRecord]
	cfg Config
	t   *connector.Table
	tw  *tableWriter
}

// TransientRows implements connector.TransientRowSource.
func (s *tableSource) TransientRows() connector.Source[connector.TableRecord] {
	tw := *s.tw
	tw.transient = true
	return newTableSourceOf(s.cfg, s.t, &tw)
}

// allEvents holds the bit of every EventType.
const allEvents = 1<<PersonEvent | 1<<AuctionEvent | 1<<BidEvent

// ApplyFilters implements connector.FilterableSource. It accepts the
// predicates that depend on the event type alone: comparisons of
// event_type with an integer constant, and IS [NOT] NULL of the person,
// auction and bid columns and their fields (a field is NULL exactly when
// the event is of another kind); and comparisons of a BIGINT field of
// those columns with a constant, tested on the event. The events the
// predicates leave out are skipped before any row is written, and the
// fields of the event types they leave out are not generated. The paths
// refer to the table's columns also on a projected source.
func (s *tableSource) ApplyFilters(preds []connector.Predicate) (connector.Source[connector.TableRecord], []int) {
	keep := s.tw.keep
	if keep == 0 {
		keep = allEvents
	}
	var accepted []int
	conds := s.tw.conds
	for i, p := range preds {
		if m, ok := s.eventMask(p); ok {
			keep &= m
		} else if c, ok := s.fieldCondOf(p); ok {
			conds = append(conds[:len(conds):len(conds)], c)
			keep &= 1 << c.kind
		} else {
			continue
		}
		accepted = append(accepted, i)
	}
	if len(accepted) == 0 {
		return nil, nil
	}
	tw := *s.tw
	tw.keep, tw.conds = keep, conds
	if keep == 0 {
		// No event passes: keep a bit no event has, so that the
		// generator still skips every event's fields.
		tw.keep = 1 << 7
	}
	return newTableSourceOf(s.cfg, s.t, &tw), accepted
}

// eventMask returns the event types for which p holds, if that depends on
// the event type alone.
func (s *tableSource) eventMask(p connector.Predicate) (uint8, bool) {
	if len(p.Path) == 0 || p.Path[0] < 0 || p.Path[0] >= s.t.Schema.Len() {
		return 0, false
	}
	col := s.t.Schema.Field(p.Path[0])
	name := strings.ToLower(col.Name)
	if er, ok := eventRows[name]; ok {
		// A ROW column, or a field of it, is NULL exactly for the
		// events of the other kinds.
		if _, ok := connector.PathType(s.t.Schema, p.Path); !ok || len(p.Path) > 2 {
			return 0, false
		}
		switch p.Op {
		case connector.OpIsNotNull:
			return 1 << er.kind, true
		case connector.OpIsNull:
			return allEvents &^ (1 << er.kind), true
		}
		return 0, false
	}
	if name != "event_type" || len(p.Path) != 1 {
		return 0, false
	}
	switch p.Op {
	case connector.OpIsNotNull:
		return allEvents, true
	case connector.OpIsNull:
		return 0, true
	}
	var c int64
	switch v := p.Value.(type) {
	case int8:
		c = int64(v)
	case int16:
		c = int64(v)
	case int32:
		c = int64(v)
	case int64:
		c = v
	default:
		return 0, false
	}
	var m uint8
	for _, t := range []EventType{PersonEvent, AuctionEvent, BidEvent} {
		v := int64(t)
		var holds bool
		switch p.Op {
		case connector.OpEqual:
			holds = v == c
		case connector.OpNotEqual:
			holds = v != c
		case connector.OpLess:
			holds = v < c
		case connector.OpLessOrEqual:
			holds = v <= c
		case connector.OpGreater:
			holds = v > c
		case connector.OpGreaterOrEqual:
			holds = v >= c
		default:
			return 0, false
		}
		if holds {
			m |= 1 << t
		}
	}
	return m, true
}

// ProjectFields implements connector.ProjectableSource: the rows hold the
// columns and the fields of the event rows at paths, written straight from
// the events. A filtered source stays filtered.
func (s *tableSource) ProjectFields(paths [][]int) (connector.Source[connector.TableRecord], bool) {
	var fs []types.Field
	tw := &tableWriter{keep: s.tw.keep, conds: s.tw.conds, transient: s.tw.transient}
	for k, p := range paths {
		k := k
		if len(p) == 0 || p[0] >= s.t.Schema.Len() || len(p) > 2 {
			return nil, false
		}
		col := s.t.Schema.Field(p[0])
		if len(p) == 1 {
			fs = append(fs, types.F(fmt.Sprintf("f%d", k), col.Type))
			if err := tw.addColumn(col, k); err != nil {
				return nil, false
			}
			continue
		}
		er, ok := eventRows[strings.ToLower(col.Name)]
		if !ok || col.Type.Kind() != types.KindRow || p[1] >= col.Type.Row().Len() {
			return nil, false
		}
		nf := col.Type.Row().Field(p[1])
		ef, ok := er.fields[strings.ToLower(nf.Name)]
		if !ok {
			return nil, false
		}
		fs = append(fs, types.F(fmt.Sprintf("f%d", k), nf.Type.Nullable()))
		tw.fields = append(tw.fields, fieldColumn{eventField: ef, kind: er.kind, out: k})
		tw.copies(er.kind, ef)
	}
	tw.rt = types.MustRowType(fs...)
	return newTableSourceOf(s.cfg, s.t, tw), true
}

package nexmark

import (
	"fmt"
	"maps"
	"slices"
	"strings"

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
		"id":           intField(func(e *Event) int64 { return e.Person.ID }),
		"name":         strField(func(e *Event) string { return e.Person.Name }),
		"emailaddress": strField(func(e *Event) string { return e.Person.EmailAddress }),
		"creditcard":   strField(func(e *Event) string { return e.Person.CreditCard }),
		"city":         strField(func(e *Event) string { return e.Person.City }),
		"state":        strField(func(e *Event) string { return e.Person.State }),
		"datetime":     timeField(func(e *Event) int64 { return e.Person.DateTime }),
		"extra":        strField(func(e *Event) string { return e.Person.Extra }),
	}
	auctionColumns = map[string]eventField{
		"id":          intField(func(e *Event) int64 { return e.Auction.ID }),
		"itemname":    strField(func(e *Event) string { return e.Auction.ItemName }),
		"description": strField(func(e *Event) string { return e.Auction.Description }),
		"initialbid":  intField(func(e *Event) int64 { return e.Auction.InitialBid }),
		"reserve":     intField(func(e *Event) int64 { return e.Auction.Reserve }),
		"datetime":    timeField(func(e *Event) int64 { return e.Auction.DateTime }),
		"expires":     timeField(func(e *Event) int64 { return e.Auction.Expires }),
		"seller":      intField(func(e *Event) int64 { return e.Auction.Seller }),
		"category":    intField(func(e *Event) int64 { return e.Auction.Category }),
		"extra":       strField(func(e *Event) string { return e.Auction.Extra }),
	}
	bidColumns = map[string]eventField{
		"auction":  intField(func(e *Event) int64 { return e.Bid.Auction }),
		"bidder":   intField(func(e *Event) int64 { return e.Bid.Bidder }),
		"price":    intField(func(e *Event) int64 { return e.Bid.Price }),
		"channel":  strField(func(e *Event) string { return e.Bid.Channel }),
		"url":      strField(func(e *Event) string { return e.Bid.URL }),
		"datetime": timeField(func(e *Event) int64 { return e.Bid.DateTime }),
		"extra":    strField(func(e *Event) string { return e.Bid.Extra }),
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

// eventField is a field of an event that a column can hold: its class of
// types and its writer.
type eventField struct {
	class string // "integer", "string" or "timestamp"
	write func(e *Event, w *types.RowWriter, i int)
}

func intField(get func(*Event) int64) eventField {
	return eventField{"integer", func(e *Event, w *types.RowWriter, i int) { w.SetInt64(i, get(e)) }}
}

func strField(get func(*Event) string) eventField {
	return eventField{"string", func(e *Event, w *types.RowWriter, i int) { w.SetString(i, get(e)) }}
}

func timeField(get func(*Event) int64) eventField {
	return eventField{"timestamp", func(e *Event, w *types.RowWriter, i int) { w.SetTimestampMillis(i, get(e)) }}
}

// fits tells whether a column of type t can hold the field.
func (f eventField) fits(t types.Type) bool {
	switch f.class {
	case "integer":
		return t.Kind() == types.KindBigInt
	case "string":
		return t.Kind() == types.KindVarChar || t.Kind() == types.KindChar
	}
	return (t.Kind() == types.KindTimestamp || t.Kind() == types.KindTimestampLTZ) && t.Precision() <= types.MaxCompactTimestampPrecision
}

func (f eventField) want() string {
	switch f.class {
	case "integer":
		return "BIGINT"
	case "string":
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
	rt   *types.RowType
	cols []func(e *Event, w *types.RowWriter, nested []*types.RowWriter)
	// nested are the types of the event rows written whole, each with a
	// writer of its own.
	nested []*types.RowType
	// transient writes every row into the memory of the one before (see
	// connector.TransientRowSource).
	transient bool
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
		if !timeField(nil).fits(f.Type) {
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
	w := types.NewRowWriter(tw.rt, arena)
	nested := make([]*types.RowWriter, len(tw.nested))
	for k, nt := range tw.nested {
		nested[k] = types.NewRowWriter(nt, arena)
	}
	return func(e *Event, out connector.SplitOutput[connector.TableRecord]) {
		w.Reset()
		for _, c := range tw.cols {
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
	return &tableSource{Source: NewSource(cfg, SourceOptions[connector.TableRecord]{NewPicker: tw.picker}), cfg: cfg, t: t, tw: tw}, nil
}

// tableSource is the source of a "nexmark" table; it can project, and
// write its rows into reused memory.
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
	return &tableSource{Source: NewSource(s.cfg, SourceOptions[connector.TableRecord]{NewPicker: tw.picker}), cfg: s.cfg, t: s.t, tw: &tw}
}

// ProjectFields implements connector.ProjectableSource: the rows hold the
// columns and the fields of the event rows at paths, written straight from
// the events.
func (s *tableSource) ProjectFields(paths [][]int) (connector.Source[connector.TableRecord], bool) {
	var fs []types.Field
	tw := &tableWriter{}
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
		kind, write := er.kind, ef.write
		tw.cols = append(tw.cols, func(e *Event, w *types.RowWriter, _ []*types.RowWriter) {
			if e.Type != kind {
				w.SetNull(k)
				return
			}
			write(e, w, k)
		})
	}
	tw.rt = types.MustRowType(fs...)
	return &tableSource{Source: NewSource(s.cfg, SourceOptions[connector.TableRecord]{NewPicker: tw.picker}), cfg: s.cfg, t: s.t, tw: tw}, true
}

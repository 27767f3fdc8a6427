package iceberg

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	icebergo "github.com/apache/iceberg-go"

	"github.com/eddystream/eddy/sql/types"
)

// fieldSource is what a value is read from: a row (by field index) or an
// array (by element index). types.Row and types.Array both are.
type fieldSource interface {
	IsNull(i int) bool
	Bool(i int) bool
	Int64(i int) int64
	Float32(i int) float32
	Float64(i int) float64
	String(i int) string
	BinaryString(i int) string
	Date(i int) types.Date
	Time(i int) types.Time
	Timestamp(i int, precision int) types.Timestamp
	Decimal(i int, precision, scale int) types.Decimal
	Row(i int, t *types.RowType) types.Row
	Array(i int) types.Array
	Map(i int) types.Map
}

// valueAppender appends the value at index i of a source to an Arrow
// builder; it is made once per column (see newAppender), so appending a
// value costs no allocation and no type switch.
type valueAppender[S fieldSource] struct {
	// name names the value in errors ("column id", "column tags element").
	name string
	// required is set when the Iceberg field is required: a NULL is an
	// error.
	required bool
	b        array.Builder
	put      func(s S, i int) error
}

// append appends the value at index i of s (NULL included).
func (a *valueAppender[S]) append(s S, i int) error {
	if s.IsNull(i) {
		if a.required {
			return fmt.Errorf("%s is NULL but the Iceberg field is required (a key or NOT NULL column): filter out or replace the NULL values before the sink", a.name)
		}
		a.b.AppendNull()
		return nil
	}
	return a.put(s, i)
}

// newAppender makes the appender of values of eddy type t into the
// builder b, made from the Arrow type of the Iceberg type it (see
// arrowSchema).
func newAppender[S fieldSource](name string, t types.Type, it icebergo.Type, required bool, b array.Builder) (*valueAppender[S], error) {
	a := &valueAppender[S]{name: name, required: required, b: b}
	mismatch := func() error {
		return fmt.Errorf("%s of type %s cannot be written to the Iceberg type %s (Arrow %s)", name, t, it, b.Type())
	}
	switch t.Kind() {
	case types.KindBoolean:
		bb, ok := b.(*array.BooleanBuilder)
		if !ok {
			return nil, mismatch()
		}
		a.put = func(s S, i int) error { bb.Append(s.Bool(i)); return nil }
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		switch bb := b.(type) {
		case *array.Int32Builder:
			if t.Kind() == types.KindBigInt {
				return nil, mismatch()
			}
			a.put = func(s S, i int) error { bb.Append(int32(s.Int64(i))); return nil }
		case *array.Int64Builder:
			a.put = func(s S, i int) error { bb.Append(s.Int64(i)); return nil }
		default:
			return nil, mismatch()
		}
	case types.KindFloat:
		switch bb := b.(type) {
		case *array.Float32Builder:
			a.put = func(s S, i int) error { bb.Append(s.Float32(i)); return nil }
		case *array.Float64Builder:
			a.put = func(s S, i int) error { bb.Append(float64(s.Float32(i))); return nil }
		default:
			return nil, mismatch()
		}
	case types.KindDouble:
		bb, ok := b.(*array.Float64Builder)
		if !ok {
			return nil, mismatch()
		}
		a.put = func(s S, i int) error { bb.Append(s.Float64(i)); return nil }
	case types.KindDecimal:
		bb, ok := b.(*array.Decimal128Builder)
		if !ok {
			return nil, mismatch()
		}
		dt := bb.Type().(*arrow.Decimal128Type)
		p, sc, want := t.Precision(), t.Scale(), int(dt.Scale)
		a.put = func(s S, i int) error {
			d := s.Decimal(i, p, sc)
			if d.Scale() != want {
				d = d.Rescale(want)
			}
			if u, ok := d.Unscaled(); ok {
				bb.Append(decimal128.FromI64(u))
			} else {
				bb.Append(decimal128.FromBigInt(d.BigUnscaled()))
			}
			return nil
		}
	case types.KindChar, types.KindVarChar:
		bb, ok := b.(*array.StringBuilder)
		if !ok {
			return nil, mismatch()
		}
		a.put = func(s S, i int) error { bb.Append(s.String(i)); return nil }
	case types.KindBinary, types.KindVarBinary:
		bb, ok := b.(*array.BinaryBuilder)
		if !ok || bb.Type().ID() != arrow.BINARY {
			return nil, mismatch()
		}
		a.put = func(s S, i int) error { bb.AppendString(s.BinaryString(i)); return nil }
	case types.KindDate:
		bb, ok := b.(*array.Date32Builder)
		if !ok {
			return nil, mismatch()
		}
		a.put = func(s S, i int) error { bb.Append(arrow.Date32(s.Date(i))); return nil }
	case types.KindTime:
		bb, ok := b.(*array.Time64Builder)
		if !ok {
			return nil, mismatch()
		}
		div := types.Time(1000) // nanoseconds to microseconds
		if bb.Type().(*arrow.Time64Type).Unit == arrow.Nanosecond {
			div = 1
		}
		a.put = func(s S, i int) error { bb.Append(arrow.Time64(s.Time(i) / div)); return nil }
	case types.KindTimestamp, types.KindTimestampLTZ:
		bb, ok := b.(*array.TimestampBuilder)
		if !ok {
			return nil, mismatch()
		}
		p := t.Precision()
		if bb.Type().(*arrow.TimestampType).Unit == arrow.Nanosecond {
			a.put = func(s S, i int) error {
				ts := s.Timestamp(i, p)
				bb.Append(arrow.Timestamp(ts.Millis*types.NanosPerMilli + int64(ts.NanoOfMilli)))
				return nil
			}
		} else {
			a.put = func(s S, i int) error {
				ts := s.Timestamp(i, p)
				bb.Append(arrow.Timestamp(ts.Millis*1000 + int64(ts.NanoOfMilli/1000)))
				return nil
			}
		}
	case types.KindRow:
		bb, ok := b.(*array.StructBuilder)
		st, ok2 := it.(*icebergo.StructType)
		if !ok || !ok2 || len(st.FieldList) != t.Row().Len() {
			return nil, mismatch()
		}
		rt := t.Row()
		children := make([]*valueAppender[types.Row], rt.Len())
		for j, f := range rt.Fields() {
			c, err := newAppender[types.Row](name+"."+f.Name, f.Type, st.FieldList[j].Type, st.FieldList[j].Required, bb.FieldBuilder(j))
			if err != nil {
				return nil, err
			}
			children[j] = c
		}
		a.put = func(s S, i int) error {
			r := s.Row(i, rt)
			bb.Append(true)
			for j, c := range children {
				if err := c.append(r, j); err != nil {
					return err
				}
			}
			return nil
		}
	case types.KindArray:
		bb, ok := b.(*array.ListBuilder)
		lt, ok2 := it.(*icebergo.ListType)
		if !ok || !ok2 {
			return nil, mismatch()
		}
		elem, err := newAppender[types.Array](name+" element", t.Elem(), lt.Element, lt.ElementRequired, bb.ValueBuilder())
		if err != nil {
			return nil, err
		}
		a.put = func(s S, i int) error {
			arr := s.Array(i)
			bb.Append(true)
			for j, n := 0, arr.Len(); j < n; j++ {
				if err := elem.append(arr, j); err != nil {
					return err
				}
			}
			return nil
		}
	case types.KindMap:
		bb, ok := b.(*array.MapBuilder)
		mt, ok2 := it.(*icebergo.MapType)
		if !ok || !ok2 {
			return nil, mismatch()
		}
		key, err := newAppender[types.Array](name+" key", t.Key(), mt.KeyType, true, bb.KeyBuilder())
		if err != nil {
			return nil, err
		}
		val, err := newAppender[types.Array](name+" value", t.Value(), mt.ValueType, mt.ValueRequired, bb.ItemBuilder())
		if err != nil {
			return nil, err
		}
		a.put = func(s S, i int) error {
			m := s.Map(i)
			keys, vals := m.Keys(), m.Values()
			bb.Append(true)
			for j, n := 0, keys.Len(); j < n; j++ {
				if err := key.append(keys, j); err != nil {
					return err
				}
				if err := val.append(vals, j); err != nil {
					return err
				}
			}
			return nil
		}
	default:
		return nil, mismatch()
	}
	return a, nil
}

// rowBatcher turns eddy rows into Arrow record batches of an Iceberg
// schema. The columns of the eddy rows are matched to the schema's
// top-level fields by name; a schema field no eddy column matches is
// written NULL (it must be optional).
type rowBatcher struct {
	rb      *array.RecordBuilder
	cols    []*valueAppender[types.Row]
	colIdx  []int           // eddy column of each appender
	missing []array.Builder // builders of schema fields without an eddy column
	rows    int             // rows in the batch being built
}

// newRowBatcher makes a rowBatcher writing rows of type rt into batches of
// the Arrow schema as (the schema of sc, see arrowSchema).
func newRowBatcher(rt *types.RowType, sc *icebergo.Schema, as *arrow.Schema) (*rowBatcher, error) {
	rb := array.NewRecordBuilder(arrowAllocator, as)
	w := &rowBatcher{rb: rb}
	for j, f := range sc.Fields() {
		i, ok := rt.Index(f.Name)
		if !ok {
			if f.Required {
				rb.Release()
				return nil, fmt.Errorf("the Iceberg table's required column %q has no column in the eddy table: add it to the DDL", f.Name)
			}
			w.missing = append(w.missing, rb.Field(j))
			continue
		}
		a, err := newAppender[types.Row]("column "+f.Name, rt.Field(i).Type, f.Type, f.Required, rb.Field(j))
		if err != nil {
			rb.Release()
			return nil, err
		}
		w.cols = append(w.cols, a)
		w.colIdx = append(w.colIdx, i)
	}
	return w, nil
}

// append adds one row to the batch being built. On an error the batch is
// left with a partly appended row and must be discarded (see reset).
func (w *rowBatcher) append(r types.Row) error {
	for k, c := range w.cols {
		if err := c.append(r, w.colIdx[k]); err != nil {
			return err
		}
	}
	for _, b := range w.missing {
		b.AppendNull()
	}
	w.rows++
	return nil
}

// batch returns the rows appended since the last batch as a record batch
// (the caller releases it) and starts a new one.
func (w *rowBatcher) batch() arrow.RecordBatch {
	w.rows = 0
	return w.rb.NewRecordBatch()
}

// release frees the builders.
func (w *rowBatcher) release() {
	if w != nil {
		w.rb.Release()
	}
}

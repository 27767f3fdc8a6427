package iceberg

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/eddystream/eddy/sql/types"
)

// putter is where a converted value goes: a field of a row being written
// or the next element of an array being written. Each converter holds one
// putter for its life, so putting a value allocates nothing.
type putter interface {
	putNull()
	putBool(v bool)
	putInt64(v int64)
	putFloat32(v float32)
	putFloat64(v float64)
	putString(v string)
	putBytes(v []byte)
	putDate(v types.Date)
	putTime(v types.Time)
	putTimestamp(v types.Timestamp)
	putDecimal(v types.Decimal) error
	putRow(w *types.RowWriter)
	putArray(w *types.ArrayWriter)
	putMap(w *types.MapWriter)
}

// fieldPut puts values into field i of the rows of w.
type fieldPut struct {
	w *types.RowWriter
	i int
}

func (p *fieldPut) putNull()                         { p.w.SetNull(p.i) }
func (p *fieldPut) putBool(v bool)                   { p.w.SetBool(p.i, v) }
func (p *fieldPut) putInt64(v int64)                 { p.w.SetInt64(p.i, v) }
func (p *fieldPut) putFloat32(v float32)             { p.w.SetFloat32(p.i, v) }
func (p *fieldPut) putFloat64(v float64)             { p.w.SetFloat64(p.i, v) }
func (p *fieldPut) putString(v string)               { p.w.SetString(p.i, v) }
func (p *fieldPut) putBytes(v []byte)                { p.w.SetBytes(p.i, v) }
func (p *fieldPut) putDate(v types.Date)             { p.w.SetDate(p.i, v) }
func (p *fieldPut) putTime(v types.Time)             { p.w.SetTime(p.i, v) }
func (p *fieldPut) putTimestamp(v types.Timestamp)   { p.w.SetTimestamp(p.i, v) }
func (p *fieldPut) putDecimal(v types.Decimal) error { return p.w.SetDecimal(p.i, v) }
func (p *fieldPut) putRow(w *types.RowWriter)        { p.w.SetRowFrom(p.i, w) }
func (p *fieldPut) putArray(w *types.ArrayWriter)    { p.w.SetArrayFrom(p.i, w) }
func (p *fieldPut) putMap(w *types.MapWriter)        { p.w.SetMapFrom(p.i, w) }

// elemPut appends values to the array a writes.
type elemPut struct{ a *types.ArrayWriter }

func (p *elemPut) putNull()                         { p.a.AppendNull() }
func (p *elemPut) putBool(v bool)                   { p.a.AppendBool(v) }
func (p *elemPut) putInt64(v int64)                 { p.a.AppendInt64(v) }
func (p *elemPut) putFloat32(v float32)             { p.a.AppendFloat32(v) }
func (p *elemPut) putFloat64(v float64)             { p.a.AppendFloat64(v) }
func (p *elemPut) putString(v string)               { p.a.AppendString(v) }
func (p *elemPut) putBytes(v []byte)                { p.a.AppendBytes(v) }
func (p *elemPut) putDate(v types.Date)             { p.a.AppendDate(v) }
func (p *elemPut) putTime(v types.Time)             { p.a.AppendTime(v) }
func (p *elemPut) putTimestamp(v types.Timestamp)   { p.a.AppendTimestamp(v) }
func (p *elemPut) putDecimal(v types.Decimal) error { return p.a.AppendDecimal(v) }
func (p *elemPut) putRow(w *types.RowWriter)        { p.a.AppendRowFrom(w) }
func (p *elemPut) putArray(w *types.ArrayWriter)    { p.a.AppendArrayFrom(w) }
func (p *elemPut) putMap(w *types.MapWriter)        { p.a.AppendMapFrom(w) }

// converter reads the values of one Arrow array (a column of a record
// batch, or the children of a nested one) as values of an eddy type. It
// is made once per column (newConverter) and bound to each batch's array
// (bind), so that reading a value costs neither a type switch nor an
// allocation.
type converter struct {
	name string // names the value in errors: "column id", "column tags element"
	arr  arrow.Array
	out  putter
	// bind takes the array the values are read from.
	bind func(a arrow.Array) error
	// put reads the non-NULL value at index i.
	put func(i int) error
}

// read puts the value at index i of the bound array.
func (c *converter) read(i int) error {
	if c.arr.IsNull(i) {
		c.out.putNull()
		return nil
	}
	return c.put(i)
}

// mismatch is the error of an Arrow type an eddy type cannot be read from.
func mismatchError(name string, t types.Type, at arrow.DataType) error {
	return fmt.Errorf("%s is %s in the Iceberg table's files (Arrow %s), which cannot be read as %s: change the column's type in the DDL to match the table", name, arrowTypeName(at), at, t)
}

func arrowTypeName(at arrow.DataType) string {
	if at == nil {
		return "missing"
	}
	return at.Name()
}

// bindAs returns a bind function that keeps a as an A in *dst, or fails
// naming the value and the types.
func bindAs[A arrow.Array](c *converter, t types.Type, dst *A) func(arrow.Array) error {
	return func(a arrow.Array) error {
		x, ok := a.(A)
		if !ok {
			return mismatchError(c.name, t, a.DataType())
		}
		*dst = x
		c.arr = a
		return nil
	}
}

// stringish is an Arrow array of strings, whatever its offsets.
type stringish interface {
	arrow.Array
	Value(i int) string
}

// bytesish is an Arrow array of byte strings.
type bytesish interface {
	arrow.Array
	Value(i int) []byte
}

// listish is an Arrow list or map array.
type listish interface {
	arrow.Array
	ValueOffsets(i int) (start, end int64)
	ListValues() arrow.Array
}

// newConverter makes the converter of values of eddy type t into out.
func newConverter(name string, t types.Type, out putter) (*converter, error) {
	c := &converter{name: name, out: out}
	switch t.Kind() {
	case types.KindBoolean:
		var a *array.Boolean
		c.bind = bindAs(c, t, &a)
		c.put = func(i int) error { out.putBool(a.Value(i)); return nil }
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		var get func(i int) int64
		c.bind = func(x arrow.Array) error {
			switch a := x.(type) {
			case *array.Int8:
				get = func(i int) int64 { return int64(a.Value(i)) }
			case *array.Int16:
				get = func(i int) int64 { return int64(a.Value(i)) }
			case *array.Int32:
				get = func(i int) int64 { return int64(a.Value(i)) }
			case *array.Int64:
				get = func(i int) int64 { return a.Value(i) }
			default:
				return mismatchError(name, t, x.DataType())
			}
			c.arr = x
			return nil
		}
		c.put = func(i int) error { out.putInt64(get(i)); return nil }
	case types.KindFloat:
		var a *array.Float32
		c.bind = bindAs(c, t, &a)
		c.put = func(i int) error { out.putFloat32(a.Value(i)); return nil }
	case types.KindDouble:
		var get func(i int) float64
		c.bind = func(x arrow.Array) error {
			switch a := x.(type) {
			case *array.Float32:
				get = func(i int) float64 { return float64(a.Value(i)) }
			case *array.Float64:
				get = a.Value
			default:
				return mismatchError(name, t, x.DataType())
			}
			c.arr = x
			return nil
		}
		c.put = func(i int) error { out.putFloat64(get(i)); return nil }
	case types.KindDecimal:
		var a *array.Decimal128
		var scale int
		bind := bindAs(c, t, &a)
		c.bind = func(x arrow.Array) error {
			if err := bind(x); err != nil {
				return err
			}
			scale = int(a.DataType().(*arrow.Decimal128Type).Scale)
			return nil
		}
		c.put = func(i int) error {
			if err := out.putDecimal(decimalOf(a.Value(i), scale)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		}
	case types.KindChar, types.KindVarChar:
		var a stringish
		c.bind = bindAs(c, t, &a)
		c.put = func(i int) error { out.putString(a.Value(i)); return nil }
	case types.KindBinary, types.KindVarBinary:
		var a bytesish
		c.bind = bindAs(c, t, &a)
		c.put = func(i int) error { out.putBytes(a.Value(i)); return nil }
	case types.KindDate:
		var a *array.Date32
		c.bind = bindAs(c, t, &a)
		c.put = func(i int) error { out.putDate(types.Date(a.Value(i))); return nil }
	case types.KindTime:
		var a *array.Time64
		var mul types.Time
		bind := bindAs(c, t, &a)
		c.bind = func(x arrow.Array) error {
			if err := bind(x); err != nil {
				return err
			}
			mul = 1000 // microseconds to nanoseconds
			if a.DataType().(*arrow.Time64Type).Unit == arrow.Nanosecond {
				mul = 1
			}
			return nil
		}
		c.put = func(i int) error { out.putTime(types.Time(a.Value(i)) * mul); return nil }
	case types.KindTimestamp, types.KindTimestampLTZ:
		var a *array.Timestamp
		var perMilli int64
		bind := bindAs(c, t, &a)
		c.bind = func(x arrow.Array) error {
			if err := bind(x); err != nil {
				return err
			}
			switch a.DataType().(*arrow.TimestampType).Unit {
			case arrow.Second:
				perMilli = -1000
			case arrow.Millisecond:
				perMilli = 1
			case arrow.Microsecond:
				perMilli = 1000
			default:
				perMilli = types.NanosPerMilli
			}
			return nil
		}
		c.put = func(i int) error {
			out.putTimestamp(timestampOf(int64(a.Value(i)), perMilli))
			return nil
		}
	case types.KindRow:
		rt := t.Row()
		nested := types.NewRowWriter(rt, nil)
		children := make([]*converter, rt.Len())
		for j, f := range rt.Fields() {
			ch, err := newConverter(name+"."+f.Name, f.Type, &fieldPut{nested, j})
			if err != nil {
				return nil, err
			}
			children[j] = ch
		}
		var a *array.Struct
		c.bind = func(x arrow.Array) error {
			s, ok := x.(*array.Struct)
			if !ok {
				return mismatchError(name, t, x.DataType())
			}
			st := s.DataType().(*arrow.StructType)
			for j, f := range rt.Fields() {
				k, ok := st.FieldIdx(f.Name)
				if !ok {
					return fmt.Errorf("%s: the Iceberg table's struct has no field %q: remove it from the DDL's ROW type or add it to the table", name, f.Name)
				}
				if err := children[j].bind(s.Field(k)); err != nil {
					return err
				}
			}
			a, c.arr = s, x
			return nil
		}
		_ = a
		c.put = func(i int) error {
			nested.Reset()
			for _, ch := range children {
				if err := ch.read(i); err != nil {
					return err
				}
			}
			out.putRow(nested)
			return nil
		}
	case types.KindArray:
		aw := types.NewArrayWriter(t.Elem())
		elem, err := newConverter(name+" element", t.Elem(), &elemPut{aw})
		if err != nil {
			return nil, err
		}
		var a listish
		c.bind = func(x arrow.Array) error {
			l, ok := x.(listish)
			if !ok || x.DataType().ID() == arrow.MAP {
				return mismatchError(name, t, x.DataType())
			}
			if err := elem.bind(l.ListValues()); err != nil {
				return err
			}
			a, c.arr = l, x
			return nil
		}
		c.put = func(i int) error {
			start, end := a.ValueOffsets(i)
			aw.Reset()
			for j := int(start); j < int(end); j++ {
				if err := elem.read(j); err != nil {
					return err
				}
			}
			out.putArray(aw)
			return nil
		}
	case types.KindMap:
		mw := types.NewMapWriter(t)
		key, err := newConverter(name+" key", t.Key(), &elemPut{mw.Keys()})
		if err != nil {
			return nil, err
		}
		val, err := newConverter(name+" value", t.Value(), &elemPut{mw.Values()})
		if err != nil {
			return nil, err
		}
		var a *array.Map
		c.bind = func(x arrow.Array) error {
			m, ok := x.(*array.Map)
			if !ok {
				return mismatchError(name, t, x.DataType())
			}
			if err := key.bind(m.Keys()); err != nil {
				return err
			}
			if err := val.bind(m.Items()); err != nil {
				return err
			}
			a, c.arr = m, x
			return nil
		}
		c.put = func(i int) error {
			start, end := a.ValueOffsets(i)
			mw.Reset()
			for j := int(start); j < int(end); j++ {
				if err := key.read(j); err != nil {
					return err
				}
				if err := val.read(j); err != nil {
					return err
				}
			}
			out.putMap(mw)
			return nil
		}
	default:
		return nil, fmt.Errorf("%s is of type %s, which the iceberg connector cannot read: Iceberg tables hold no such type", name, t)
	}
	return c, nil
}

// decimalOf converts an Arrow decimal of the given scale.
func decimalOf(n decimal128.Num, scale int) types.Decimal {
	lo, hi := n.LowBits(), n.HighBits()
	if (hi == 0 && lo < 1<<63) || (hi == -1 && lo >= 1<<63) {
		return types.NewDecimal(int64(lo), scale)
	}
	return types.DecimalFromBig(n.BigInt(), scale)
}

// timestampOf converts v units since the epoch, perMilli units a
// millisecond (-1000 for seconds).
func timestampOf(v, perMilli int64) types.Timestamp {
	switch {
	case perMilli < 0:
		return types.Timestamp{Millis: v * -perMilli}
	case perMilli == 1:
		return types.Timestamp{Millis: v}
	}
	ms, rem := v/perMilli, v%perMilli
	if rem < 0 {
		ms--
		rem += perMilli
	}
	return types.Timestamp{Millis: ms, NanoOfMilli: int32(rem * (types.NanosPerMilli / perMilli))}
}

// rowReader turns the record batches of a scan into eddy rows of rt,
// matching rt's columns to the batches' columns by name.
type rowReader struct {
	rt    *types.RowType
	w     *types.RowWriter
	cols  []*converter
	where string // names the table, for errors

	schema *arrow.Schema // of the batch bound last
	idx    []int         // batch column of each column of rt
}

func newRowReader(rt *types.RowType, arena *types.Arena, where string) (*rowReader, error) {
	r := &rowReader{rt: rt, w: types.NewRowWriter(rt, arena), where: where, idx: make([]int, rt.Len())}
	for i, f := range rt.Fields() {
		c, err := newConverter("column "+types.QuoteIdentifier(f.Name), f.Type, &fieldPut{r.w, i})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		r.cols = append(r.cols, c)
	}
	return r, nil
}

// bind makes the reader read rows of the batch rec.
func (r *rowReader) bind(rec arrow.RecordBatch) error {
	if s := rec.Schema(); s != r.schema && (r.schema == nil || !s.Equal(r.schema)) {
		for i, f := range r.rt.Fields() {
			ks := s.FieldIndices(f.Name)
			if len(ks) == 0 {
				return fmt.Errorf("%s has no column %s: remove it from the DDL or add it to the table", r.where, types.QuoteIdentifier(f.Name))
			}
			r.idx[i] = ks[0]
		}
		r.schema = s
	}
	for i, c := range r.cols {
		if err := c.bind(rec.Column(r.idx[i])); err != nil {
			return fmt.Errorf("%s: %w", r.where, err)
		}
	}
	return nil
}

// row returns row i of the bound batch.
func (r *rowReader) row(i int) (types.Row, error) {
	r.w.Reset()
	for _, c := range r.cols {
		if err := c.read(i); err != nil {
			r.w.Reset()
			return types.Row{}, fmt.Errorf("%s: %w", r.where, err)
		}
	}
	return r.w.Finish(), nil
}

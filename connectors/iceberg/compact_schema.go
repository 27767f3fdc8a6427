package iceberg

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Compaction rewrites rows under the table's current schema: the columns
// of a data file written under an older schema are matched to the current
// ones by Iceberg field id (so a renamed column keeps its values), a
// column dropped since is left out, one added since is NULL, and a column
// whose type was widened (int to long, float to double, a decimal's
// precision) is converted.

// arrowFieldID returns the Iceberg field id of f, from its Parquet field
// id metadata, and whether it has one.
func arrowFieldID(f arrow.Field) (int, bool) {
	v, ok := f.Metadata.GetValue("PARQUET:field_id")
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(v)
	return id, err == nil
}

// projectBatch returns the rows of b as a batch of the Arrow schema as
// (the table's current one), matching columns by field id. It returns
// false when b's columns carry no field ids; an error when a column cannot
// be converted, or a required column added since has no value.
func projectBatch(b arrow.RecordBatch, as *arrow.Schema) (arrow.RecordBatch, bool, error) {
	byID := make(map[int]int, b.NumCols())
	for i, f := range b.Schema().Fields() {
		id, ok := arrowFieldID(f)
		if !ok {
			return nil, false, nil
		}
		byID[id] = i
	}
	n := b.NumRows()
	cols := make([]arrow.Array, 0, as.NumFields())
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for _, f := range as.Fields() {
		id, ok := arrowFieldID(f)
		if !ok {
			release()
			return nil, false, nil
		}
		j, found := byID[id]
		if !found {
			if !f.Nullable {
				release()
				return nil, false, fmt.Errorf("the required column %q (field id %d) is not in the file, and has no value for its rows", f.Name, id)
			}
			cols = append(cols, array.MakeArrayOfNull(arrowAllocator, f.Type, int(n)))
			continue
		}
		c, err := convertColumn(b.Column(j), f.Type)
		if err != nil {
			release()
			return nil, false, fmt.Errorf("column %q (field id %d): %w", f.Name, id, err)
		}
		cols = append(cols, c)
	}
	out := array.NewRecordBatch(as, cols, n)
	release()
	return out, true, nil
}

// convertColumn returns a (retained) array of type to holding the values
// of a, converted as Iceberg's type promotions allow.
func convertColumn(a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), to) {
		a.Retain()
		return a, nil
	}
	switch src := a.(type) {
	case *array.Int32:
		if to.ID() == arrow.INT64 {
			return widen(src, array.NewInt64Builder(arrowAllocator)), nil
		}
	case *array.Float32:
		if to.ID() == arrow.FLOAT64 {
			return widen(src, array.NewFloat64Builder(arrowAllocator)), nil
		}
	case *array.Decimal128:
		from, ok1 := a.DataType().(*arrow.Decimal128Type)
		dst, ok2 := to.(*arrow.Decimal128Type)
		if ok1 && ok2 && from.Scale == dst.Scale && dst.Precision >= from.Precision {
			d := a.Data()
			nd := array.NewData(to, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
			defer nd.Release()
			return array.MakeFromData(nd), nil
		}
	}
	return nil, fmt.Errorf("cannot convert %s to %s", a.DataType(), to)
}

// appendLive appends the rows of b, whose first row is at position pos of
// its file, but those at the positions dead (sorted), to w, as batches of
// w's Arrow schema as (b's columns are of its types).
func appendLive(w *dataFileWriter, as *arrow.Schema, b arrow.RecordBatch, dead []int64, pos int64) error {
	n := b.NumRows()
	// The live runs of the batch, as [start, end) within it.
	var runs [][2]int64
	d, _ := slices.BinarySearch(dead, pos)
	start := int64(0)
	for ; d < len(dead) && dead[d] < pos+n; d++ {
		if at := dead[d] - pos; at > start {
			runs = append(runs, [2]int64{start, at})
		}
		start = dead[d] - pos + 1
	}
	if start < n {
		runs = append(runs, [2]int64{start, n})
	}
	if len(runs) == 0 {
		return nil
	}
	cols := make([]arrow.Array, b.NumCols())
	var live int64
	for _, r := range runs {
		live += r[1] - r[0]
	}
	for i := range cols {
		parts := make([]arrow.Array, len(runs))
		for j, r := range runs {
			parts[j] = array.NewSlice(b.Column(i), r[0], r[1])
		}
		if len(parts) == 1 {
			cols[i] = parts[0]
			continue
		}
		c, err := array.Concatenate(parts, arrowAllocator)
		for _, a := range parts {
			a.Release()
		}
		if err != nil {
			for _, a := range cols[:i] {
				a.Release()
			}
			return err
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(as, cols, live)
	for _, a := range cols {
		a.Release()
	}
	err := w.AppendBatch(out)
	out.Release()
	return err
}

// widen converts the values of src to the wider type of bld's array,
// keeping its NULLs.
func widen[F int32 | float32, T int64 | float64](src interface {
	Len() int
	IsNull(int) bool
	Value(int) F
}, bld interface {
	Reserve(int)
	AppendNull()
	Append(T)
	NewArray() arrow.Array
	Release()
}) arrow.Array {
	defer bld.Release()
	bld.Reserve(src.Len())
	for i := 0; i < src.Len(); i++ {
		if src.IsNull(i) {
			bld.AppendNull()
		} else {
			bld.Append(T(src.Value(i)))
		}
	}
	return bld.NewArray()
}

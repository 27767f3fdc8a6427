package plan

import (
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// keyWriterFunc returns, for a subtask of a window aggregation whose keys
// (of row type kt) are of type K, the function that writes a key's columns
// into an output row: the output columns i with bounds[i] < 0, from key
// column keyIdx[i].
type keyWriterFunc[K comparable] func(kt *types.RowType, bounds, keyIdx []int) func(K, *types.RowWriter)

// encodedKeyWriter writes the keys that enc encodes.
func encodedKeyWriter(enc *types.KeyEncoder) keyWriterFunc[string] {
	return func(kt *types.RowType, bounds, keyIdx []int) func(string, *types.RowWriter) {
		var sets []func(types.Row, *types.RowWriter)
		for i, b := range bounds {
			if b < 0 {
				set, _ := expr.Setter(&expr.Column{Index: keyIdx[i], T: kt.FieldType(keyIdx[i])}, i)
				sets = append(sets, set)
			}
		}
		return func(key string, w *types.RowWriter) {
			if len(sets) == 0 {
				return
			}
			kr := enc.KeyRow(key)
			for _, set := range sets {
				set(kr, w)
			}
		}
	}
}

// keyColumns returns the output columns of the key (bounds[i] < 0).
func keyColumns(bounds []int) []int {
	var out []int
	for i, b := range bounds {
		if b < 0 {
			out = append(out, i)
		}
	}
	return out
}

// intKeyWriter writes a key that is the int64 slot of the one key column,
// which is never NULL.
func intKeyWriter(_ *types.RowType, bounds, _ []int) func(int64, *types.RowWriter) {
	cols := keyColumns(bounds)
	return func(key int64, w *types.RowWriter) {
		for _, i := range cols {
			w.SetInt64(i, key)
		}
	}
}

// nullableInt is the key of rows keyed by one integer, date or
// millisecond-timestamp column that may be NULL (a window aggregation's,
// or keyedBy's): its slot, or Null.
type nullableInt struct {
	V    int64
	Null bool
}

// nullableIntOf returns the key of column i of r.
func nullableIntOf(r types.Row, i int) nullableInt {
	if r.IsNull(i) {
		return nullableInt{Null: true}
	}
	return nullableInt{V: r.Int64(i)}
}

// nullableIntKeyWriter writes a nullableInt key.
func nullableIntKeyWriter(_ *types.RowType, bounds, _ []int) func(nullableInt, *types.RowWriter) {
	cols := keyColumns(bounds)
	return func(key nullableInt, w *types.RowWriter) {
		for _, i := range cols {
			if key.Null {
				w.SetNull(i)
			} else {
				w.SetInt64(i, key.V)
			}
		}
	}
}

package plan

import (
	"strconv"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql/types"
)

// nullableInt is the key of rows partitioned by one integer, date or
// millisecond-timestamp column (slotKey) that may be NULL: its slot, or
// Null.
type nullableInt struct {
	V    int64
	Null bool
}

// String renders the key as errors name it: its value, or NULL.
func (k nullableInt) String() string {
	if k.Null {
		return "NULL"
	}
	return strconv.FormatInt(k.V, 10)
}

// nullableIntOf returns the key of column i of r.
func nullableIntOf(r types.Row, i int) nullableInt {
	if r.IsNull(i) {
		return nullableInt{Null: true}
	}
	return nullableInt{V: r.Int64(i)}
}

// intPair is the key of rows partitioned by two integer, date or
// millisecond-timestamp columns (slotKey): their slots, 0 for NULL, and in
// Nulls bit 0 if the first is NULL and bit 1 if the second is. Its memory
// has no padding, so that Go maps hash and compare it as memory.
type intPair struct {
	A, B  int64
	Nulls uint64
}

// intPairOf returns the key of columns i and j of r.
func intPairOf(r types.Row, i, j int) intPair {
	var k intPair
	if r.IsNull(i) {
		k.Nulls |= 1
	} else {
		k.A = r.Int64(i)
	}
	if r.IsNull(j) {
		k.Nulls |= 2
	} else {
		k.B = r.Int64(j)
	}
	return k
}

// partitionedBy is a keyed operator built over rows partitioned by a key
// of type K: one function per key type that keyedBy chooses. The encoded
// one is also given the encoder of its keys.
type partitionedBy[R any] struct {
	int      func(*eddy.KeyedStream[int64, Rec]) R
	nullable func(*eddy.KeyedStream[nullableInt, Rec]) R
	pair     func(*eddy.KeyedStream[intPair, Rec]) R
	encoded  func(*eddy.KeyedStream[string, Rec], *types.KeyEncoder) R
}

// anyEncoding adapts the function of an encoded key that does not read
// the keys' encoder to partitionedBy.encoded.
func anyEncoding[R any](f func(*eddy.KeyedStream[string, Rec]) R) func(*eddy.KeyedStream[string, Rec], *types.KeyEncoder) R {
	return func(g *eddy.KeyedStream[string, Rec], _ *types.KeyEncoder) R { return f(g) }
}

// keyedBy partitions s, the stream of the rows of in, by the columns cols
// and builds on it the function of p for the key's type. One or two
// integer, date or millisecond-timestamp columns (slotKey) are keyed by
// their int64 values (int64 for one never NULL, by its type or as notNull
// finds, nullableInt for one that may be, intPair for two), which the
// state, timers and exchanges hash and compare without building a key
// string per row; other columns, and none, by the encoded key
// (types.KeyEncoder). The key type is part of the state's kind: state
// keyed one way does not restore into an operator keyed another.
func keyedBy[R any](b *builder, in Rel, s *eddy.Stream[Rec], cols []int, p partitionedBy[R]) R {
	rt := in.Schema()
	switch {
	case len(cols) == 1 && slotKey(rt.FieldType(cols[0])):
		i := cols[0]
		if notNull(b.cat, in, []int{i}) {
			return p.int(eddy.GroupBy(s, func(r types.Row) int64 { return r.Int64(i) }))
		}
		return p.nullable(eddy.GroupBy(s, func(r types.Row) nullableInt { return nullableIntOf(r, i) }))
	case len(cols) == 2 && slotKey(rt.FieldType(cols[0])) && slotKey(rt.FieldType(cols[1])):
		i, j := cols[0], cols[1]
		return p.pair(eddy.GroupBy(s, func(r types.Row) intPair { return intPairOf(r, i, j) }))
	}
	enc := types.NewKeyEncoder(rt, cols...)
	return p.encoded(groupByKey(s, enc), enc)
}

// keyColumn places a column of a key in an output row: output column Out
// holds key column Key.
type keyColumn struct{ Out, Key int }

// leadingKey places the n columns of a key in the first n columns of a
// row.
func leadingKey(n int) []keyColumn {
	out := make([]keyColumn, n)
	for i := range out {
		out[i] = keyColumn{Out: i, Key: i}
	}
	return out
}

// The functions below return the writers of keys of the types keyedBy
// chooses into the output columns cols gives. A writer keeps no state: the
// subtasks of an operator share it.

// intKeyWriter writes an int64 key, the slot of one column never NULL.
func intKeyWriter(cols []keyColumn) func(int64, *types.RowWriter) {
	return func(key int64, w *types.RowWriter) {
		for _, c := range cols {
			w.SetInt64(c.Out, key)
		}
	}
}

// nullableIntKeyWriter writes a nullableInt key.
func nullableIntKeyWriter(cols []keyColumn) func(nullableInt, *types.RowWriter) {
	return func(key nullableInt, w *types.RowWriter) {
		for _, c := range cols {
			if key.Null {
				w.SetNull(c.Out)
			} else {
				w.SetInt64(c.Out, key.V)
			}
		}
	}
}

// intPairKeyWriter writes an intPair key.
func intPairKeyWriter(cols []keyColumn) func(intPair, *types.RowWriter) {
	return func(key intPair, w *types.RowWriter) {
		for _, c := range cols {
			v := key.A
			if c.Key == 1 {
				v = key.B
			}
			if key.Nulls&(1<<c.Key) != 0 {
				w.SetNull(c.Out)
			} else {
				w.SetInt64(c.Out, v)
			}
		}
	}
}

// encodedKeyWriter writes a key that enc encodes. The key's bytes stay
// where they are until Finish copies them, once.
func encodedKeyWriter(enc *types.KeyEncoder, cols []keyColumn) func(string, *types.RowWriter) {
	return func(key string, w *types.RowWriter) {
		if len(cols) == 0 {
			return
		}
		k := enc.KeyRow(key)
		for _, c := range cols {
			w.CopyFieldRef(c.Out, k, c.Key)
		}
	}
}

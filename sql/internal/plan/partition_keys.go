package plan

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql/types"
)

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
// of type K: one function per key type that keyedBy chooses.
type partitionedBy[R any] struct {
	int      func(*eddy.KeyedStream[int64, Rec]) R
	nullable func(*eddy.KeyedStream[nullableInt, Rec]) R
	pair     func(*eddy.KeyedStream[intPair, Rec]) R
	encoded  func(*eddy.KeyedStream[string, Rec]) R
}

// keyedBy partitions s, of rows of rt, by the columns cols and builds on
// it the function of p for the key's type. One or two integer, date or
// millisecond-timestamp columns (slotKey) are keyed by their int64 values
// (int64 for one never NULL, nullableInt for one that may be, intPair for
// two), which the state, timers and exchanges hash and compare without
// building a key string per row; other columns, and none, by the encoded
// key (types.KeyEncoder). The key type is part of the state's kind: state
// keyed one way does not restore into an operator keyed another.
func keyedBy[R any](s *eddy.Stream[Rec], rt *types.RowType, cols []int, p partitionedBy[R]) R {
	switch {
	case len(cols) == 1 && slotKey(rt.FieldType(cols[0])):
		i := cols[0]
		if !rt.FieldType(i).IsNullable() {
			return p.int(eddy.GroupBy(s, func(r types.Row) int64 { return r.Int64(i) }))
		}
		return p.nullable(eddy.GroupBy(s, func(r types.Row) nullableInt { return nullableIntOf(r, i) }))
	case len(cols) == 2 && slotKey(rt.FieldType(cols[0])) && slotKey(rt.FieldType(cols[1])):
		i, j := cols[0], cols[1]
		return p.pair(eddy.GroupBy(s, func(r types.Row) intPair { return intPairOf(r, i, j) }))
	}
	return p.encoded(groupByKey(s, types.NewKeyEncoder(rt, cols...)))
}

// The functions below write a key of the types keyedBy chooses into the
// first columns of a row, those of the columns it was made of.

func writeIntKey(key int64, w *types.RowWriter) { w.SetInt64(0, key) }

func writeNullableIntKey(key nullableInt, w *types.RowWriter) {
	if key.Null {
		w.SetNull(0)
		return
	}
	w.SetInt64(0, key.V)
}

func writeIntPairKey(key intPair, w *types.RowWriter) {
	for i, v := range [2]int64{key.A, key.B} {
		if key.Nulls&(1<<i) != 0 {
			w.SetNull(i)
		} else {
			w.SetInt64(i, v)
		}
	}
}

// encodedKeySetter returns the function that writes a key enc encoded.
func encodedKeySetter(enc *types.KeyEncoder) func(string, *types.RowWriter) {
	n := enc.KeyType().Len()
	return func(key string, w *types.RowWriter) {
		// The key stays as it is until Finish: its strings of variable
		// size are copied once, by Finish.
		k := enc.KeyRow(key)
		for i := 0; i < n; i++ {
			w.CopyFieldRef(i, k, i)
		}
	}
}

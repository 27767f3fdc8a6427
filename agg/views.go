package agg

import (
	"cmp"
	"encoding/binary"
	"math"
)

// Views are multisets kept in keyed state beside an accumulator, one per
// group and view, for aggregates that cannot fold a retraction into a small
// accumulator: the least or greatest value after the current one is taken
// back, the values of a DISTINCT aggregate. A value is identified by an
// encoding of it (see OrderedKey); the group aggregation operator keeps the
// counts, so a retraction costs one state access, not a rewrite of the
// accumulator.
//
// Views are used on the operator's goroutine during an AddWith or
// RetractWith call only.
type Views interface {
	// Add adds delta to the count of value in view and returns the count
	// before and after. A value whose count falls to 0 leaves the view.
	Add(view int, value string, delta int64) (before, after int64)
	// Range calls fn with the values of view and their counts, in
	// increasing byte order of the values, until fn returns false.
	Range(view int, fn func(value string, count int64) bool)
	// AddInt is Add for a view of integers: faster, and free of
	// allocation. A view holds strings or integers, not both.
	AddInt(view int, value int64, delta int64) (before, after int64)
	// RangeInt is Range for a view of integers, in increasing order.
	RangeInt(view int, fn func(value int64, count int64) bool)
	// Count returns the count of value in view, without changing it.
	Count(view int, value string) int64
	// CountInt is Count for a view of integers.
	CountInt(view int, value int64) int64
	// InsertOnly reports whether the aggregation's input is insert-only,
	// so that RetractWith is never called. A function that needs to know
	// only whether a value is in a view (a DISTINCT aggregate) may then
	// test it with Count and add it once, instead of writing a count on
	// every row.
	InsertOnly() bool
}

// ViewFunction is an aggregate function that keeps part of its state in
// views. The group aggregation operator calls AddWith and RetractWith
// instead of Add and Retract, with the views numbered first to
// first+NumViews()-1 being the function's own. Its Add and Merge are not
// used: it cannot be pre-aggregated locally or in windows.
type ViewFunction[IN, ACC, OUT any] interface {
	Function[IN, ACC, OUT]
	// NumViews returns how many views the function uses.
	NumViews() int
	// AddWith returns acc with in added.
	AddWith(acc ACC, in IN, v Views, first int) ACC
	// RetractWith returns acc with in taken out.
	RetractWith(acc ACC, in IN, v Views, first int) ACC
}

// NumViews returns how many views f uses: 0 unless it is a ViewFunction.
func NumViews[IN, ACC, OUT any](f Function[IN, ACC, OUT]) int {
	if v, ok := f.(ViewFunction[IN, ACC, OUT]); ok {
		return v.NumViews()
	}
	return 0
}

// OrderedKey encodes v so that encodings compare (bytewise) as the values
// do: integers big-endian with the sign bit flipped, floats by their IEEE
// bits adjusted for sign, strings as their bytes.
func OrderedKey[V cmp.Ordered](v V) string {
	var b [8]byte
	switch x := any(v).(type) {
	case string:
		return x
	case int:
		binary.BigEndian.PutUint64(b[:], uint64(x)^1<<63)
	case int8:
		binary.BigEndian.PutUint64(b[:], uint64(int64(x))^1<<63)
	case int16:
		binary.BigEndian.PutUint64(b[:], uint64(int64(x))^1<<63)
	case int32:
		binary.BigEndian.PutUint64(b[:], uint64(int64(x))^1<<63)
	case int64:
		binary.BigEndian.PutUint64(b[:], uint64(x)^1<<63)
	case uint:
		binary.BigEndian.PutUint64(b[:], uint64(x))
	case uint8:
		binary.BigEndian.PutUint64(b[:], uint64(x))
	case uint16:
		binary.BigEndian.PutUint64(b[:], uint64(x))
	case uint32:
		binary.BigEndian.PutUint64(b[:], uint64(x))
	case uint64:
		binary.BigEndian.PutUint64(b[:], x)
	case uintptr:
		binary.BigEndian.PutUint64(b[:], uint64(x))
	case float32:
		binary.BigEndian.PutUint64(b[:], floatKey(float64(x)))
	case float64:
		binary.BigEndian.PutUint64(b[:], floatKey(x))
	default:
		// A type defined on one of the above: go through its kind.
		return orderedKeyOf(v)
	}
	return string(b[:])
}

func floatKey(f float64) uint64 {
	u := math.Float64bits(f)
	if u&(1<<63) != 0 {
		return ^u
	}
	return u | 1<<63
}

// Mutating is implemented by aggregate functions whose accumulators hold
// memory (slices, maps) that Add, AddWith and their retracting halves copy
// before changing it, so that an accumulator held elsewhere (in a
// snapshot, in a pane several windows merge) never changes under its
// holder. AddInPlace and RetractInPlace fold an input by changing acc
// itself and return it, saving that copy: an operator calls them only with
// an accumulator no one else holds, one it has just read from its keyed
// state for update (state backends hand out a copy of what a snapshot in
// progress holds). v and first are as in ViewFunction.AddWith: nil and 0
// for a function without views. The unbounded group aggregation uses them,
// and window aggregations for functions without views. Result must not
// return memory of the accumulator: the group aggregation computes the
// result before a row and changes the accumulator after.
type Mutating[IN, ACC any] interface {
	// AddInPlace adds in to acc, changing it, and returns it.
	AddInPlace(acc ACC, in IN, v Views, first int) ACC
	// RetractInPlace takes in out of acc, changing it, and returns it.
	RetractInPlace(acc ACC, in IN, v Views, first int) ACC
}

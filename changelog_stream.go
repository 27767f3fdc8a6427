package eddy

import (
	"bytes"
	"reflect"
	"unsafe"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// Inserts returns s as an insert-only changelog: every record becomes an
// insertion (+I) of itself, so that the relational operators (GroupAggregate,
// Join, TopN, …) can consume it.
func Inserts[T any](s *Stream[T]) *Stream[changelog.Change[T]] {
	out := Map(s, changelog.InsertOf[T]).Name("Inserts")
	return out.withMode(changelog.InsertOnly)
}

// AsChangelog declares the changelog mode of a stream of changes made by
// code the engine cannot see into (a Map, a process function): the kinds it
// carries. Operators and sinks downstream check their input against it.
func AsChangelog[T any](s *Stream[changelog.Change[T]], mode changelog.Mode) *Stream[changelog.Change[T]] {
	c := *s
	return c.withMode(mode)
}

// MapRows applies fn to the row of every change and keeps its kind, as a
// projection does in SQL. The stream keeps its changelog mode, and the
// operator runs with the parallelism of its input, chained to it, so that
// the changes of a row stay in order.
func MapRows[T, U any](s *Stream[changelog.Change[T]], fn func(T) U) *Stream[changelog.Change[U]] {
	return MapRowsEach(s, func() func(T) U { return fn })
}

// MapRowsEach is MapRows with a function made by newFn for every parallel
// subtask, for mappings that keep buffers (a row writer, an arena) that
// subtasks must not share.
func MapRowsEach[T, U any](s *Stream[changelog.Change[T]], newFn func() func(T) U) *Stream[changelog.Change[U]] {
	return mapRows(s, newFn, false)
}

// MapRowsCopying is MapRowsEach for functions that copy what they keep of
// their input: no row fn returns shares memory with the row it was given
// (a copy of the row, a row written anew from its values). The operators
// before it may then hand it rows in memory they reuse for the next ones,
// as sources of SQL tables do.
func MapRowsCopying[T, U any](s *Stream[changelog.Change[T]], newFn func() func(T) U) *Stream[changelog.Change[U]] {
	return mapRows(s, newFn, true)
}

// MapRowsReusing is MapRowsCopying for functions that can write their rows
// into memory they reuse. newFn is told, for every parallel subtask,
// whether the operators reading the rows keep nothing of them once they
// have taken a batch (reuse); if so, the operator calls rewind after each
// batch has gone to them, and the function may write the next rows into
// the memory of those it returned before (an arena it rewinds). Otherwise
// rewind is never called, and every row must stay valid for as long as its
// readers keep it.
func MapRowsReusing[T, U any](s *Stream[changelog.Change[T]], newFn func(reuse bool) (fn func(T) U, rewind func())) *Stream[changelog.Change[U]] {
	return mapRowsWith(s, func(ctx *runtime.Context) (func(T) U, func()) {
		fn, rewind := newFn(ctx.RecordsReused)
		if !ctx.RecordsReused {
			rewind = nil
		}
		return fn, rewind
	}, true)
}

func mapRows[T, U any](s *Stream[changelog.Change[T]], newFn func() func(T) U, copies bool) *Stream[changelog.Change[U]] {
	return mapRowsWith(s, func(*runtime.Context) (func(T) U, func()) { return newFn(), nil }, copies)
}

// mapRowsWith is the operator of the MapRows functions: newFn makes a
// subtask's function and the rewind of its memory (nil for none).
func mapRowsWith[T, U any](s *Stream[changelog.Change[T]], newFn func(*runtime.Context) (func(T) U, func()), copies bool) *Stream[changelog.Change[U]] {
	out := oneInput[changelog.Change[T], changelog.Change[U]](s, "MapRows", func(ctx *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
		fn, rewind := newFn(ctx)
		m := func(c changelog.Change[T]) changelog.Change[U] {
			return changelog.Change[U]{Kind: c.Kind, Row: fn(c.Row)}
		}
		o := mainOut[changelog.Change[U]](outs)
		switch {
		case rewind != nil:
			return ops.NewReusingMap(m, rewind, o), nil
		case copies:
			return ops.NewCopyingMap(m, o), nil
		}
		return ops.NewMap(m, o), nil
	}).withMode(s.ChangelogMode())
	out.node.Parallelism = s.node.Parallelism
	return out
}

// FilterRowsEach is FilterRows with a predicate made by newFn for every
// parallel subtask.
func FilterRowsEach[T any](s *Stream[changelog.Change[T]], newFn func() func(T) bool) *Stream[changelog.Change[T]] {
	return filterRows(s, newFn, false)
}

// FilterRowsNonRetaining is FilterRowsEach for predicates that keep
// nothing of the rows they are given once they return (they copy what they
// keep): the rows may then be in memory that the operators before the
// filter reuse for later rows, when the filter's own readers keep nothing
// of them either (MapRowsCopying).
func FilterRowsNonRetaining[T any](s *Stream[changelog.Change[T]], newFn func() func(T) bool) *Stream[changelog.Change[T]] {
	return filterRows(s, newFn, true)
}

func filterRows[T any](s *Stream[changelog.Change[T]], newFn func() func(T) bool, forwards bool) *Stream[changelog.Change[T]] {
	in := s.ChangelogMode()
	out := oneInput[changelog.Change[T], changelog.Change[T]](s, "FilterRows", func(_ *runtime.Context, outs map[string]any) (runtime.Input[changelog.Change[T]], error) {
		f := ops.NewFilterRows(newFn(), in, mainOut[changelog.Change[T]](outs))
		f.Forwards = forwards
		return f, nil
	}).withMode(ops.FilterRowsMode(in))
	out.node.Parallelism = s.node.Parallelism
	return out
}

// FilterRows keeps the changes whose rows pred accepts, as a WHERE clause
// does, and keeps the changelog well formed: an update whose old row passes
// and new row does not becomes a deletion (-D) of the old row, and one whose
// new row passes alone an insertion (+I) of the new row. On an upsert
// stream a +U whose row does not pass becomes a deletion of its key, and
// deletions always pass (they may carry the key alone). The operator runs
// with the parallelism of its input, chained to it.
func FilterRows[T any](s *Stream[changelog.Change[T]], pred func(T) bool) *Stream[changelog.Change[T]] {
	return FilterRowsEach(s, func() func(T) bool { return pred })
}

// GroupBy partitions a changelog by a key of its rows, for GroupAggregate
// and the other relational operators. K must hash the same in every process
// (numbers, strings, bools, and arrays and structs of them).
func GroupBy[T any, K comparable](s *Stream[changelog.Change[T]], key func(T) K) *KeyedStream[K, changelog.Change[T]] {
	return KeyBy(s, func(c changelog.Change[T]) K { return key(c.Row) })
}

// equalFunc returns == on T if values of T can be compared, nil otherwise.
// Values made only of numbers, bools, and arrays and structs of them are
// compared as memory (where == and memory differ, on -0 and NaN, an update
// is emitted or not that == would not have): comparing through interfaces
// would copy them to the heap.
func equalFunc[T any]() func(a, b T) bool {
	t := reflect.TypeFor[T]()
	if !t.Comparable() {
		return nil
	}
	if plainMemory(t) {
		n := int(t.Size())
		return func(a, b T) bool {
			return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a)), n), unsafe.Slice((*byte)(unsafe.Pointer(&b)), n))
		}
	}
	return func(a, b T) bool { return any(a) == any(b) }
}

// plainMemory reports whether values of t hold no pointers and no padding
// that could differ between equal values: numbers, bools, and arrays and
// structs of them whose fields are packed.
func plainMemory(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Array:
		return plainMemory(t.Elem())
	case reflect.Struct:
		var end uintptr
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Offset != end || !plainMemory(f.Type) {
				return false
			}
			end = f.Offset + f.Type.Size()
		}
		return end == t.Size()
	}
	return false
}

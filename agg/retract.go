package agg

import (
	"cmp"
	"fmt"
)

// MinRetract returns the least f of its inputs, as Min does, but can also
// take inputs back: the values seen are kept in a view (see Views) with
// their counts, so that when the least is retracted the next least is
// found. It is the MIN of an unbounded GROUP BY over a changelog.
func MinRetract[T any, V cmp.Ordered](f func(T) V) ViewFunction[T, Optional[V], V] {
	return extremumRetract[T, V]{extremum[T, V]{f, -1}, intKind[V]()}
}

// MaxRetract returns the greatest f of its inputs and can take inputs back;
// see MinRetract.
func MaxRetract[T any, V cmp.Ordered](f func(T) V) ViewFunction[T, Optional[V], V] {
	return extremumRetract[T, V]{extremum[T, V]{f, 1}, intKind[V]()}
}

type extremumRetract[T any, V cmp.Ordered] struct {
	extremum[T, V]
	ints int // intKind of V, 0 if V does not fit an int64 view
}

func (extremumRetract[T, V]) NumViews() int { return 1 }

func (e extremumRetract[T, V]) AddWith(acc Optional[V], in T, v Views, first int) Optional[V] {
	x := e.f(in)
	if e.ints != 0 {
		v.AddInt(first, intOf(x, e.ints), 1)
	} else {
		v.Add(first, OrderedKey(x), 1)
	}
	return e.Merge(acc, Optional[V]{x, true})
}

func (e extremumRetract[T, V]) RetractWith(acc Optional[V], in T, v Views, first int) Optional[V] {
	x := e.f(in)
	var after int64
	if e.ints != 0 {
		_, after = v.AddInt(first, intOf(x, e.ints), -1)
	} else {
		_, after = v.Add(first, OrderedKey(x), -1)
	}
	if after > 0 || !acc.Valid || cmp.Compare(x, acc.Value) != 0 {
		return acc
	}
	// The extremum left: find the next one. Values come in increasing
	// order: a minimum is found at once.
	var next Optional[V]
	take := func(y V) bool {
		if !next.Valid || cmp.Compare(y, next.Value) == e.sign {
			next = Optional[V]{y, true}
		}
		return e.sign == 1
	}
	if e.ints != 0 {
		v.RangeInt(first, func(y int64, _ int64) bool { return take(fromInt[V](y)) })
	} else {
		v.Range(first, func(key string, _ int64) bool { return take(decodeOrderedKey[V](key)) })
	}
	return next
}

// Distinct aggregates the distinct values of value over its inputs with f:
// COUNT(DISTINCT x), SUM(DISTINCT x). The values are counted in a view, so
// that f sees a value when its first copy arrives and loses it when its
// last copy is retracted (f must then implement Retracting). It can only
// run where views are kept: in GroupAggregate.
func Distinct[T any, V cmp.Ordered, ACC, OUT any](value func(T) V, f Function[V, ACC, OUT]) ViewFunction[T, ACC, OUT] {
	return distinct[T, V, ACC, OUT]{value: value, f: f, m: memberOf(f), ints: intKind[V]()}
}

type distinct[T any, V cmp.Ordered, ACC, OUT any] struct {
	value func(T) V
	f     Function[V, ACC, OUT]
	m     member[V, ACC, OUT]
	ints  int // intKind of V, 0 if V does not fit an int64 view
}

// add changes the count of x in the distinct view.
func (d distinct[T, V, ACC, OUT]) add(v Views, view int, x V, delta int64) (before, after int64) {
	if d.ints != 0 {
		return v.AddInt(view, intOf(x, d.ints), delta)
	}
	return v.Add(view, OrderedKey(x), delta)
}

func (d distinct[T, V, ACC, OUT]) count(v Views, view int, x V) int64 {
	if d.ints != 0 {
		return v.CountInt(view, intOf(x, d.ints))
	}
	return v.Count(view, OrderedKey(x))
}

func (d distinct[T, V, ACC, OUT]) Create() ACC           { return d.f.Create() }
func (d distinct[T, V, ACC, OUT]) Result(acc ACC) OUT    { return d.f.Result(acc) }
func (d distinct[T, V, ACC, OUT]) NumViews() int         { return 1 + NumViews(d.f) }
func (d distinct[T, V, ACC, OUT]) CanRetract() bool      { return CanRetract(d.f) }
func (d distinct[T, V, ACC, OUT]) Merge(a, b ACC) ACC    { panic(errViewsOnly("Distinct")) }
func (d distinct[T, V, ACC, OUT]) Add(acc ACC, in T) ACC { panic(errViewsOnly("Distinct")) }

func (d distinct[T, V, ACC, OUT]) AddWith(acc ACC, in T, v Views, first int) ACC {
	x := d.value(in)
	if v.InsertOnly() && d.count(v, first, x) > 0 {
		// Nothing is taken back: a value seen before needs no count.
		return acc
	}
	if before, _ := d.add(v, first, x, 1); before == 0 {
		return d.m.addWith(acc, x, v, first+1)
	}
	return acc
}

func (d distinct[T, V, ACC, OUT]) RetractWith(acc ACC, in T, v Views, first int) ACC {
	x := d.value(in)
	if _, after := d.add(v, first, x, -1); after == 0 {
		return d.m.retractWith(acc, x, v, first+1)
	}
	return acc
}

// errViewsOnly is the panic of a view function used where no views are
// kept (a window): a programming mistake that the API checks for first.
func errViewsOnly(name string) error {
	return fmt.Errorf("agg: %s keeps its values in views and runs only in GroupAggregate", name)
}

// Filter aggregates with f only the inputs pred accepts: an aggregate's
// FILTER (WHERE …) clause.
func Filter[T, ACC, OUT any](pred func(T) bool, f Function[T, ACC, OUT]) ViewFunction[T, ACC, OUT] {
	return &filter[T, ACC, OUT]{pred, memberOf(f)}
}

type filter[T, ACC, OUT any] struct {
	pred func(T) bool
	m    member[T, ACC, OUT]
}

func (p *filter[T, ACC, OUT]) Create() ACC        { return p.m.f.Create() }
func (p *filter[T, ACC, OUT]) Result(acc ACC) OUT { return p.m.f.Result(acc) }
func (p *filter[T, ACC, OUT]) Merge(a, b ACC) ACC { return p.m.f.Merge(a, b) }
func (p *filter[T, ACC, OUT]) NumViews() int      { return p.m.views }
func (p *filter[T, ACC, OUT]) CanRetract() bool   { return p.m.canR }

func (p *filter[T, ACC, OUT]) Add(acc ACC, in T) ACC {
	if p.pred(in) {
		return p.m.f.Add(acc, in)
	}
	return acc
}

// Retract takes in back if the filter accepts it.
func (p *filter[T, ACC, OUT]) Retract(acc ACC, in T) ACC {
	if p.pred(in) {
		return p.m.retract(acc, in)
	}
	return acc
}

func (p *filter[T, ACC, OUT]) AddWith(acc ACC, in T, v Views, first int) ACC {
	if p.pred(in) {
		return p.m.addWith(acc, in, v, first)
	}
	return acc
}

func (p *filter[T, ACC, OUT]) RetractWith(acc ACC, in T, v Views, first int) ACC {
	if p.pred(in) {
		return p.m.retractWith(acc, in, v, first)
	}
	return acc
}

// addWith adds in to acc with f, through its views if it has any.
func addWith[IN, ACC, OUT any](f Function[IN, ACC, OUT], acc ACC, in IN, v Views, first int) ACC {
	if vf, ok := f.(ViewFunction[IN, ACC, OUT]); ok && v != nil {
		return vf.AddWith(acc, in, v, first)
	}
	return f.Add(acc, in)
}

// retractWith takes in out of acc with f, through its views if it has any.
// It panics if f cannot retract: callers check CanRetract first.
func retractWith[IN, ACC, OUT any](f Function[IN, ACC, OUT], acc ACC, in IN, v Views, first int) ACC {
	if vf, ok := f.(ViewFunction[IN, ACC, OUT]); ok && v != nil {
		return vf.RetractWith(acc, in, v, first)
	}
	if r, ok := f.(Retracting[IN, ACC]); ok {
		return r.Retract(acc, in)
	}
	panic(fmt.Errorf("agg: %T cannot retract", f))
}

// AddWith adds in to acc with f, through views v if f uses them (first is
// the index of f's first view). Operators that keep views call it.
func AddWith[IN, ACC, OUT any](f Function[IN, ACC, OUT], acc ACC, in IN, v Views, first int) ACC {
	return addWith(f, acc, in, v, first)
}

// RetractWith takes in out of acc with f, through views v if f uses them.
// It panics if f cannot retract (see CanRetract).
func RetractWith[IN, ACC, OUT any](f Function[IN, ACC, OUT], acc ACC, in IN, v Views, first int) ACC {
	return retractWith(f, acc, in, v, first)
}

package agg

import "cmp"

// Number is the constraint of the types Sum adds.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64
}

// Optional is the accumulator of Min, Max and Reduce: a value, and whether
// there is one yet.
type Optional[T any] struct {
	Value T
	Valid bool
}

// Count counts its inputs.
func Count[T any]() Function[T, int64, int64] { return count[T]{} }

type count[T any] struct{}

func (count[T]) Create() int64            { return 0 }
func (count[T]) Add(acc int64, _ T) int64 { return acc + 1 }
func (count[T]) Merge(a, b int64) int64   { return a + b }
func (count[T]) Result(acc int64) int64   { return acc }

// Retract takes one input back.
func (count[T]) Retract(acc int64, _ T) int64 { return acc - 1 }

// Sum adds up f of its inputs. Integer sums wrap on overflow.
func Sum[T any, N Number](f func(T) N) Function[T, N, N] { return sum[T, N]{f} }

type sum[T any, N Number] struct{ f func(T) N }

func (sum[T, N]) Create() N           { return 0 }
func (s sum[T, N]) Add(acc N, in T) N { return acc + s.f(in) }
func (sum[T, N]) Merge(a, b N) N      { return a + b }
func (sum[T, N]) Result(acc N) N      { return acc }

// Retract subtracts f of the input.
func (s sum[T, N]) Retract(acc N, in T) N { return acc - s.f(in) }

// Min returns the least f of its inputs (the zero value if there were none).
// It cannot retract; MinRetract can.
func Min[T any, N cmp.Ordered](f func(T) N) Function[T, Optional[N], N] {
	return extremum[T, N]{f, -1}
}

// Max returns the greatest f of its inputs (the zero value if there were
// none). It cannot retract; MaxRetract can.
func Max[T any, N cmp.Ordered](f func(T) N) Function[T, Optional[N], N] {
	return extremum[T, N]{f, 1}
}

// extremum keeps the value v for which cmp.Compare(v, other) == sign.
type extremum[T any, N cmp.Ordered] struct {
	f    func(T) N
	sign int
}

func (extremum[T, N]) Create() Optional[N] { return Optional[N]{} }

func (e extremum[T, N]) Add(acc Optional[N], in T) Optional[N] {
	return e.Merge(acc, Optional[N]{e.f(in), true})
}

func (e extremum[T, N]) Merge(a, b Optional[N]) Optional[N] {
	if !a.Valid || (b.Valid && cmp.Compare(b.Value, a.Value) == e.sign) {
		return b
	}
	return a
}

func (extremum[T, N]) Result(acc Optional[N]) N { return acc.Value }

// AvgAcc is the accumulator of Avg.
type AvgAcc struct {
	Sum   float64
	Count int64
}

// Avg returns the mean of f of its inputs (0 if there were none).
func Avg[T any](f func(T) float64) Function[T, AvgAcc, float64] { return avg[T]{f} }

type avg[T any] struct{ f func(T) float64 }

func (avg[T]) Create() AvgAcc { return AvgAcc{} }

func (a avg[T]) Add(acc AvgAcc, in T) AvgAcc {
	return AvgAcc{acc.Sum + a.f(in), acc.Count + 1}
}

func (avg[T]) Merge(a, b AvgAcc) AvgAcc { return AvgAcc{a.Sum + b.Sum, a.Count + b.Count} }

// Retract takes the input back out of the mean.
func (a avg[T]) Retract(acc AvgAcc, in T) AvgAcc {
	return AvgAcc{acc.Sum - a.f(in), acc.Count - 1}
}

func (avg[T]) Result(acc AvgAcc) float64 {
	if acc.Count == 0 {
		return 0
	}
	return acc.Sum / float64(acc.Count)
}

// Reduce turns a reduce function into a Function whose result is the
// reduction of its inputs (the zero value if there were none). f must be
// associative, because Merge applies it to partial reductions.
func Reduce[T any](f func(a, b T) T) Function[T, Optional[T], T] { return reduce[T]{f} }

type reduce[T any] struct{ f func(a, b T) T }

func (reduce[T]) Create() Optional[T] { return Optional[T]{} }

func (r reduce[T]) Add(acc Optional[T], in T) Optional[T] {
	return r.Merge(acc, Optional[T]{in, true})
}

func (r reduce[T]) Merge(a, b Optional[T]) Optional[T] {
	switch {
	case !a.Valid:
		return b
	case !b.Valid:
		return a
	}
	return Optional[T]{r.f(a.Value, b.Value), true}
}

func (reduce[T]) Result(acc Optional[T]) T { return acc.Value }

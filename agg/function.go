// Package agg defines aggregate functions: how a window or an aggregating
// state folds inputs into an accumulator and turns it into a result.
//
// Accumulators are values: Add and Merge return the new accumulator rather
// than changing one in place, so that an accumulator can be kept in state,
// copied into a snapshot, and merged when session windows merge. An
// accumulator is encoded by a state codec (DefaultCodec handles structs of
// primitive fields), so it should be a plain data type.
//
// A Function is used by one goroutine at a time; the built-in ones hold no
// state and may be shared.
package agg

// Function is an aggregate function, as Flink's AggregateFunction: Create
// makes an empty accumulator, Add folds one input into it, Merge combines two
// accumulators (of merged session windows, or of partial aggregates), and
// Result computes the output.
type Function[IN, ACC, OUT any] interface {
	// Create returns a new, empty accumulator.
	Create() ACC
	// Add returns acc with in added.
	Add(acc ACC, in IN) ACC
	// Merge returns the combination of a and b.
	Merge(a, b ACC) ACC
	// Result returns the output for acc.
	Result(acc ACC) OUT
}

// Retracting is implemented by aggregate functions that can take an input
// back out of an accumulator, so that they can aggregate a changelog: an
// unbounded GROUP BY retracts the rows that updates and deletions take back.
// Retract(Add(acc, in), in) must give an accumulator equal in result to
// acc.
type Retracting[IN, ACC any] interface {
	// Retract returns acc with in taken out.
	Retract(acc ACC, in IN) ACC
}

// CanRetract reports whether f can take inputs back out of its
// accumulator: it implements Retracting, or it combines functions that do
// (see Combine2) and says so.
func CanRetract[IN, ACC, OUT any](f Function[IN, ACC, OUT]) bool {
	if c, ok := f.(interface{ CanRetract() bool }); ok {
		return c.CanRetract()
	}
	if _, ok := f.(ViewFunction[IN, ACC, OUT]); ok {
		return true
	}
	_, ok := f.(Retracting[IN, ACC])
	return ok
}

// Of returns the Function made of the four funcs.
func Of[IN, ACC, OUT any](create func() ACC, add func(acc ACC, in IN) ACC, merge func(a, b ACC) ACC, result func(acc ACC) OUT) Function[IN, ACC, OUT] {
	return funcs[IN, ACC, OUT]{create, add, merge, result}
}

type funcs[IN, ACC, OUT any] struct {
	create func() ACC
	add    func(ACC, IN) ACC
	merge  func(a, b ACC) ACC
	result func(ACC) OUT
}

func (f funcs[IN, ACC, OUT]) Create() ACC            { return f.create() }
func (f funcs[IN, ACC, OUT]) Add(acc ACC, in IN) ACC { return f.add(acc, in) }
func (f funcs[IN, ACC, OUT]) Merge(a, b ACC) ACC     { return f.merge(a, b) }
func (f funcs[IN, ACC, OUT]) Result(acc ACC) OUT     { return f.result(acc) }

// WithRetract returns f with retract as its Retract, for an aggregate made
// with Of that can take inputs back.
func WithRetract[IN, ACC, OUT any](f Function[IN, ACC, OUT], retract func(acc ACC, in IN) ACC) Function[IN, ACC, OUT] {
	return withRetract[IN, ACC, OUT]{f, retract}
}

type withRetract[IN, ACC, OUT any] struct {
	Function[IN, ACC, OUT]
	retract func(ACC, IN) ACC
}

func (w withRetract[IN, ACC, OUT]) Retract(acc ACC, in IN) ACC { return w.retract(acc, in) }

package agg

import "cmp"

// ResultKeeper is implemented by aggregate functions that can tell, before
// an input is added, that adding it leaves the result as it is: a MAX
// given a value no greater than the one it holds. The group aggregation
// then adds the input without making the group's result before and after
// it, and emits nothing for it, as it emits nothing for a result that
// stayed equal. The rows the aggregation makes must then show of the
// accumulator only what Result shows (eddy.GroupAggregateRows's row
// function included). MinRetract and MaxRetract keep as Min and Max do.
type ResultKeeper[IN, ACC any] interface {
	// KeepsResult reports whether Result(Add(acc, in)) equals Result(acc).
	// It may say false whenever it cannot tell cheaply; it must not
	// change acc.
	KeepsResult(acc ACC, in IN) bool
}

// KeepsResult reports whether in is no better than the value acc holds.
func (e extremum[T, N]) KeepsResult(acc Optional[N], in T) bool {
	return acc.Valid && cmp.Compare(e.f(in), acc.Value) != e.sign
}

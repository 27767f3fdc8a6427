package plan

import "github.com/eddystream/eddy/sql/internal/expr"

// planWindowJoin would plan Flink's window join (two window TVF outputs
// joined on window_start and window_end) as eddy.WindowJoin. It does not
// yet: such a join runs as a regular join on the window columns, whose
// final result is the same (insert-only for an inner join of windowed
// aggregates) but whose state is not freed when the windows close.
func (q *queryPlanner) planWindowJoin(sp *joinSpec, keys []equiKey, residual []expr.Expr) (Rel, bool, error) {
	return nil, false, nil
}

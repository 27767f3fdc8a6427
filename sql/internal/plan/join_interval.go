package plan

import "github.com/eddystream/eddy/sql/internal/expr"

// planIntervalJoin plans an interval join if the join is one.
func (q *queryPlanner) planIntervalJoin(sp *joinSpec, keys []equiKey, residual []expr.Expr) (Rel, bool, error) {
	return nil, false, nil
}

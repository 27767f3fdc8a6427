package plan

import "github.com/eddystream/eddy/sql/internal/expr"

// planWindowJoin plans a window join if the join is one.
func (q *queryPlanner) planWindowJoin(sp *joinSpec, keys []equiKey, residual []expr.Expr) (Rel, bool, error) {
	return nil, false, nil
}

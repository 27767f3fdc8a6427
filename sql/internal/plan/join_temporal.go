package plan

import "github.com/eddystream/eddy/sql/internal/expr"

// planTemporalJoin plans a join FOR SYSTEM_TIME AS OF.
func (q *queryPlanner) planTemporalJoin(sp *joinSpec, keys []equiKey, residual []expr.Expr) (Rel, error) {
	return nil, q.errorf(sp.asOfPos, "FOR SYSTEM_TIME AS OF is not supported yet")
}

package plan

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql/internal/expr"
)

// planWindowJoin plans Flink's window join: a join of two windowed
// relations (window TVFs, window aggregations, window Top-Ns, in event
// time) whose condition equates their window_start and their window_end,
// of insert-only inputs. Other joins of windowed relations are regular
// joins.
func (q *queryPlanner) planWindowJoin(sp *joinSpec, keys []equiKey, residual []expr.Expr) (Rel, bool, error) {
	lw, ok1 := windowColsOf(sp.left)
	rw, ok2 := windowColsOf(sp.right)
	if !ok1 || !ok2 || !sp.left.Props().Mode.IsInsertOnly() || !sp.right.Props().Mode.IsInsertOnly() {
		return nil, false, nil
	}
	start, end := false, false
	for _, k := range keys {
		l, ok1 := stripTimeCast(k.left).(*expr.Column)
		r, ok2 := stripTimeCast(k.right).(*expr.Column)
		if !ok1 || !ok2 {
			continue
		}
		start = start || l.Index == lw.start && r.Index == rw.start
		end = end || l.Index == lw.end && r.Index == rw.end
	}
	if !start || !end {
		return nil, false, nil
	}
	j := &WindowJoinRel{spec: sp, keys: keys, residual: residual, cond: q.conjoin(residual), left: lw, right: rw,
		rt: joinRowType(sp.left.Schema(), sp.right.Schema(), sp.kind)}
	switch sp.kind {
	case eddy.InnerJoin, eddy.LeftJoin:
		j.window, j.windowed = lw, true
	case eddy.RightJoin:
		j.window, j.windowed = rw.shift(sp.width()), true
	}
	return j, true, nil
}

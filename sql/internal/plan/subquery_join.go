package plan

import (
	"fmt"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// SubqueryJoinRel is a join that a subquery or a set operation is planned
// as, as Flink's planner rewrites them: a left semi join (IN, EXISTS,
// INTERSECT) or anti join (NOT IN, NOT EXISTS, EXCEPT), whose output is the
// left rows, or a left join with the single row of a scalar subquery,
// whose output is the left row and the subquery's value. It runs as
// eddy.Join or eddy.JoinOn keyed by its equi-join keys; without keys (an
// uncorrelated EXISTS, a scalar subquery) every row goes to one subtask
// under a constant key, as Flink runs such a join on a single subtask.
type SubqueryJoinRel struct {
	Kind        eddy.JoinKind
	Left, Right Rel
	keys        []equiKey
	residual    []expr.Expr
	// cond is the residual conjuncts as one condition, nil for none.
	cond expr.Expr
	// pair is the type of the joined pair of rows the conditions read; rt
	// is the output's.
	pair, rt *types.RowType
}

func (q *queryPlanner) newSubqueryJoin(kind eddy.JoinKind, left, right Rel, conds []expr.Expr) *SubqueryJoinRel {
	keys, residual := splitJoinCondition(conds, left.Schema().Len())
	j := &SubqueryJoinRel{Kind: kind, Left: left, Right: right, keys: keys, residual: residual, cond: q.conjoin(residual),
		pair: joinRowType(left.Schema(), right.Schema(), eddy.InnerJoin)}
	j.rt = left.Schema()
	if kind == eddy.LeftJoin {
		j.rt = joinRowType(left.Schema(), right.Schema(), eddy.LeftJoin)
	}
	return j
}

func (j *SubqueryJoinRel) Schema() *types.RowType { return j.rt }
func (j *SubqueryJoinRel) Inputs() []Rel          { return []Rel{j.Left, j.Right} }

func (j *SubqueryJoinRel) Props() Props {
	mode := changelog.Retract
	if j.Kind == eddy.LeftSemiJoin && j.Left.Props().Mode.IsInsertOnly() && j.Right.Props().Mode.IsInsertOnly() {
		mode = changelog.InsertOnly
	}
	return Props{Mode: mode, Rowtime: -1, Proctime: -1}
}

// flinkSubqueryJoinType names the join kinds of subqueries as Flink's plans
// do.
func flinkSubqueryJoinType(k eddy.JoinKind) string {
	switch k {
	case eddy.LeftSemiJoin:
		return "LeftSemiJoin"
	case eddy.LeftAntiJoin:
		return "LeftAntiJoin"
	}
	return flinkJoinType(k)
}

func (j *SubqueryJoinRel) inputSpec(side int) string {
	in := j.Left
	if side == 1 {
		in = j.Right
	}
	u := uniqueKey(in)
	switch {
	case len(u) > 0 && keyContains(j.keys, side, u):
		return "JoinKeyContainsUniqueKey"
	case len(u) > 0:
		return "HasUniqueKey"
	}
	return "NoUniqueKey"
}

func (j *SubqueryJoinRel) Describe() string {
	return fmt.Sprintf("Join(joinType=[%s], where=[%s], select=[%s], leftInputSpec=[%s], rightInputSpec=[%s])",
		flinkSubqueryJoinType(j.Kind), joinWhereText(j.keys, j.residual, j.pair), fieldList(j.rt), j.inputSpec(0), j.inputSpec(1))
}

func (j *SubqueryJoinRel) build(b *builder) (*eddy.Stream[Rec], error) {
	ls, err := b.stream(j.Left)
	if err != nil {
		return nil, err
	}
	rs, err := b.stream(j.Right)
	if err != nil {
		return nil, err
	}
	ls, rs = wholeRows(ls, j.Left), wholeRows(rs, j.Right)
	lk, err := newJoinKeys(j.keys, 0, j.Left.Schema())
	if err != nil {
		return nil, err
	}
	rk, err := newJoinKeys(j.keys, 1, j.Right.Schema())
	if err != nil {
		return nil, err
	}
	// A row whose key is NULL (compared with =) matches nothing: a semi
	// join never emits such a left row, and such a right row changes
	// nothing; an anti or left join keeps its left rows unmatched.
	if j.Kind == eddy.LeftSemiJoin {
		ls = lk.dropNullKeys(ls)
	}
	rs = rk.dropNullKeys(rs)
	// Joins keep rows in state: copy them out of the arenas they share.
	ls, rs = cloneRows(ls), cloneRows(rs)
	lg := eddy.GroupBy(ls, lk.keyFunc())
	rg := eddy.GroupBy(rs, rk.keyFunc())
	var opts []eddy.TableOption
	ttl, err := stateTTL(b.cat)
	if err != nil {
		return nil, err
	}
	if ttl > 0 {
		opts = append(opts, eddy.StateTTL(ttl))
	}
	var fn func(a, b *types.Row) types.Row
	if j.Kind == eddy.LeftJoin {
		out, err := newJoinEvals(j.rt, nil, j.Left.Schema(), j.Right.Schema(), nil, false)
		if err != nil {
			return nil, err
		}
		fn = func(a, b *types.Row) types.Row {
			e := out.get()
			defer out.put(e)
			return e.join(a, b)
		}
	} else {
		// The result is the left row itself, cloned before it entered
		// the join's state.
		fn = func(a, _ *types.Row) types.Row { return *a }
	}
	if j.cond == nil {
		return eddy.Join(lg, rg, j.Kind, fn, opts...), nil
	}
	ev, err := newJoinEvals(j.pair, nil, j.Left.Schema(), j.Right.Schema(), j.cond, false)
	if err != nil {
		return nil, err
	}
	on := func(a, b types.Row) bool {
		e := ev.get()
		defer ev.put(e)
		return e.test(a, b)
	}
	return eddy.JoinOn(lg, rg, j.Kind, on, fn, opts...), nil
}

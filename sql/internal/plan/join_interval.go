package plan

import (
	"fmt"
	"math"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// IntervalJoinRel is an interval join, as Flink's IntervalJoin: an inner
// join of two append-only inputs with rowtime attributes whose condition
// bounds the right rowtime by the left one (r.rt - l.rt in [lower,
// upper]), keyed by its equi-join keys (all rows on one subtask without
// any). Rows are kept until the watermark passes their bound; rows behind
// the watermark are dropped as late. The output is append-only. Its
// records carry the later of the two rowtimes, so the output keeps a
// rowtime attribute when the bounds say which side is the later one: the
// right one if lower >= 0, the left one if upper <= 0 (both when the
// rowtimes are equal); otherwise it has none.
type IntervalJoinRel struct {
	spec     *joinSpec
	keys     []equiKey
	bounds   []expr.Expr
	residual []expr.Expr
	cond     expr.Expr
	// lower and upper bound r.rt - l.rt, in milliseconds.
	lower, upper int64
	// ltime and rtime are the rowtime columns of the inputs.
	ltime, rtime int
	rt           *types.RowType
	rowtime      int
}

// planIntervalJoin plans an interval join if the join is one: an inner
// join of append-only inputs with rowtimes, whose condition bounds one
// rowtime by the other on both sides.
func (q *queryPlanner) planIntervalJoin(sp *joinSpec, keys []equiKey, residual []expr.Expr) (Rel, bool, error) {
	lp, rp := sp.left.Props(), sp.right.Props()
	if sp.kind != eddy.InnerJoin || lp.Rowtime < 0 || rp.Rowtime < 0 || !lp.Mode.IsInsertOnly() || !rp.Mode.IsInsertOnly() {
		return nil, false, nil
	}
	nl := sp.width()
	j := &IntervalJoinRel{spec: sp, keys: keys, ltime: lp.Rowtime, rtime: rp.Rowtime, lower: math.MinInt64, upper: math.MaxInt64,
		rt: joinRowType(sp.left.Schema(), sp.right.Schema(), sp.kind)}
	// Equalities of the rowtimes are bounds too.
	var conds []expr.Expr
	for _, k := range keys {
		if isTimeEquality(k, j.ltime, j.rtime) {
			conds = append(conds, k.cond)
		}
	}
	conds = append(conds, residual...)
	for _, c := range conds {
		if !j.addBound(c, nl) {
			j.residual = append(j.residual, c)
			continue
		}
		j.bounds = append(j.bounds, c)
	}
	if j.lower == math.MinInt64 || j.upper == math.MaxInt64 {
		return nil, false, nil
	}
	j.keys = nil
	for _, k := range keys {
		if !isTimeEquality(k, j.ltime, j.rtime) {
			j.keys = append(j.keys, k)
		}
	}
	if j.lower > j.upper {
		return nil, true, q.errorf(sp.pos, "the time bounds of the join with %s admit no pair of rows (%s): the right rowtime minus the left one must lie between %dms and %dms",
			sp.rightName, joinWhereText(nil, j.bounds, j.rt), j.lower, j.upper)
	}
	j.cond = q.conjoin(j.residual)
	switch {
	case j.lower >= 0:
		j.rowtime = nl + j.rtime
	case j.upper <= 0:
		j.rowtime = j.ltime
	default:
		j.rowtime = -1
	}
	return j, true, nil
}

func isTimeEquality(k equiKey, ltime, rtime int) bool {
	l, ok1 := stripTimeCast(k.left).(*expr.Column)
	r, ok2 := stripTimeCast(k.right).(*expr.Column)
	return ok1 && ok2 && !k.nullSafe && l.Index == ltime && r.Index == rtime
}

// stripTimeCast returns the time that a cast to the same kind of time of
// as many digits or more holds unchanged. A cast to fewer digits stays: it
// truncates, so the bounds of the uncast time would be too narrow, and rows
// that still join would be dropped.
func stripTimeCast(e expr.Expr) expr.Expr {
	if c, ok := e.(*expr.Cast); ok && !c.Try && c.X.Type().Kind() == c.T.Kind() && c.T.Precision() >= c.X.Type().Precision() {
		return c.X
	}
	return e
}

// timeTerm recognises rowtime, rowtime + INTERVAL and rowtime - INTERVAL:
// the column and the offset in milliseconds.
func timeTerm(e expr.Expr) (col int, off int64, ok bool) {
	e = stripTimeCast(e)
	if c, ok := e.(*expr.Column); ok {
		return c.Index, 0, true
	}
	call, isCall := e.(*expr.Call)
	if !isCall || len(call.Args) != 2 || call.Name != "+" && call.Name != "-" {
		return 0, 0, false
	}
	x, lit := stripTimeCast(call.Args[0]), call.Args[1]
	if call.Name == "+" {
		if _, ok := x.(*expr.Literal); ok {
			x, lit = stripTimeCast(call.Args[1]), call.Args[0]
		}
	}
	c, ok1 := x.(*expr.Column)
	l, ok2 := lit.(*expr.Literal)
	if !ok1 || !ok2 || l.T.Kind() != types.KindIntervalDayTime {
		return 0, 0, false
	}
	ms, ok := l.V.(int64)
	if !ok {
		return 0, 0, false
	}
	if call.Name == "-" {
		ms = -ms
	}
	return c.Index, ms, true
}

// addBound narrows the bounds by a comparison of the two rowtimes, and
// tells whether c is one.
func (j *IntervalJoinRel) addBound(c expr.Expr, nl int) bool {
	call, ok := c.(*expr.Call)
	if !ok || len(call.Args) != 2 {
		return false
	}
	op := call.Name
	switch op {
	case "=", ">=", ">", "<=", "<":
	default:
		return false
	}
	ca, oa, ok1 := timeTerm(call.Args[0])
	cb, ob, ok2 := timeTerm(call.Args[1])
	if !ok1 || !ok2 {
		return false
	}
	// d = r.rt - l.rt; the comparison is d op bound.
	var bound int64
	switch {
	case ca == j.ltime && cb == nl+j.rtime:
		// l + oa op r + ob  <=>  d flip(op) oa - ob
		bound = oa - ob
		op = map[string]string{"=": "=", ">=": "<=", ">": "<", "<=": ">=", "<": ">"}[op]
	case ca == nl+j.rtime && cb == j.ltime:
		// r + oa op l + ob  <=>  d op ob - oa
		bound = ob - oa
	default:
		return false
	}
	switch op {
	case "=":
		j.lower, j.upper = max(j.lower, bound), min(j.upper, bound)
	case ">=":
		j.lower = max(j.lower, bound)
	case ">":
		j.lower = max(j.lower, bound+1)
	case "<=":
		j.upper = min(j.upper, bound)
	case "<":
		j.upper = min(j.upper, bound-1)
	}
	return true
}

func (j *IntervalJoinRel) joinSpec() *joinSpec    { return j.spec }
func (j *IntervalJoinRel) Schema() *types.RowType { return j.rt }
func (j *IntervalJoinRel) Inputs() []Rel          { return []Rel{j.spec.left, j.spec.right} }

func (j *IntervalJoinRel) Props() Props {
	return Props{Mode: changelog.InsertOnly, Rowtime: j.rowtime, Proctime: -1}
}

func (j *IntervalJoinRel) Describe() string {
	all := append(append([]expr.Expr(nil), j.bounds...), j.residual...)
	return fmt.Sprintf("IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true, leftLowerBound=%d, leftUpperBound=%d, leftTimeIndex=%d, rightTimeIndex=%d], where=[%s], select=[%s])",
		-j.upper, -j.lower, j.ltime, j.rtime, joinWhereText(j.keys, all, j.rt), fieldList(j.rt))
}

func (j *IntervalJoinRel) build(b *builder) (*eddy.Stream[Rec], error) {
	ls, err := b.stream(j.spec.left)
	if err != nil {
		return nil, err
	}
	rs, err := b.stream(j.spec.right)
	if err != nil {
		return nil, err
	}
	lk, err := newJoinKeys(j.keys, 0, j.spec.left.Schema())
	if err != nil {
		return nil, err
	}
	rk, err := newJoinKeys(j.keys, 1, j.spec.right.Schema())
	if err != nil {
		return nil, err
	}
	ls, rs = lk.dropNullKeys(ls), rk.dropNullKeys(rs)
	ls, rs = cloneRows(ls), cloneRows(rs)
	lkey, rkey := lk.keyFunc(), rk.keyFunc()
	if len(j.keys) == 0 {
		lkey = func(types.Row) string { return "" }
		rkey = lkey
	}
	ev, err := newJoinEvals(j.rt, nil, j.spec.left.Schema(), j.spec.right.Schema(), j.cond, false)
	if err != nil {
		return nil, err
	}
	c := eddy.ConnectKeyed(eddy.GroupBy(ls, lkey), eddy.GroupBy(rs, rkey))
	out := eddy.IntervalJoin(c, time.Duration(j.lower)*time.Millisecond, time.Duration(j.upper)*time.Millisecond, func(a, b Rec) Rec {
		e := ev.get()
		defer ev.put(e)
		if !e.test(a.Row, b.Row) {
			return Rec{}
		}
		return Rec{Kind: changelog.Insert, Row: e.join(&a.Row, &b.Row)}
	})
	out = eddy.Filter(out, func(r Rec) bool { return r.Row != (types.Row{}) })
	return eddy.AsChangelog(out, changelog.InsertOnly), nil
}

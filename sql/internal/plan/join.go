package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// Joins are planned as Flink's planner does: a join of two append-only
// inputs whose condition bounds one side's rowtime by the other's is an
// interval join (join_interval.go); a join with FOR SYSTEM_TIME AS OF is a
// temporal join on event time or a lookup join on processing time
// (join_temporal.go); every other join is a regular join of changelogs
// keyed by its equi-join keys (join_regular.go). A join without any
// equality between its sides (a CROSS JOIN, a comma join whose WHERE gives
// none, ON a.x < b.x) is refused unless it is an interval join: it would
// run on one subtask and keep both inputs whole.

// joinSpec is a join as the planner resolved it, before it chooses how to
// run it.
type joinSpec struct {
	pos  parser.Pos
	kind eddy.JoinKind
	// left and right are the inputs; the joined row is the left row's
	// columns followed by the right row's.
	left, right Rel
	// conds are the conjuncts of the join condition over the joined row.
	conds []expr.Expr
	// cross marks a comma or CROSS join: the WHERE clause above it may
	// give its condition (see joinWhere).
	cross bool
	// asOf is the time attribute of FOR SYSTEM_TIME AS OF (a column of the
	// left row), nil for none; asOfPos is its place in the text.
	asOf    expr.Expr
	asOfPos parser.Pos
	// rightName names the right input in plans (its table or alias).
	rightName string
}

// joinRel is implemented by the relations of joins, so that the WHERE
// clause above a comma join can be planned into it.
type joinRel interface {
	Rel
	joinSpec() *joinSpec
}

func (sp *joinSpec) width() int { return sp.left.Schema().Len() }

// joinRowType is the row type of a join's output: the left columns then
// the right ones, the padded side's columns nullable, repeated names
// renamed as Flink does (id, id0).
func joinRowType(l, r *types.RowType, kind eddy.JoinKind) *types.RowType {
	var fs []types.Field
	for _, f := range l.Fields() {
		if kind == eddy.RightJoin || kind == eddy.FullJoin {
			f = types.F(f.Name, f.Type.Nullable())
		}
		fs = append(fs, f)
	}
	for _, f := range r.Fields() {
		if kind == eddy.LeftJoin || kind == eddy.FullJoin {
			f = types.F(f.Name, f.Type.Nullable())
		}
		fs = append(fs, f)
	}
	return types.MustRowType(dedupNames(fs)...)
}

// nullableRowType returns rt with every field nullable.
func nullableRowType(rt *types.RowType) *types.RowType {
	fs := rt.Fields()
	for i, f := range fs {
		fs[i] = types.F(f.Name, f.Type.Nullable())
	}
	return types.MustRowType(fs...)
}

func scopeWidth(sc *scope) int {
	if len(sc.entries) == 0 {
		return 0
	}
	last := sc.entries[len(sc.entries)-1]
	return last.offset + last.rt.Len()
}

// joinScope is the scope of a join: the entries of both sides, the right
// ones after the left row, the padded side's columns nullable.
func joinScope(l, r *scope, kind eddy.JoinKind, outer *scope) *scope {
	sc := &scope{outer: outer}
	for _, e := range l.entries {
		if kind == eddy.RightJoin || kind == eddy.FullJoin {
			e.rt = nullableRowType(e.rt)
		}
		sc.entries = append(sc.entries, e)
	}
	nl := scopeWidth(l)
	for _, e := range r.entries {
		e.offset += nl
		if kind == eddy.LeftJoin || kind == eddy.FullJoin {
			e.rt = nullableRowType(e.rt)
		}
		sc.entries = append(sc.entries, e)
	}
	return sc
}

var joinKinds = map[parser.JoinKind]eddy.JoinKind{
	parser.InnerJoin: eddy.InnerJoin, parser.LeftJoin: eddy.LeftJoin, parser.RightJoin: eddy.RightJoin,
	parser.FullJoin: eddy.FullJoin, parser.CrossJoin: eddy.InnerJoin, parser.CommaJoin: eddy.InnerJoin,
}

// join resolves a join of the FROM clause.
func (q *queryPlanner) join(n *parser.Join, outer *scope) (Rel, *scope, error) {
	left, lsc, err := q.from(n.Left, outer)
	if err != nil {
		return nil, nil, err
	}
	sp := &joinSpec{pos: n.Pos, kind: joinKinds[n.Kind], left: left}
	rightExpr := n.Right
	if tn, ok := n.Right.(*parser.TableName); ok && tn.SystemTime != nil {
		// FOR SYSTEM_TIME AS OF reads the left side's time attribute.
		e, err := q.analyzer(lsc).Expr(tn.SystemTime)
		if err != nil {
			return nil, nil, err
		}
		sp.asOf, sp.asOfPos = e, tn.SystemTime.Position()
		plain := *tn
		plain.SystemTime = nil
		rightExpr = &plain
	}
	right, rsc, err := q.from(rightExpr, outer)
	if err != nil {
		return nil, nil, err
	}
	sp.right = right
	sp.rightName = rightLabel(rsc)
	sc := joinScope(lsc, rsc, sp.kind, outer)
	var using []usingColumn
	switch {
	case n.Natural || len(n.Using) > 0:
		if using, err = q.usingColumns(n, lsc, rsc); err != nil {
			return nil, nil, err
		}
		for _, u := range using {
			c, err := q.equals(n.Pos, &expr.Column{Index: u.left, Name: u.name, T: u.lt}, &expr.Column{Index: scopeWidth(lsc) + u.right, Name: u.name, T: u.rt})
			if err != nil {
				return nil, nil, err
			}
			sp.conds = append(sp.conds, c)
		}
	case n.On != nil:
		cond, err := q.condition(q.analyzer(sc), n.On, "ON")
		if err != nil {
			return nil, nil, err
		}
		sp.conds = conjuncts(cond)
	default:
		sp.cross = true
	}
	if (n.Kind == parser.CrossJoin || n.Kind == parser.CommaJoin) && sp.asOf != nil {
		return nil, nil, q.errorf(n.Pos, "FOR SYSTEM_TIME AS OF needs a JOIN ... ON with the join keys")
	}
	r, err := q.planJoin(sp)
	if err != nil {
		return nil, nil, err
	}
	if len(using) > 0 {
		return q.usingOutput(r, sp, using, lsc, rsc, outer)
	}
	return r, sc, nil
}

// rightLabel names a FROM item in plans: its qualifier.
func rightLabel(sc *scope) string {
	var names []string
	for _, e := range sc.entries {
		names = append(names, e.qualifier)
	}
	return strings.Join(names, ", ")
}

// conjuncts splits a condition at its top-level ANDs.
func conjuncts(e expr.Expr) []expr.Expr {
	if c, ok := e.(*expr.Call); ok && c.Name == "AND" && len(c.Args) == 2 {
		return append(conjuncts(c.Args[0]), conjuncts(c.Args[1])...)
	}
	if l, ok := e.(*expr.Literal); ok && l.V == true {
		return nil
	}
	return []expr.Expr{e}
}

// conjoin joins conditions with AND (nil for none).
func (q *queryPlanner) conjoin(conds []expr.Expr) expr.Expr {
	if len(conds) == 0 {
		return nil
	}
	e := conds[0]
	for _, c := range conds[1:] {
		var err error
		if e, err = q.call("AND", e, c); err != nil {
			panic(err) // AND of BOOLEANs always resolves
		}
	}
	return e
}

// call resolves a call of a built-in the planner adds.
func (q *queryPlanner) call(name string, args ...expr.Expr) (expr.Expr, error) {
	b, ok := q.cat.Funcs.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("sql: no built-in %s", name)
	}
	return expr.NewCall(b, args...)
}

func (q *queryPlanner) equals(pos parser.Pos, l, r expr.Expr) (expr.Expr, error) {
	c, err := q.call("=", l, r)
	if err != nil {
		return nil, q.errorf(pos, "the join columns %s cannot be compared: %v", l, err)
	}
	return c, nil
}

// shiftColumns returns e with its column indexes moved by d.
func shiftColumns(e expr.Expr, d int) expr.Expr {
	if d == 0 || e == nil {
		return e
	}
	return expr.Rewrite(e, func(x expr.Expr) expr.Expr {
		if c, ok := x.(*expr.Column); ok {
			cc := *c
			cc.Index += d
			return &cc
		}
		return x
	})
}

// renameColumns returns e with its columns named as the fields of rt, for
// plans.
func namedAs(e expr.Expr, rt *types.RowType) expr.Expr {
	return expr.Rewrite(e, func(x expr.Expr) expr.Expr {
		if c, ok := x.(*expr.Column); ok && c.Index < rt.Len() {
			cc := *c
			cc.Name = rt.Field(c.Index).Name
			return &cc
		}
		return x
	})
}

// sideOf tells which inputs a condition over the joined row reads: 1 for
// the left only, 2 for the right only, 3 for both, 0 for none.
func sideOf(e expr.Expr, nl int) int {
	s := 0
	for _, c := range expr.Columns(e) {
		if c < nl {
			s |= 1
		} else {
			s |= 2
		}
	}
	return s
}

// equiKey is an equality between an expression of the left row and one of
// the right row (over the right row alone).
type equiKey struct {
	left, right expr.Expr
	// nullSafe is IS NOT DISTINCT FROM: NULLs match.
	nullSafe bool
	cond     expr.Expr
}

// splitJoinCondition sorts the conjuncts of a join condition into
// equalities between the sides and the rest.
func splitJoinCondition(conds []expr.Expr, nl int) (keys []equiKey, rest []expr.Expr) {
	for _, c := range conds {
		call, ok := c.(*expr.Call)
		if ok && (call.Name == "=" || call.Name == "IS NOT DISTINCT FROM") && len(call.Args) == 2 {
			a, b := call.Args[0], call.Args[1]
			sa, sb := sideOf(a, nl), sideOf(b, nl)
			if sa == 2 && sb == 1 {
				a, b, sa, sb = b, a, sb, sa
			}
			if sa == 1 && sb == 2 && !hasVolatile(a) && !hasVolatile(b) {
				keys = append(keys, equiKey{left: a, right: shiftColumns(b, -nl), nullSafe: call.Name != "=", cond: c})
				continue
			}
		}
		rest = append(rest, c)
	}
	return keys, rest
}

// pushInto adds conditions over r's row to r: into the condition of an
// inner join, or as a filter.
// A comma join below another join gets no WHERE of its own: it is planned
// with the conditions it is given here.
func (q *queryPlanner) pushInto(r Rel, conds []expr.Expr) (Rel, error) {
	if j, ok := r.(joinRel); ok {
		sp := *j.joinSpec()
		if sp.kind == eddy.InnerJoin && sp.asOf == nil && (len(conds) > 0 || sp.cross) {
			sp.conds = append(append([]expr.Expr(nil), sp.conds...), conds...)
			sp.cross = false
			return q.planJoin(&sp)
		}
	}
	if len(conds) == 0 {
		return r, nil
	}
	rt := r.Schema()
	projs := make([]expr.Expr, rt.Len())
	for i, f := range rt.Fields() {
		projs[i] = &expr.Column{Index: i, Name: f.Name, T: f.Type}
	}
	return newCalc(r, projs, rt.Names(), q.conjoin(conds)), nil
}

// planJoin chooses how a join runs and returns its relation. Conditions
// on one input are pushed into it where that keeps the join's meaning (an
// inner join's, and the padded side's of an outer join).
func (q *queryPlanner) planJoin(sp *joinSpec) (Rel, error) {
	nl := sp.width()
	var lpush, rpush, rest []expr.Expr
	for _, c := range sp.conds {
		switch sideOf(c, nl) {
		case 1:
			if (sp.kind == eddy.InnerJoin || sp.kind == eddy.RightJoin) && !hasVolatile(c) {
				lpush = append(lpush, c)
				continue
			}
		case 2:
			if (sp.kind == eddy.InnerJoin || sp.kind == eddy.LeftJoin) && sp.asOf == nil && !hasVolatile(c) {
				rpush = append(rpush, shiftColumns(c, -nl))
				continue
			}
		}
		rest = append(rest, c)
	}
	if len(lpush)+len(rpush) > 0 || !sp.cross && (isCross(sp.left) || isCross(sp.right)) {
		out := *sp
		var err error
		if out.left, err = q.pushInto(sp.left, lpush); err != nil {
			return nil, err
		}
		if out.right, err = q.pushInto(sp.right, rpush); err != nil {
			return nil, err
		}
		out.conds = rest
		sp = &out
	}
	keys, residual := splitJoinCondition(sp.conds, nl)
	if sp.asOf != nil {
		return q.planTemporalJoin(sp, keys, residual)
	}
	if r, ok, err := q.planIntervalJoin(sp, keys, residual); ok || err != nil {
		return r, err
	}
	if r, ok, err := q.planWindowJoin(sp, keys, residual); ok || err != nil {
		return r, err
	}
	r := q.newRegularJoin(sp, keys, residual)
	if len(keys) == 0 && !sp.cross {
		return nil, r.noKeyError(q)
	}
	return r, nil
}

// isCross tells whether r is a comma or CROSS join waiting for its
// condition.
func isCross(r Rel) bool {
	j, ok := r.(joinRel)
	return ok && j.joinSpec().cross
}

// joinWhere plans the WHERE condition of a SELECT over an inner join into
// the join (Flink's FilterIntoJoin): a comma join takes its equalities
// from it. It returns the relation and the condition left for the Calc
// above it.
func (q *queryPlanner) joinWhere(in Rel, cond expr.Expr) (Rel, expr.Expr, error) {
	j, ok := in.(joinRel)
	if !ok {
		return in, cond, nil
	}
	sp := *j.joinSpec()
	if sp.kind != eddy.InnerJoin || sp.asOf != nil || cond == nil && !sp.cross {
		return in, cond, nil
	}
	if cond != nil {
		sp.conds = append(append([]expr.Expr(nil), sp.conds...), conjuncts(cond)...)
		cond = nil
	}
	sp.cross = false
	r, err := q.planJoin(&sp)
	return r, cond, err
}

// hasVolatile tells whether e calls a non-deterministic function (RAND,
// UUID, NOW), which must run where it is written.
func hasVolatile(e expr.Expr) bool {
	found := false
	expr.Walk(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.Call); ok && c.Fn != nil && c.Fn.Volatile {
			found = true
		}
		return !found
	})
	return found
}

// usingColumn is a column of USING or NATURAL: its index in the left and
// right rows and types.
type usingColumn struct {
	name        string
	left, right int
	lt, rt      types.Type
}

// usingColumns resolves USING (cols) or the common columns of a NATURAL
// join.
func (q *queryPlanner) usingColumns(n *parser.Join, lsc, rsc *scope) ([]usingColumn, error) {
	lrt, rrt := lsc.rowType(), rsc.rowType()
	var names []string
	var poss []parser.Pos
	if n.Natural {
		for _, f := range lsc.fieldNames() {
			if rsc.count(f) > 0 {
				names = append(names, f)
				poss = append(poss, n.Pos)
			}
		}
		if len(names) == 0 {
			return nil, q.errorf(n.Pos, "NATURAL JOIN: the tables have no column name in common; join them ON a condition")
		}
	} else {
		for _, id := range n.Using {
			names = append(names, id.Name)
			poss = append(poss, id.Pos)
		}
	}
	var out []usingColumn
	for i, name := range names {
		li, err := q.usingIndex(lsc, name, poss[i], "left")
		if err != nil {
			return nil, err
		}
		ri, err := q.usingIndex(rsc, name, poss[i], "right")
		if err != nil {
			return nil, err
		}
		out = append(out, usingColumn{name: name, left: li, right: ri, lt: lrt.FieldType(li), rt: rrt.FieldType(ri)})
	}
	return out, nil
}

func (s *scope) fieldNames() []string {
	var out []string
	for _, e := range s.entries {
		out = append(out, e.rt.Names()...)
	}
	return out
}

func (s *scope) count(name string) int {
	n := 0
	for _, e := range s.entries {
		if _, ok := e.rt.Index(name); ok {
			n++
		}
	}
	return n
}

func (q *queryPlanner) usingIndex(sc *scope, name string, pos parser.Pos, side string) (int, error) {
	for _, e := range sc.entries {
		if i, ok := e.rt.Index(name); ok {
			if sc.count(name) > 1 {
				return 0, q.errorf(pos, "USING column %s is a column of more than one table on the %s side", name, side)
			}
			return e.offset + i, nil
		}
	}
	return 0, q.errorf(pos, "USING column %s is not a column of the %s side; its columns are %s", name, side, strings.Join(sc.fieldNames(), ", "))
}

// usingOutput gives a USING or NATURAL join its columns as SQL does: the
// join columns once (the left one's value, the right one's for a RIGHT
// join, COALESCE of both for a FULL join), then the other columns of each
// side. The join columns are unqualified names only.
func (q *queryPlanner) usingOutput(r Rel, sp *joinSpec, using []usingColumn, lsc, rsc *scope, outer *scope) (Rel, *scope, error) {
	rt := r.Schema()
	nl := scopeWidth(lsc)
	col := func(i int) expr.Expr {
		return &expr.Column{Index: i, Name: rt.Field(i).Name, T: rt.FieldType(i)}
	}
	var projs []expr.Expr
	var names []string
	var ufs []types.Field
	usedL, usedR := map[int]bool{}, map[int]bool{}
	for _, u := range using {
		var e expr.Expr
		switch sp.kind {
		case eddy.RightJoin:
			e = col(nl + u.right)
		case eddy.FullJoin:
			var err error
			if e, err = q.call("COALESCE", col(u.left), col(nl+u.right)); err != nil {
				return nil, nil, q.errorf(sp.pos, "USING column %s: %v", u.name, err)
			}
		default:
			e = col(u.left)
		}
		projs = append(projs, e)
		names = append(names, u.name)
		ufs = append(ufs, types.F(u.name, e.Type()))
		usedL[u.left], usedR[u.right] = true, true
	}
	sc := &scope{outer: outer}
	sc.add("", types.MustRowType(ufs...))
	side := func(s *scope, used map[int]bool, base int) {
		for _, e := range s.entries {
			var fs []types.Field
			for i, f := range e.rt.Fields() {
				if used[e.offset+i] {
					continue
				}
				c := col(base + e.offset + i)
				projs = append(projs, c)
				names = append(names, f.Name)
				fs = append(fs, types.F(f.Name, c.Type()))
			}
			if len(fs) > 0 {
				sc.add(e.qualifier, types.MustRowType(fs...))
			}
		}
	}
	side(lsc, usedL, 0)
	side(rsc, usedR, nl)
	return newCalc(r, projs, uniqueNames(names), nil), sc, nil
}

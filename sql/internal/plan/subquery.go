package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// Subqueries of a SELECT are planned as joins, as Flink's planner removes
// them (its SubQueryRemoveRule, then the semi and anti join rules):
//
//   - x IN (SELECT b ...) and EXISTS (SELECT ...), conditions of WHERE
//     alone or joined to the others with AND, are left semi joins of the
//     query's rows with the subquery's, keyed by x = b and by the
//     equalities of a correlated subquery's WHERE (inner.x = outer.y); NOT
//     IN and NOT EXISTS are left anti joins. A correlated subquery is one
//     of the form SELECT ... FROM ... [WHERE ...]: the conditions of its
//     WHERE that read only its own columns filter its rows, the others
//     (those that read the outer query's columns) are the join condition.
//   - x NOT IN (SELECT b ...) is NULL, and drops the row, when x is NULL
//     and the subquery has rows, or when b is NULL in a row of the
//     subquery and no row equals x. If x or b can be NULL, the anti join on
//     x = b is followed by an anti join with the subquery's row counts
//     (COUNT(*), COUNT(b)) that drops those rows; it runs on one subtask.
//   - A scalar subquery, (SELECT MAX(x) FROM t) in WHERE or in the select
//     list of a query that does not aggregate, is a left join of the
//     query's rows with the subquery's single row on a constant key (on
//     one subtask, as Flink runs its nested-loop join with a singleton),
//     its value NULL while the subquery has no row.
//
// A subquery elsewhere (under OR, in a join's ON, in the select list of an
// aggregating query) is refused with an error that says how to write it.

// subqueries are the subqueries of a SELECT that the planner turns into
// joins.
type subqueries struct {
	// conjs are the IN and EXISTS subqueries that are conjuncts of WHERE,
	// possibly negated.
	conjs []subqueryConjunct
	// scalarConds are the conjuncts of WHERE that read scalar subqueries.
	scalarConds []parser.Expr
	// scalars are the scalar subqueries of WHERE and of the select list.
	scalars []*parser.Subquery
}

// subqueryConjunct is [NOT] EXISTS (query) or x [NOT] IN (query).
type subqueryConjunct struct {
	pos   parser.Pos
	anti  bool
	in    *parser.InQuery // nil for EXISTS
	query *parser.Query
}

// splitSubqueries takes the subqueries the planner turns into joins out of
// the WHERE clause of n; it returns the rest of the WHERE clause (n.Where
// itself if nothing was taken, nil if nothing is left). With items, the
// scalar subqueries of the select list are taken too, unless the query
// aggregates.
func splitSubqueries(n *parser.Select, items bool) (parser.Expr, *subqueries) {
	sq := &subqueries{}
	var rest []parser.Expr
	for _, c := range whereConjuncts(n.Where) {
		if sc, ok := subqueryConjunctOf(c); ok {
			sq.conjs = append(sq.conjs, sc)
			continue
		}
		if s, other := scalarSubqueries(c); len(s) > 0 && !other {
			sq.scalarConds = append(sq.scalarConds, c)
			sq.scalars = append(sq.scalars, s...)
			continue
		}
		rest = append(rest, c)
	}
	if items && len(n.GroupBy) == 0 && n.Having == nil && !hasAggregate(n) && !hasOver(n) {
		for _, it := range n.Items {
			if it.Expr != nil {
				s, _ := scalarSubqueries(it.Expr)
				sq.scalars = append(sq.scalars, s...)
			}
		}
	}
	if len(sq.conjs) == 0 && len(sq.scalarConds) == 0 {
		return n.Where, sq
	}
	var where parser.Expr
	for _, c := range rest {
		if where == nil {
			where = c
		} else {
			where = &parser.Binary{Pos: c.Position(), Op: "AND", L: where, R: c}
		}
	}
	return where, sq
}

// whereConjuncts splits a condition at its top-level ANDs.
func whereConjuncts(e parser.Expr) []parser.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*parser.Binary); ok && strings.EqualFold(b.Op, "AND") {
		return append(whereConjuncts(b.L), whereConjuncts(b.R)...)
	}
	return []parser.Expr{e}
}

// subqueryConjunctOf recognizes [NOT] EXISTS and x [NOT] IN (query) under
// any number of NOTs.
func subqueryConjunctOf(c parser.Expr) (subqueryConjunct, bool) {
	not, x := false, c
	for {
		u, ok := x.(*parser.Unary)
		if !ok || !strings.EqualFold(u.Op, "NOT") {
			break
		}
		not, x = !not, u.X
	}
	switch x := x.(type) {
	case *parser.Exists:
		return subqueryConjunct{pos: c.Position(), anti: not, query: x.Query}, true
	case *parser.InQuery:
		return subqueryConjunct{pos: c.Position(), anti: not != x.Not, in: x, query: x.Query}, true
	}
	return subqueryConjunct{}, false
}

// scalarSubqueries returns the scalar subqueries of e, outside subqueries,
// and whether e has an EXISTS or IN subquery too.
func scalarSubqueries(e parser.Expr) (out []*parser.Subquery, other bool) {
	walkSyntax(e, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.Subquery:
			out = append(out, n)
			return false
		case *parser.Exists, *parser.InQuery:
			other = true
			return false
		}
		return true
	})
	return out, other
}

// subquery is the expression analyzers' hook for subqueries: a scalar
// subquery planned as a join reads its column; the others are refused
// where the planner does not turn them into joins.
func (q *queryPlanner) subquery(n parser.Expr) (expr.Expr, error) {
	switch n := n.(type) {
	case *parser.Subquery:
		if c, ok := q.scalars[n]; ok {
			return c, nil
		}
		return nil, q.errorf(n.Pos, "a scalar subquery is supported in WHERE and in the select list of a query without GROUP BY, aggregates or OVER (eddy joins its single row); here, compute it in a subquery of FROM and join that")
	case *parser.Exists:
		return nil, q.errorf(n.Pos, "EXISTS is supported as a condition of WHERE, alone or joined to the others with AND (eddy plans it as a semi join); under OR or in a select list, LEFT JOIN (SELECT DISTINCT the correlated columns FROM ...) s ON them and test one of them IS NOT NULL")
	case *parser.InQuery:
		return nil, q.errorf(n.Pos, "IN (SELECT ...) is supported as a condition of WHERE, alone or joined to the others with AND (eddy plans it as a semi join); under OR or in a select list, LEFT JOIN (SELECT DISTINCT b FROM ...) s ON x = s.b and test s.b IS NOT NULL")
	}
	return nil, q.errorf(n.Position(), "unsupported subquery %s", n)
}

// planSubqueries joins the query's rows in with the subqueries of its
// WHERE clause and select list: in is the FROM clause's relation, sc its
// scope, cond the rest of WHERE. It returns the relation (in's columns,
// then one column per scalar subquery) and the condition left for the
// Calc above it, which may read the scalar subqueries' columns.
func (q *queryPlanner) planSubqueries(sq *subqueries, in Rel, sc *scope, cond expr.Expr) (Rel, expr.Expr, error) {
	if sq == nil || len(sq.conjs) == 0 && len(sq.scalars) == 0 {
		return in, cond, nil
	}
	if in.Schema().Len() != scopeWidth(sc) {
		return nil, nil, fmt.Errorf("sql: a query with subqueries reads %d columns through a scope of %d", in.Schema().Len(), scopeWidth(sc))
	}
	// The other conditions filter the rows before they enter the joins.
	in, cond = filterRel(in, cond), nil
	for _, c := range sq.conjs {
		var err error
		if in, err = q.subqueryConjunct(c, in, sc); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range sq.scalars {
		var err error
		if in, err = q.scalarJoin(s, in, sc); err != nil {
			return nil, nil, err
		}
	}
	var conds []expr.Expr
	for _, c := range sq.scalarConds {
		e, err := q.condition(q.analyzer(sc), c, "WHERE")
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, e)
	}
	return in, q.conjoin(conds), nil
}

// filterRel returns r filtered by cond (r itself for none).
func filterRel(r Rel, cond expr.Expr) Rel {
	if cond == nil {
		return r
	}
	return newCalc(r, identityProjs(r.Schema()), r.Schema().Names(), cond)
}

func identityProjs(rt *types.RowType) []expr.Expr {
	projs := make([]expr.Expr, rt.Len())
	for i, f := range rt.Fields() {
		projs[i] = &expr.Column{Index: i, Name: f.Name, T: f.Type}
	}
	return projs
}

// subqueryRows is the right input of a subquery's join, before it is
// narrowed to the columns the join reads.
type subqueryRows struct {
	rel Rel
	// items and names are the subquery's select list over rel's row (for
	// IN).
	items []expr.Expr
	names []string
	// conds are the correlated conditions, over the pair of rows the join
	// reads: the outer query's row, then rel's.
	conds      []expr.Expr
	correlated bool
}

// simpleSelect returns the SELECT of a query that the planner decorrelates:
// SELECT [DISTINCT] ... FROM ... [WHERE ...], without aggregation, set
// operations, ORDER BY or LIMIT.
func simpleSelect(n *parser.Query) (*parser.Select, bool) {
	if len(n.With) > 0 || len(n.OrderBy) > 0 || n.Limit != nil || n.Offset != nil {
		return nil, false
	}
	sel, ok := n.Body.(*parser.Select)
	if !ok || sel.From == nil || len(sel.GroupBy) > 0 || sel.Having != nil || len(sel.Windows) > 0 || hasAggregate(sel) || hasOver(sel) {
		return nil, false
	}
	return sel, true
}

// subqueryRows plans the subquery of IN or EXISTS whose outer query reads
// the nl columns of sc. A query of the simple form is decorrelated: its
// FROM clause filtered by the conditions of its WHERE that read only its
// own columns, the others kept as the join's. Another query is planned
// whole; it cannot read the outer query's columns.
func (q *queryPlanner) subqueryRows(n *parser.Query, sc *scope, nl int, wantItems bool) (*subqueryRows, error) {
	sel, ok := simpleSelect(n)
	if !ok {
		r, err := q.query(n, sc)
		if err != nil {
			return nil, err
		}
		out := &subqueryRows{rel: r}
		if wantItems {
			out.items = identityProjs(r.Schema())
			out.names = r.Schema().Names()
		}
		return out, nil
	}
	rel, isc, err := q.from(sel.From, sc)
	if err != nil {
		return nil, err
	}
	where, sq := splitSubqueries(sel, wantItems)
	out := &subqueryRows{}
	var inner []expr.Expr
	if where != nil {
		cs := &corrScope{inner: isc, outer: sc, shift: nl}
		a := q.analyzer(nil)
		a.Scope = cs
		cond, err := q.condition(a, where, "WHERE")
		if err != nil {
			return nil, err
		}
		for _, c := range conjuncts(cond) {
			if s := sideOf(c, nl); s == 0 || s == 2 {
				inner = append(inner, shiftColumns(c, -nl))
			} else {
				out.conds = append(out.conds, c)
			}
		}
		out.correlated = cs.correlated
	}
	rel, rest, err := q.joinWhere(rel, q.conjoin(inner))
	if err != nil {
		return nil, err
	}
	if rel, rest, err = q.planSubqueries(sq, rel, isc, rest); err != nil {
		return nil, err
	}
	out.rel = filterRel(rel, rest)
	if wantItems {
		if out.items, out.names, err = q.selectItems(q.analyzer(isc), sel.Items, isc); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// corrScope resolves the columns of a correlated subquery's WHERE clause
// over the pair of rows its join reads: the subquery's own columns (after
// the outer row's shift columns) first, the outer query's if the subquery
// has no column of the name.
type corrScope struct {
	inner, outer *scope
	shift        int
	// correlated is set once a name resolves to the outer query.
	correlated bool
}

func (c *corrScope) Column(parts []string) (expr.Expr, int, error) {
	if !c.inner.resolves(parts) && c.outer.resolves(parts) {
		c.correlated = true
		return c.outer.Column(parts)
	}
	e, used, err := c.inner.Column(parts)
	if err != nil {
		return nil, 0, err
	}
	return shiftColumns(e, c.shift), used, nil
}

// resolves tells whether the scope has the column parts names (q.a or a).
func (s *scope) resolves(parts []string) bool {
	if len(parts) >= 2 {
		for _, e := range s.entries {
			if e.qualifier == parts[0] {
				return true
			}
		}
	}
	return s.count(parts[0]) > 0
}

// outerColumnError is the error of a name the scope does not have but an
// enclosing query's does: a correlated reference where the planner does
// not decorrelate.
func (s *scope) outerColumnError(parts []string) error {
	for o := s.outer; o != nil; o = o.outer {
		if o.resolves(parts) {
			return fmt.Errorf("%s is a column of the outer query: eddy decorrelates IN and EXISTS subqueries of the form SELECT ... FROM ... WHERE ..., "+
				"whose WHERE reads the outer query's columns (WHERE inner.x = outer.y); write other correlated subqueries as joins "+
				"(a correlated scalar subquery as a join with a GROUP BY of its table on the correlated columns)", strings.Join(parts, "."))
		}
	}
	return nil
}

// subqueryConjunct joins in with the subquery of [NOT] IN or [NOT] EXISTS:
// a left semi join, or a left anti join for the negations, whose output is
// in's rows.
func (q *queryPlanner) subqueryConjunct(c subqueryConjunct, in Rel, sc *scope) (Rel, error) {
	nl := in.Schema().Len()
	what := "EXISTS"
	if c.in != nil {
		what = "IN"
	}
	if c.anti {
		what = "NOT " + what
	}
	sub, err := q.subqueryRows(c.query, sc, nl, c.in != nil)
	if err != nil {
		return nil, err
	}
	var lhs []expr.Expr
	if c.in != nil {
		xs := []parser.Expr{c.in.X}
		if r, ok := c.in.X.(*parser.RowExpr); ok && len(sub.items) > 1 {
			xs = r.Fields
		}
		if len(xs) != len(sub.items) {
			return nil, q.errorf(c.in.Pos, "%s compares %d value(s) with the %d columns of its subquery: select as many columns as there are values", what, len(xs), len(sub.items))
		}
		a := q.analyzer(sc)
		for _, x := range xs {
			e, err := a.Expr(x)
			if err != nil {
				return nil, err
			}
			lhs = append(lhs, e)
		}
	}
	right, conds := narrowSubquery(sub, nl)
	for i, l := range lhs {
		t := sub.items[i].Type()
		eq, err := q.call("=", l, &expr.Column{Index: nl + i, Name: right.Schema().Field(i).Name, T: t})
		if err != nil {
			return nil, q.errorf(c.in.Pos, "%s compares %s of type %s with the subquery's column %s of type %s: %v; CAST one of them", what, l, l.Type(), right.Schema().Field(i).Name, t, err)
		}
		conds = append(conds, eq)
	}
	kind := eddy.LeftSemiJoin
	if c.anti {
		kind = eddy.LeftAntiJoin
	}
	if kind == eddy.LeftSemiJoin {
		// A condition on the outer row alone filters it before the join.
		var left, rest []expr.Expr
		for _, cd := range conds {
			if sideOf(cd, nl) == 1 && !hasVolatile(cd) {
				left = append(left, cd)
			} else {
				rest = append(rest, cd)
			}
		}
		in, conds = filterRel(in, q.conjoin(left)), rest
	}
	j := q.newSubqueryJoin(kind, in, right, conds)
	both := false
	for _, cd := range j.residual {
		both = both || sideOf(cd, nl) == 3
	}
	if len(j.keys) == 0 && both {
		return nil, q.errorf(c.pos, "the %s subquery reads the outer query's columns without an equality between them and its own (where=[%s]): eddy runs it as a join keyed by such equalities, "+
			"and a join without them would keep both inputs whole on one subtask; correlate it with an equality (WHERE inner.x = outer.y)", what, joinWhereText(j.keys, j.residual, j.pair))
	}
	if kind == eddy.LeftAntiJoin && c.in != nil {
		return q.notInNulls(c, j, lhs, sub)
	}
	return j, nil
}

// narrowSubquery projects the subquery's rows to the columns its join
// reads: the select list (for IN), then the columns the correlated
// conditions read; an uncorrelated EXISTS reads a constant TRUE. It
// returns the join's right input and the conditions over the new pair of
// rows.
func narrowSubquery(sub *subqueryRows, nl int) (Rel, []expr.Expr) {
	rt := sub.rel.Schema()
	projs := append([]expr.Expr(nil), sub.items...)
	names := append([]string(nil), sub.names...)
	pos := map[int]int{}
	for _, c := range sub.conds {
		for _, ci := range expr.Columns(c) {
			if ci < nl {
				continue
			}
			if _, ok := pos[ci-nl]; !ok {
				f := rt.Field(ci - nl)
				pos[ci-nl] = len(projs)
				projs = append(projs, &expr.Column{Index: ci - nl, Name: f.Name, T: f.Type})
				names = append(names, f.Name)
			}
		}
	}
	if len(projs) == 0 {
		projs = []expr.Expr{&expr.Literal{V: true, T: types.Boolean().NotNull(), Text: "TRUE"}}
		names = []string{"$f0"}
	}
	var conds []expr.Expr
	for _, c := range sub.conds {
		conds = append(conds, expr.Rewrite(c, func(x expr.Expr) expr.Expr {
			if col, ok := x.(*expr.Column); ok && col.Index >= nl {
				cc := *col
				cc.Index = nl + pos[col.Index-nl]
				return &cc
			}
			return x
		}))
	}
	same := len(projs) == rt.Len()
	for i, e := range projs {
		if col, ok := e.(*expr.Column); !same || !ok || col.Index != i {
			same = false
			break
		}
	}
	if same {
		return sub.rel, conds
	}
	return newCalc(sub.rel, projs, uniqueNames(names), nil), conds
}

// notInNulls completes the anti join j of x NOT IN (SELECT b ...) with the
// three-valued logic of NOT IN: if the subquery has rows, a row whose x is
// NULL is not kept (x = b is NULL for every b), nor is any row if some b is
// NULL and no b equals x. When x or b can be NULL, j is followed by an
// anti join with the subquery's row counts, COUNT(*) and COUNT(b), on a
// constant key, which drops the rows for which c > 0 AND (x IS NULL OR
// cb < c).
func (q *queryPlanner) notInNulls(c subqueryConjunct, j *SubqueryJoinRel, lhs []expr.Expr, sub *subqueryRows) (Rel, error) {
	nullable := false
	for i, l := range lhs {
		nullable = nullable || l.Type().IsNullable() || sub.items[i].Type().IsNullable()
	}
	if !nullable {
		return j, nil
	}
	if len(lhs) > 1 {
		return nil, q.errorf(c.in.Pos, "NOT IN of several columns that can be NULL is not supported: declare the columns NOT NULL, "+
			"or write NOT EXISTS (SELECT * FROM ... WHERE b1 = x1 AND b2 = x2), which also keeps the rows whose values are NULL")
	}
	if sub.correlated || j.Right.Schema().Len() != 1 {
		return nil, q.errorf(c.in.Pos, "NOT IN of a correlated subquery over a column that can be NULL is not supported: declare the columns NOT NULL, "+
			"or write NOT EXISTS (SELECT * FROM ... WHERE b = x AND ...), which also keeps the rows whose x is NULL")
	}
	nl := j.Left.Schema().Len()
	counts, err := q.derived(c.in.Pos, "SELECT COUNT(*) AS c, COUNT(b) AS cb FROM __eddy_subquery", derivedInput{"__eddy_subquery", j.Right, []string{"b"}})
	if err != nil {
		return nil, err
	}
	bigint := types.BigInt().NotNull()
	cnt := &expr.Column{Index: nl, Name: "c", T: bigint}
	cntB := &expr.Column{Index: nl + 1, Name: "cb", T: bigint}
	cond, err := q.call(">", cnt, &expr.Literal{V: int64(0), T: bigint, Text: "0"})
	if err != nil {
		return nil, err
	}
	var unknown []expr.Expr
	if lhs[0].Type().IsNullable() {
		e, err := q.call("IS NULL", lhs[0])
		if err != nil {
			return nil, err
		}
		unknown = append(unknown, e)
	}
	if sub.items[0].Type().IsNullable() {
		e, err := q.call("<", cntB, cnt)
		if err != nil {
			return nil, err
		}
		unknown = append(unknown, e)
	}
	or := unknown[0]
	for _, u := range unknown[1:] {
		if or, err = q.call("OR", or, u); err != nil {
			return nil, err
		}
	}
	if cond, err = q.call("AND", cond, or); err != nil {
		return nil, err
	}
	return q.newSubqueryJoin(eddy.LeftAntiJoin, j, counts, []expr.Expr{cond}), nil
}

// derivedInput is a relation the planner's own query reads as a WITH
// query of the name, its columns renamed as cols says (if it says).
type derivedInput struct {
	name string
	rel  Rel
	cols []string
}

// derived plans a query the planner writes over relations it has planned.
// Errors point at pos in the user's text.
func (q *queryPlanner) derived(pos parser.Pos, src string, inputs ...derivedInput) (Rel, error) {
	st, err := parser.ParseStatement(src)
	if err != nil {
		return nil, q.errorf(pos, "sql: the planner's query %q: %v", src, err)
	}
	qs, ok := st.(*parser.QueryStatement)
	if !ok {
		return nil, q.errorf(pos, "sql: the planner's query %q is not a query", src)
	}
	defs := map[string]*cteDef{}
	for _, in := range inputs {
		defs[in.name] = &cteDef{rel: in.rel, cols: in.cols}
	}
	dq := &queryPlanner{cat: q.cat, src: src, views: q.views, ctes: []map[string]*cteDef{defs}}
	r, err := dq.query(qs.Query, nil)
	if err != nil {
		return nil, q.errorf(pos, "%v", err)
	}
	return r, nil
}

// scalarJoin joins in with the single row of a scalar subquery: a left
// join on a constant key, whose last column is the subquery's value (NULL
// while it has no row). The subquery's node then reads that column.
func (q *queryPlanner) scalarJoin(s *parser.Subquery, in Rel, sc *scope) (Rel, error) {
	r, err := q.query(s.Query, sc)
	if err != nil {
		return nil, err
	}
	if n := r.Schema().Len(); n != 1 {
		return nil, q.errorf(s.Pos, "a scalar subquery gives one column; this one gives %d", n)
	}
	if !atMostOneRow(r) {
		return nil, q.errorf(s.Pos, "a scalar subquery must give at most one row, and eddy cannot tell that this one does: "+
			"it takes an aggregate without GROUP BY (SELECT MAX(x) FROM t), ORDER BY ... LIMIT 1 or a single VALUES row; join other subqueries in FROM")
	}
	nl := in.Schema().Len()
	j := q.newSubqueryJoin(eddy.LeftJoin, in, r, nil)
	f := j.rt.Field(nl)
	if q.scalars == nil {
		q.scalars = map[*parser.Subquery]*expr.Column{}
	}
	q.scalars[s] = &expr.Column{Index: nl, Name: f.Name, T: f.Type}
	return j, nil
}

// atMostOneRow tells whether r never holds more than one row at a time.
func atMostOneRow(r Rel) bool {
	switch r := r.(type) {
	case *CalcRel:
		return atMostOneRow(r.Input)
	case *DistinctRel:
		return atMostOneRow(r.Input)
	case *AggregateRel:
		return r.Keys == 0
	case *ValuesRel:
		return len(r.Rows) <= 1
	case *RankRel:
		return len(r.PartitionBy) == 0 && r.End <= r.Start
	case *SubqueryJoinRel:
		return r.Kind != eddy.LeftJoin && atMostOneRow(r.Left)
	}
	return false
}

package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// queryPlanner resolves the queries of one statement into relations.
type queryPlanner struct {
	cat *Catalog
	src string
	// ctes are the WITH queries in scope, innermost last.
	ctes []map[string]*cteDef
	// views are the views being expanded, to refuse a view that reads
	// itself.
	views map[string]bool
	// scalars are the columns that hold the values of the scalar
	// subqueries planned as joins (subquery.go).
	scalars map[*parser.Subquery]*expr.Column
}

type cteDef struct {
	rel  Rel
	cols []string
}

func newQueryPlanner(cat *Catalog, src string) *queryPlanner {
	return &queryPlanner{cat: cat, src: src, views: map[string]bool{}}
}

func (q *queryPlanner) errorf(pos parser.Pos, format string, args ...any) error {
	return parser.ErrorAt(q.src, pos, fmt.Sprintf(format, args...))
}

// query resolves a query.
func (q *queryPlanner) query(n *parser.Query, outer *scope) (Rel, error) {
	if len(n.With) > 0 {
		defs := map[string]*cteDef{}
		q.ctes = append(q.ctes, defs)
		defer func() { q.ctes = q.ctes[:len(q.ctes)-1] }()
		for _, c := range n.With {
			r, err := q.query(c.Query, outer)
			if err != nil {
				return nil, err
			}
			d := &cteDef{rel: r}
			for _, col := range c.Columns {
				d.cols = append(d.cols, col.Name)
			}
			if len(d.cols) > 0 && len(d.cols) != r.Schema().Len() {
				return nil, q.errorf(c.Pos, "%s names %d columns but its query gives %d", c.Name.Name, len(d.cols), r.Schema().Len())
			}
			defs[c.Name.Name] = d
		}
	}
	r, err := q.body(n.Body, outer)
	if err != nil {
		return nil, err
	}
	if len(n.OrderBy) > 0 || n.Limit != nil || n.Offset != nil {
		return q.orderLimit(n, r)
	}
	return r, nil
}

func (q *queryPlanner) body(n parser.QueryBody, outer *scope) (Rel, error) {
	switch n := n.(type) {
	case *parser.Select:
		return q.selectRel(n, outer)
	case *parser.Query:
		return q.query(n, outer)
	case *parser.SetOp:
		return q.setOp(n, outer)
	case *parser.Values:
		return q.values(n)
	}
	return nil, q.errorf(n.Position(), "unsupported query %s", n)
}

// scope is the columns a clause of a SELECT sees: one entry per item of
// its FROM clause, each under its qualifier (alias or table name).
type scope struct {
	entries []scopeEntry
	// outer is the scope of an enclosing query.
	outer *scope
}

type scopeEntry struct {
	qualifier string
	rt        *types.RowType
	// offset is the index of the entry's first column in the row the
	// expressions read.
	offset int
}

func (s *scope) add(qualifier string, rt *types.RowType) {
	off := 0
	if n := len(s.entries); n > 0 {
		last := s.entries[n-1]
		off = last.offset + last.rt.Len()
	}
	s.entries = append(s.entries, scopeEntry{qualifier: qualifier, rt: rt, offset: off})
}

// Column implements expr.Scope: a, q.a, and the fields of ROW columns
// after them.
func (s *scope) Column(parts []string) (expr.Expr, int, error) {
	if len(parts) >= 2 {
		for _, e := range s.entries {
			if e.qualifier == parts[0] {
				i, ok := e.rt.Index(parts[1])
				if !ok {
					return nil, 0, fmt.Errorf("%s has no column %s; its columns are %s", parts[0], parts[1], strings.Join(e.rt.Names(), ", "))
				}
				f := e.rt.Field(i)
				return &expr.Column{Index: e.offset + i, Name: f.Name, T: f.Type}, 2, nil
			}
		}
	}
	var found []expr.Expr
	var quals []string
	for _, e := range s.entries {
		if i, ok := e.rt.Index(parts[0]); ok {
			f := e.rt.Field(i)
			found = append(found, &expr.Column{Index: e.offset + i, Name: f.Name, T: f.Type})
			quals = append(quals, e.qualifier)
		}
	}
	switch len(found) {
	case 1:
		return found[0], 1, nil
	case 0:
		if err := s.outerColumnError(parts); err != nil {
			return nil, 0, err
		}
		var all []string
		var caseHint string
		for _, e := range s.entries {
			for _, n := range e.rt.Names() {
				all = append(all, n)
				if strings.EqualFold(n, parts[0]) {
					caseHint = fmt.Sprintf(" (names are case-sensitive: did you mean %s?)", n)
				}
			}
		}
		if caseHint != "" {
			return nil, 0, fmt.Errorf("unknown column %s%s", parts[0], caseHint)
		}
		if len(all) == 0 {
			return nil, 0, fmt.Errorf("unknown column %s: the query reads no table", parts[0])
		}
		return nil, 0, fmt.Errorf("unknown column %s; the columns in scope are %s", parts[0], strings.Join(all, ", "))
	}
	return nil, 0, fmt.Errorf("column %s is ambiguous: it is a column of %s; qualify it", parts[0], strings.Join(quals, " and of "))
}

// rowType returns the type of the row the scope's expressions read.
func (s *scope) rowType() *types.RowType {
	var fs []types.Field
	for _, e := range s.entries {
		fs = append(fs, e.rt.Fields()...)
	}
	return types.MustRowType(dedupNames(fs)...)
}

// dedupNames renames repeated field names (a join of two tables with a
// column of one name) so that a row type can hold them: the second is
// name0, as Flink's planner names it.
func dedupNames(fs []types.Field) []types.Field {
	seen := map[string]bool{}
	out := make([]types.Field, len(fs))
	for i, f := range fs {
		name := f.Name
		for k := 0; seen[name]; k++ {
			name = fmt.Sprintf("%s%d", f.Name, k)
		}
		seen[name] = true
		out[i] = types.F(name, f.Type)
	}
	return out
}

// from resolves a FROM item into a relation and its scope.
func (q *queryPlanner) from(n parser.TableExpr, outer *scope) (Rel, *scope, error) {
	sc := &scope{outer: outer}
	switch n := n.(type) {
	case *parser.TableName:
		r, qual, err := q.tableName(n)
		if err != nil {
			return nil, nil, err
		}
		r, qual, err = q.alias(r, qual, n.Alias)
		if err != nil {
			return nil, nil, err
		}
		sc.add(qual, r.Schema())
		return r, sc, nil
	case *parser.DerivedTable:
		if n.Lateral {
			return nil, nil, q.errorf(n.Pos, "LATERAL subqueries are not supported; write a join")
		}
		r, err := q.query(n.Query, outer)
		if err != nil {
			return nil, nil, err
		}
		r, qual, err := q.alias(r, "", n.Alias)
		if err != nil {
			return nil, nil, err
		}
		sc.add(qual, r.Schema())
		return r, sc, nil
	case *parser.ParenTable:
		r, inner, err := q.from(n.Table, outer)
		if err != nil {
			return nil, nil, err
		}
		if n.Alias == nil {
			return r, inner, nil
		}
		r, qual, err := q.alias(r, "", n.Alias)
		if err != nil {
			return nil, nil, err
		}
		sc.add(qual, r.Schema())
		return r, sc, nil
	case *parser.Join:
		return q.join(n, outer)
	case *parser.TableFunction:
		return q.tableFunction(n, outer)
	case *parser.Unnest:
		return nil, nil, q.errorf(n.Pos, "UNNEST is only supported as CROSS JOIN UNNEST(...) after a table")
	}
	return nil, nil, q.errorf(n.Position(), "unsupported FROM item %s", n)
}

// tableName resolves a table, view or WITH query by name.
func (q *queryPlanner) tableName(n *parser.TableName) (Rel, string, error) {
	name := n.Name.Last().Name
	if len(n.Name.Parts) == 1 {
		for i := len(q.ctes) - 1; i >= 0; i-- {
			if d, ok := q.ctes[i][name]; ok {
				r, err := renameColumns(d.rel, d.cols)
				return r, name, err
			}
		}
	}
	if n.SystemTime != nil {
		return nil, "", q.errorf(n.SystemTime.Position(), "FOR SYSTEM_TIME AS OF is only supported on the right side of a join")
	}
	if len(n.Hints) > 0 {
		return nil, "", q.errorf(n.Hints[0].Pos, "table hints are not supported")
	}
	t, v, err := q.cat.lookup(q.src, n.Name)
	if err != nil {
		return nil, "", err
	}
	if t != nil {
		r, err := q.tableRel(t)
		return r, name, err
	}
	if q.views[v.Name] {
		return nil, "", q.errorf(n.Pos, "view %s reads itself", v.Name)
	}
	q.views[v.Name] = true
	defer delete(q.views, v.Name)
	vq := &queryPlanner{cat: q.cat, src: v.Src, views: q.views}
	r, err := vq.query(v.Query, nil)
	if err != nil {
		return nil, "", err
	}
	r, err = renameColumns(r, v.Columns)
	return r, name, err
}

// alias applies [AS] name [(cols)] to a relation.
func (q *queryPlanner) alias(r Rel, qual string, a *parser.TableAlias) (Rel, string, error) {
	if a == nil {
		return r, qual, nil
	}
	if len(a.Columns) > 0 {
		if len(a.Columns) != r.Schema().Len() {
			return nil, "", q.errorf(a.Pos, "alias %s names %d columns but the table has %d", a.Name.Name, len(a.Columns), r.Schema().Len())
		}
		cols := make([]string, len(a.Columns))
		for i, c := range a.Columns {
			cols[i] = c.Name
		}
		var err error
		if r, err = renameColumns(r, cols); err != nil {
			return nil, "", err
		}
	}
	return r, a.Name.Name, nil
}

// renameColumns returns r with its columns renamed (no change for nil).
func renameColumns(r Rel, names []string) (Rel, error) {
	if len(names) == 0 {
		return r, nil
	}
	rt := r.Schema()
	projs := make([]expr.Expr, rt.Len())
	for i, f := range rt.Fields() {
		projs[i] = &expr.Column{Index: i, Name: f.Name, T: f.Type}
	}
	return newCalc(r, projs, names, nil), nil
}

// selectRel resolves a SELECT.
func (q *queryPlanner) selectRel(n *parser.Select, outer *scope) (Rel, error) {
	if n.From == nil {
		return q.values(&parser.Values{Pos: n.Pos, Rows: [][]parser.Expr{selectExprs(n)}})
	}
	in, sc, err := q.from(n.From, outer)
	if err != nil {
		return nil, err
	}
	a := q.analyzer(sc)
	var cond expr.Expr
	where, subs := splitSubqueries(n, true)
	if where != nil {
		if cond, err = q.condition(a, where, "WHERE"); err != nil {
			return nil, err
		}
	}
	if in, cond, err = q.joinWhere(in, cond); err != nil {
		return nil, err
	}
	if in, cond, err = q.planSubqueries(subs, in, sc, cond); err != nil {
		return nil, err
	}
	if len(n.GroupBy) > 0 || n.Having != nil || hasAggregate(n) {
		return q.aggregate(n, in, sc, cond)
	}
	if err := q.refuseLateRows(n); err != nil { // late.go
		return nil, err
	}
	if hasOver(n) {
		return q.over(n, in, sc, cond)
	}
	projs, names, err := q.selectItems(a, n.Items, sc)
	if err != nil {
		return nil, err
	}
	var r Rel = newCalc(in, projs, names, cond)
	if n.Distinct {
		return q.distinct(n, r)
	}
	return r, nil
}

func selectExprs(n *parser.Select) []parser.Expr {
	out := make([]parser.Expr, len(n.Items))
	for i, it := range n.Items {
		out[i] = it.Expr
	}
	return out
}

// analyzer returns an expression analyzer over sc.
func (q *queryPlanner) analyzer(sc *scope) *expr.Analyzer {
	return &expr.Analyzer{Src: q.src, Scope: sc, Funcs: q.cat.Funcs, Call: q.refuseAggregate, Subquery: q.subquery}
}

// refuseAggregate rejects aggregate calls where none may be (WHERE, or a
// query without GROUP BY handled elsewhere).
func (q *queryPlanner) refuseAggregate(c *parser.FuncCall) (expr.Expr, bool, error) {
	name := strings.ToUpper(c.Name.Last().Name)
	if isAggregateName(name) && c.Over == nil && c.OverName == nil {
		return nil, true, q.errorf(c.Pos, "aggregate %s is not allowed here", name)
	}
	return nil, false, nil
}

// condition resolves a WHERE, HAVING or ON condition: a BOOLEAN.
func (q *queryPlanner) condition(a *expr.Analyzer, n parser.Expr, clause string) (expr.Expr, error) {
	e, err := a.Expr(n)
	if err != nil {
		return nil, err
	}
	if k := e.Type().Kind(); k != types.KindBoolean && k != types.KindNull {
		return nil, q.errorf(n.Position(), "the %s condition is of type %s, not BOOLEAN", clause, e.Type())
	}
	return e, nil
}

// selectItems resolves a select list over sc: its expressions and the
// names of the output columns.
func (q *queryPlanner) selectItems(a *expr.Analyzer, items []*parser.SelectItem, sc *scope) ([]expr.Expr, []string, error) {
	var projs []expr.Expr
	var names []string
	for _, it := range items {
		if it.Star {
			n0 := len(projs)
			for _, e := range sc.entries {
				if len(it.Qualifier) > 0 && e.qualifier != it.Qualifier[len(it.Qualifier)-1].Name {
					continue
				}
				for i, f := range e.rt.Fields() {
					projs = append(projs, &expr.Column{Index: e.offset + i, Name: f.Name, T: f.Type})
					names = append(names, f.Name)
				}
			}
			if len(projs) == n0 {
				return nil, nil, q.errorf(it.Pos, "%s matches no table of the FROM clause", it)
			}
			continue
		}
		e, err := a.Expr(it.Expr)
		if err != nil {
			return nil, nil, err
		}
		projs = append(projs, e)
		names = append(names, itemName(it, len(names)))
	}
	return projs, uniqueNames(names), nil
}

// itemName is the name of a select item's column: its alias, the name of
// the column or field it reads, or EXPR$i as Flink names it.
func itemName(it *parser.SelectItem, i int) string {
	if it.Alias != nil {
		return it.Alias.Name
	}
	switch e := it.Expr.(type) {
	case *parser.Ref:
		return e.Parts[len(e.Parts)-1].Name
	case *parser.FieldAccess:
		return e.Field.Name
	}
	return fmt.Sprintf("EXPR$%d", i)
}

// uniqueNames renames repeated names as Flink does (a, a0, a1).
func uniqueNames(names []string) []string {
	fs := make([]types.Field, len(names))
	for i, n := range names {
		fs[i] = types.F(n, types.Int())
	}
	out := make([]string, len(names))
	for i, f := range dedupNames(fs) {
		out[i] = f.Name
	}
	return out
}

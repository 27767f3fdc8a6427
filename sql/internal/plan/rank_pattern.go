package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// topNPattern is the shape of Flink's Top-N query, which is the only place
// ROW_NUMBER() OVER may appear in a streaming query.
const topNPattern = "SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC) AS rn FROM t) WHERE rn <= N"

// rankRange is what the query around a SELECT with ROW_NUMBER() OVER asks
// of the row number: the numbers it keeps, and whether it reads the number
// beyond that (selects it, or filters it otherwise).
type rankRange struct {
	start, end int64
	used       bool
}

// rankOver plans SELECT ..., ROW_NUMBER() OVER (PARTITION BY ... ORDER BY
// ...) AS rn FROM ... whose enclosing query filters rn: a Calc of the
// select list (with the partition and order keys), a Rank or Deduplicate,
// and a Calc that puts the row number at its place in the select list.
func (q *queryPlanner) rankOver(n *parser.Select, in Rel, sc *scope, cond any, calls []*parser.FuncCall) (Rel, error) {
	c := calls[0]
	name := strings.ToUpper(c.Name.Last().Name)
	if name != "ROW_NUMBER" {
		return nil, q.errorf(c.Pos, "%s() is not supported: rank with ROW_NUMBER() (rows that tie get distinct numbers)", name)
	}
	if len(calls) > 1 {
		return nil, q.errorf(calls[1].Pos, "a SELECT may rank with one ROW_NUMBER() OVER only: rank again in an enclosing query")
	}
	item := -1
	for i, it := range n.Items {
		if it.Expr == c {
			item = i
		}
	}
	if item < 0 {
		return nil, q.errorf(c.Pos, "ROW_NUMBER() OVER must be a select item of its own: %s", topNPattern)
	}
	if len(c.Args) > 0 || c.Star || c.Distinct || c.Filter != nil {
		return nil, q.errorf(c.Pos, "ROW_NUMBER() takes no arguments")
	}
	if n.Distinct {
		return nil, q.errorf(n.Pos, "SELECT DISTINCT with ROW_NUMBER() OVER is not supported: rank in a subquery")
	}
	spec := c.Over
	if c.OverName != nil {
		for _, w := range n.Windows {
			if w.Name.Name == c.OverName.Name {
				spec = w.Spec
			}
		}
		if spec == nil {
			return nil, q.errorf(c.OverName.Pos, "unknown window %s: define it in the WINDOW clause", c.OverName.Name)
		}
	}
	if spec.Base != nil {
		return nil, q.errorf(spec.Base.Pos, "a window extending another (%s) is not supported with ROW_NUMBER(): write its PARTITION BY and ORDER BY", spec.Base.Name)
	}
	if spec.Frame != nil {
		return nil, q.errorf(spec.Frame.Pos, "ROW_NUMBER() OVER takes no window frame (ROWS or RANGE): it numbers the whole partition")
	}
	if len(spec.OrderBy) == 0 {
		return nil, q.errorf(spec.Pos, "ROW_NUMBER() OVER needs an ORDER BY: %s", topNPattern)
	}

	a := q.analyzer(sc)
	p1, n1, err := q.selectItems(a, n.Items[:item], sc)
	if err != nil {
		return nil, err
	}
	p2, n2, err := q.selectItems(a, n.Items[item+1:], sc)
	if err != nil {
		return nil, err
	}
	names := uniqueNames(append(append(append([]string{}, n1...), itemName(n.Items[item], len(n1))), n2...))
	rnPos := len(p1)
	rnName := names[rnPos]
	projs := append(append([]expr.Expr{}, p1...), p2...)
	colNames := append(append([]string{}, names[:rnPos]...), names[rnPos+1:]...)
	nVisible := len(projs)

	rr, err := q.findRankRange(n, rnPos, rnName, c)
	if err != nil {
		return nil, err
	}

	// The partition and order keys are columns of the lower Calc: those
	// of the select list, or hidden columns after them.
	keyCol := func(e expr.Expr) int {
		for i, p := range projs {
			if p.String() == e.String() && p.Type().Equal(e.Type()) {
				return i
			}
		}
		projs = append(projs, e)
		colNames = append(colNames, fmt.Sprintf("$key%d", len(projs)-nVisible-1))
		return len(projs) - 1
	}
	var partition []int
	for _, pe := range spec.PartitionBy {
		e, err := a.Expr(pe)
		if err != nil {
			return nil, err
		}
		partition = append(partition, keyCol(e))
	}
	var order []types.SortKey
	var orderExprs []expr.Expr
	for _, o := range spec.OrderBy {
		e, err := a.Expr(o.Expr)
		if err != nil {
			return nil, err
		}
		orderExprs = append(orderExprs, e)
		order = append(order, types.SortKey{Field: keyCol(e), Descending: o.Desc, Nulls: nullOrder(o.Nulls)})
	}
	var ce expr.Expr
	if cond != nil {
		ce = cond.(expr.Expr)
	}
	lower := newCalc(in, projs, uniqueNames(colNames), ce)
	inProps := in.Props()
	if isUpsertMode(inProps.Mode) {
		return nil, q.errorf(c.Pos, "ROW_NUMBER() OVER reads an upsert stream (%s), which ranking does not take yet: rank a retract or insert-only stream", inProps.Mode.Describe())
	}

	var ranked Rel
	rankCol := -1
	if wr, col, ok := windowRank(lower, partition, order, rr, rnName); ok {
		// Partitioned by the windows of a windowed input.
		ranked, rankCol = wr, col
	} else if col, ok := orderExprs[0].(*expr.Column); ok && len(order) == 1 && rr.start == 1 && rr.end == 1 && !rr.used &&
		inProps.Mode.IsInsertOnly() && (col.Index == inProps.Rowtime || col.Index == inProps.Proctime) {
		// Flink's deduplication: the first or last row of each key in
		// the order of a time attribute.
		ranked = &DedupRel{Input: lower, Key: partition, KeepLast: order[0].Descending, EventTime: col.Index == inProps.Rowtime}
	} else {
		r := newRankRel(lower, partition, order, rr.start, rr.end, rr.used || rr.start > 1, rnName)
		if r.OutputRank {
			rankCol = r.rt.Len() - 1
		}
		ranked = r
	}

	// The select list, with the row number at its place: the rank's, or
	// the constant 1 when the enclosing query reads it only in its range.
	rt := ranked.Schema()
	out := make([]expr.Expr, 0, len(names))
	for i := 0; i < nVisible; i++ {
		if i == rnPos {
			out = append(out, rowNumberExpr(rt, rankCol))
		}
		out = append(out, &expr.Column{Index: i, Name: rt.Field(i).Name, T: rt.FieldType(i)})
	}
	if rnPos == nVisible {
		out = append(out, rowNumberExpr(rt, rankCol))
	}
	if rankCol == len(out)-1 && len(out) == rt.Len() && strings.Join(rt.Names(), ",") == strings.Join(names, ",") {
		return ranked, nil
	}
	return newCalc(ranked, out, names, nil), nil
}

func rowNumberExpr(rt *types.RowType, rankCol int) expr.Expr {
	if rankCol < 0 {
		return &expr.Literal{V: int64(1), T: types.BigInt().NotNull(), Text: "1"}
	}
	return &expr.Column{Index: rankCol, Name: rt.Field(rankCol).Name, T: rt.FieldType(rankCol)}
}

func nullOrder(s string) types.NullOrder {
	switch s {
	case "FIRST":
		return types.NullsFirst
	case "LAST":
		return types.NullsLast
	}
	return types.NullsDefault
}

// findRankRange finds the query that encloses the SELECT n as a subquery
// of its FROM clause and reads the range of row numbers its WHERE clause
// keeps: rn <= N, rn < N, rn = N, rn BETWEEN M AND N, M <= rn, in a
// conjunction. rnPos and rnName are the place and name of the row number
// in n's select list.
func (q *queryPlanner) findRankRange(n *parser.Select, rnPos int, rnName string, call *parser.FuncCall) (rankRange, error) {
	outer, dt := enclosingSelect(q.src, n.Pos)
	if outer == nil {
		return rankRange{}, q.errorf(call.Pos, "ROW_NUMBER() OVER is only supported in Flink's Top-N query, filtered by the query around it: %s", topNPattern)
	}
	qual := ""
	if dt.Alias != nil {
		qual = dt.Alias.Name.Name
		if len(dt.Alias.Columns) > rnPos {
			rnName = dt.Alias.Columns[rnPos].Name
		}
	}
	isRN := func(e parser.Expr) bool {
		r, ok := e.(*parser.Ref)
		if !ok {
			return false
		}
		switch len(r.Parts) {
		case 1:
			return r.Parts[0].Name == rnName
		case 2:
			return r.Parts[0].Name == qual && r.Parts[1].Name == rnName
		}
		return false
	}
	rr := rankRange{start: 1, end: -1}
	ranged := 0 // references of rn read as its range
	for _, cj := range syntaxConjuncts(outer.Where) {
		switch e := cj.(type) {
		case *parser.Binary:
			op := e.Op
			l, r := e.L, e.R
			if !isRN(l) && isRN(r) {
				l, r = r, l
				op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[op]
			}
			k, ok := intLiteral(r)
			if !isRN(l) || !ok || op == "" {
				continue
			}
			switch op {
			case "<=":
				rr.end = minEnd(rr.end, k)
			case "<":
				rr.end = minEnd(rr.end, k-1)
			case "=":
				rr.start, rr.end = max(rr.start, k), minEnd(rr.end, k)
			case ">=":
				rr.start = max(rr.start, k)
			case ">":
				rr.start = max(rr.start, k+1)
			default:
				continue
			}
			ranged++
		case *parser.Between:
			lo, ok1 := intLiteral(e.Low)
			hi, ok2 := intLiteral(e.High)
			if !isRN(e.X) || e.Not || !ok1 || !ok2 {
				continue
			}
			if e.Symmetric && lo > hi {
				lo, hi = hi, lo
			}
			rr.start, rr.end = max(rr.start, lo), minEnd(rr.end, hi)
			ranged++
		}
	}
	if rr.end < 0 {
		return rr, q.errorf(call.Pos, "Rank end is not specified: a streaming query keeps the first N rows of each partition; filter the row number with rn <= N in the enclosing query (%s)", topNPattern)
	}
	if rr.end < rr.start {
		return rr, q.errorf(outer.Where.Position(), "the WHERE clause keeps no row number (from %d to %d)", rr.start, rr.end)
	}
	// Every other reference to rn in the enclosing query reads its value.
	refs := 0
	walkSyntax(outer, func(x parser.Node) bool {
		switch x := x.(type) {
		case parser.TableExpr:
			return false
		case *parser.SelectItem:
			if x.Star && (len(x.Qualifier) == 0 || x.Qualifier[len(x.Qualifier)-1].Name == qual) {
				rr.used = true
			}
		case parser.Expr:
			if isRN(x) {
				refs++
			}
		}
		return true
	})
	if refs > ranged {
		rr.used = true
	}
	return rr, nil
}

func minEnd(end, k int64) int64 {
	if end < 0 || k < end {
		return max(k, 0)
	}
	return end
}

func intLiteral(e parser.Expr) (int64, bool) {
	l, ok := e.(*parser.NumberLit)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(l.Text, 10, 64)
	return v, err == nil
}

// syntaxConjuncts splits a condition at its ANDs.
func syntaxConjuncts(e parser.Expr) []parser.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*parser.Binary); ok && strings.EqualFold(b.Op, "AND") {
		return append(syntaxConjuncts(b.L), syntaxConjuncts(b.R)...)
	}
	return []parser.Expr{e}
}

// enclosingSelect finds, in the statements of src, the SELECT whose FROM
// clause is a subquery whose body is the SELECT at pos (the planner reads
// the syntax of the query around a subquery to recognise the Top-N
// pattern before planning the subquery).
func enclosingSelect(src string, pos parser.Pos) (*parser.Select, *parser.DerivedTable) {
	stmts, err := parser.Parse(src)
	if err != nil {
		return nil, nil
	}
	var outer *parser.Select
	var dt *parser.DerivedTable
	for _, st := range stmts {
		walkSyntax(st, func(x parser.Node) bool {
			s, ok := x.(*parser.Select)
			if !ok || outer != nil {
				return outer == nil
			}
			from := s.From
			if p, ok := from.(*parser.ParenTable); ok && p.Alias == nil {
				from = p.Table
			}
			d, ok := from.(*parser.DerivedTable)
			if !ok || d.Lateral {
				return true
			}
			if inner := derivedSelect(d.Query); inner != nil && inner.Pos == pos {
				outer, dt = s, d
			}
			return outer == nil
		})
	}
	return outer, dt
}

// derivedSelect is the SELECT a subquery consists of, nil if it is more
// (a set operation, ORDER BY, LIMIT).
func derivedSelect(q *parser.Query) *parser.Select {
	for q != nil {
		if len(q.With) > 0 || len(q.OrderBy) > 0 || q.Limit != nil || q.Offset != nil {
			return nil
		}
		switch b := q.Body.(type) {
		case *parser.Select:
			return b
		case *parser.Query:
			q = b
		default:
			return nil
		}
	}
	return nil
}

// isUpsertMode tells whether a stream of mode m updates rows by key (+U
// without -U).
func isUpsertMode(m changelog.Mode) bool {
	return m.Contains(changelog.UpdateAfter) && !m.Contains(changelog.UpdateBefore)
}

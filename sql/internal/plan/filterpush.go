package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// pushFilters offers the condition of every Calc directly over a scan
// under roots (through the Calcs between them, which it fuses) to the
// scan's source, when that source takes filters (connector.FilterableSource):
// the conjuncts the source accepts run in its reader, before any row is
// written, and leave the Calc (Flink's PushFilterIntoTableSourceScanRule).
// A Calc whose source accepted something is replaced, in place, by the
// fused Calc over a scan with the filter and the projection of the fields
// it reads (pushProjection); EXPLAIN shows both in the scan. Calcs whose
// source accepts nothing are left as they were. SET
// 'table.optimizer.source.predicate-pushdown-enabled' = 'false' turns it
// off, as in Flink.
func pushFilters(roots []Rel, cat *Catalog) {
	if v, ok := cat.Settings["table.optimizer.source.predicate-pushdown-enabled"]; ok && strings.EqualFold(strings.TrimSpace(v), "false") {
		return
	}
	walkRels(roots, func(r Rel) bool {
		if c, ok := r.(*CalcRel); ok {
			if pushed := c.pushFilter(cat); pushed != nil {
				*c = *pushed
				return false
			}
		}
		return true
	})
}

// pushFilter returns c, fused with the Calcs under it, over a scan whose
// source filters by the conjuncts of c's condition it accepted, or nil if
// c does not read a scan whose source accepts any.
func (c *CalcRel) pushFilter(cat *Catalog) *CalcRel {
	f, _ := c.fusedChain()
	scan, ok := f.Input.(*ScanRel)
	if !ok || f.Cond == nil || scan.paths != nil || scan.filters != nil || scan.mode != changelog.InsertOnly {
		return nil
	}
	src, err := connector.OpenTableSource(cat.Connectors, scan.Table.Connector, scan.Table.connectorOptions(), scan.ct)
	if err != nil {
		return nil
	}
	fs, ok := src.(connector.FilterableSource)
	if !ok {
		return nil
	}
	conds := conjuncts(f.Cond)
	var preds []connector.Predicate
	var offered []int // the conjunct of each predicate
	for i, e := range conds {
		p, ok := toPredicate(e, scan.rt)
		if !ok {
			p, ok = scaledPredicate(e, scan.rt)
		}
		if ok {
			preds = append(preds, p)
			offered = append(offered, i)
		}
	}
	if len(preds) == 0 {
		return nil
	}
	filtered, accepted := fs.ApplyFilters(preds)
	if filtered == nil || len(accepted) == 0 {
		return nil
	}
	pushed := map[int]bool{}
	narrow := *scan
	for _, k := range accepted {
		if k < 0 || k >= len(preds) {
			return nil
		}
		pushed[offered[k]] = true
		narrow.filters = append(narrow.filters, preds[k])
		narrow.filterExprs = append(narrow.filterExprs, conds[offered[k]])
	}
	var rest []expr.Expr
	for i, e := range conds {
		if !pushed[i] {
			rest = append(rest, e)
		}
	}
	// A field the filter fixes (path = constant) is that constant in
	// every row the source emits: in the Calc, and in the rowtime and
	// watermark, which see only those rows too.
	fixed := fixedFields(narrow.filters, scan.rt)
	subst := func(e expr.Expr) expr.Expr { return simplify(substFields(e, fixed)) }
	narrow.rowtime = subst(scan.rowtime)
	narrow.watermark = subst(scan.watermark)
	out := *f
	out.Input = &narrow
	out.Projs = make([]expr.Expr, len(f.Projs))
	for i, e := range f.Projs {
		out.Projs[i] = subst(e)
	}
	out.Cond = nil
	if len(rest) > 0 {
		out.Cond = subst(andOf(rest))
		if l, ok := out.Cond.(*expr.Literal); ok && l.V == true {
			out.Cond = nil
		}
	}
	return out.narrowed(cat)
}

// andOf joins conditions with AND.
func andOf(conds []expr.Expr) expr.Expr {
	e := conds[0]
	and, _ := expr.Builtins().Lookup("AND")
	for _, c := range conds[1:] {
		both, err := expr.NewCall(and, e, c)
		if err != nil {
			panic(err) // AND of BOOLEANs always resolves
		}
		e = both
	}
	return e
}

// compareOps are the comparisons a predicate makes, by operator.
var compareOps = map[string]connector.CompareOp{
	"=": connector.OpEqual, "<>": connector.OpNotEqual,
	"<": connector.OpLess, "<=": connector.OpLessOrEqual,
	">": connector.OpGreater, ">=": connector.OpGreaterOrEqual,
	"IS NULL": connector.OpIsNull, "IS NOT NULL": connector.OpIsNotNull,
}

// flipped is the comparison with its operands swapped.
var flipped = map[connector.CompareOp]connector.CompareOp{
	connector.OpEqual: connector.OpEqual, connector.OpNotEqual: connector.OpNotEqual,
	connector.OpLess: connector.OpGreater, connector.OpLessOrEqual: connector.OpGreaterOrEqual,
	connector.OpGreater: connector.OpLess, connector.OpGreaterOrEqual: connector.OpLessOrEqual,
}

// toPredicate returns the predicate of a conjunct over rows of type rt
// that compares a field with a constant or tests it for NULL: the
// constant cast exactly to the field's type.
func toPredicate(e expr.Expr, rt *types.RowType) (connector.Predicate, bool) {
	c, ok := e.(*expr.Call)
	if !ok {
		return connector.Predicate{}, false
	}
	op, ok := compareOps[c.Name]
	if !ok {
		return connector.Predicate{}, false
	}
	if op == connector.OpIsNull || op == connector.OpIsNotNull {
		if len(c.Args) != 1 {
			return connector.Predicate{}, false
		}
		p, ok := fieldPath(c.Args[0])
		if _, known := connector.PathType(rt, p); !ok || !known {
			return connector.Predicate{}, false
		}
		return connector.Predicate{Path: p, Op: op}, true
	}
	if len(c.Args) != 2 {
		return connector.Predicate{}, false
	}
	x, k := c.Args[0], c.Args[1]
	path, ok := comparedField(x)
	if !ok {
		path, ok = comparedField(k)
		if !ok {
			return connector.Predicate{}, false
		}
		x, k, op = k, x, flipped[op]
	}
	ft, ok := connector.PathType(rt, path)
	if !ok || ft.IsConstructed() {
		return connector.Predicate{}, false
	}
	v, ok := constValue(k)
	if !ok || v == nil {
		return connector.Predicate{}, false
	}
	// The constant as a value of the field's type, if it converts exactly.
	fv, err := types.CastValue(v, k.Type(), ft, nil)
	if err != nil || fv == nil {
		return connector.Predicate{}, false
	}
	back, err := types.CastValue(fv, ft, k.Type(), nil)
	if err != nil {
		return connector.Predicate{}, false
	}
	if cmp, err := types.CompareValues(k.Type().Nullable(), v, back); err != nil || cmp != 0 {
		return connector.Predicate{}, false
	}
	return connector.Predicate{Path: path, Op: op, Value: fv}, true
}

// comparedField returns the path of a field compared as it is: a field
// path, or a cast of one that changes at most its nullability or widens an
// integer (which keeps the order of the values).
func comparedField(e expr.Expr) ([]int, bool) {
	if c, ok := e.(*expr.Cast); ok && !c.Try {
		from, to := c.X.Type(), c.T
		widens := from.IsIntegral() && to.IsIntegral() && from.Kind() <= to.Kind()
		if !from.EqualIgnoringNullability(to) && !widens {
			return nil, false
		}
		e = c.X
	}
	return fieldPath(e)
}

// constValue returns the value of an expression that reads no column and
// calls no volatile function.
func constValue(e expr.Expr) (types.Value, bool) {
	if l, ok := e.(*expr.Literal); ok {
		return l.V, true
	}
	reads := false
	expr.Walk(e, func(x expr.Expr) bool {
		switch x := x.(type) {
		case *expr.Column:
			reads = true
		case *expr.Call:
			if x.Fn == nil || x.Fn.Volatile {
				reads = true
			}
		}
		return !reads
	})
	if reads {
		return nil, false
	}
	ev, err := expr.Compile(e)
	if err != nil {
		return nil, false
	}
	var v types.Value
	if err := expr.Catch(func() { v = ev.Boxed()(types.Row{}) }); err != nil {
		return nil, false
	}
	return v, true
}

// fixedFields returns the literals of the fields the predicates set equal
// to a constant, by path.
func fixedFields(preds []connector.Predicate, rt *types.RowType) map[string]*expr.Literal {
	out := map[string]*expr.Literal{}
	for _, p := range preds {
		if p.Op != connector.OpEqual {
			continue
		}
		t, _ := connector.PathType(rt, p.Path)
		out[fmt.Sprint(p.Path)] = &expr.Literal{V: p.Value, T: t}
	}
	return out
}

// substFields returns e with the fields of fixed replaced by their
// constants.
func substFields(e expr.Expr, fixed map[string]*expr.Literal) expr.Expr {
	if e == nil || len(fixed) == 0 {
		return e
	}
	return replacePaths(e, func(p []int, x expr.Expr) expr.Expr {
		if l, ok := fixed[fmt.Sprint(p)]; ok && l.T.Equal(x.Type()) {
			return l
		}
		return x
	})
}

// simplify folds the calls of constants and the branches of CASE whose
// conditions are constant: CASE WHEN 2 = 0 THEN a WHEN 2 = 1 THEN b ELSE
// c END is c.
func simplify(e expr.Expr) expr.Expr {
	if e == nil {
		return nil
	}
	return expr.Rewrite(e, func(x expr.Expr) expr.Expr {
		switch x := x.(type) {
		case *expr.Call:
			if y, ok := simplifyLogic(x); ok {
				return y
			}
			for _, a := range x.Args {
				if _, ok := a.(*expr.Literal); !ok {
					return x
				}
			}
			if len(x.Args) == 0 {
				return x
			}
			if v, ok := constValue(x); ok {
				return &expr.Literal{V: v, T: x.T}
			}
		case *expr.Case:
			var whens []expr.When
			for _, w := range x.Whens {
				l, ok := w.Cond.(*expr.Literal)
				if !ok || len(whens) > 0 {
					whens = append(whens, w)
					continue
				}
				if l.V == true {
					return branch(w.Result, x.T, x)
				}
				// FALSE or NULL: the branch is never taken.
			}
			if len(whens) == 0 {
				if x.Else == nil {
					return &expr.Literal{T: x.T}
				}
				return branch(x.Else, x.T, x)
			}
			c := *x
			c.Whens = whens
			return &c
		}
		return x
	})
}

// simplifyLogic simplifies an AND or OR with a constant operand, in SQL's
// three-valued logic: x AND TRUE is x, x AND FALSE is FALSE, x OR TRUE is
// TRUE, x OR FALSE is x.
func simplifyLogic(c *expr.Call) (expr.Expr, bool) {
	if (c.Name != "AND" && c.Name != "OR") || len(c.Args) != 2 {
		return nil, false
	}
	neutral := c.Name == "AND" // TRUE leaves AND's other operand, FALSE OR's
	for i, a := range c.Args {
		l, ok := a.(*expr.Literal)
		if !ok || l.V == nil {
			continue
		}
		v, ok := l.V.(bool)
		if !ok {
			continue
		}
		if v == neutral {
			return c.Args[1-i], true
		}
		return &expr.Literal{V: v, T: c.T}, true
	}
	return nil, false
}

// branch returns the result of a CASE's branch in place of the CASE, if it
// has the CASE's type (up to nullability), else the CASE.
func branch(r expr.Expr, t types.Type, whole expr.Expr) expr.Expr {
	if r.Type().EqualIgnoringNullability(t) {
		return r
	}
	return whole
}

// describeScan renders a scan for EXPLAIN, with the filter and the
// projection pushed into its source, as Flink's TableSourceScan does:
// TableSourceScan(table=[t, filter=[...], project=[...]], fields=[...]).
func (s *ScanRel) describeScan() string {
	table := s.Table.Name
	if len(s.filterExprs) > 0 {
		parts := make([]string, len(s.filterExprs))
		for i, e := range s.filterExprs {
			parts[i] = e.String()
		}
		table += ", filter=[" + strings.Join(parts, " AND ") + "]"
	}
	if s.paths != nil {
		full := s.ct.RowType()
		parts := make([]string, len(s.paths))
		for i, p := range s.paths {
			parts[i] = pathName(full, p)
		}
		table += ", project=[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("TableSourceScan(table=[%s], fields=[%s])", table, fieldList(s.rt))
}

// pathName renders a field path over rows of type rt as SQL: `bid`.`price`.
func pathName(rt *types.RowType, p []int) string {
	var b strings.Builder
	cur := rt
	for k, i := range p {
		if cur == nil || i >= cur.Len() {
			return fmt.Sprint(p)
		}
		if k > 0 {
			b.WriteByte('.')
		}
		f := cur.Field(i)
		b.WriteString(types.QuoteIdentifier(f.Name))
		cur = nil
		if f.Type.Kind() == types.KindRow {
			cur = f.Type.Row()
		}
	}
	return b.String()
}

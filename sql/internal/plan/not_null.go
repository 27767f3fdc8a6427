package plan

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
)

// notNull reports whether the field at path (a column of r's rows, then
// fields of nested ROW values) is never NULL in the rows of r, although
// its type may be nullable: the type says so, the source of the scan it
// comes from reports it (connector.NotNullSource), or a Calc on the way
// drops the rows where it is NULL (a comparison or IS NOT NULL of it in
// its condition). It follows the field through Calcs and the operators
// that pass their input's columns on as they are, and answers false where
// it cannot tell. The planner keys state by such a column's value alone
// (keyedBy).
func notNull(cat *Catalog, r Rel, path []int) bool {
	if len(path) == 0 || path[0] < 0 || path[0] >= r.Schema().Len() {
		return false
	}
	if t, ok := connector.PathType(r.Schema(), path); ok && !t.IsNullable() {
		return true
	}
	switch x := r.(type) {
	case *ScanRel:
		full := path
		if x.paths != nil {
			full = append(append([]int{}, x.paths[path[0]]...), path[1:]...)
		}
		src, err := x.source(cat)
		if err != nil {
			return false
		}
		ns, ok := src.(connector.NotNullSource)
		return ok && ns.NotNull(full)
	case *CalcRel:
		in, ok := fieldPath(x.Projs[path[0]])
		if !ok {
			return false
		}
		in = append(in, path[1:]...)
		return rejectsNull(x.Cond, in) || notNull(cat, x.Input, in)
	case *UnionRel:
		for _, u := range x.Ins {
			if !notNull(cat, u, path) {
				return false
			}
		}
		return true
	case *AggregateRel:
		// The grouping columns come first, as the input has them.
		return path[0] < x.Keys && notNull(cat, x.Input, path)
	case *RegularJoinRel:
		return joinNotNull(cat, x.spec, x.keys, x.cond, path)
	case *IntervalJoinRel:
		return joinNotNull(cat, x.spec, x.keys, x.cond, path)
	}
	// Operators whose rows are their input's, some columns appended.
	var in Rel
	switch x := r.(type) {
	case *WindowTVFRel:
		in = x.Input
	case *RankRel:
		in = x.Input
	case *DedupRel:
		in = x.Input
	case *TemporalSortRel:
		in = x.Input
	default:
		return false
	}
	return path[0] < in.Schema().Len() && notNull(cat, in, path)
}

// rejectsNull reports whether a condition is never TRUE for a row whose
// field at path is NULL: one of its conjuncts compares that field, or a
// field inside it, or tests it with IS NOT NULL.
func rejectsNull(cond expr.Expr, path []int) bool {
	if cond == nil {
		return false
	}
	within := func(e expr.Expr) bool {
		q, ok := comparedField(e)
		if !ok || len(q) < len(path) {
			return false
		}
		for k := range path {
			if q[k] != path[k] {
				return false
			}
		}
		return true
	}
	for _, c := range conjuncts(cond) {
		call, ok := c.(*expr.Call)
		if !ok {
			continue
		}
		switch call.Name {
		case "=", "<>", "<", "<=", ">", ">=", "IS NOT NULL":
			for _, a := range call.Args {
				if within(a) {
					return true
				}
			}
		}
	}
	return false
}

// joinNotNull is notNull for a join of sp, on the equalities keys and the
// residual condition cond, whose rows are a left row and a right row: a
// field of a side that is never padded with NULLs is never NULL if it is
// not in that side's rows; in an inner join, neither is a column an
// equality compares (NULL equals nothing) nor a field the residual
// condition drops the NULLs of.
func joinNotNull(cat *Catalog, sp *joinSpec, keys []equiKey, cond expr.Expr, path []int) bool {
	side, in, p := 0, sp.left, path
	if n := sp.left.Schema().Len(); path[0] >= n {
		side, in = 1, sp.right
		p = append([]int{path[0] - n}, path[1:]...)
	}
	switch sp.kind {
	case eddy.InnerJoin:
		if rejectsNull(cond, path) {
			return true
		}
		for _, k := range keys {
			e := k.left
			if side == 1 {
				e = k.right
			}
			if c, ok := e.(*expr.Column); ok && !k.nullSafe && len(p) == 1 && c.Index == p[0] {
				return true
			}
		}
	case eddy.LeftJoin:
		if side == 1 {
			return false
		}
	case eddy.RightJoin:
		if side == 0 {
			return false
		}
	default:
		return false
	}
	return notNull(cat, in, p)
}

package plan

import (
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// pruneLookupJoins narrows every lookup join under roots that a Calc
// alone reads to the columns the Calc and the join read (Flink's
// ProjectJoinTransposeRule over a LookupJoin, see prunedLookupJoin): the
// relation under the join then computes and writes only those, and a
// source that projects emits only the fields they need. The Calcs are
// rewritten in place, as pushFilters does, so that EXPLAIN shows the
// pruned join. It runs after pushFilters: a Calc it narrows into a scan
// takes no filter any more.
func pruneLookupJoins(roots []Rel, cat *Catalog) {
	u := newReuse(cat)
	readers := u.readers(roots)
	walkRels(roots, func(r Rel) bool {
		c, ok := r.(*CalcRel)
		if !ok {
			return true
		}
		j, ok := c.Input.(*LookupJoinRel)
		if !ok || readers[u.key(j)] != 1 {
			return true
		}
		if p := c.prunedLookupJoin(j, cat); p != nil {
			*c = *p
		}
		return true
	})
}

// prunedLookupJoin returns c over a copy of the lookup join j (c's input)
// that keeps only the columns c and the join read: the columns of the
// left input's unique key stay (a changelog input is normalized by it),
// and so do the looked-up table's columns the lookup equalities compare.
// The left input becomes a Calc of the columns kept, fused with the Calcs
// under it (fusedChain) and narrowed into their scan (pushProjection),
// when it is a Calc or a scan; otherwise it stays whole. The lookup's
// projection of the table's rows keeps the columns kept. A processing-time
// attribute only the join's FOR SYSTEM_TIME AS OF reads goes too: the
// lookup reads the table when the row arrives, not the column (Flink does
// not compute it either). It returns nil when every column is read.
func (c *CalcRel) prunedLookupJoin(j *LookupJoinRel, cat *Catalog) *CalcRel {
	l, r := j.spec.left, j.calc
	switch l.(type) {
	case *CalcRel, *ScanRel:
	default:
		l = nil // kept whole
	}
	nl, nr := j.spec.left.Schema().Len(), r.Schema().Len()
	used := make([]bool, nl+nr)
	mark := func(e expr.Expr, shift int) { markColumns(used, e, shift) }
	for _, e := range c.Projs {
		mark(e, 0)
	}
	mark(c.Cond, 0)
	mark(j.cond, 0)
	for _, e := range j.spec.conds {
		mark(e, 0)
	}
	for _, k := range j.keys {
		mark(k.left, 0)
		mark(k.right, nl)
		mark(k.cond, 0)
	}
	if l == nil {
		for i := 0; i < nl; i++ {
			used[i] = true
		}
	}
	if lp := j.spec.left.Props(); !lp.Mode.IsInsertOnly() {
		// wholeRows normalizes an upsert input by its key.
		for _, k := range append(uniqueKey(j.spec.left), lp.UpsertKey...) {
			used[k] = true
		}
	}
	// FOR SYSTEM_TIME AS OF a column nothing else reads: as of the
	// processing time, PROCTIME().
	var proctime expr.Expr
	if col, ok := j.spec.asOf.(*expr.Column); ok && col.Index < nl && !used[col.Index] {
		if fn, ok := expr.Builtins().Lookup("PROCTIME"); ok {
			if call, err := expr.NewCall(fn); err == nil {
				proctime = call
			}
		}
	}
	if proctime == nil {
		mark(j.spec.asOf, 0)
	}
	newIndex, n := keptIndex(used)
	if n == nl+nr {
		return nil
	}
	// side returns the projection of the columns kept of in's row (columns
	// from to to of the joined row) over in, or nil if it keeps them all.
	side := func(in Rel, from, to int) (projs []expr.Expr, names []string) {
		rt := in.Schema()
		all := true
		for i := from; i < to; i++ {
			if !used[i] {
				all = false
				continue
			}
			f := rt.Field(i - from)
			projs = append(projs, &expr.Column{Index: i - from, Name: f.Name, T: f.Type})
			names = append(names, f.Name)
		}
		if all {
			return nil, nil
		}
		return projs, names
	}
	nj := *j
	sp := *j.spec
	nj.spec = &sp
	if projs, names := side(sp.left, 0, nl); projs != nil {
		left, _ := newCalc(sp.left, projs, names, nil).fusedChain()
		sp.left = left.narrowed(cat)
	}
	if projs, names := side(r, nl, nl+nr); projs != nil {
		// The lookup's projection of the table's rows, of the columns kept.
		rp := make([]expr.Expr, len(projs))
		for i, p := range projs {
			rp[i] = r.Projs[p.(*expr.Column).Index]
		}
		nj.calc = newCalc(r.Input, rp, names, nil)
		sp.right = nj.calc
	}
	nlNew := sp.left.Schema().Len()
	nj.rt = joinRowType(sp.left.Schema(), sp.right.Schema(), sp.kind)
	// remap rewrites an expression over the old rows (shift: where they
	// start in the old joined row; back: in the new one) over the new
	// rows of type rt, the columns named as rt names them.
	remap := func(e expr.Expr, shift, back int, rt *types.RowType) expr.Expr {
		if e == nil {
			return nil
		}
		return expr.Rewrite(e, func(x expr.Expr) expr.Expr {
			if col, ok := x.(*expr.Column); ok {
				cc := *col
				cc.Index = newIndex[col.Index+shift] - back
				cc.Name = rt.Field(cc.Index).Name
				return &cc
			}
			return x
		})
	}
	joined := func(e expr.Expr) expr.Expr { return remap(e, 0, 0, nj.rt) }
	sp.conds = mapExprs(j.spec.conds, joined)
	sp.asOf = proctime
	if proctime == nil {
		sp.asOf = joined(j.spec.asOf)
	}
	nj.keys = make([]equiKey, len(j.keys))
	for i, k := range j.keys {
		nj.keys[i] = equiKey{left: joined(k.left), right: remap(k.right, nl, nlNew, sp.right.Schema()), nullSafe: k.nullSafe, cond: joined(k.cond)}
	}
	nj.residual = mapExprs(j.residual, joined)
	nj.cond = joined(j.cond)
	out := *c
	out.Input = &nj
	out.Projs = mapExprs(c.Projs, joined)
	out.Cond = joined(c.Cond)
	return &out
}

package plan

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// prunedJoin returns c over a regular join of only the input columns that
// c and the join read (Flink's ProjectJoinTransposeRule): each input whose
// other columns are not read gets a Calc of those it keeps, which a source
// that projects then reads alone, and the join keeps narrower rows in
// state. The input columns of unique keys are kept, so that the join's
// input specs and ChangelogNormalize stay as they were. It returns c as it
// is when its input is not a regular join, or a join read by others too
// (alone false, see builder.readsAlone), or every column is read.
func (c *CalcRel) prunedJoin(alone bool) *CalcRel {
	j, ok := c.Input.(*RegularJoinRel)
	if !ok || volatile(c.Projs) || !alone {
		return c
	}
	l, r := j.spec.left, j.spec.right
	nl, nr := l.Schema().Len(), r.Schema().Len()
	used := make([]bool, nl+nr)
	mark := func(e expr.Expr, shift int) { markColumns(used, e, shift) }
	for _, e := range c.Projs {
		mark(e, 0)
	}
	mark(c.Cond, 0)
	mark(j.cond, 0)
	for _, k := range j.keys {
		mark(k.left, 0)
		mark(k.right, nl)
		mark(k.cond, 0)
	}
	for _, k := range append(uniqueKey(l), l.Props().UpsertKey...) {
		used[k] = true
	}
	for _, k := range append(uniqueKey(r), r.Props().UpsertKey...) {
		used[nl+k] = true
	}
	// newIndex maps a column of the joined row to its place in the pruned
	// one, -1 if pruned.
	newIndex, n := keptIndex(used)
	if n == nl+nr {
		return c
	}
	side := func(in Rel, from, to int) Rel {
		all := true
		for i := from; i < to; i++ {
			all = all && used[i]
		}
		if all {
			return in
		}
		rt := in.Schema()
		var projs []expr.Expr
		var names []string
		for i := from; i < to; i++ {
			if used[i] {
				f := rt.Field(i - from)
				projs = append(projs, &expr.Column{Index: i - from, Name: f.Name, T: f.Type})
				names = append(names, f.Name)
			}
		}
		return newCalc(in, projs, names, nil)
	}
	nj := *j
	sp := *j.spec
	nj.spec = &sp
	sp.left, sp.right = side(l, 0, nl), side(r, nl, nl+nr)
	nlNew := sp.left.Schema().Len()
	remap := func(e expr.Expr, shift, back int) expr.Expr {
		if e == nil {
			return nil
		}
		return expr.Rewrite(e, func(x expr.Expr) expr.Expr {
			if col, ok := x.(*expr.Column); ok {
				cc := *col
				cc.Index = newIndex[col.Index+shift] - back
				return &cc
			}
			return x
		})
	}
	joined := func(e expr.Expr) expr.Expr { return remap(e, 0, 0) }
	sp.conds = mapExprs(j.spec.conds, joined)
	nj.keys = make([]equiKey, len(j.keys))
	for i, k := range j.keys {
		nj.keys[i] = equiKey{left: joined(k.left), right: remap(k.right, nl, nlNew), nullSafe: k.nullSafe, cond: joined(k.cond)}
	}
	nj.residual = mapExprs(j.residual, joined)
	nj.cond = joined(j.cond)
	nj.rt = joinRowType(sp.left.Schema(), sp.right.Schema(), sp.kind)
	for s, in := range []Rel{sp.left, sp.right} {
		nj.unique[s] = uniqueKey(in)
		nj.contains[s] = len(nj.unique[s]) > 0 && keyContains(nj.keys, s, nj.unique[s])
	}
	// The columns of the rows' expiry are read by the condition: kept.
	for s, shift := range [2][2]int{{0, 0}, {nl, nlNew}} {
		nj.expiry[s] = j.expiry[s].remap(func(col int) int { return newIndex[col+shift[0]] - shift[1] }, nj.rt, shift[1])
	}
	if p := j.prefilter; p != nil {
		// Its columns are read by the condition: kept.
		np := *p
		shift := [2][2]int{{0, 0}, {nl, nlNew}}[p.side]
		np.col, np.time = newIndex[p.col+shift[0]]-shift[1], newIndex[p.time+shift[0]]-shift[1]
		nj.prefilter = &np
	}
	out := *c
	out.Input = &nj
	out.Projs = mapExprs(c.Projs, joined)
	out.Cond = joined(c.Cond)
	return &out
}

func mapExprs(es []expr.Expr, f func(expr.Expr) expr.Expr) []expr.Expr {
	if es == nil {
		return nil
	}
	out := make([]expr.Expr, len(es))
	for i, e := range es {
		out[i] = f(e)
	}
	return out
}

// projectingJoin is a join that can write the rows of a projection of its
// joined rows straight from each pair (a regular or a lookup join).
type projectingJoin interface {
	buildProjected(b *builder, rt *types.RowType, projs []expr.Expr) (*eddy.Stream[Rec], error)
}

// joinProjected builds c as part of the regular or lookup join below it,
// when c has no condition and is the join's only reader (alone): the join
// writes c's rows from each pair of input rows. A lookup join does so for
// a Calc of at least one column (its row of none is the zero Row, which
// stands for no row). With keeps, c's reader keeps c's rows in state
// (builder.keptStream): the join writes each into memory of its own.
func (c *CalcRel) joinProjected(b *builder, alone, keeps bool) (*eddy.Stream[Rec], bool, error) {
	j, ok := c.Input.(projectingJoin)
	if !ok || c.Cond != nil || volatile(c.Projs) || !alone {
		return nil, false, nil
	}
	if _, lookup := j.(*LookupJoinRel); lookup && len(c.Projs) == 0 {
		return nil, false, nil
	}
	if keeps {
		b.keeps[b.reuse.key(j.(Rel))] = true
	}
	s, err := j.buildProjected(b, c.rt, c.Projs)
	return s, true, err
}

// keptIndex maps each column to its place among the columns kept (those
// used), -1 for the others, and returns the number kept.
func keptIndex(used []bool) ([]int, int) {
	idx := make([]int, len(used))
	n := 0
	for i, u := range used {
		idx[i] = -1
		if u {
			idx[i] = n
			n++
		}
	}
	return idx, n
}

// markColumns sets used[i+shift] for each column i that e reads (within
// used).
func markColumns(used []bool, e expr.Expr, shift int) {
	expr.Walk(e, func(x expr.Expr) bool {
		if col, ok := x.(*expr.Column); ok && col.Index+shift >= 0 && col.Index+shift < len(used) {
			used[col.Index+shift] = true
		}
		return true
	})
}

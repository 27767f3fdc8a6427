package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// CalcRel computes a projection of the rows of its input that pass a
// condition: SELECT exprs ... WHERE cond, as Flink's Calc.
type CalcRel struct {
	Input Rel
	// Projs are the output columns over the input row, named Names.
	Projs []expr.Expr
	Names []string
	// Cond is the condition, nil for none.
	Cond expr.Expr

	rt                *types.RowType
	rowtime, proctime int
}

// newCalc returns a Calc over in, deriving which output columns keep its
// time attributes; its condition leaves out what in makes always true
// (withoutImplied).
func newCalc(in Rel, projs []expr.Expr, names []string, cond expr.Expr) *CalcRel {
	c := &CalcRel{Input: in, Projs: projs, Names: names, Cond: withoutImplied(cond, in), rowtime: -1, proctime: -1}
	p := in.Props()
	for i, e := range projs {
		if isProctimeCall(e) && c.proctime < 0 {
			c.proctime = i
		}
		if col, ok := e.(*expr.Column); ok {
			if col.Index == p.Rowtime && c.rowtime < 0 {
				c.rowtime = i
			}
			if col.Index == p.Proctime && c.proctime < 0 {
				c.proctime = i
			}
		}
	}
	c.init()
	return c
}

func (c *CalcRel) init() {
	fs := make([]types.Field, len(c.Projs))
	for i, e := range c.Projs {
		fs[i] = types.F(c.Names[i], e.Type())
	}
	c.rt = types.MustRowType(fs...)
}

func (c *CalcRel) Schema() *types.RowType { return c.rt }

func (c *CalcRel) Props() Props {
	p := c.Input.Props()
	out := Props{Mode: p.Mode, Rowtime: c.rowtime, Proctime: c.proctime}
	if c.Cond != nil && p.Mode != changelog.InsertOnly {
		out.Mode = ops.FilterRowsMode(p.Mode)
	}
	if len(p.UpsertKey) > 0 {
		// The key survives if every key column is projected as is, or
		// cast to a type that keeps distinct values distinct.
		for _, k := range p.UpsertKey {
			found := -1
			for i, e := range c.Projs {
				if col, ok := keyPreserving(e); ok && col.Index == k {
					found = i
					break
				}
			}
			if found < 0 {
				out.UpsertKey = nil
				break
			}
			out.UpsertKey = append(out.UpsertKey, found)
		}
	}
	return out
}

// keyPreserving returns the column e projects when e is the column or an
// injective cast of it: to its type of another nullability, to a wider
// integer type, or from VARCHAR(n) to VARCHAR(m >= n). Distinct values of
// the column then stay distinct, so that a key of the input that the
// column is part of is a key of the output.
func keyPreserving(e expr.Expr) (*expr.Column, bool) {
	if c, ok := e.(*expr.Cast); ok {
		col, ok := c.X.(*expr.Column)
		if !ok {
			return nil, false
		}
		from, to := col.T, c.T
		switch {
		case from.EqualIgnoringNullability(to):
		case from.IsIntegral() && to.IsIntegral() && to.Kind() >= from.Kind():
		case from.Kind() == types.KindVarChar && to.Kind() == types.KindVarChar && to.Length() >= from.Length():
		default:
			return nil, false
		}
		return col, true
	}
	col, ok := e.(*expr.Column)
	return col, ok
}

func (c *CalcRel) Inputs() []Rel { return []Rel{c.Input} }

func (c *CalcRel) Describe() string {
	var parts []string
	for i, e := range c.Projs {
		s := e.String()
		if col, ok := e.(*expr.Column); !ok || col.Name != c.Names[i] {
			s += " AS " + types.QuoteIdentifier(c.Names[i])
		}
		parts = append(parts, s)
	}
	d := fmt.Sprintf("Calc(select=[%s]", strings.Join(parts, ", "))
	if c.Cond != nil {
		d += fmt.Sprintf(", where=[%s]", c.Cond)
	}
	return d + ")"
}

// fused returns c over the input of in, with in's expressions substituted
// for c's references to its columns and the conditions of both, then
// fused in the same way with the Calcs below that it may be (mergeable).
// The caller tells whether in may be. The time attributes are c's: they
// were derived with in.
func (c *CalcRel) fused(in *CalcRel) *CalcRel {
	subst := func(e expr.Expr) expr.Expr {
		return expr.Rewrite(e, func(x expr.Expr) expr.Expr {
			if col, ok := x.(*expr.Column); ok {
				return in.Projs[col.Index]
			}
			return x
		})
	}
	out := &CalcRel{Input: in.Input, Names: c.Names, rt: c.rt, rowtime: c.rowtime, proctime: c.proctime, Cond: in.Cond}
	for _, e := range c.Projs {
		out.Projs = append(out.Projs, subst(e))
	}
	if c.Cond != nil {
		cond := subst(c.Cond)
		if out.Cond == nil {
			out.Cond = cond
		} else {
			and, _ := expr.Builtins().Lookup("AND")
			both, err := expr.NewCall(and, out.Cond, cond)
			if err != nil {
				return c
			}
			out.Cond = both
		}
	}
	if next, ok := out.Input.(*CalcRel); ok && mergeable(out, next) {
		return out.fused(next)
	}
	return out
}

// fusedChain returns c fused with the Calcs under it that fused takes (in,
// c's input, if mergeable, and so on down), and those Calcs, top first;
// c and no Calc if its input is not a Calc it may be fused with.
func (c *CalcRel) fusedChain() (*CalcRel, []*CalcRel) {
	in, ok := c.Input.(*CalcRel)
	if !ok || !mergeable(c, in) {
		return c, nil
	}
	f := c.fused(in)
	var chain []*CalcRel
	for r := Rel(in); r != f.Input; {
		ic, ok := r.(*CalcRel)
		if !ok {
			break
		}
		chain = append(chain, ic)
		r = ic.Input
	}
	return f, chain
}

// mergeable tells whether c may be fused with in, the Calc it reads (see
// fused), as Flink's FlinkRelUtil.isMergeable does: fusing puts in's
// expression of a column in place of each of c's references to it, so a
// column computed with a volatile call (PROCTIME, RAND, UUID) must be
// read at most once by c's projections and condition together. Read
// twice, it would be computed twice, giving two values where in gives
// one. A volatile column c does not read is then not computed at all, as
// in Flink: no row holds its value (a processing-time window or lookup
// join reads the clock, not the column).
func mergeable(c, in *CalcRel) bool {
	refs := make([]int, len(in.Projs))
	count := func(e expr.Expr) {
		expr.Walk(e, func(x expr.Expr) bool {
			if col, ok := x.(*expr.Column); ok && col.Index >= 0 && col.Index < len(refs) {
				refs[col.Index]++
			}
			return true
		})
	}
	for _, e := range c.Projs {
		count(e)
	}
	count(c.Cond)
	for i, n := range refs {
		if n > 1 && volatile(in.Projs[i:i+1]) {
			return false
		}
	}
	return true
}

// volatile tells whether an expression calls a function whose value
// changes from call to call (PROCTIME, RAND): computing it twice would
// give two values.
func volatile(es []expr.Expr) bool {
	found := false
	for _, e := range es {
		expr.Walk(e, func(x expr.Expr) bool {
			if call, ok := x.(*expr.Call); ok && call.Fn != nil && call.Fn.Volatile {
				found = true
			}
			return !found
		})
	}
	return found
}

// identity tells whether the projection passes the input row unchanged.
func (c *CalcRel) identity() bool {
	in := c.Input.Schema()
	if len(c.Projs) != in.Len() {
		return false
	}
	for i, e := range c.Projs {
		col, ok := e.(*expr.Column)
		if !ok || col.Index != i || !col.T.Equal(in.FieldType(i)) {
			return false
		}
	}
	return true
}

func (c *CalcRel) build(b *builder) (*eddy.Stream[Rec], error) {
	keeps := b.keepsRows(c)
	// alone: the relation under the Calcs fused here is read by this Calc
	// alone, so that the Calc may run in it.
	// A projection of a projection runs as one: one row is written per
	// record instead of one per Calc.
	c, chain := c.fusedChain()
	alone := b.readsAlone(c, chain)
	c = c.pushProjection(b, alone)
	if err := c.compiles(); err != nil {
		return nil, err
	}
	c = c.prunedJoin(alone)
	if s, ok, err := c.joinProjected(b, alone, keeps); ok {
		return s, err
	}
	if scan, ok := c.Input.(*ScanRel); ok && c.Cond == nil && c.passesRows() {
		// The source writes the Calc's rows itself (a projection and
		// a filter pushed into it): no Calc runs.
		return b.stream(scan)
	}
	if scan, ok := c.Input.(*ScanRel); ok && scan.mode == changelog.InsertOnly && alone {
		// The only reader of an insert-only table runs in its source; a
		// projection copies what it keeps of the source's rows.
		return scan.open(b, !c.identity(), []eddy.SourceOption{eddy.TransformInSourceReusing(c.newTransform)})
	}
	s, err := b.stream(c.Input)
	if err != nil {
		return nil, err
	}
	if c.Cond != nil {
		cond := c.Cond
		s = eddy.FilterRowsNonRetaining(s, func() func(types.Row) bool {
			shared := expr.NewShared(cond)
			ev, _ := shared.Compile(cond)
			f := ev.Bool
			return func(r types.Row) bool {
				shared.Next()
				v, null := f(r)
				return v && !null
			}
		})
	}
	if c.identity() {
		return s, nil
	}
	rt, projs, in := c.rt, c.Projs, c.Input.Schema()
	// The projection writes each row anew: the rows it reads may be in
	// memory reused for the next ones, and the rows it writes may be too.
	return eddy.MapRowsReusing(s, func(reuse bool) (func(types.Row) types.Row, func()) {
		a := newOutputArena(reuse)
		p, _ := newSharedProjector(rt, projs, expr.NewShared(projs...), a)
		p.inPlace(in)
		return p.project, a.Rewind
	}), nil
}

// newOutputArena returns the arena of an operator's output rows: one that
// hands its memory out again after each batch if reuse (the readers keep
// nothing of the rows; eddy.MapRowsReusing), else one whose rows stay.
func newOutputArena(reuse bool) *types.Arena {
	if reuse {
		return types.NewRecyclingArena(0)
	}
	return types.NewArena(0)
}

// readsAlone tells whether c, fused with the chain of Calcs under it
// (fusedChain), is the only reader of the relation it now reads, counted
// by key: a Calc of the chain read by another relation too is built (or
// fused) for that one as well, which then reads the relation under it.
func (b *builder) readsAlone(c *CalcRel, chain []*CalcRel) bool {
	for _, ic := range chain {
		if b.readers(ic) > 1 {
			return false
		}
	}
	return b.readers(c.Input) == 1
}

// passesRows tells whether the projection passes the input rows as they
// are for rows of the Calc's type: the identity, with each column of the
// type the Calc declares (up to nullability).
func (c *CalcRel) passesRows() bool {
	if !c.identity() {
		return false
	}
	in := c.Input.Schema()
	for i := range c.Projs {
		if !in.FieldType(i).EqualIgnoringNullability(c.rt.FieldType(i)) {
			return false
		}
	}
	return true
}

// compiles reports the error of the condition or a projection that does
// not compile, before they are compiled per subtask.
func (c *CalcRel) compiles() error {
	if c.Cond != nil {
		if _, err := expr.Compile(c.Cond); err != nil {
			return err
		}
	}
	_, err := newProjector(c.rt, c.Projs)
	return err
}

// newTransform returns a subtask's function of the Calc over insert-only
// records: the projected row of a record that passes the condition.
//
// With reuse, the projected rows are written into memory that rewind hands
// out again (eddy.TransformInSourceReusing).
func (c *CalcRel) newTransform(reuse bool) (func(Rec) (Rec, bool), func()) {
	// The condition and the projections share what they both compute.
	shared := expr.NewShared(append([]expr.Expr{c.Cond}, c.Projs...)...)
	var cond func(types.Row) (bool, bool)
	if c.Cond != nil {
		ev, _ := shared.Compile(c.Cond)
		cond = ev.Bool
	}
	if c.identity() {
		return func(r Rec) (Rec, bool) {
			if cond == nil {
				return r, true
			}
			shared.Next()
			v, null := cond(r.Row)
			return r, v && !null
		}, nil
	}
	arena := types.NewArena(0)
	if reuse {
		arena = types.NewRecyclingArena(0)
	}
	p, _ := newSharedProjector(c.rt, c.Projs, shared, arena)
	p.inPlace(c.Input.Schema())
	return func(r Rec) (Rec, bool) {
		shared.Next()
		if cond != nil {
			if v, null := cond(r.Row); !v || null {
				return r, false
			}
		}
		r.Row = p.write(r.Row)
		return r, true
	}, arena.Rewind
}

// projector writes the row of a projection.
type projector struct {
	w *types.RowWriter
	// pos, if set, starts each row with the columns passed as they are
	// at the positions they have in the input row (see inPlace).
	pos *types.PositionCopier
	// copies are the columns passed as they are: field out of the row
	// is field in of the input row.
	copies []columnCopy
	// sets write the other columns.
	sets []func(in types.Row, w *types.RowWriter)
	// shared computes once per row what several expressions hold.
	shared *expr.Shared
}

// newProjector compiles the projection of exprs into rows of type rt;
// a subexpression they hold more than once is computed once per row.
// Every subtask compiles its own: compiled functions and writers are not
// shared between goroutines.
func newProjector(rt *types.RowType, exprs []expr.Expr) (*projector, error) {
	return newSharedProjector(rt, exprs, expr.NewShared(exprs...), types.NewArena(0))
}

// newSharedProjector is newProjector for expressions compiled by shared
// with others (a condition) that its caller evaluates over the same rows:
// the caller starts each row (shared.Next) and calls write. The rows go
// into arena.
func newSharedProjector(rt *types.RowType, exprs []expr.Expr, shared *expr.Shared, arena *types.Arena) (*projector, error) {
	p := &projector{w: types.NewRowWriter(rt, arena), shared: shared}
	for i, e := range exprs {
		if col, ok := e.(*expr.Column); ok && col.Index >= 0 && col.T.EqualIgnoringNullability(rt.FieldType(i)) {
			p.copies = append(p.copies, columnCopy{out: i, in: col.Index})
			continue
		}
		set, err := shared.RefSetter(e, i)
		if err != nil {
			return nil, err
		}
		p.sets = append(p.sets, set)
	}
	return p, nil
}

// inPlace makes the projector copy the columns it passes from the same
// position of the input row, of type in, with one copy of the input's
// bitmap and slots: worth it when it passes two or more that way.
func (p *projector) inPlace(in *types.RowType) {
	p.pos, p.copies = positionCopier(in, p.w.RowType(), p.copies, func(c columnCopy) (int, bool) { return c.out, c.in == c.out })
}

// positionCopier returns the copier of the columns of copies that keep
// their positions from rows of type in into rows of type out (keeps gives
// a copy's output column and whether it does), and the other copies; nil
// and copies as they are when fewer than two keep their positions or the
// rows' null bitmaps differ in size.
func positionCopier[C any](in, out *types.RowType, copies []C, keeps func(C) (int, bool)) (*types.PositionCopier, []C) {
	var same []int
	var rest []C
	for _, c := range copies {
		if i, ok := keeps(c); ok {
			same = append(same, i)
		} else {
			rest = append(rest, c)
		}
	}
	if len(same) < 2 {
		return nil, copies
	}
	pos, err := types.NewPositionCopier(in, out, same)
	if err != nil {
		return nil, copies
	}
	return pos, rest
}

// project writes the row of the projection of in.
func (p *projector) project(in types.Row) types.Row {
	p.shared.Next()
	return p.write(in)
}

// write is project for a row its caller has started.
func (p *projector) write(in types.Row) types.Row {
	w := p.w
	if p.pos != nil {
		p.pos.Start(w, in)
	} else {
		w.Reset()
	}
	for _, c := range p.copies {
		w.CopyFieldRef(c.out, in, c.in)
	}
	for _, set := range p.sets {
		set(in, w)
	}
	return w.Finish()
}

// columnCopy is a column a projection passes as it is: field out of its
// rows is field in of the input rows.
type columnCopy struct{ out, in int }

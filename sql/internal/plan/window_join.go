package plan

import (
	"fmt"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/state"
)

// WindowJoinRel is Flink's window join: an INNER, LEFT, RIGHT or FULL join
// of two windowed relations on their window_start, their window_end and
// other equi-join keys. It keeps the rows of both inputs per join key and
// window until the watermark (the lower of the inputs') passes the
// window's end, then emits the joined rows of the window (an outer side's
// rows without a match padded with NULLs) once, insert-only, and forgets
// the window. Rows of a window the watermark has passed are late and
// dropped. The output has the columns of both inputs, the window columns
// of each among them.
type WindowJoinRel struct {
	spec     *joinSpec
	keys     []equiKey
	residual []expr.Expr
	// cond is the residual conjuncts as one condition, nil for none.
	cond expr.Expr
	// left and right are the inputs' windows.
	left, right windowCols
	// window is the output's windows, for the window operators above it:
	// the left input's for an INNER or LEFT join, the right one's for a
	// RIGHT join; a FULL join's rows may lack either (windowed false).
	window   windowCols
	windowed bool
	rt       *types.RowType
}

func (j *WindowJoinRel) joinSpec() *joinSpec    { return j.spec }
func (j *WindowJoinRel) Schema() *types.RowType { return j.rt }
func (j *WindowJoinRel) Inputs() []Rel          { return []Rel{j.spec.left, j.spec.right} }

func (j *WindowJoinRel) Props() Props {
	return Props{Mode: changelog.InsertOnly, Rowtime: -1, Proctime: -1}
}

func (j *WindowJoinRel) Describe() string {
	return fmt.Sprintf("WindowJoin(leftWindow=[%s], rightWindow=[%s], joinType=[%s], where=[%s], select=[%s])",
		j.left.describe(j.spec.left.Schema()), j.right.describe(j.spec.right.Schema()), flinkJoinType(j.spec.kind),
		joinWhereText(j.keys, j.residual, j.rt), fieldList(j.rt))
}

func (j *WindowJoinRel) build(b *builder) (*eddy.Stream[Rec], error) {
	ls, err := b.stream(j.spec.left)
	if err != nil {
		return nil, err
	}
	rs, err := b.stream(j.spec.right)
	if err != nil {
		return nil, err
	}
	kind := j.spec.kind
	lk, err := newJoinKeys(j.keys, 0, j.spec.left.Schema())
	if err != nil {
		return nil, err
	}
	rk, err := newJoinKeys(j.keys, 1, j.spec.right.Schema())
	if err != nil {
		return nil, err
	}
	// Rows whose key is NULL match nothing: those of a side that is not
	// kept unmatched need not enter the join.
	if kind == eddy.InnerJoin || kind == eddy.RightJoin {
		ls = lk.dropNullKeys(ls)
	}
	if kind == eddy.InnerJoin || kind == eddy.LeftJoin {
		rs = rk.dropNullKeys(rs)
	}
	ls, rs = cloneRows(eddy.AsChangelog(ls, changelog.InsertOnly)), cloneRows(eddy.AsChangelog(rs, changelog.InsertOnly))
	ev, err := newJoinEvals(j.rt, nil, j.spec.left.Schema(), j.spec.right.Schema(), j.cond, false)
	if err != nil {
		return nil, err
	}
	// The rows of outer sides with NULL keys meet under one key: they
	// must not match.
	nullKeys := lk.nullable() || rk.nullable()
	match := func(l, r types.Row) bool {
		return !nullKeys || !lk.hasNull(l) && !rk.hasNull(r)
	}
	lend, rend := j.left.end, j.right.end
	c := eddy.ConnectKeyed(eddy.GroupBy(ls, lk.keyFunc()), eddy.GroupBy(rs, rk.keyFunc()))
	out := eddy.CoProcessKeyed(c, func() eddy.KeyedCoProcessFunction[string, Rec, Rec, Rec] {
		return &windowJoiner{kind: kind, lend: lend, rend: rend, ev: ev, match: match}
	}).Name("WindowJoin")
	return eddy.AsChangelog(out, changelog.InsertOnly), nil
}

// windowJoiner is the window join of one subtask. The key is the join key
// with the window; its state is the rows of each input, and a timer at the
// window's last millisecond joins them.
type windowJoiner struct {
	kind        eddy.JoinKind
	lend, rend  int
	ev          *joinEvals
	match       func(l, r types.Row) bool
	left, right state.List[types.Row]
	matched     []bool // scratch: the right rows matched
}

func (f *windowJoiner) Open(ctx *eddy.KeyedContext[string, Rec]) error {
	f.left = state.NewList(ctx.Store(), state.ListDescriptor[types.Row]{Name: "window-join-left"})
	f.right = state.NewList(ctx.Store(), state.ListDescriptor[types.Row]{Name: "window-join-right"})
	return nil
}

// add keeps a row of a side until its window's end, unless it is late.
func (f *windowJoiner) add(ctx *eddy.KeyedContext[string, Rec], side state.List[types.Row], row types.Row, end int64) {
	if end-1 <= ctx.CurrentWatermark() {
		return // late: the window has fired
	}
	side.Add(row)
	ctx.RegisterEventTimeTimer(end - 1)
}

func (f *windowJoiner) ProcessElement1(ctx *eddy.KeyedContext[string, Rec], c Rec) error {
	f.add(ctx, f.left, c.Row, c.Row.TimestampMillis(f.lend))
	return nil
}

func (f *windowJoiner) ProcessElement2(ctx *eddy.KeyedContext[string, Rec], c Rec) error {
	f.add(ctx, f.right, c.Row, c.Row.TimestampMillis(f.rend))
	return nil
}

func (f *windowJoiner) OnTimer(ctx *eddy.KeyedContext[string, Rec], ts int64) error {
	ls, rs := f.left.Get(), f.right.Get()
	e := f.ev.get()
	defer f.ev.put(e)
	emit := func(row types.Row) { ctx.EmitAt(Rec{Kind: changelog.Insert, Row: row}, ts) }
	f.matched = append(f.matched[:0], make([]bool, len(rs))...)
	leftOuter := f.kind == eddy.LeftJoin || f.kind == eddy.FullJoin
	for _, l := range ls {
		found := false
		for i, r := range rs {
			if !f.match(l, r) {
				continue
			}
			if !e.test(l, r) {
				continue
			}
			emit(e.join(&l, &r))
			found, f.matched[i] = true, true
		}
		if !found && leftOuter {
			emit(e.join(&l, nil))
		}
	}
	if f.kind == eddy.RightJoin || f.kind == eddy.FullJoin {
		for i, r := range rs {
			if !f.matched[i] {
				emit(e.join(nil, &r))
			}
		}
	}
	f.left.Clear()
	f.right.Clear()
	return nil
}

package plan

import (
	"fmt"
	"math"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/window"
)

// Pre-filtering the rows a join with their window's maximum cannot match.
//
// A query may join a relation R with the MAX of one of its columns over
// each tumbling window of R itself, to find the rows that have their
// window's highest value, as Nexmark's q7 does:
//
//	SELECT B.* FROM bid B JOIN (
//	  SELECT MAX(price) AS maxprice, window_end AS t
//	  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
//	  GROUP BY window_start, window_end) M
//	ON B.price = M.maxprice AND B.dateTime BETWEEN M.t - INTERVAL '10' SECOND AND M.t
//
// Run as written, the join keeps every row of R until the windows it may
// match have fired: all rows of a window. But a row whose value is below
// the highest value of its window seen so far can never equal the
// window's maximum, which only grows. A filter before the join drops
// those rows, so the join keeps little more than the rows at their
// window's maximum; its results are the same.
//
// The filter keeps, per window, the highest value of the rows it has seen
// that the window aggregation counts too; a row it drops is below that,
// so below the maximum. That holds when:
//
//   - the join is inner and the filtered side insert-only, so that every
//     row dropped would have joined nothing and has no retraction to come;
//   - the join's equality compares the filtered side's column with the
//     MAX of the same column of the same relation (equal digests, through
//     projections), aggregated by a TUMBLE window in event time with no
//     other grouping and no filter, FILTER or WHERE before it, nor a
//     filter on the filtered side's way to it (a filter there would be
//     pushed into a source of its own, whose watermark is another);
//   - sources are reused (table.optimizer.reuse-source-enabled), so that
//     both inputs read one stream of the relation;
//   - the time condition confines a row of time t to windows whose end e
//     lies in [t, t + size]: its own window, and the one before when t is
//     its window's start, whose rows it is kept for (the filter passes
//     such rows);
//   - the window aggregation counts every row the filter counts: a row is
//     counted only when its window has not fired at the filter's
//     watermark, which is never below the aggregation's for that row (the
//     filter runs in the subtasks of the relation, forward, and the
//     aggregation's watermark is the least of theirs). Idle sources would
//     let the aggregation's watermark pass a subtask's, so with
//     table.exec.source.idle-timeout set no filter is planned.
//
// SET 'table.optimizer.join-max-prefilter-enabled' = 'false' plans none.
//
// The filter's maxima are not checkpointed: a restored filter starts with
// none and passes more rows. Neither are watermarks: a restored window
// aggregation fires again a window that had fired before the restore if
// rows come late for it before its watermark has caught up, and the join
// then holds both maxima of the window. The filter counts no row before
// its first watermark, but a late row that comes after it, while the
// watermark is still below the window's end, can raise the filter's
// maximum above the window's first one, and a later row at that first
// maximum is then dropped where the join would have matched it.

// maxPrefilterSetting turns the filter off when 'false'.
const maxPrefilterSetting = "table.optimizer.join-max-prefilter-enabled"

// maxPrefilter is the filter of one side of a regular join (see above).
type maxPrefilter struct {
	side     int // 0 left, 1 right
	col      int // of the side's rows: the value compared with the maximum
	time     int // of the side's rows: the event time
	assigner window.Assigner
}

// maxPrefilterAllowed tells whether the settings allow the filter. The
// build asks again: a SET after the INSERT changes them.
func maxPrefilterAllowed(cat *Catalog) bool {
	return !sourceIdleness(cat) && settingOn(cat, maxPrefilterSetting) && settingOn(cat, reuseSourceSetting)
}

// planMaxPrefilter finds the filter of j, nil if none applies.
func (j *RegularJoinRel) planMaxPrefilter(cat *Catalog) *maxPrefilter {
	if j.spec.kind != eddy.InnerJoin || !maxPrefilterAllowed(cat) {
		return nil
	}
	ins := [2]Rel{j.spec.left, j.spec.right}
	nl := j.spec.width()
	d := newDigester()
	same := func(a, b Rel) bool { return a == b || d.id(a) == d.id(b) }
	for side := range 2 {
		own, other := ins[side], ins[1-side]
		if !own.Props().Mode.IsInsertOnly() {
			continue
		}
		for _, k := range j.keys {
			ke := [2]expr.Expr{k.left, k.right}
			oc, ok1 := ke[side].(*expr.Column)
			mc, ok2 := ke[1-side].(*expr.Column)
			if !ok1 || !ok2 || !own.Schema().FieldType(oc.Index).IsIntegral() {
				continue
			}
			wa, arg, ok := maxOfWindow(other, mc.Index)
			if !ok {
				continue
			}
			// A relation under both inputs where the maximum's argument
			// is the compared column, and under the window aggregation
			// its time column: no filter between it and the aggregation.
			keyPath := columnPath(own, oc.Index)
			timePath := columnPath(wa.TVF.Input, wa.TVF.TimeCol)
			for _, a := range columnPath(wa.Input, arg) {
				if a.filtered {
					break
				}
				o, ok := find(keyPath, func(x relCol) bool { return x.col == a.col && same(x.r, a.r) })
				if !ok || o.filtered {
					continue
				}
				tp, ok := find(timePath, func(x relCol) bool { return x.r == a.r && !x.filtered })
				if !ok {
					continue
				}
				t, ok := windowBound(j.residual, side, nl, own, other, wa, o.r, tp.col)
				if !ok {
					continue
				}
				return &maxPrefilter{side: side, col: oc.Index, time: t, assigner: wa.TVF.Assigner}
			}
		}
	}
	return nil
}

// maxOfWindow follows column col of r down to a window aggregation whose
// column it is: the MAX, without FILTER, of column arg of the aggregation's
// input, over TUMBLE windows in event time with no other grouping.
func maxOfWindow(r Rel, col int) (wa *WindowAggregateRel, arg int, ok bool) {
	path := columnPath(r, col)
	last := path[len(path)-1]
	wa, isAgg := last.r.(*WindowAggregateRel)
	if !isAgg || wa.TVF == nil || wa.TVF.Kind != "TUMBLE" || wa.TVF.Assigner.IsProcessingTime() || wa.Keys != 0 {
		return nil, 0, false
	}
	i := last.col - len(wa.Bounds)
	if i < 0 || i >= len(wa.Calls) {
		return nil, 0, false
	}
	call := wa.Calls[i]
	if call.Name != "MAX" || call.Filter >= 0 || call.Arg < 0 {
		return nil, 0, false
	}
	return wa, call.Arg, true
}

// relCol is a column of a relation on the way down from a column of
// another through the Calcs that pass it as it is (columnPath); filtered
// tells whether a Calc above the relation on the way has a condition.
type relCol struct {
	r        Rel
	col      int
	filtered bool
}

// columnPath returns column col of r, then the column of the relation
// under r that it is, and so on through the Calcs that pass it as it is:
// the path ends at a relation that is not a Calc, or a Calc that computes
// the column.
func columnPath(r Rel, col int) []relCol {
	var out []relCol
	filtered := false
	for {
		out = append(out, relCol{r, col, filtered})
		c, ok := r.(*CalcRel)
		if !ok || col < 0 || col >= len(c.Projs) {
			return out
		}
		p, ok := c.Projs[col].(*expr.Column)
		if !ok || p.Index < 0 || !p.T.EqualIgnoringNullability(c.Input.Schema().FieldType(p.Index)) {
			return out
		}
		filtered = filtered || c.Cond != nil
		col, r = p.Index, c.Input
	}
}

// find returns the first element of path that ok accepts.
func find(path []relCol, ok func(relCol) bool) (relCol, bool) {
	for _, x := range path {
		if ok(x) {
			return x, true
		}
	}
	return relCol{}, false
}

// windowBound finds, in the join's residual conditions, the bounds that
// confine a row of side (whose event time, column t of its row, is column
// tcol of base) to the windows whose end e, a window_end of wa read by the
// other input, lies in [t, t + size]. It returns t.
func windowBound(residual []expr.Expr, side, nl int, own, other Rel, wa *WindowAggregateRel, base Rel, tcol int) (int, bool) {
	size := wa.TVF.Assigner.Size()
	upper, lower := false, false
	t := -1
	for _, c := range residual {
		call, ok := c.(*expr.Call)
		if !ok || len(call.Args) != 2 {
			continue
		}
		op := call.Name
		ca, oa, ok1 := timeTerm(call.Args[0])
		cb, ob, ok2 := timeTerm(call.Args[1])
		if !ok1 || !ok2 || truncatesTime(call.Args[0]) || truncatesTime(call.Args[1]) {
			continue
		}
		// Put the other input's column first: e + oe op t + ot.
		if (ca < nl) == (side == 0) {
			ca, oa, cb, ob = cb, ob, ca, oa
			op = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
		}
		ec, tc := ca, cb
		if side == 0 {
			ec -= nl
		} else {
			tc -= nl
		}
		if ec < 0 || ec >= other.Schema().Len() || tc < 0 || tc >= own.Schema().Len() || t >= 0 && tc != t {
			continue
		}
		// The other input's column must be the window_end of wa, the
		// side's its event time.
		ep := columnPath(other, ec)
		if e := ep[len(ep)-1]; e.r != wa || e.col >= len(wa.Bounds) || wa.Bounds[e.col] != 1 {
			continue
		}
		if _, ok := find(columnPath(own, tc), func(x relCol) bool { return x.r == base && x.col == tcol }); !ok {
			continue
		}
		tt, et := own.Schema().FieldType(tc), other.Schema().FieldType(ec)
		if !compactTime(tt) || !compactTime(et) || tt.Kind() != et.Kind() {
			continue
		}
		off := ob - oa // e op t + off
		switch op {
		case "=":
			upper = upper || off <= size
			lower = lower || off >= 0
		case "<", "<=":
			upper = upper || off <= size
		case ">", ">=":
			lower = lower || off >= 0
		default:
			continue
		}
		t = tc
	}
	return t, upper && lower
}

// String renders the filter as EXPLAIN shows it, for a join of row type rt
// whose left input has nl columns.
func (p *maxPrefilter) String(rt *types.RowType, nl int) string {
	at := p.side * nl
	side := [2]string{"left", "right"}[p.side]
	return fmt.Sprintf("%s: %s >= MAX so far in TUMBLE(%s, %v)", side, types.QuoteIdentifier(rt.Field(at+p.col).Name),
		types.QuoteIdentifier(rt.Field(at+p.time).Name), time.Duration(p.assigner.Size())*time.Millisecond)
}

// apply filters the side's stream.
func (p *maxPrefilter) apply(s *eddy.Stream[Rec]) *eddy.Stream[Rec] {
	return eddy.Process(s, func() eddy.ProcessFunction[Rec, Rec] {
		return &maxFilter{p: p, max: map[int64]int64{}, sweepAt: minSweep}
	}).Name("MaxPrefilter")
}

// maxFilter is the filter of one subtask: the highest value counted so
// far of each window, by the window's end.
type maxFilter struct {
	p   *maxPrefilter
	max map[int64]int64
	// sweepAt is the number of windows at which the filter next forgets
	// those that have fired: twice as many as it kept the last time, so
	// that sweeping costs a constant per window.
	sweepAt int
}

// minSweep is the fewest windows the filter sweeps.
const minSweep = 16

func (f *maxFilter) ProcessElement(ctx *eddy.ProcessContext[Rec], r Rec) error {
	row, p := r.Row, f.p
	if r.Kind != changelog.Insert || row.IsNull(p.col) || row.IsNull(p.time) {
		ctx.Emit(r)
		return nil
	}
	t, v := row.TimestampMillis(p.time), row.Int64(p.col)
	w := p.assigner.Pane(t)
	m, seen := f.max[w.End]
	if seen && v < m && t != w.Start {
		return nil // below its window's maximum: it joins nothing
	}
	// No watermark yet (math.MinInt64): nothing is counted.
	if wm := ctx.CurrentWatermark(); wm != math.MinInt64 && w.End-1 > wm && (!seen || v > m) {
		if !seen && len(f.max) >= f.sweepAt {
			for end := range f.max {
				if end-1 <= wm {
					delete(f.max, end)
				}
			}
			f.sweepAt = max(minSweep, 2*len(f.max))
		}
		f.max[w.End] = v
	}
	ctx.Emit(r)
	return nil
}

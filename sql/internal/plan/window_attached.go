package plan

import (
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
)

// attachedWindows returns the windows of in when the GROUP BY groups
// aggregates them: in is a windowed relation in event time (a window
// aggregation, Top-N, deduplication or join, or a projection of one that
// keeps window_start and window_end, under any names) and the grouping
// columns include its window_start and window_end.
func attachedWindows(in Rel, groups []expr.Expr) (windowCols, bool) {
	if _, ok := in.(*WindowTVFRel); ok {
		return windowCols{}, false // windowOf's
	}
	wc, ok := windowColsOf(in)
	if !ok || !in.Props().Mode.IsInsertOnly() {
		return windowCols{}, false
	}
	start, end := false, false
	for _, g := range groups {
		if c, ok := g.(*expr.Column); ok {
			start = start || c.Index == wc.start
			end = end || c.Index == wc.end
		}
	}
	return wc, start && end
}

// attachedWindowAggregate plans GROUP BY window_start, window_end, keys
// over a windowed relation in, as Flink's planner cascades window
// aggregations: the windows are those of in's rows, and each row is
// aggregated in the window its window_start and window_end give, which
// fires when the watermark passes its end, as the window of a TVF does.
// The output keeps the windows, for the window operators above it.
func (q *queryPlanner) attachedWindowAggregate(n *parser.Select, in Rel, wc windowCols, groups []expr.Expr, groupNames []string, g *aggregation, cond expr.Expr, items []expr.Expr, names []string, having expr.Expr) (Rel, error) {
	var pre []expr.Expr
	var preNames []string
	bounds := make([]int, len(groups)) // -1 key, 1 end
	keyIdx := make([]int, len(groups))
	startGroup, startName := -1, ""
	for i, ge := range groups {
		bounds[i] = -1
		if c, ok := ge.(*expr.Column); ok {
			switch {
			case c.Index == wc.end:
				bounds[i] = 1
				continue
			case c.Index == wc.start && startGroup < 0:
				startGroup, startName = i, groupNames[i]
				continue
			}
		}
		keyIdx[i] = len(pre)
		pre = append(pre, ge)
		preNames = append(preNames, groupNames[i])
	}
	rt := in.Schema()
	// The window_start is the last key, the window_end the column after.
	keyIdx[startGroup] = len(pre)
	pre = append(pre, &expr.Column{Index: wc.start, Name: rt.Field(wc.start).Name, T: rt.FieldType(wc.start)},
		&expr.Column{Index: wc.end, Name: rt.Field(wc.end).Name, T: rt.FieldType(wc.end)})
	preNames = append(preNames, startName, "$window_end")
	wa := &WindowAggregateRel{attached: &wc, attachedDesc: wc.describe(rt), Keys: len(pre) - 1, Bounds: bounds, KeyIdx: keyIdx, Calls: g.calls}
	return q.finishWindowAggregate(n, wa, in, pre, preNames, groups, groupNames, g, cond, items, names, having)
}

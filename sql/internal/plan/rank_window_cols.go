package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// windowCols are the window columns of a windowed relation: the rows of a
// window TVF, of a window aggregation, and of the window Top-N,
// deduplication and join above them, as Flink's planner tracks them. Each
// row belongs to the window [start, end) its columns give, and the
// window's rows are complete once the watermark passes end - 1, so the
// window operators above such a relation keep a window's rows until then,
// emit its result and forget it. Only event-time windows are tracked:
// windows in processing time are planned as regular operators.
type windowCols struct {
	// start and end are the columns of window_start and window_end.
	start, end int
	// times are the columns that hold each row's event time: the
	// TVF's time column and window_time.
	times []int
	// kind and params describe the windows: TUMBLE, "size=[...]".
	kind, params string
}

// describe renders the windows as Flink's plans do:
// TUMBLE(win_start=[window_start], win_end=[window_end], size=[...]).
func (w windowCols) describe(rt *types.RowType) string {
	s := fmt.Sprintf("%s(win_start=[%s], win_end=[%s]", w.kind, rt.Field(w.start).Name, rt.Field(w.end).Name)
	if w.params != "" {
		s += ", " + w.params
	}
	return s + ")"
}

// isTime tells whether col holds the rows' event time.
func (w windowCols) isTime(col int) bool {
	for _, t := range w.times {
		if t == col {
			return true
		}
	}
	return false
}

// shift returns w over a row whose columns start d columns later.
func (w windowCols) shift(d int) windowCols {
	out := w
	out.start, out.end = w.start+d, w.end+d
	out.times = nil
	for _, t := range w.times {
		out.times = append(out.times, t+d)
	}
	return out
}

// windowColsOf finds the window columns of r's rows, if r is a windowed
// relation in event time whose window_start and window_end are columns.
func windowColsOf(r Rel) (windowCols, bool) {
	switch r := r.(type) {
	case *WindowTVFRel:
		if r.Kind == "SESSION" || r.Assigner.IsProcessingTime() {
			// A SESSION TVF is only aggregated.
			return windowCols{}, false
		}
		n := r.Input.Schema().Len()
		_, params, _ := strings.Cut(r.args, ", ")
		return windowCols{start: n, end: n + 1, times: []int{r.TimeCol, n + 2}, kind: r.Kind, params: params}, true
	case *WindowAggregateRel:
		w := windowCols{start: -1, end: -1}
		switch {
		case r.attached != nil:
			w.kind, w.params = r.attached.kind, r.attached.params
			for i, b := range r.Bounds {
				if b < 0 && r.KeyIdx[i] == r.Keys-1 {
					w.start = i // the window_start, the last key
				}
			}
		case r.TVF.Assigner.IsProcessingTime():
			return windowCols{}, false
		default:
			w.kind = r.TVF.Kind
			_, w.params, _ = strings.Cut(r.TVF.args, ", ")
		}
		for i, b := range r.Bounds {
			switch b {
			case 0:
				w.start = i
			case 1:
				w.end = i
			case 2:
				w.times = append(w.times, i)
			}
		}
		return w, w.start >= 0 && w.end >= 0
	case *CalcRel:
		in, ok := windowColsOf(r.Input)
		if !ok {
			return windowCols{}, false
		}
		out := windowCols{start: -1, end: -1, kind: in.kind, params: in.params}
		for i, e := range r.Projs {
			c, ok := e.(*expr.Column)
			if !ok {
				continue
			}
			switch {
			case c.Index == in.start && out.start < 0:
				out.start = i
			case c.Index == in.end && out.end < 0:
				out.end = i
			case in.isTime(c.Index):
				out.times = append(out.times, i)
			}
		}
		return out, out.start >= 0 && out.end >= 0
	case *WindowRankRel:
		return r.Window, true
	case *WindowDedupRel:
		return r.Window, true
	case *WindowJoinRel:
		return r.window, r.windowed
	}
	return windowCols{}, false
}

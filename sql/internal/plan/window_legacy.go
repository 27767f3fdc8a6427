package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// legacyWindow is a group window of Flink's legacy syntax: GROUP BY
// TUMBLE(ts, size), HOP(ts, slide, size) or SESSION(ts, gap), whose bounds
// the select list reads with TUMBLE_START, TUMBLE_END, TUMBLE_ROWTIME and
// the like.
type legacyWindow struct {
	q    *queryPlanner
	kind string
	tvf  *WindowTVFRel
}

// legacyGroupWindow finds a legacy group window among the GROUP BY items
// of n. If there is one, it returns the other items plus window_start,
// window_end and window_time, the window TVF over in, and its scope;
// otherwise it returns the items, in and sc unchanged.
func (q *queryPlanner) legacyGroupWindow(n *parser.Select, in Rel, sc *scope) ([]parser.Expr, Rel, *scope, *legacyWindow, error) {
	var rest []parser.Expr
	var win *parser.FuncCall
	for _, ge := range n.GroupBy {
		if fc, ok := ge.(*parser.FuncCall); ok {
			switch strings.ToUpper(fc.Name.Last().Name) {
			case "TUMBLE", "HOP", "SESSION":
				if win != nil {
					return nil, nil, nil, nil, q.errorf(fc.Pos, "a GROUP BY has at most one group window")
				}
				win = fc
				continue
			}
		}
		rest = append(rest, ge)
	}
	if win == nil {
		return n.GroupBy, in, sc, nil, nil
	}
	kind := strings.ToUpper(win.Name.Last().Name)
	want := map[string]int{"TUMBLE": 2, "HOP": 3, "SESSION": 2}[kind]
	if len(win.Args) != want {
		return nil, nil, nil, nil, q.errorf(win.Pos, "the group window %s takes %d arguments: the time attribute and %s", kind,
			want, map[string]string{"TUMBLE": "the size", "HOP": "the slide and the size", "SESSION": "the gap"}[kind])
	}
	ref, ok := win.Args[0].(*parser.Ref)
	if !ok {
		return nil, nil, nil, nil, q.errorf(win.Args[0].Position(), "the first argument of %s is a time attribute column", kind)
	}
	// The TVF form of the window: TABLE in, DESCRIPTOR(ts), the intervals.
	a := q.analyzer(sc)
	col, err := a.Expr(ref)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	c, ok := col.(*expr.Column)
	p := in.Props()
	if !ok || c.Index != p.Rowtime && c.Index != p.Proctime {
		return nil, nil, nil, nil, q.errorf(ref.Pos, "%s is not a time attribute: a group window needs the column of WATERMARK FOR or one computed by PROCTIME()", ref)
	}
	args := []parser.Expr{&parser.TableArg{Pos: win.Pos}, &parser.Descriptor{Pos: ref.Pos, Columns: []*parser.Ident{{Pos: ref.Pos, Name: c.Name}}}}
	args = append(args, win.Args[1:]...)
	w, err := q.windowTVF(kind, win.Pos, in, "", args, c.Index)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	nIn := in.Schema().Len()
	ext := &scope{entries: append([]scopeEntry{}, sc.entries...), outer: sc.outer}
	ext.entries = append(ext.entries, scopeEntry{qualifier: "", rt: types.MustRowType(w.rt.Fields()[nIn:]...), offset: nIn})
	// window_start, window_end and window_time (renamed if the input has
	// columns of those names).
	for i := 0; i < 3; i++ {
		rest = append(rest, &parser.Ref{Pos: win.Pos, Parts: []*parser.Ident{{Pos: win.Pos, Name: w.rt.Field(nIn + i).Name}}})
	}
	return rest, w, ext, &legacyWindow{q: q, kind: kind, tvf: w}, nil
}

// auxiliary wraps the aggregate hook of the select list: TUMBLE_START and
// the other auxiliary functions of the group window are its bounds.
func (l *legacyWindow) auxiliary(next func(*parser.FuncCall) (expr.Expr, bool, error)) func(*parser.FuncCall) (expr.Expr, bool, error) {
	nIn := l.tvf.Input.Schema().Len()
	return func(c *parser.FuncCall) (expr.Expr, bool, error) {
		name := strings.ToUpper(c.Name.Last().Name)
		kind, part, ok := strings.Cut(name, "_")
		if !ok || (kind != "TUMBLE" && kind != "HOP" && kind != "SESSION") {
			return next(c)
		}
		if kind != l.kind {
			return nil, true, l.q.errorf(c.Pos, "%s refers to a %s window, but the query groups by %s", name, kind, l.kind)
		}
		idx := map[string]int{"START": 0, "END": 1, "ROWTIME": 2}[part]
		if part != "START" && part != "END" && part != "ROWTIME" {
			return nil, true, l.q.errorf(c.Pos, "%s is not supported: the group window's auxiliary functions are %s_START, %s_END and %s_ROWTIME", name, kind, kind, kind)
		}
		f := l.tvf.rt.Field(nIn + idx)
		return &expr.Column{Index: nIn + idx, Name: f.Name, T: f.Type}, true, nil
	}
}

// windowTVF builds the window TVF kind over in from its arguments (the
// first, the table, is in itself), with time column tc.
func (q *queryPlanner) windowTVF(kind string, pos parser.Pos, in Rel, qual string, args []parser.Expr, tc int) (*WindowTVFRel, error) {
	call := &parser.FuncCall{Pos: pos, Name: &parser.ObjectName{Parts: []*parser.Ident{{Pos: pos, Name: kind}}}, Args: args}
	r, _, err := q.tableFunctionOver(&parser.TableFunction{Pos: pos, Call: call}, in, qual, nil)
	if err != nil {
		return nil, err
	}
	w, ok := r.(*WindowTVFRel)
	if !ok {
		return nil, fmt.Errorf("sql: internal: %T is not a window TVF", r)
	}
	return w, nil
}

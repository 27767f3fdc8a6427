package plan

import (
	"fmt"
	"github.com/eddystream/eddy/agg"
	"strings"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/window"
)

// WindowTVFRel is a window table-valued function, TUMBLE, HOP, CUMULATE or
// SESSION over a table: its rows with the columns window_start,
// window_end and window_time of each window they fall in.
type WindowTVFRel struct {
	Input    Rel
	Kind     string // TUMBLE, HOP, CUMULATE, SESSION
	TimeCol  int
	Assigner window.Assigner
	// PartitionBy holds the SESSION partition columns.
	PartitionBy []int
	args        string
	rt          *types.RowType
}

func (w *WindowTVFRel) Schema() *types.RowType { return w.rt }

func (w *WindowTVFRel) Props() Props {
	p := w.Input.Props()
	return Props{Mode: p.Mode, Rowtime: -1, Proctime: -1}
}

func (w *WindowTVFRel) Inputs() []Rel { return []Rel{w.Input} }

func (w *WindowTVFRel) Describe() string {
	return fmt.Sprintf("WindowTableFunction(window=[%s(%s)])", w.Kind, w.args)
}

// build assigns every row to its windows, one output row per window. A
// window aggregation reads the TVF's input instead (windowAggregate).
func (w *WindowTVFRel) build(b *builder) (*eddy.Stream[Rec], error) {
	if w.Kind == "SESSION" {
		return nil, fmt.Errorf("a SESSION window table function can only be aggregated (GROUP BY window_start, window_end)")
	}
	s, err := b.stream(w.Input)
	if err != nil {
		return nil, err
	}
	rt, n, a := w.rt, w.Input.Schema().Len(), w.Assigner
	in := w.Input.Schema()
	ts := w.TimeCol
	// Each subtask has its writer and the compiled copies of the input's
	// columns.
	rows := eddy.Process(s, func() eddy.ProcessFunction[Rec, Rec] {
		wr := types.NewRowWriter(rt, types.NewArena(0))
		sets := make([]func(types.Row, *types.RowWriter), n)
		for i := range sets {
			sets[i], _ = expr.Setter(&expr.Column{Index: i, T: in.FieldType(i)}, i)
		}
		return eddy.ProcessFunc[Rec, Rec](func(ctx *eddy.ProcessContext[Rec], c Rec) error {
			for _, win := range a.Windows(c.Row.TimestampMillis(ts)) {
				wr.Reset()
				for _, set := range sets {
					set(c.Row, wr)
				}
				wr.SetTimestampMillis(n, win.Start)
				wr.SetTimestampMillis(n+1, win.End)
				wr.SetTimestampMillis(n+2, win.End-1)
				ctx.Emit(Rec{Kind: c.Kind, Row: wr.Finish()})
			}
			return nil
		})
	})
	return eddy.AsChangelog(rows, s.ChangelogMode()), nil
}

// windowParams are the parameters of the window table functions, in order.
var windowParams = map[string][]string{
	"TUMBLE":   {"DATA", "TIMECOL", "SIZE", "OFFSET"},
	"HOP":      {"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"},
	"CUMULATE": {"DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"},
	"SESSION":  {"DATA", "TIMECOL", "GAP"},
}

// windowArgs returns the arguments of a window TVF call by parameter name,
// positional or named.
func (q *queryPlanner) windowArgs(c *parser.FuncCall) (string, []string, map[string]parser.Expr, error) {
	name := strings.ToUpper(c.Name.Last().Name)
	params := windowParams[name]
	if params == nil {
		return "", nil, nil, q.errorf(c.Pos, "unknown table function %s: the window table functions are TUMBLE, HOP, CUMULATE and SESSION", name)
	}
	args := map[string]parser.Expr{}
	for i, a := range c.Args {
		if na, ok := a.(*parser.NamedArg); ok {
			args[strings.ToUpper(na.Name.Name)] = na.Value
			continue
		}
		if i >= len(params) {
			return "", nil, nil, q.errorf(a.Position(), "%s takes at most %d arguments (%s)", name, len(params), strings.Join(params, ", "))
		}
		args[params[i]] = a
	}
	return name, params, args, nil
}

// tableFunction plans TABLE(TUMBLE(...)), HOP, CUMULATE and SESSION.
func (q *queryPlanner) tableFunction(n *parser.TableFunction, outer *scope) (Rel, *scope, error) {
	if isTriest(n.Call) {
		return q.triest(n, outer) // triest.go
	}
	name, _, args, err := q.windowArgs(n.Call)
	if err != nil {
		return nil, nil, err
	}
	data, ok := args["DATA"].(*parser.TableArg)
	if !ok {
		return nil, nil, q.errorf(n.Call.Pos, "the first argument of %s is the table: TABLE name", name)
	}
	in, qual, err := q.tableName(&parser.TableName{Pos: data.Pos, Name: data.Name})
	if err != nil {
		return nil, nil, err
	}
	return q.tableFunctionOver(n, in, qual, outer)
}

// tableFunctionOver plans the window TVF n over the relation in (its table
// argument, named qual).
func (q *queryPlanner) tableFunctionOver(n *parser.TableFunction, in Rel, qual string, outer *scope) (Rel, *scope, error) {
	c := n.Call
	name, params, args, err := q.windowArgs(c)
	if err != nil {
		return nil, nil, err
	}
	data, _ := args["DATA"].(*parser.TableArg)
	if data == nil {
		data = &parser.TableArg{Pos: c.Pos}
	}
	desc, ok := args["TIMECOL"].(*parser.Descriptor)
	if !ok || len(desc.Columns) != 1 {
		return nil, nil, q.errorf(c.Pos, "the second argument of %s is the time column: DESCRIPTOR(column)", name)
	}
	tc, ok := in.Schema().Index(desc.Columns[0].Name)
	if !ok {
		return nil, nil, q.errorf(desc.Columns[0].Pos, "%s has no column %s; its columns are %s", qual, desc.Columns[0].Name, strings.Join(in.Schema().Names(), ", "))
	}
	p := in.Props()
	if tc != p.Rowtime && tc != p.Proctime {
		return nil, nil, q.errorf(desc.Pos, "%s is not a time attribute of %s: window on the column of its WATERMARK FOR, or on a column computed by PROCTIME()", desc.Columns[0].Name, qual)
	}
	procTime := tc == p.Proctime
	dur := func(key string) (time.Duration, error) {
		e, ok := args[key]
		if !ok {
			return 0, q.errorf(c.Pos, "%s needs its %s argument (an INTERVAL)", name, key)
		}
		a := &expr.Analyzer{Src: q.src, Funcs: q.cat.Funcs}
		x, err := a.Expr(e)
		if err != nil {
			return 0, err
		}
		l, ok := x.(*expr.Literal)
		if !ok || l.T.Kind() != types.KindIntervalDayTime {
			return 0, q.errorf(e.Position(), "%s of %s must be a constant INTERVAL of days to seconds, not %s", key, name, x.Type())
		}
		ms, _ := l.V.(int64)
		if ms <= 0 {
			return 0, q.errorf(e.Position(), "%s of %s must be positive", key, name)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	w := &WindowTVFRel{Input: in, Kind: name, TimeCol: tc}
	var parts []string
	for _, k := range params[2:] {
		if _, ok := args[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=[%s]", strings.ToLower(k), args[k]))
		}
	}
	w.args = desc.Columns[0].Name + ", " + strings.Join(parts, ", ")
	switch name {
	case "TUMBLE":
		size, err := dur("SIZE")
		if err != nil {
			return nil, nil, err
		}
		w.Assigner = window.Tumbling(size)
	case "HOP":
		slide, err := dur("SLIDE")
		if err != nil {
			return nil, nil, err
		}
		size, err := dur("SIZE")
		if err != nil {
			return nil, nil, err
		}
		w.Assigner = window.Sliding(size, slide)
	case "CUMULATE":
		step, err := dur("STEP")
		if err != nil {
			return nil, nil, err
		}
		size, err := dur("SIZE")
		if err != nil {
			return nil, nil, err
		}
		if size%step != 0 {
			return nil, nil, q.errorf(c.Pos, "the SIZE of CUMULATE must be a multiple of its STEP")
		}
		w.Assigner = window.Cumulate(step, size)
	case "SESSION":
		gap, err := dur("GAP")
		if err != nil {
			return nil, nil, err
		}
		w.Assigner = window.Session(gap)
		for _, pe := range data.PartitionBy {
			ref, ok := pe.(*parser.Ref)
			if !ok || len(ref.Parts) != 1 {
				return nil, nil, q.errorf(pe.Position(), "PARTITION BY of SESSION takes columns")
			}
			i, ok := in.Schema().Index(ref.Parts[0].Name)
			if !ok {
				return nil, nil, q.errorf(pe.Position(), "%s has no column %s", qual, ref.Parts[0].Name)
			}
			w.PartitionBy = append(w.PartitionBy, i)
		}
	}
	if _, ok := args["OFFSET"]; ok {
		off, err := dur("OFFSET")
		if err != nil {
			return nil, nil, err
		}
		w.Assigner = w.Assigner.WithOffset(off)
	}
	if procTime {
		w.Assigner = w.Assigner.InProcessingTime()
	}
	if err := w.Assigner.Validate(); err != nil {
		return nil, nil, q.errorf(c.Pos, "%v", err)
	}
	fs := append([]types.Field{}, in.Schema().Fields()...)
	ts := types.TimestampType(3).NotNull()
	fs = append(fs, types.F("window_start", ts), types.F("window_end", ts), types.F("window_time", ts))
	w.rt = types.MustRowType(dedupNames(fs)...)
	var r Rel = w
	if n.Alias != nil {
		var err error
		if r, qual, err = q.alias(r, qual, n.Alias); err != nil {
			return nil, nil, err
		}
	} else {
		qual = ""
	}
	sc := &scope{outer: outer}
	sc.add(qual, r.Schema())
	return r, sc, nil
}

// windowOf returns the window TVF that in reads, when the grouping
// expressions include its window_start and window_end: the GROUP BY is then
// a window aggregation.
func windowOf(in Rel, groups []expr.Expr) (*WindowTVFRel, bool) {
	w, ok := in.(*WindowTVFRel)
	if !ok {
		if c, isCalc := in.(*CalcRel); isCalc && c.Cond == nil && len(c.Projs) == c.Input.Schema().Len() {
			w, ok = c.Input.(*WindowTVFRel)
		}
		if !ok {
			return nil, false
		}
	}
	n := w.Input.Schema().Len()
	start, end := false, false
	for _, g := range groups {
		if c, ok := g.(*expr.Column); ok {
			start = start || c.Index == n
			end = end || c.Index == n+1
		}
	}
	return w, start && end
}

// windowAggregate plans GROUP BY window_start, window_end, keys over a
// window TVF: a window operator per key over the TVF's input (Flink's
// WindowAggregate); its rows are the grouping expressions (the window's
// bounds for window_start, window_end and window_time) then the calls.
func (q *queryPlanner) windowAggregate(n *parser.Select, w *WindowTVFRel, groups []expr.Expr, groupNames []string, g *aggregation, cond expr.Expr, items []expr.Expr, names []string, having expr.Expr) (Rel, error) {
	nIn := w.Input.Schema().Len()
	readsWindow := func(e expr.Expr) bool {
		found := false
		expr.Walk(e, func(x expr.Expr) bool {
			if c, ok := x.(*expr.Column); ok && c.Index >= nIn {
				found = true
			}
			return true
		})
		return found
	}
	if !w.Input.Props().Mode.IsInsertOnly() {
		return nil, q.errorf(n.Pos, "a window aggregation needs an insert-only input; its input is %s", w.Input.Props().Mode.Describe())
	}
	// The keys are the grouping expressions that are not window bounds.
	var pre []expr.Expr
	var preNames []string
	bounds := make([]int, len(groups)) // -1 key, 0 start, 1 end, 2 time
	keyIdx := make([]int, len(groups))
	for i, ge := range groups {
		bounds[i] = -1
		if c, ok := ge.(*expr.Column); ok && c.Index >= nIn {
			bounds[i] = c.Index - nIn
			continue
		}
		if readsWindow(ge) {
			return nil, q.errorf(n.Pos, "GROUP BY %s: a grouping expression may not compute with the window's columns", ge)
		}
		keyIdx[i] = len(pre)
		pre = append(pre, ge)
		preNames = append(preNames, groupNames[i])
	}
	if w.Kind == "SESSION" {
		// A session window is per key: its PARTITION BY columns must be
		// grouped.
		for _, p := range w.PartitionBy {
			found := false
			for _, ge := range groups {
				if c, ok := ge.(*expr.Column); ok && c.Index == p {
					found = true
				}
			}
			if !found {
				return nil, q.errorf(n.Pos, "a SESSION window partitioned by %s must group by it", w.Input.Schema().Field(p).Name)
			}
		}
	}
	for i, c := range g.calls {
		if g.args[i] != nil && readsWindow(g.args[i]) {
			return nil, q.errorf(n.Pos, "%s: an aggregate of a window's columns is not supported", c.text)
		}
		if g.filters[i] != nil && readsWindow(g.filters[i]) {
			return nil, q.errorf(n.Pos, "%s: a FILTER on a window's columns is not supported", c.text)
		}
	}
	if cond != nil && readsWindow(cond) {
		return nil, q.errorf(n.Pos, "a WHERE on the window's columns is not supported; filter the aggregated rows with HAVING")
	}
	wa := &WindowAggregateRel{TVF: w, Keys: len(pre), Bounds: bounds, KeyIdx: keyIdx, Calls: g.calls}
	return q.finishWindowAggregate(n, wa, w.Input, pre, preNames, groups, groupNames, g, cond, items, names, having)
}

// finishWindowAggregate completes the window aggregation wa, whose keys
// are pre (the key expressions over in, named preNames): its
// pre-projection over in (the keys, then the calls' arguments and
// filters, where WHERE cond holds), its late rows, its aggregation and the
// select list's Calc above it.
func (q *queryPlanner) finishWindowAggregate(n *parser.Select, wa *WindowAggregateRel, in Rel, pre []expr.Expr, preNames []string, groups []expr.Expr, groupNames []string, g *aggregation, cond expr.Expr, items []expr.Expr, names []string, having expr.Expr) (Rel, error) {
	for i, c := range g.calls {
		if g.args[i] != nil {
			c.Arg = len(pre)
			pre = append(pre, g.args[i])
			preNames = append(preNames, fmt.Sprintf("$a%d", i))
		}
		if g.filters[i] != nil {
			c.Filter = len(pre)
			pre = append(pre, g.filters[i])
			preNames = append(preNames, fmt.Sprintf("$f%d", i))
		}
	}
	preCalc := newCalc(in, pre, uniqueNames(preNames), cond)
	late, preCalc, err := q.lateRows(n, preCalc) // late.go
	if err != nil {
		return nil, err
	}
	fn, err := newSQLAgg(g.calls, preCalc.Schema(), false)
	if err != nil {
		return nil, q.errorf(n.Pos, "%v", err)
	}
	fs := make([]types.Field, 0, len(groups)+len(g.calls))
	for i, ge := range groups {
		fs = append(fs, types.F(groupNames[i], ge.Type()))
	}
	for i, c := range g.calls {
		fs = append(fs, types.F(fmt.Sprintf("EXPR$%d", i), c.T))
	}
	wa.Input, wa.fn, wa.late, wa.rt = preCalc, fn, late, types.MustRowType(dedupNames(fs)...)
	return newCalc(wa, items, uniqueNames(names), having), nil
}

// WindowAggregateRel aggregates the rows of each key and window of a
// window TVF, emitting one row per key and window when the watermark
// passes the window's end.
type WindowAggregateRel struct {
	Input Rel // the pre-projection of the TVF's input: keys, arguments, filters
	// TVF is the window function whose windows are aggregated; nil when
	// the windows are those of a windowed input's rows (attached).
	TVF *WindowTVFRel
	// attached is, for a window aggregation over a windowed relation (a
	// window aggregation, Top-N, deduplication or join, cascaded as in
	// Flink), that relation's windows: each row is aggregated in the
	// window its window_start and window_end give. The window_start is
	// then the last key, and the window_end follows the keys in the
	// input.
	attached *windowCols
	// attachedDesc is the attached windows as EXPLAIN shows them.
	attachedDesc string
	Keys         int
	Bounds       []int // per output group column: -1 a key, 0 window_start, 1 window_end, 2 window_time
	KeyIdx       []int
	Calls        []*aggCall
	fn           *sqlAgg
	rt           *types.RowType
	late         *lateRows // where late rows go (LATE_ROWS), nil to drop them
}

func (r *WindowAggregateRel) Schema() *types.RowType { return r.rt }

func (r *WindowAggregateRel) Props() Props {
	p := Props{Mode: changelog.InsertOnly, Rowtime: -1, Proctime: -1}
	if r.TVF != nil && !r.TVF.Assigner.IsProcessingTime() {
		// A window's rows are timestamped at its window_time (its end
		// less 1 ms) and come when the watermark passes it: as in Flink,
		// window_time is their rowtime, for the windows and joins above.
		for i, b := range r.Bounds {
			if b == 2 {
				p.Rowtime = i
				break
			}
		}
	}
	return p
}

func (r *WindowAggregateRel) Inputs() []Rel { return []Rel{r.Input} }

func (r *WindowAggregateRel) Describe() string {
	calls := make([]string, len(r.Calls))
	for i, c := range r.Calls {
		calls[i] = c.text
	}
	keys := r.Input.Schema().Names()[:r.Keys]
	late := ""
	if r.late != nil {
		late = ", " + r.late.String()
	}
	if r.attached != nil {
		return fmt.Sprintf("WindowAggregate(groupBy=[%s], window=[%s], select=[%s]%s)", strings.Join(keys[:r.Keys-1], ", "), r.attachedDesc, strings.Join(calls, ", "), late)
	}
	return fmt.Sprintf("WindowAggregate(groupBy=[%s], window=[%s(%s)], select=[%s]%s)", strings.Join(keys, ", "), r.TVF.Kind, r.TVF.args, strings.Join(calls, ", "), late)
}

func (r *WindowAggregateRel) build(b *builder) (*eddy.Stream[Rec], error) {
	s, err := b.stream(r.Input)
	if err != nil {
		return nil, err
	}
	assigner := window.Tumbling(time.Millisecond)
	if r.TVF != nil {
		assigner = r.TVF.Assigner
	} else {
		// Each row is in the window its window_end gives: timestamped at
		// the window's last millisecond, it falls in the millisecond's
		// window, [end - 1, end), of its key (whose last column is the
		// window_start), which fires when the watermark passes the
		// window, as the window's own did.
		endCol := r.Keys
		s = eddy.Process(s, func() eddy.ProcessFunction[Rec, Rec] {
			return eddy.ProcessFunc[Rec, Rec](func(ctx *eddy.ProcessContext[Rec], c Rec) error {
				ctx.EmitAt(c, c.Row.TimestampMillis(endCol)-1)
				return nil
			})
		})
	}
	// The output columns of the key: bounds[i] < 0 takes key column
	// keyIdx[i].
	var cols []keyColumn
	for i, bound := range r.Bounds {
		if bound < 0 {
			cols = append(cols, keyColumn{Out: i, Key: r.KeyIdx[i]})
		}
	}
	out := keyedBy(b, r.Input, s, seq(r.Keys), partitionedBy[windowBuilt]{
		int:      windowAggregateBy(b, r, assigner, intKeyWriter(cols)),
		nullable: windowAggregateBy(b, r, assigner, nullableIntKeyWriter(cols)),
		pair:     windowAggregateBy(b, r, assigner, intPairKeyWriter(cols)),
		encoded: func(g *eddy.KeyedStream[string, Rec], enc *types.KeyEncoder) windowBuilt {
			return windowAggregateBy(b, r, assigner, encodedKeyWriter(enc, cols))(g)
		},
	})
	return out.s, out.err
}

// windowBuilt is the stream of a window aggregation, or the error that
// building it met.
type windowBuilt struct {
	s   *eddy.Stream[Rec]
	err error
}

// windowAggregateBy returns the aggregation of r over its input grouped by
// keys of type K, which writeKey writes into the output rows.
func windowAggregateBy[K comparable](b *builder, r *WindowAggregateRel, assigner window.Assigner, writeKey func(K, *types.RowWriter)) func(*eddy.KeyedStream[K, Rec]) windowBuilt {
	return func(keyed *eddy.KeyedStream[K, Rec]) windowBuilt {
		s, err := buildWindowAggregate(b, r, keyed, assigner, writeKey)
		return windowBuilt{s, err}
	}
}

// buildWindowAggregate builds the aggregation of r over keyed, whose keys
// writeKey writes into the output rows.
func buildWindowAggregate[K comparable](b *builder, r *WindowAggregateRel, keyed *eddy.KeyedStream[K, Rec], assigner window.Assigner, writeKey func(K, *types.RowWriter)) (*eddy.Stream[Rec], error) {
	ws := eddy.Window(keyed, assigner)
	if r.late != nil {
		ws = ws.SideOutputLateData(r.late.tag())
	}
	rt, fn := r.rt, r.fn
	bounds := r.Bounds
	// newRow returns a subtask's function writing the output row of a key,
	// a window and the row of the calls' results.
	newRow := func() func(key K, res types.Row, win window.Window) types.Row {
		w := types.NewRowWriter(rt, types.NewArena(0))
		var resSets []func(types.Row, *types.RowWriter)
		for i := 0; i < fn.rt.Len(); i++ {
			set, _ := expr.Setter(&expr.Column{Index: i, T: fn.rt.FieldType(i)}, len(bounds)+i)
			resSets = append(resSets, set)
		}
		return func(key K, res types.Row, win window.Window) types.Row {
			w.Reset()
			writeKey(key, w)
			for i, bound := range bounds {
				switch bound {
				case -1:
				case 0:
					w.SetTimestampMillis(i, win.Start)
				case 1:
					w.SetTimestampMillis(i, win.End)
				default:
					w.SetTimestampMillis(i, win.End-1)
				}
			}
			for _, set := range resSets {
				set(res, w)
			}
			return w.Finish()
		}
	}
	var rows *eddy.Stream[Rec]
	if len(fn.groups) > 0 {
		// DISTINCT calls keep their values in the accumulators
		// (window_distinct.go).
		out := eddy.Aggregate[K, Rec, windowAcc, string](ws, newWindowDistinctAgg(fn))
		if r.late != nil {
			if err := buildLateRows(r.late, b, out); err != nil {
				return nil, err
			}
		}
		resEnc := types.NewKeyEncoder(fn.rt, seq(fn.rt.Len())...)
		rows = eddy.Process(out, func() eddy.ProcessFunction[eddy.Windowed[K, string], Rec] {
			row := newRow()
			return eddy.ProcessFunc[eddy.Windowed[K, string], Rec](func(ctx *eddy.ProcessContext[Rec], v eddy.Windowed[K, string]) error {
				ctx.Emit(Rec{Kind: changelog.Insert, Row: row(v.Key, resEnc.KeyRow(v.Value), v.Window)})
				return nil
			})
		})
	} else {
		// The operator writes the output rows from the panes'
		// accumulators as windows fire.
		rows = eddy.AggregatePanes(ws, recAgg{fn}, func() eddy.PanesFunc[K, Acc, Rec] {
			row := newRow()
			res := types.NewRowWriter(fn.rt, types.NewScratchArena())
			return func(key K, win window.Window, accs []Acc, emit func(Rec)) error {
				acc := accs[0]
				if len(accs) > 1 || fn.syns > 0 {
					// Merge leaves its second accumulator as it is, and
					// the result reads the merged one only.
					acc = fn.Create()
					for _, a := range accs {
						acc = fn.Merge(acc, a)
					}
				}
				res.Reset()
				fn.writeResult(acc, res, 0)
				emit(Rec{Kind: changelog.Insert, Row: row(key, res.Finish(), win)})
				return nil
			}
		})
		if r.late != nil {
			if err := buildLateRows(r.late, b, rows); err != nil {
				return nil, err
			}
		}
	}
	return eddy.AsChangelog(rows, changelog.InsertOnly), nil
}

// writeResult writes the calls' results from acc with w into the fields
// from first on (first 0: w writes rows of a.rt); it reads acc only.
func (a *sqlAgg) writeResult(acc Acc, w *types.RowWriter, first int) {
	for i := range a.calls {
		a.result(i, acc, w, first+i)
	}
}

// recAgg is the SQL aggregation over the rows of changes (window
// aggregation reads insert-only rows).
type recAgg struct{ f *sqlAgg }

func (a recAgg) Create() Acc             { return a.f.Create() }
func (a recAgg) Add(acc Acc, in Rec) Acc { return a.f.Add(acc, in.Row) }

// AddInPlace and RetractInPlace fold a row into an accumulator the window
// operator owns (agg.Mutating).
func (a recAgg) AddInPlace(acc Acc, in Rec, v agg.Views, first int) Acc {
	return a.f.AddInPlace(acc, in.Row, v, first)
}
func (a recAgg) RetractInPlace(acc Acc, in Rec, v agg.Views, first int) Acc {
	return a.f.RetractInPlace(acc, in.Row, v, first)
}
func (a recAgg) Merge(x, y Acc) Acc    { return a.f.Merge(x, y) }
func (a recAgg) Result(acc Acc) string { return a.f.Result(acc) }

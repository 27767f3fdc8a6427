package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// overWindow is the window of the OVER calls of a SELECT: its PARTITION
// BY and ORDER BY resolved over the SELECT's input, and its frame as
// written (nil for the default frame).
type overWindow struct {
	spec      *parser.WindowSpec
	partition []expr.Expr
	order     []expr.Expr
	desc      []bool
	frame     *parser.WindowFrame
	// key identifies the window, to tell whether two calls share it.
	key string
}

// overAggregate plans a SELECT whose select list calls aggregates OVER a
// window: agg(x) OVER (PARTITION BY ... ORDER BY time [ROWS|RANGE] BETWEEN
// ... PRECEDING AND CURRENT ROW), inline or named in the WINDOW clause. As
// in Flink, every call shares one window, ordered by a time attribute of
// an insert-only input. The plan is a Calc of the columns the query reads
// (the time attribute, the partition keys, the calls' arguments), an
// OverAggregate that appends the calls' results to each row, and a Calc of
// the select list.
func (q *queryPlanner) overAggregate(n *parser.Select, in Rel, sc *scope, cond any) (Rel, error) {
	var where expr.Expr
	if cond != nil {
		where = cond.(expr.Expr)
	}
	base := q.analyzer(sc)
	g := &aggregation{q: q, base: base, byText: map[string]int{}}
	var win *overWindow
	var firstCall *parser.FuncCall
	a := q.analyzer(sc)
	a.Call = func(c *parser.FuncCall) (expr.Expr, bool, error) {
		if c.Over == nil && c.OverName == nil {
			return q.refuseAggregate(c)
		}
		name := strings.ToUpper(c.Name.Last().Name)
		if !isAggregateName(name) {
			return nil, true, q.errorf(c.Pos, "%s() OVER is not supported: an OVER aggregation computes COUNT, SUM, SUM0, AVG, MIN, MAX, VAR_POP, VAR_SAMP, STDDEV_POP or STDDEV_SAMP", name)
		}
		w, err := q.overWindowOf(n, c, base)
		if err != nil {
			return nil, true, err
		}
		if win == nil {
			win, firstCall = w, c
		} else if w.key != win.key {
			return nil, true, q.errorf(c.Pos, "Over Agg: Unsupported use of OVER windows. All aggregates must be computed on the same window. please re-check the over window statement. (the window of %s is not that of %s; compute the other window in a query of its own)", c, firstCall)
		}
		plain := *c
		plain.Over, plain.OverName = nil, nil
		return g.call(&plain)
	}
	items, names, err := q.selectItems(a, n.Items, sc)
	if err != nil {
		return nil, err
	}
	if win == nil {
		return nil, q.errorf(n.Pos, "the select list calls no aggregate OVER a window")
	}
	inProps := in.Props()
	if !inProps.Mode.IsInsertOnly() {
		return nil, q.errorf(firstCall.Pos, "OverAggregate doesn't support consuming update changes which is produced by node %s: an OVER aggregation needs an insert-only input, and its input is a %s stream", producer(in, inProps.Mode), inProps.Mode.Describe())
	}
	order, eventTime, err := q.overOrder(win, inProps)
	if err != nil {
		return nil, err
	}
	rows, preceding, frameText, err := q.overFrame(win.frame)
	if err != nil {
		return nil, err
	}
	if preceding >= 0 {
		// The rows that leave a bounded frame are taken back out of the
		// aggregates.
		for _, c := range g.calls {
			switch {
			case strings.HasPrefix(c.Name, "APPROX_"):
				return nil, q.errorf(firstCall.Pos, "%s over a bounded OVER frame is not supported: the rows that leave the frame are taken back out of the aggregate, and its sketch cannot forget a value; use an unbounded frame (UNBOUNDED PRECEDING)", c.text)
			}
		}
	}

	// The pre-projection: the input columns the query reads, in input
	// order, then the computed partition keys, arguments and filters.
	inRT := in.Schema()
	used := map[int]bool{order.Index: true}
	for _, e := range items {
		for _, i := range expr.Columns(e) {
			used[i] = true
		}
	}
	plainCols := append(append([]expr.Expr{}, win.partition...), append(append([]expr.Expr{}, g.args...), g.filters...)...)
	for _, e := range plainCols {
		if c, ok := e.(*expr.Column); ok {
			used[c.Index] = true
		}
	}
	cols := make([]int, 0, len(used))
	for i := range used {
		cols = append(cols, i)
	}
	sort.Ints(cols)
	colPos := map[int]int{}
	var pre []expr.Expr
	var preNames []string
	for _, i := range cols {
		f := inRT.Field(i)
		colPos[i] = len(pre)
		pre = append(pre, &expr.Column{Index: i, Name: f.Name, T: f.Type})
		preNames = append(preNames, f.Name)
	}
	place := func(e expr.Expr, name string) int {
		if c, ok := e.(*expr.Column); ok {
			return colPos[c.Index]
		}
		for i, p := range pre {
			if p.String() == e.String() && p.Type().Equal(e.Type()) {
				return i
			}
		}
		pre = append(pre, e)
		preNames = append(preNames, name)
		return len(pre) - 1
	}
	partition := make([]int, len(win.partition))
	for i, e := range win.partition {
		partition[i] = place(e, fmt.Sprintf("$p%d", i))
	}
	for i, c := range g.calls {
		if g.args[i] != nil {
			c.Arg = place(g.args[i], fmt.Sprintf("$a%d", i))
		}
		if g.filters[i] != nil {
			c.Filter = place(g.filters[i], fmt.Sprintf("$f%d", i))
		}
	}
	preCalc := newCalc(in, pre, uniqueNames(preNames), where)
	over := &OverAggregateRel{Input: preCalc, Partition: partition, Order: colPos[order.Index], EventTime: eventTime,
		Rows: rows, Preceding: preceding, Frame: frameText, Calls: g.calls, cat: q.cat}
	if err := over.init(); err != nil {
		return nil, q.errorf(firstCall.Pos, "%v", err)
	}

	// The select list over the OVER aggregation's rows.
	nPre := len(pre)
	rt := over.Schema()
	for i, e := range items {
		items[i] = expr.Rewrite(e, func(x expr.Expr) expr.Expr {
			switch r := x.(type) {
			case *expr.Column:
				p := colPos[r.Index]
				return &expr.Column{Index: p, Name: rt.Field(p).Name, T: r.T}
			case *aggRef:
				p := nPre + r.idx
				return &expr.Column{Index: p, Name: rt.Field(p).Name, T: r.c.T}
			}
			return x
		})
	}
	var out Rel = over
	if !sameColumns(rt, items, names) {
		out = newCalc(over, items, names, nil)
	}
	if n.Distinct {
		return q.distinct(n, out)
	}
	return out, nil
}

// sameColumns tells whether items, named names, are the columns of rt as
// they are.
func sameColumns(rt *types.RowType, items []expr.Expr, names []string) bool {
	if len(items) != rt.Len() {
		return false
	}
	for i, e := range items {
		c, ok := e.(*expr.Column)
		if !ok || c.Index != i || names[i] != rt.Field(i).Name || !c.T.Equal(rt.FieldType(i)) {
			return false
		}
	}
	return true
}

// overWindowOf resolves the window of an OVER call: its own, a named one of
// the WINDOW clause, or one that extends a named one.
func (q *queryPlanner) overWindowOf(n *parser.Select, c *parser.FuncCall, a *expr.Analyzer) (*overWindow, error) {
	named := func(id *parser.Ident) (*parser.WindowSpec, error) {
		for _, w := range n.Windows {
			if w.Name.Name == id.Name {
				return w.Spec, nil
			}
		}
		return nil, q.errorf(id.Pos, "unknown window %s: define it in the WINDOW clause", id.Name)
	}
	spec := c.Over
	if c.OverName != nil {
		var err error
		if spec, err = named(c.OverName); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for spec.Base != nil {
		id := spec.Base
		if seen[id.Name] {
			return nil, q.errorf(id.Pos, "window %s extends itself", id.Name)
		}
		seen[id.Name] = true
		b, err := named(id)
		if err != nil {
			return nil, err
		}
		merged := *b
		merged.Pos = spec.Pos
		if len(spec.PartitionBy) > 0 {
			if len(b.PartitionBy) > 0 {
				return nil, q.errorf(spec.PartitionBy[0].Position(), "cannot override the PARTITION BY of window %s", id.Name)
			}
			merged.PartitionBy = spec.PartitionBy
		}
		if len(spec.OrderBy) > 0 {
			if len(b.OrderBy) > 0 {
				return nil, q.errorf(spec.OrderBy[0].Pos, "cannot override the ORDER BY of window %s", id.Name)
			}
			merged.OrderBy = spec.OrderBy
		}
		if spec.Frame != nil {
			if b.Frame != nil {
				return nil, q.errorf(spec.Frame.Pos, "window %s has a frame already: a window that extends it cannot give another", id.Name)
			}
			merged.Frame = spec.Frame
		}
		spec = &merged
	}
	w := &overWindow{spec: spec, frame: spec.Frame}
	var key strings.Builder
	for _, pe := range spec.PartitionBy {
		e, err := a.Expr(pe)
		if err != nil {
			return nil, err
		}
		w.partition = append(w.partition, e)
		fmt.Fprintf(&key, "%s|", e)
	}
	key.WriteString("order:")
	for _, o := range spec.OrderBy {
		e, err := a.Expr(o.Expr)
		if err != nil {
			return nil, err
		}
		w.order = append(w.order, e)
		w.desc = append(w.desc, o.Desc)
		fmt.Fprintf(&key, "%s %v|", e, o.Desc)
	}
	key.WriteString("frame:")
	if spec.Frame == nil {
		key.WriteString("RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW")
	} else {
		f := *spec.Frame
		if f.End == nil {
			f.End = &parser.FrameBound{Kind: parser.CurrentRow}
		}
		key.WriteString(parser.Format(&f))
	}
	w.key = key.String()
	return w, nil
}

// overOrder checks that a window is ordered by a time attribute of the
// input, ascending, and returns it, and whether it is the event-time one.
func (q *queryPlanner) overOrder(w *overWindow, p Props) (*expr.Column, bool, error) {
	if len(w.order) != 1 {
		return nil, false, q.errorf(w.spec.Pos, "The window can only be ordered by a single time column. (order an OVER window by the rowtime attribute, the column of WATERMARK FOR, or by a PROCTIME() column)")
	}
	if w.desc[0] {
		return nil, false, q.errorf(w.spec.OrderBy[0].Pos, "The window can only be ordered in ASCENDING mode.")
	}
	c, ok := w.order[0].(*expr.Column)
	if !ok || (c.Index != p.Rowtime && c.Index != p.Proctime) {
		return nil, false, q.errorf(w.spec.OrderBy[0].Pos, "OVER windows' ordering in stream mode must be defined on a time attribute. (%s is not one: order by the column of the table's WATERMARK FOR, or by a column computed by PROCTIME())", w.order[0])
	}
	return c, c.Index == p.Rowtime, nil
}

// overFrame reads a window frame: whether it counts rows, how far it
// reaches before the current row (rows, or milliseconds for RANGE; -1 for
// UNBOUNDED), and its text for plans. Without a frame it is RANGE BETWEEN
// UNBOUNDED PRECEDING AND CURRENT ROW.
func (q *queryPlanner) overFrame(f *parser.WindowFrame) (rows bool, preceding int64, text string, err error) {
	if f == nil {
		return false, -1, "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW", nil
	}
	rows = strings.EqualFold(f.Units, "ROWS")
	units := "RANGE"
	if rows {
		units = "ROWS"
	}
	if f.End != nil && f.End.Kind != parser.CurrentRow {
		switch f.End.Kind {
		case parser.Following, parser.UnboundedFollowing:
			return false, 0, "", q.errorf(f.End.Pos, "OVER RANGE FOLLOWING windows are not supported yet. (a streaming OVER aggregation ends its frame at CURRENT ROW)")
		}
		return false, 0, "", q.errorf(f.End.Pos, "a frame that ends before the current row is not supported: end it at CURRENT ROW")
	}
	start := "UNBOUNDED PRECEDING"
	switch f.Start.Kind {
	case parser.UnboundedPreceding:
		preceding = -1
	case parser.CurrentRow:
		start = "CURRENT ROW"
	case parser.Preceding:
		start = parser.Format(f.Start.Offset) + " PRECEDING"
		if preceding, err = q.frameOffset(rows, f.Start.Offset); err != nil {
			return false, 0, "", err
		}
	default:
		return false, 0, "", q.errorf(f.Start.Pos, "OVER RANGE FOLLOWING windows are not supported yet. (a streaming OVER aggregation's frame starts at or before the current row)")
	}
	return rows, preceding, units + " BETWEEN " + start + " AND CURRENT ROW", nil
}

// frameOffset reads the n of n PRECEDING: a count of rows for ROWS, a
// constant INTERVAL of days to seconds (in milliseconds) for RANGE.
func (q *queryPlanner) frameOffset(rows bool, e parser.Expr) (int64, error) {
	if rows {
		n, ok := intLiteral(e)
		if !ok || n < 0 {
			return 0, q.errorf(e.Position(), "ROWS takes a constant count of rows of at least 0: ROWS BETWEEN 10 PRECEDING AND CURRENT ROW")
		}
		return n, nil
	}
	a := &expr.Analyzer{Src: q.src, Funcs: q.cat.Funcs}
	x, err := a.Expr(e)
	if err != nil {
		return 0, err
	}
	l, ok := x.(*expr.Literal)
	if !ok || l.T.Kind() != types.KindIntervalDayTime {
		return 0, q.errorf(e.Position(), "RANGE over a time attribute takes a constant INTERVAL of days to seconds, not %s: RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW (or count rows with ROWS)", x.Type())
	}
	ms, _ := l.V.(int64)
	if ms < 0 {
		return 0, q.errorf(e.Position(), "the INTERVAL of a RANGE frame must not be negative")
	}
	return ms, nil
}

// OverAggregateRel appends to every row of its input the aggregates of the
// calls over the row's frame: the rows of its partition, in the order of a
// time attribute, from Preceding rows or milliseconds before it (all of
// them when negative) to the row itself (Flink's OverAggregate). It runs as
// eddy.OverAggregate; the output is insert-only and keeps the input's time
// attributes.
type OverAggregateRel struct {
	Input     Rel
	Partition []int
	Order     int
	EventTime bool
	Rows      bool
	Preceding int64
	// Frame is the frame as SQL, for plans.
	Frame string
	Calls []*aggCall
	cat   *Catalog
	fn    *sqlAgg
	rt    *types.RowType
}

func (r *OverAggregateRel) init() error {
	in := r.Input.Schema()
	fs := append([]types.Field{}, in.Fields()...)
	for i, c := range r.Calls {
		fs = append(fs, types.F(fmt.Sprintf("w0$o%d", i), c.T))
	}
	r.rt = types.MustRowType(dedupNames(fs)...)
	fn, err := newSQLAgg(r.Calls, in, r.Preceding >= 0)
	if err != nil {
		return err
	}
	r.fn = fn
	return nil
}

func (r *OverAggregateRel) Schema() *types.RowType { return r.rt }

func (r *OverAggregateRel) Props() Props {
	p := r.Input.Props()
	return Props{Mode: changelog.InsertOnly, Rowtime: p.Rowtime, Proctime: p.Proctime}
}

func (r *OverAggregateRel) Inputs() []Rel { return []Rel{r.Input} }

func (r *OverAggregateRel) Describe() string {
	in := r.Input.Schema()
	sel := fieldList(in)
	n := in.Len()
	for i, c := range r.Calls {
		sel += fmt.Sprintf(", %s AS %s", c.text, types.QuoteIdentifier(r.rt.Field(n+i).Name))
	}
	return fmt.Sprintf("OverAggregate(partitionBy=[%s], orderBy=[%s ASC], window=[%s], select=[%s])",
		columnList(in, r.Partition), types.QuoteIdentifier(in.Field(r.Order).Name), r.Frame, sel)
}

func (r *OverAggregateRel) build(b *builder) (*eddy.Stream[Rec], error) {
	s, err := b.stream(r.Input)
	if err != nil {
		return nil, err
	}
	var opts []eddy.TableOption
	if v, ok := b.cat.Settings["table.exec.state.ttl"]; ok {
		d, err := settingDuration("table.exec.state.ttl", v)
		if err != nil {
			return nil, err
		}
		if d > 0 {
			opts = append(opts, eddy.StateTTL(d))
		}
	}
	in := r.Input.Schema()
	frame := eddy.OverFrame{Domain: eddy.ProcessingTime, Rows: r.Rows, Preceding: r.Preceding}
	if r.EventTime {
		frame.Domain = eddy.EventTime
	}
	// The rows wait in state for the watermark or stay in their frames:
	// each gets memory of its own.
	out := keyedBy(b, r.Input, cloneRows(eddy.AsChangelog(s, changelog.InsertOnly)), r.Partition, partitionedBy[*eddy.Stream[changelog.Change[eddy.OverRow[types.Row, string]]]]{
		int: overBy[int64](r, frame, opts), nullable: overBy[nullableInt](r, frame, opts),
		pair: overBy[intPair](r, frame, opts), encoded: anyEncoding(overBy[string](r, frame, opts)),
	})
	rt, fn, n := r.rt, r.fn, in.Len()
	resEnc := types.NewKeyEncoder(fn.rt, seq(fn.rt.Len())...)
	// Each output row is written anew, into memory used again for each
	// batch when the readers keep none of the rows.
	return eddy.MapRowsReusing(out, func(reuse bool) (func(eddy.OverRow[types.Row, string]) types.Row, func()) {
		a := newOutputArena(reuse)
		w := types.NewRowWriter(rt, a)
		sets := make([]func(types.Row, *types.RowWriter), 0, rt.Len())
		for i := 0; i < n; i++ {
			set, _ := expr.Setter(&expr.Column{Index: i, T: in.FieldType(i)}, i)
			sets = append(sets, set)
		}
		resSets := make([]func(types.Row, *types.RowWriter), 0, fn.rt.Len())
		for i := 0; i < fn.rt.Len(); i++ {
			set, _ := expr.Setter(&expr.Column{Index: i, T: fn.rt.FieldType(i)}, n+i)
			resSets = append(resSets, set)
		}
		return func(o eddy.OverRow[types.Row, string]) types.Row {
			w.Reset()
			for _, set := range sets {
				set(o.Row, w)
			}
			res := resEnc.KeyRow(o.Value)
			for _, set := range resSets {
				set(res, w)
			}
			return w.Finish()
		}, a.Rewind
	}), nil
}

// overBy returns the OVER aggregation of r in frame, with the table
// options opts, over its input partitioned by keys of type K.
func overBy[K comparable](r *OverAggregateRel, frame eddy.OverFrame, opts []eddy.TableOption) func(*eddy.KeyedStream[K, Rec]) *eddy.Stream[changelog.Change[eddy.OverRow[types.Row, string]]] {
	return func(g *eddy.KeyedStream[K, Rec]) *eddy.Stream[changelog.Change[eddy.OverRow[types.Row, string]]] {
		return eddy.OverAggregate[K, types.Row, Acc, string](g, frame, r.fn, opts...)
	}
}

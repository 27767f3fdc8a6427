package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// Late rows. A window aggregation drops the rows that arrive after the
// watermark has passed the end of every window they belong to (and the
// rows of HOP windows that fall between windows when the slide exceeds the
// size). The query hint
//
//	SELECT /*+ LATE_ROWS('late_bids') */ window_start, ... GROUP BY window_start, window_end, ...
//
// writes them into the table late_bids instead: the window's input rows
// (the columns of the table the window function reads, computed columns
// included, after the query's WHERE) cast to the table's columns as an
// INSERT INTO would, as insertions. The hint belongs to the SELECT whose
// GROUP BY aggregates the windows; on any other SELECT it is an error, so
// that no operator is believed to keep rows it drops.

// lateHint is the name of the hint.
const lateHint = "LATE_ROWS"

// lateRows is where a window aggregation sends its late rows.
type lateRows struct {
	table  string
	offset int // the input's columns start here in the pre-projection
	source *lateSourceRel
	sink   *SinkRel
}

// lateRowsHint returns the LATE_ROWS hint of a SELECT, nil if it has none.
func (q *queryPlanner) lateRowsHint(n *parser.Select) (*parser.Hint, error) {
	var found *parser.Hint
	for _, h := range n.Hints {
		if !strings.EqualFold(h.Name.Name, lateHint) {
			continue
		}
		if found != nil {
			return nil, q.errorf(h.Pos, "LATE_ROWS is given twice: a window aggregation writes its late rows into one table")
		}
		found = h
	}
	return found, nil
}

// refuseLateRows refuses a LATE_ROWS hint on a SELECT that aggregates no
// windows.
func (q *queryPlanner) refuseLateRows(n *parser.Select) error {
	h, err := q.lateRowsHint(n)
	if err != nil || h == nil {
		return err
	}
	return q.errorf(h.Pos, "LATE_ROWS applies to a window aggregation (GROUP BY window_start, window_end over TUMBLE, HOP, CUMULATE or SESSION), and this SELECT is none: give the hint on the SELECT that aggregates the windows")
}

// lateTableName returns the table a LATE_ROWS hint names.
func (q *queryPlanner) lateTableName(h *parser.Hint) (*parser.ObjectName, error) {
	if len(h.Args) == 1 && len(h.Options) == 0 {
		switch a := h.Args[0].(type) {
		case *parser.StringLit:
			name := &parser.ObjectName{Pos: a.Pos}
			for _, p := range strings.Split(a.Value, ".") {
				name.Parts = append(name.Parts, &parser.Ident{Pos: a.Pos, Name: p})
			}
			return name, nil
		case *parser.Ref:
			return &parser.ObjectName{Pos: a.Pos, Parts: a.Parts}, nil
		}
	}
	return nil, q.errorf(h.Pos, "LATE_ROWS takes the name of the table that receives the late rows: /*+ LATE_ROWS('late_rows') */")
}

// lateRows plans the LATE_ROWS hint of the window aggregation n over the
// window function's input: it returns the pre-projection widened by the
// input's columns, which the late rows carry to the table, and where they
// go (nil, and pre as it is, without the hint).
func (q *queryPlanner) lateRows(n *parser.Select, pre *CalcRel) (*lateRows, *CalcRel, error) {
	h, err := q.lateRowsHint(n)
	if err != nil || h == nil {
		return nil, pre, err
	}
	name, err := q.lateTableName(h)
	if err != nil {
		return nil, nil, err
	}
	t, v, err := q.cat.lookup(q.src, name)
	if err != nil {
		return nil, nil, err
	}
	if v != nil {
		return nil, nil, q.errorf(h.Pos, "LATE_ROWS names %s, a view: name a table", v.Name)
	}
	ct := t.connectorTable()
	sink, err := connector.OpenTableSink(q.cat.Connectors, t.Connector, t.connectorOptions(), ct)
	if err != nil {
		return nil, nil, q.errorf(h.Pos, "LATE_ROWS table %s: %v", t.Name, err)
	}
	for _, c := range t.Columns {
		if c.Kind == parser.MetadataColumn && !c.Virtual {
			return nil, nil, q.errorf(h.Pos, "LATE_ROWS table %s: writing metadata column %s is not supported; declare it VIRTUAL", t.Name, c.Name)
		}
	}
	mode := changelog.Retract
	if cs, ok := sink.(connector.ChangelogSink); ok {
		mode = cs.ChangelogMode()
	}
	if !mode.Contains(changelog.Insert) {
		return nil, nil, q.errorf(h.Pos, "LATE_ROWS table %s (connector '%s') takes no insertions", t.Name, t.Connector)
	}
	// The pre-projection also gives the input's columns.
	in := pre.Input.Schema()
	if in.Len() != ct.Schema.Len() {
		return nil, nil, q.errorf(h.Pos, "LATE_ROWS table %s has %d columns (%s), but the rows of the window's input have %d (%s): give the table their columns",
			t.Name, ct.Schema.Len(), strings.Join(ct.Schema.Names(), ", "), in.Len(), strings.Join(in.Names(), ", "))
	}
	l := &lateRows{table: t.Name, offset: len(pre.Projs)}
	projs := append([]expr.Expr{}, pre.Projs...)
	names := append([]string{}, pre.Names...)
	for i, f := range in.Fields() {
		projs = append(projs, &expr.Column{Index: i, Name: f.Name, T: f.Type})
		names = append(names, "$late_"+f.Name)
	}
	wide := newCalc(pre.Input, projs, uniqueNames(names), pre.Cond)
	// The late rows: the input's columns of the pre-projected rows, cast
	// to the table's.
	l.source = &lateSourceRel{rt: wide.Schema()}
	cols := make([]expr.Expr, in.Len())
	for i, f := range in.Fields() {
		cols[i] = &expr.Column{Index: l.offset + i, Name: f.Name, T: f.Type}
	}
	var r Rel = newCalc(l.source, cols, in.Names(), nil)
	r, err = q.conform(&parser.Insert{Pos: h.Pos, Table: name}, r, ct.Schema)
	if err != nil {
		return nil, nil, err
	}
	l.sink = &SinkRel{Input: r, Table: t, ct: ct, sink: sink, mode: mode}
	if l.sink.notNull, err = newNotNullEnforcer(q.cat.Settings, r.Schema(), ct.Schema, changelog.InsertOnly); err != nil {
		return nil, nil, q.errorf(h.Pos, "%v", err)
	}
	return l, wide, nil
}

// buildLateRows sends the late rows of the window operator that produces
// out, from its side output (l.tag), into l's table.
func buildLateRows[O any](l *lateRows, b *builder, out *eddy.Stream[O]) error {
	l.source.s = eddy.AsChangelog(eddy.SideOutput(out, l.tag()), changelog.InsertOnly)
	_, err := b.stream(l.sink)
	return err
}

// tag returns the side output tag of the late rows.
func (l *lateRows) tag() eddy.OutputTag[Rec] { return eddy.NewOutputTag[Rec]("late-rows:" + l.table) }

// String is the hint as EXPLAIN shows it.
func (l *lateRows) String() string { return fmt.Sprintf("lateRows=[%s]", l.table) }

// lateSourceRel is the stream of a window operator's late rows, in the
// operator's input rows.
type lateSourceRel struct {
	rt *types.RowType
	s  *eddy.Stream[Rec]
}

func (r *lateSourceRel) Schema() *types.RowType { return r.rt }
func (r *lateSourceRel) Props() Props {
	return Props{Mode: changelog.InsertOnly, Rowtime: -1, Proctime: -1}
}
func (r *lateSourceRel) Inputs() []Rel    { return nil }
func (r *lateSourceRel) Describe() string { return "LateRows" }

func (r *lateSourceRel) build(*builder) (*eddy.Stream[Rec], error) {
	if r.s == nil {
		return nil, fmt.Errorf("the late rows are read before their window operator is built")
	}
	return r.s, nil
}

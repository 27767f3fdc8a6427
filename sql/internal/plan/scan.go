package plan

import (
	"fmt"
	"math"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// ScanRel reads a table through its connector: the physical columns and
// then the metadata columns. The table's declared columns (computed ones
// among them) are a Calc over it (see tableRel).
type ScanRel struct {
	Table *Table
	rt    *types.RowType
	ct    *connector.Table
	// rowtime is the event time of a row (over rt), nil without a
	// watermark; watermark is the watermark expression over rt.
	rowtime, watermark expr.Expr
	mode               changelog.Mode
	upsertKey          []int
	// paths, when set, are the fields the source emits (see
	// pushProjection); rt is then their row type, and wide is the scan
	// of whole rows they were taken from.
	paths [][]int
	wide  *ScanRel
	// filters are the predicates the source accepted (see pushFilters):
	// it emits only the rows for which they all hold. filterExprs are
	// the conjuncts they came from, over the table's rows, for EXPLAIN.
	filters     []connector.Predicate
	filterExprs []expr.Expr
}

func (s *ScanRel) Schema() *types.RowType { return s.rt }

func (s *ScanRel) Props() Props {
	return Props{Mode: s.mode, UpsertKey: s.upsertKey, Rowtime: -1, Proctime: -1}
}

func (s *ScanRel) Inputs() []Rel { return nil }

func (s *ScanRel) Describe() string { return s.describeScan() }

// tableRel returns the relation of a table's declared columns: a scan, and
// a Calc that orders its columns as declared and computes the computed
// ones, with the table's rowtime attribute.
func (q *queryPlanner) tableRel(t *Table) (Rel, error) {
	ct := t.connectorTable()
	scan := &ScanRel{Table: t, ct: ct, rt: ct.RowType(), mode: changelog.InsertOnly}
	src, err := connector.OpenTableSource(q.cat.Connectors, t.Connector, t.connectorOptions(), ct)
	if err != nil {
		return nil, parser.ErrorAt(q.src, t.Def.Name.Pos, fmt.Sprintf("table %s: %v", t.Name, err))
	}
	if cs, ok := src.(connector.ChangelogSource); ok {
		scan.mode = cs.ChangelogMode()
		if scan.mode == changelog.Upsert {
			scan.upsertKey = ct.PrimaryKey
		}
	}
	// The declared columns over the scanned row.
	phys, meta := 0, ct.Schema.Len()
	projs := make([]expr.Expr, len(t.Columns))
	for i, c := range t.Columns {
		switch c.Kind {
		case parser.PhysicalColumn:
			projs[i] = &expr.Column{Index: phys, Name: c.Name, T: c.Type}
			phys++
		case parser.MetadataColumn:
			projs[i] = &expr.Column{Index: meta, Name: c.Name, T: c.Type}
			meta++
		}
	}
	a := &expr.Analyzer{Src: q.defSrc(t), Funcs: q.cat.Funcs, Scope: &scanScope{t: t, projs: projs}}
	for i, c := range t.Columns {
		if c.Kind == parser.ComputedColumn {
			e, err := a.Expr(c.Expr)
			if err != nil {
				return nil, err
			}
			projs[i] = e
		}
	}
	calc := &CalcRel{Input: scan, Projs: projs, Names: t.RowType().Names(), rowtime: -1, proctime: -1}
	if t.Rowtime >= 0 {
		scan.rowtime = projs[t.Rowtime]
		we, err := a.Expr(t.Watermark)
		if err != nil {
			return nil, err
		}
		scan.watermark = we
		calc.rowtime = t.Rowtime
	}
	for i, c := range t.Columns {
		if c.Kind == parser.ComputedColumn && isProctimeCall(projs[i]) {
			calc.proctime = i
		}
	}
	calc.init()
	return calc, nil
}

// defSrc returns the SQL text a table was defined in.
func (q *queryPlanner) defSrc(t *Table) string {
	if s, ok := q.cat.defs[t.Name]; ok {
		return s
	}
	return q.src
}

func isProctimeCall(e expr.Expr) bool {
	c, ok := e.(*expr.Call)
	return ok && c.Name == "PROCTIME"
}

// scanScope resolves the columns of a table's DDL over the scanned row:
// physical and metadata columns are read, computed ones are their
// expressions.
type scanScope struct {
	t     *Table
	projs []expr.Expr
}

func (s *scanScope) Column(parts []string) (expr.Expr, int, error) {
	for i, c := range s.t.Columns {
		if c.Name == parts[0] && s.projs[i] != nil {
			return s.projs[i], 1, nil
		}
	}
	return nil, 0, fmt.Errorf("unknown column %s of table %s", parts[0], s.t.Name)
}

// build opens the table's source. Scans with one key (see reuse) share it.
func (s *ScanRel) build(b *builder) (*eddy.Stream[Rec], error) {
	return s.open(b, false, nil)
}

// open adds the table's source, with opts, to the job; transient asks for
// rows in reused memory (connector.TransientRowSource) where the source can.
func (s *ScanRel) open(b *builder, transient bool, opts []eddy.SourceOption) (*eddy.Stream[Rec], error) {
	src, err := s.source(b.cat)
	if err != nil {
		return nil, err
	}
	if s.paths != nil {
		ps, _ := src.(connector.ProjectableSource)
		narrow, ok := ps.ProjectFields(s.paths)
		if !ok {
			return nil, fmt.Errorf("table %s: the source no longer projects %v", s.Table.Name, s.paths)
		}
		src = narrow
	}
	if ts, ok := src.(connector.TransientRowSource); ok && transient {
		src = ts.TransientRows()
	}
	ws, err := s.watermarks(b)
	if err != nil {
		return nil, err
	}
	// The stream carries the kinds the planner derived for the table, not
	// all four that a source of changes may carry.
	return eddy.AsChangelog(eddy.FromSource(b.env, s.Table.Name, src, ws, opts...), s.mode), nil
}

// source opens the table's source with the scan's filters applied
// (connector.FilterableSource), which comes before the projection
// (connector.ProjectableSource) and TransientRows, as the SPI documents.
func (s *ScanRel) source(cat *Catalog) (connector.Source[connector.TableRecord], error) {
	src, err := connector.OpenTableSource(cat.Connectors, s.Table.Connector, s.Table.connectorOptions(), s.ct)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", s.Table.Name, err)
	}
	if len(s.filters) == 0 {
		return src, nil
	}
	fs, ok := src.(connector.FilterableSource)
	var filtered connector.Source[connector.TableRecord]
	var accepted []int
	if ok {
		filtered, accepted = fs.ApplyFilters(s.filters)
	}
	if filtered == nil || len(accepted) != len(s.filters) {
		return nil, fmt.Errorf("table %s: the source no longer accepts the filter %v", s.Table.Name, s.filters)
	}
	return filtered, nil
}

// watermarks returns the watermark strategy of the scan: records are
// timestamped with their rowtime column; the watermark is the largest
// value of the watermark expression seen (Flink's periodic watermarks).
// "rowtime - INTERVAL ..." and "rowtime" run as bounded out-of-orderness.
func (s *ScanRel) watermarks(b *builder) (eddy.WatermarkStrategy[Rec], error) {
	if s.rowtime == nil {
		return eddy.NoWatermarks[Rec](), nil
	}
	ts, err := rowtimeOf(s.rowtime)
	if err != nil {
		return eddy.WatermarkStrategy[Rec]{}, err
	}
	var ws eddy.WatermarkStrategy[Rec]
	if d, ok := fixedDelay(s.watermark, s.rowtime); ok {
		ws = eddy.BoundedOutOfOrder(d, ts)
	} else {
		newGen := func() eddy.WatermarkGenerator[Rec] {
			ev, err := expr.Compile(s.watermark)
			if err != nil {
				panic(err) // compiled once below already
			}
			return &exprWatermarks{wm: millisOf(ev), max: math.MinInt64}
		}
		if _, err := expr.Compile(s.watermark); err != nil {
			return ws, err
		}
		ws = eddy.CustomWatermarks(ts, newGen)
	}
	if v, ok := b.cat.Settings["table.exec.source.idle-timeout"]; ok {
		d, err := connector.ParseDuration(v)
		if err != nil {
			return ws, fmt.Errorf("setting 'table.exec.source.idle-timeout' = '%s': %w", v, err)
		}
		if d > 0 {
			ws = ws.WithIdleness(d)
		}
	}
	return ws, nil
}

// rowtimeOf returns the function giving the milliseconds of a record's
// rowtime, e over its row (the smallest timestamp for NULL): one read of
// the row where e is a column of milliseconds, as a table's rowtime
// column mostly is.
func rowtimeOf(e expr.Expr) (func(Rec) int64, error) {
	if col, ok := e.(*expr.Column); ok && col.Index >= 0 && col.T.Precision() <= types.MaxCompactTimestampPrecision &&
		(col.T.Kind() == types.KindTimestamp || col.T.Kind() == types.KindTimestampLTZ) {
		i := col.Index
		return func(c Rec) int64 {
			if c.Row.IsNull(i) {
				return math.MinInt64
			}
			return c.Row.TimestampMillis(i)
		}, nil
	}
	ev, err := expr.Compile(e)
	if err != nil {
		return nil, err
	}
	tsOf := millisOf(ev)
	return func(c Rec) int64 { return tsOf(c.Row) }, nil
}

// millisOf returns a function giving the milliseconds of a timestamp
// expression for a row (the smallest timestamp for NULL).
func millisOf(ev *expr.Eval) func(types.Row) int64 {
	f := ev.TS
	return func(r types.Row) int64 {
		ts, null := f(r)
		if null {
			return math.MinInt64
		}
		return ts.Millis
	}
}

// fixedDelay recognises a watermark expression "rowtime" or "rowtime -
// INTERVAL 'n' unit" and returns its delay.
func fixedDelay(wm, rowtime expr.Expr) (time.Duration, bool) {
	if wm.String() == rowtime.String() {
		return 0, true
	}
	c, ok := wm.(*expr.Call)
	if !ok || c.Name != "-" || len(c.Args) != 2 || c.Args[0].String() != rowtime.String() {
		return 0, false
	}
	l, ok := c.Args[1].(*expr.Literal)
	if !ok || l.T.Kind() != types.KindIntervalDayTime {
		return 0, false
	}
	ms, ok := l.V.(int64)
	if !ok || ms < 0 {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// exprWatermarks is the watermark generator of a general watermark
// expression: the largest value it took.
type exprWatermarks struct {
	wm  func(types.Row) int64
	max int64
	_   ops.CacheLinePad
}

func (g *exprWatermarks) OnEvent(c Rec, _ int64) {
	if v := g.wm(c.Row); v > g.max {
		g.max = v
	}
}

func (g *exprWatermarks) Watermark() int64 { return g.max }

package plan

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// TemporalJoinRel is an event-time temporal join, as Flink's TemporalJoin:
// each row of the left (probe) input joins the version of the versioned
// table (a primary key and a rowtime) valid at the probe row's rowtime,
// keyed by the primary key (eddy.TemporalJoin). Results go out when the
// watermark passes the probe row and keep its rowtime.
type TemporalJoinRel struct {
	spec     *joinSpec
	keys     []equiKey
	residual []expr.Expr
	cond     expr.Expr
	rt       *types.RowType
	pk       []int
}

// LookupJoinRel is a processing-time temporal join with a table whose
// connector looks rows up by key, as Flink's LookupJoin (eddy.LookupJoin).
type LookupJoinRel struct {
	spec     *joinSpec
	keys     []equiKey
	residual []expr.Expr
	cond     expr.Expr
	rt       *types.RowType
	calc     *CalcRel
	scan     *ScanRel
	// lookupCols are the looked-up columns of the scanned row.
	lookupCols []int
}

// planTemporalJoin plans a join FOR SYSTEM_TIME AS OF: on the left
// input's rowtime, an event-time temporal join with a versioned table; on
// its processing-time attribute, a lookup join.
func (q *queryPlanner) planTemporalJoin(sp *joinSpec, keys []equiKey, residual []expr.Expr) (Rel, error) {
	lp := sp.left.Props()
	col, ok := sp.asOf.(*expr.Column)
	if !ok || col.Index != lp.Rowtime && col.Index != lp.Proctime {
		return nil, q.errorf(sp.asOfPos, "FOR SYSTEM_TIME AS OF takes a time attribute of the left table (its rowtime, or a PROCTIME() column); %s is neither", sp.asOf)
	}
	if sp.kind != eddy.InnerJoin && sp.kind != eddy.LeftJoin {
		return nil, q.errorf(sp.pos, "a temporal join is an INNER or LEFT join, not a %v", sp.kind)
	}
	if len(keys) == 0 {
		return nil, q.errorf(sp.pos, "the temporal join with %s needs an equality between the left input and the table's key", sp.rightName)
	}
	rt := joinRowType(sp.left.Schema(), sp.right.Schema(), sp.kind)
	if col.Index == lp.Proctime && lp.Proctime >= 0 {
		return q.planLookupJoin(sp, keys, residual, rt)
	}
	rp := sp.right.Props()
	pk := uniqueKey(sp.right)
	if rp.Rowtime < 0 || len(pk) == 0 {
		return nil, q.errorf(sp.pos, "%s is not a versioned table: an event-time temporal join needs a PRIMARY KEY and a rowtime attribute (WATERMARK FOR) on the table, or a view that deduplicates it by key keeping the last row by rowtime", sp.rightName)
	}
	j := &TemporalJoinRel{spec: sp, rt: rt, pk: pk}
	// The join is keyed by the primary key; other equalities are tested on
	// the version found.
	for _, c := range pk {
		found := false
		for _, k := range keys {
			if rc, ok := k.right.(*expr.Column); ok && rc.Index == c && !found {
				j.keys = append(j.keys, k)
				found = true
			}
		}
		if !found {
			return nil, q.errorf(sp.pos, "the temporal join with %s must join on its whole primary key (%s)", sp.rightName, strings.Join(sp.right.Schema().Project(pk...).Names(), ", "))
		}
	}
	for _, k := range keys {
		used := false
		for _, u := range j.keys {
			used = used || u.cond == k.cond
		}
		if !used {
			j.residual = append(j.residual, k.cond)
		}
	}
	j.residual = append(j.residual, residual...)
	j.cond = q.conjoin(j.residual)
	return j, nil
}

func (j *TemporalJoinRel) joinSpec() *joinSpec    { return j.spec }
func (j *TemporalJoinRel) Schema() *types.RowType { return j.rt }
func (j *TemporalJoinRel) Inputs() []Rel          { return []Rel{j.spec.left, j.spec.right} }

func (j *TemporalJoinRel) Props() Props {
	mode := changelog.Retract
	if j.spec.left.Props().Mode.IsInsertOnly() {
		mode = changelog.InsertOnly
	}
	return Props{Mode: mode, Rowtime: j.spec.left.Props().Rowtime, Proctime: -1}
}

func (j *TemporalJoinRel) Describe() string {
	return fmt.Sprintf("TemporalJoin(joinType=[%s], where=[%s], select=[%s], asOf=[%s], versionTime=[%s], primaryKey=[%s])",
		flinkJoinType(j.spec.kind), joinWhereText(j.keys, j.residual, j.rt), fieldList(j.rt), j.spec.asOf,
		types.QuoteIdentifier(j.spec.right.Schema().Field(j.spec.right.Props().Rowtime).Name), fieldList(j.spec.right.Schema().Project(j.pk...)))
}

// matchOrPad returns the joined row of a and b if the rest of the
// condition holds; otherwise the row padded with NULLs for a LEFT join,
// the zero Row (dropped) for an inner one.
func matchOrPad(ev *joinEvals, kind eddy.JoinKind, a types.Row, b *types.Row) types.Row {
	e := ev.get()
	defer ev.put(e)
	return e.matchOrPad(kind, a, b)
}

// matchOrPad is matchOrPad with the evaluator e.
func (e *joinEval) matchOrPad(kind eddy.JoinKind, a types.Row, b *types.Row) types.Row {
	if b != nil {
		if e.test(a, *b) {
			return e.join(&a, b)
		}
	}
	if kind == eddy.LeftJoin {
		return e.join(&a, nil)
	}
	return types.Row{}
}

func (j *TemporalJoinRel) build(b *builder) (*eddy.Stream[Rec], error) {
	ls, err := b.stream(j.spec.left)
	if err != nil {
		return nil, err
	}
	rs, err := b.stream(j.spec.right)
	if err != nil {
		return nil, err
	}
	lk, err := newJoinKeys(j.keys, 0, j.spec.left.Schema())
	if err != nil {
		return nil, err
	}
	rk, err := newJoinKeys(j.keys, 1, j.spec.right.Schema())
	if err != nil {
		return nil, err
	}
	ls = wholeRows(ls, j.spec.left)
	if j.spec.kind == eddy.InnerJoin {
		ls = lk.dropNullKeys(ls)
	}
	ls, rs = cloneRows(ls), cloneRows(rs)
	ev, err := newJoinEvals(j.rt, nil, j.spec.left.Schema(), j.spec.right.Schema(), j.cond, false)
	if err != nil {
		return nil, err
	}
	kind := j.spec.kind
	out := eddy.TemporalJoin(eddy.GroupBy(ls, lk.keyFunc()), eddy.GroupBy(rs, rk.keyFunc()), kind, func(a types.Row, b *types.Row) types.Row {
		return matchOrPad(ev, kind, a, b)
	})
	return eddy.FilterRows(out, func(r types.Row) bool { return r != (types.Row{}) }), nil
}

// planLookupJoin plans a processing-time temporal join: the right side
// must be a table whose connector looks rows up by the join's columns.
func (q *queryPlanner) planLookupJoin(sp *joinSpec, keys []equiKey, residual []expr.Expr, rt *types.RowType) (Rel, error) {
	calc, ok := sp.right.(*CalcRel)
	var scan *ScanRel
	if ok {
		scan, ok = calc.Input.(*ScanRel)
	}
	if !ok || calc.Cond != nil {
		return nil, q.errorf(sp.pos, "a processing-time temporal join (FOR SYSTEM_TIME AS OF a PROCTIME() column) joins a table by name; %s is not one", sp.rightName)
	}
	src, err := connector.OpenTableSource(q.cat.Connectors, scan.Table.Connector, scan.Table.connectorOptions(), scan.ct)
	if err != nil {
		return nil, q.errorf(sp.pos, "table %s: %v", scan.Table.Name, err)
	}
	if _, ok := connector.TableLookup(src); !ok {
		return nil, q.errorf(sp.pos, "table %s (connector '%s') cannot be looked up by key, which a processing-time temporal join needs; use a connector that looks rows up, or join on the left table's rowtime with a versioned table (an event-time temporal join)", scan.Table.Name, scan.Table.Connector)
	}
	j := &LookupJoinRel{spec: sp, rt: rt, calc: calc, scan: scan}
	for _, k := range keys {
		rc, ok := stripTimeCast(k.right).(*expr.Column)
		var sc *expr.Column
		if ok {
			sc, ok = calc.Projs[rc.Index].(*expr.Column)
		}
		if !ok || k.nullSafe {
			j.residual = append(j.residual, k.cond)
			continue
		}
		j.keys = append(j.keys, k)
		j.lookupCols = append(j.lookupCols, sc.Index)
	}
	if len(j.keys) == 0 {
		return nil, q.errorf(sp.pos, "the lookup join with %s needs an equality between the left input and a column of the table", sp.rightName)
	}
	j.residual = append(j.residual, residual...)
	j.cond = q.conjoin(j.residual)
	return j, nil
}

func (j *LookupJoinRel) joinSpec() *joinSpec    { return j.spec }
func (j *LookupJoinRel) Schema() *types.RowType { return j.rt }
func (j *LookupJoinRel) Inputs() []Rel          { return []Rel{j.spec.left} }

func (j *LookupJoinRel) Props() Props {
	lp := j.spec.left.Props()
	mode := changelog.Retract
	if lp.Mode.IsInsertOnly() {
		mode = changelog.InsertOnly
	}
	return Props{Mode: mode, Rowtime: lp.Rowtime, Proctime: lp.Proctime}
}

func (j *LookupJoinRel) Describe() string {
	var lookup []string
	srt := j.scan.Schema()
	for i, c := range j.lookupCols {
		lookup = append(lookup, fmt.Sprintf("%s=%s", types.QuoteIdentifier(srt.Field(c).Name), namedAs(j.keys[i].left, j.rt)))
	}
	where := "true"
	if j.cond != nil {
		where = namedAs(j.cond, j.rt).String()
	}
	return fmt.Sprintf("LookupJoin(table=[%s], joinType=[%s], lookup=[%s], where=[%s], select=[%s])",
		j.scan.Table.Name, flinkJoinType(j.spec.kind), strings.Join(lookup, ", "), where, fieldList(j.rt))
}

func (j *LookupJoinRel) build(b *builder) (*eddy.Stream[Rec], error) {
	return j.buildProjected(b, nil, nil)
}

// buildProjected builds the join. With projs, its result rows are those
// expressions (of types rt, at least one column) over the joined row,
// written straight from each pair without writing the joined row: the
// projection of a Calc above the join.
func (j *LookupJoinRel) buildProjected(b *builder, rt *types.RowType, projs []expr.Expr) (*eddy.Stream[Rec], error) {
	if projs == nil {
		rt = j.rt
	}
	if rt.Len() == 0 {
		// A row of no column is the zero Row, which stands for no row
		// (matchOrPad).
		return nil, fmt.Errorf("sql: the lookup join with %s writes rows of no column", j.spec.rightName)
	}
	ls, err := b.stream(j.spec.left)
	if err != nil {
		return nil, err
	}
	ls = wholeRows(ls, j.spec.left)
	src, err := connector.OpenTableSource(b.cat.Connectors, j.scan.Table.Connector, j.scan.Table.connectorOptions(), j.scan.ct)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", j.scan.Table.Name, err)
	}
	ls0, _ := connector.TableLookup(src)
	lookup, err := ls0.NewLookup(j.lookupCols)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", j.scan.Table.Name, err)
	}
	// The key row: the left keys cast to the looked-up columns' types.
	srt := j.scan.Schema()
	var exprs []expr.Expr
	var fs []types.Field
	for i, k := range j.keys {
		ct := srt.FieldType(j.lookupCols[i]).Nullable()
		e := k.left
		if !e.Type().EqualIgnoringNullability(ct) {
			e = &expr.Cast{X: e, T: ct}
		}
		exprs = append(exprs, e)
		fs = append(fs, types.F(fmt.Sprintf("k%d", i), ct))
	}
	kt := types.MustRowType(fs...)
	if _, err := newProjector(kt, exprs); err != nil {
		return nil, err
	}
	enc := types.NewKeyEncoder(kt, seq(len(fs))...)
	if _, err := newProjector(j.calc.rt, j.calc.Projs); err != nil {
		return nil, err
	}
	inMemory := false
	if s, ok := ls0.(connector.SyncLookupSource); ok && s.SyncLookup() {
		inMemory = true
	}
	newSide := func() *sideProjector {
		p, _ := newProjector(j.calc.rt, j.calc.Projs)
		return &sideProjector{projector: p}
	}
	// Lookups of a source of another kind run on goroutines of their
	// own, several at once: they take side projectors from a pool.
	sidePool := sync.Pool{New: func() any { return newSide() }}
	// A source in memory returns rows that stay as they are: when the
	// join reads the table's rows as they are, it reads those it finds
	// where they are, projecting nothing.
	direct := inMemory && j.calc.identity()
	ev, err := newJoinEvals(rt, projs, j.spec.left.Schema(), j.spec.right.Schema(), j.cond, false)
	if err != nil {
		return nil, err
	}
	kind := j.spec.kind
	// Each subtask finds the rows of its key rows, and a synchronous
	// lookup projects them, with objects of its own.
	rowsOf := func() func(ctx context.Context, k types.Row) ([]types.Row, error) {
		var side *sideProjector
		if inMemory && !direct {
			side = newSide()
		}
		return func(ctx context.Context, k types.Row) ([]types.Row, error) {
			rows, err := lookup(ctx, k)
			if err != nil {
				return nil, fmt.Errorf("lookup in table %s: %w", j.scan.Table.Name, err)
			}
			switch {
			case direct:
				return rows, nil
			case side != nil:
				return side.projectMemo(rows), nil
			}
			p := sidePool.Get().(*sideProjector)
			defer sidePool.Put(p)
			return p.projectAll(rows), nil
		}
	}
	// The rest of the condition picks the rows found that join; a LEFT
	// join pads a row none of whose rows do, once. The results are written
	// as LookupOutputReusing below says.
	match := func() func(a types.Row, m *types.Row) bool {
		if j.cond == nil {
			return nil
		}
		e := ev.pool.New().(*joinEval)
		return func(a types.Row, m *types.Row) bool { return e.test(a, *m) }
	}
	// Each subtask writes its results with an evaluator of its own, into
	// memory used again for each batch when the readers keep none of them.
	opts := []eddy.LookupOption{eddy.LookupOutputReusing(func(reuse bool) (func(a types.Row, m *types.Row) types.Row, func()) {
		e, rewind := ev.forSubtask(reuse)
		return func(a types.Row, m *types.Row) types.Row { return e.join(&a, m) }, rewind
	})}
	if inMemory {
		opts = append(opts, eddy.LookupSynchronous())
	}
	if inMemory && kt.Len() == 1 && kt.FieldType(0).IsIntegral() {
		// A key of one integer column is its value: the change's key is
		// computed, and the key row written only for the lookup. The
		// writer is the subtask's: a synchronous lookup (LookupSynchronous
		// above) runs on the join's goroutine, never on one of its own.
		if _, err := expr.Compile(exprs[0]); err != nil {
			return nil, err
		}
		return eddy.LookupJoinEach(ls, lookupFuncs(func() lookupKeyer[nullableInt] {
			kev, _ := expr.Compile(exprs[0]) // it compiles, as checked above
			f := kev.Int
			w := types.NewRowWriter(kt, types.NewArena(0))
			return lookupKeyer[nullableInt]{
				key: func(r types.Row) nullableInt {
					v, null := f(r)
					return nullableInt{V: v, Null: null}
				},
				row: func(k nullableInt) (types.Row, bool) {
					if k.Null {
						return types.Row{}, false
					}
					w.SetInt64(0, k.V)
					return w.Finish(), true
				},
			}
		}, rowsOf, match), kind, opts...), nil
	}
	// Other keys are key rows encoded (enc): the key row is written in a
	// scratch arena, read once by enc.KeyIn before the next is written;
	// keys holds the keys made, which the join keeps while their lookups
	// run and its cache holds them.
	return eddy.LookupJoinEach(ls, lookupFuncs(func() lookupKeyer[string] {
		p, _ := newProjector(kt, exprs)
		p.w = types.NewRowWriter(kt, types.NewScratchArena())
		keys := types.NewArena(0)
		return lookupKeyer[string]{
			key: func(r types.Row) string {
				k := p.project(r)
				for i := range fs {
					if k.IsNull(i) {
						return "" // NULL keys find nothing
					}
				}
				return enc.KeyIn(keys, k)
			},
			row: func(k string) (types.Row, bool) { return enc.KeyRow(k), k != "" },
		}
	}, rowsOf, match), kind, opts...), nil
}

// lookupKeyer makes the keys of one subtask's lookups: key gives the key of
// a change's row, and row the key row it looks up, or false for a key with
// a NULL, which finds nothing.
type lookupKeyer[K comparable] struct {
	key func(types.Row) K
	row func(K) (types.Row, bool)
}

// lookupFuncs returns the functions of a subtask of a lookup join by keys
// of type K: its keyer (newKeyer), its lookup of a key row (rowsOf) and
// the rest of its condition (match, nil when there is none).
func lookupFuncs[K comparable](newKeyer func() lookupKeyer[K], rowsOf func() func(context.Context, types.Row) ([]types.Row, error),
	match func() func(types.Row, *types.Row) bool) func() eddy.LookupFuncs[types.Row, K, types.Row, types.Row] {
	return func() eddy.LookupFuncs[types.Row, K, types.Row, types.Row] {
		k, rows := newKeyer(), rowsOf()
		return eddy.LookupFuncs[types.Row, K, types.Row, types.Row]{
			Key: k.key,
			Lookup: func(ctx context.Context, key K) ([]types.Row, error) {
				r, ok := k.row(key)
				if !ok {
					return nil, nil
				}
				return rows(ctx, r)
			},
			Match: match(),
		}
	}
}

// sideProjector projects the rows a lookup found. Its arena never hands
// its memory out again: the rows it writes stay as they are for the join
// to keep.
type sideProjector struct {
	*projector
	// memo holds, for a synchronous lookup source, the projection of each
	// result it returned, by the result's first row's address: such a
	// source returns its rows from memory, the same slice for a key until
	// it reloads, so each is projected once.
	memo map[*types.Row][]types.Row
}

// maxSideMemo bounds a sideProjector's memo; a full memo starts afresh,
// forgetting the results of a source's earlier loads.
const maxSideMemo = 1 << 16

// projectAll returns the projections of rows.
func (p *sideProjector) projectAll(rows []types.Row) []types.Row {
	out := make([]types.Row, len(rows))
	for i, r := range rows {
		out[i] = p.project(r)
	}
	return out
}

// projectMemo returns the projections of rows, a result of a synchronous
// lookup source, projecting them only the first time the source returns
// them.
func (p *sideProjector) projectMemo(rows []types.Row) []types.Row {
	if len(rows) == 0 {
		return nil
	}
	first := &rows[0]
	if out, ok := p.memo[first]; ok && len(out) == len(rows) {
		return out
	}
	if p.memo == nil || len(p.memo) >= maxSideMemo {
		p.memo = map[*types.Row][]types.Row{}
	}
	out := p.projectAll(rows)
	p.memo[first] = out
	return out
}

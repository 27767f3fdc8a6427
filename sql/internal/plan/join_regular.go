package plan

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// RegularJoinRel is a regular (unbounded) join of two changelogs, keyed by
// its equi-join keys, as Flink's Join: eddy.JoinOn with the rest of the
// condition. Its output is insert-only for an inner join of insert-only
// inputs and a retract stream otherwise.
type RegularJoinRel struct {
	spec     *joinSpec
	keys     []equiKey
	residual []expr.Expr
	// cond is the residual conjuncts as one condition, nil for none.
	cond expr.Expr
	rt   *types.RowType
	// unique are the inputs' unique keys (nil for none); contains tells
	// whether the join key contains it (JoinKeyContainsUniqueKey).
	unique   [2][]int
	contains [2]bool
	// expiry says when the rows of each input can be dropped from the
	// join's state (join_expiry.go), nil for never.
	expiry [2]joinExpiry
	// prefilter drops the rows of one input that cannot match the
	// maximum of their window (join_max_prefilter.go), nil for none.
	prefilter *maxPrefilter
}

func (q *queryPlanner) newRegularJoin(sp *joinSpec, keys []equiKey, residual []expr.Expr) *RegularJoinRel {
	j := &RegularJoinRel{spec: sp, keys: keys, residual: residual, cond: q.conjoin(residual),
		rt: joinRowType(sp.left.Schema(), sp.right.Schema(), sp.kind)}
	for side, in := range []Rel{sp.left, sp.right} {
		j.unique[side] = uniqueKey(in)
		j.contains[side] = len(j.unique[side]) > 0 && keyContains(keys, side, j.unique[side])
	}
	j.planExpiry(q.cat)
	j.prefilter = j.planMaxPrefilter(q.cat)
	return j
}

// keyContains tells whether the join keys of a side (0 left, 1 right)
// include every column of cols.
func keyContains(keys []equiKey, side int, cols []int) bool {
	for _, c := range cols {
		found := false
		for _, k := range keys {
			e := k.left
			if side == 1 {
				e = k.right
			}
			if col, ok := e.(*expr.Column); ok && col.Index == c {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// uniqueKey returns the columns of a unique key of r's rows: its upsert
// key, or the primary key of the table it reads, carried through
// projections and filters; nil if none is known.
func uniqueKey(r Rel) []int {
	if k := r.Props().UpsertKey; len(k) > 0 {
		return k
	}
	switch r := r.(type) {
	case *ScanRel:
		return r.ct.PrimaryKey
	case *CalcRel:
		in := uniqueKey(r.Input)
		if len(in) == 0 {
			return nil
		}
		var out []int
		for _, k := range in {
			found := -1
			for i, e := range r.Projs {
				if col, ok := e.(*expr.Column); ok && col.Index == k {
					found = i
					break
				}
			}
			if found < 0 {
				return nil
			}
			out = append(out, found)
		}
		return out
	}
	return nil
}

func (j *RegularJoinRel) joinSpec() *joinSpec    { return j.spec }
func (j *RegularJoinRel) Schema() *types.RowType { return j.rt }
func (j *RegularJoinRel) Inputs() []Rel          { return []Rel{j.spec.left, j.spec.right} }

func (j *RegularJoinRel) Props() Props {
	mode := changelog.Retract
	if j.spec.kind == eddy.InnerJoin && j.spec.left.Props().Mode.IsInsertOnly() && j.spec.right.Props().Mode.IsInsertOnly() {
		mode = changelog.InsertOnly
	}
	return Props{Mode: mode, Rowtime: -1, Proctime: -1}
}

// flinkJoinType is the name of a join kind in Flink's plans.
func flinkJoinType(k eddy.JoinKind) string {
	switch k {
	case eddy.LeftJoin:
		return "LeftOuterJoin"
	case eddy.RightJoin:
		return "RightOuterJoin"
	case eddy.FullJoin:
		return "FullOuterJoin"
	}
	return "InnerJoin"
}

// joinWhereText renders a join's condition over its output row.
func joinWhereText(keys []equiKey, residual []expr.Expr, rt *types.RowType) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, namedAs(k.cond, rt).String())
	}
	for _, c := range residual {
		parts = append(parts, namedAs(c, rt).String())
	}
	if len(parts) == 0 {
		return "true"
	}
	return strings.Join(parts, " AND ")
}

func (j *RegularJoinRel) inputSpec(side int) string {
	switch {
	case j.contains[side]:
		return "JoinKeyContainsUniqueKey"
	case len(j.unique[side]) > 0:
		return "HasUniqueKey"
	}
	return "NoUniqueKey"
}

func (j *RegularJoinRel) Describe() string {
	var expiry []string
	for side, name := range []string{"left", "right"} {
		if len(j.expiry[side]) > 0 {
			expiry = append(expiry, name+": "+j.expiry[side].String())
		}
	}
	exp := ""
	if len(expiry) > 0 {
		exp = ", stateExpiry=[" + strings.Join(expiry, ", ") + "]"
	}
	if j.prefilter != nil {
		exp += ", maxPrefilter=[" + j.prefilter.String(j.rt, j.spec.width()) + "]"
	}
	return fmt.Sprintf("Join(joinType=[%s], where=[%s], select=[%s], leftInputSpec=[%s], rightInputSpec=[%s]%s)",
		flinkJoinType(j.spec.kind), joinWhereText(j.keys, j.residual, j.rt), fieldList(j.rt), j.inputSpec(0), j.inputSpec(1), exp)
}

// noKeyError is the refusal of a join without equalities between its
// inputs.
func (j *RegularJoinRel) noKeyError(q *queryPlanner) error {
	return q.errorf(j.spec.pos, "the join with %s has no equality between its inputs (where=[%s]): eddy runs a join keyed by its equi-join keys, "+
		"and an unbounded join without them would keep both inputs whole on one subtask; join ON a.k = b.k (or put the equality in WHERE), "+
		"or bound the rowtimes of two append-only inputs for an interval join (a.rt BETWEEN b.rt - INTERVAL '1' MINUTE AND b.rt)",
		j.spec.rightName, joinWhereText(j.keys, j.residual, j.rt))
}

func (j *RegularJoinRel) build(b *builder) (*eddy.Stream[Rec], error) {
	return j.buildProjected(b, nil, nil)
}

// buildProjected builds the join. With projs, its result rows are those
// expressions (of types rt) over the joined row, written straight from each
// pair without writing the joined row: the projection of a Calc above the
// join.
func (j *RegularJoinRel) buildProjected(b *builder, rt *types.RowType, projs []expr.Expr) (*eddy.Stream[Rec], error) {
	if len(j.keys) == 0 {
		return nil, fmt.Errorf("sql: the join with %s has no equality between its inputs; join ON a.k = b.k", j.spec.rightName)
	}
	ls, err := b.stream(j.spec.left)
	if err != nil {
		return nil, err
	}
	rs, err := b.stream(j.spec.right)
	if err != nil {
		return nil, err
	}
	ls, rs = wholeRows(ls, j.spec.left), wholeRows(rs, j.spec.right)
	// The settings may have changed since the join was planned.
	if p := j.prefilter; p != nil && maxPrefilterAllowed(b.cat) {
		if p.side == 0 {
			ls = p.apply(ls)
		} else {
			rs = p.apply(rs)
		}
	}
	kind := j.spec.kind
	// Rows whose key is NULL match nothing: those of a side that is not
	// kept unmatched need not enter the join.
	lk, err := newJoinKeys(j.keys, 0, j.spec.left.Schema())
	if err != nil {
		return nil, err
	}
	rk, err := newJoinKeys(j.keys, 1, j.spec.right.Schema())
	if err != nil {
		return nil, err
	}
	if kind == eddy.InnerJoin || kind == eddy.RightJoin {
		ls = lk.dropNullKeys(ls)
	}
	if kind == eddy.InnerJoin || kind == eddy.LeftJoin {
		rs = rk.dropNullKeys(rs)
	}
	var opts []eddy.TableOption
	ttl, err := stateTTL(b.cat)
	if err != nil {
		return nil, err
	}
	// Joins keep rows in state: copy them out of the arenas they share.
	lins, rins := ls.ChangelogMode().IsInsertOnly(), rs.ChangelogMode().IsInsertOnly()
	// Rows expire (join_expiry.go) unless sources have become idle
	// since the join was planned.
	expiry := j.expiry
	if sourceIdleness(b.cat) {
		expiry = [2]joinExpiry{}
	}
	// Rows that expire leave in about the order they came (their bound
	// follows their time): the chunks of an arena go as their rows do.
	ls = keptRows(ls, lins && ttl == 0 && !(j.contains[1] && rins && !j.contains[0]))
	rs = keptRows(rs, rins && ttl == 0 && !(j.contains[0] && lins && !j.contains[1]))
	if len(expiry[0]) > 0 {
		opts = append(opts, eddy.JoinRowsExpireAt(eddy.LeftSide, expiry[0].at()))
	}
	if len(expiry[1]) > 0 {
		opts = append(opts, eddy.JoinRowsExpireAt(eddy.RightSide, expiry[1].at()))
	}
	if ttl > 0 {
		opts = append(opts, eddy.StateTTL(ttl))
	}
	if j.contains[0] {
		opts = append(opts, eddy.JoinKeyContainsUniqueKey(eddy.LeftSide))
	}
	if j.contains[1] {
		opts = append(opts, eddy.JoinKeyContainsUniqueKey(eddy.RightSide))
	}
	if projs == nil {
		rt = j.rt
	}
	// A reader that keeps the join's rows in state gets each in memory
	// of its own.
	own := b.keepsRows(j)
	ev, err := newJoinEvals(rt, projs, j.spec.left.Schema(), j.spec.right.Schema(), j.cond, own)
	if err != nil {
		return nil, err
	}
	// In a FULL join, NULL keys of both sides meet in the join: they must
	// not match.
	nullKeys := kind == eddy.FullJoin && lk.nullable() && rk.nullable()
	fn := func(a, b *types.Row) types.Row {
		e := ev.get()
		r := e.join(a, b)
		ev.put(e)
		return r
	}
	if !own {
		// Each subtask writes its results with an evaluator of its own,
		// into memory used again for each batch when the readers keep
		// none of them.
		opts = append(opts, eddy.JoinOutputReusing(func(reuse bool) (func(a, b *types.Row) types.Row, func()) {
			e, rewind := ev.forSubtask(reuse)
			return e.join, rewind
		}))
	}
	var on func(a, b types.Row) bool
	if len(j.residual) > 0 || nullKeys {
		on = func(a, b types.Row) bool {
			if nullKeys && (lk.hasNull(a) || rk.hasNull(b)) {
				return false
			}
			if len(j.residual) == 0 {
				return true
			}
			e := ev.get()
			ok := e.test(a, b)
			ev.put(e)
			return ok
		}
	}
	var out *eddy.Stream[Rec]
	if lf, rf, ok := intJoinKeys(j.keys, kind, j.spec.left.Schema(), j.spec.right.Schema()); ok {
		out = keyedJoin(eddy.GroupBy(ls, lf), eddy.GroupBy(rs, rf), kind, on, fn, opts)
		b.intKeyed[out] = joinIntKeyCols(j.keys[0], kind, j.spec.left.Schema().Len(), projs)
	} else {
		out = keyedJoin(eddy.GroupBy(ls, lk.keyFunc()), eddy.GroupBy(rs, rk.keyFunc()), kind, on, fn, opts)
	}
	b.owned[out] = own
	return out, nil
}

// keptRows copies the rows of a join input out of the memory they share
// with others, for the join to keep. If forever, the join keeps every row
// as long as it runs (an insert-only input without a state TTL whose rows
// are not dropped once matched), or until the watermark passes their
// expiry, which follows their time: the rows are copied into an arena of
// each subtask, which allocates nothing per row and holds only its current
// chunk (the others are freed with the last row in them, and rows that
// expire leave in about the order they came); otherwise each row is copied
// into memory of its own, freed when the join forgets the row.
func keptRows(s *eddy.Stream[Rec], forever bool) *eddy.Stream[Rec] {
	if !forever {
		return cloneRows(s)
	}
	return eddy.MapRowsCopying(s, func() func(types.Row) types.Row {
		return types.NewArena(0).Copy
	})
}

// keyedJoin joins the keyed inputs, with on as the rest of the condition
// (nil for none).
func keyedJoin[K comparable](lg, rg *eddy.KeyedStream[K, Rec], kind eddy.JoinKind, on func(a, b types.Row) bool, fn func(a, b *types.Row) types.Row, opts []eddy.TableOption) *eddy.Stream[Rec] {
	if on == nil {
		return eddy.Join(lg, rg, kind, fn, opts...)
	}
	return eddy.JoinOn(lg, rg, kind, on, fn, opts...)
}

// intJoinKeys returns the key functions of a join on one column of each
// side whose values are integers, dates or timestamps of millisecond
// precision (the types whose value is the row's slot), of the same type on
// both sides, and never NULL in the join: such a key is its int64 value,
// which the join's state and exchanges hash and compare faster than the
// encoded key and which takes no memory of its own. The column is never
// NULL in the join if its type is NOT NULL or the join drops the side's
// rows with a NULL key (see dropNullKeys), which it does for a key compared
// with = on a side whose unmatched rows are not kept.
func intJoinKeys(keys []equiKey, kind eddy.JoinKind, l, r *types.RowType) (lf, rf func(types.Row) int64, ok bool) {
	if len(keys) != 1 {
		return nil, nil, false
	}
	k := keys[0]
	lc, lok := k.left.(*expr.Column)
	rc, rok := k.right.(*expr.Column)
	if !lok || !rok {
		return nil, nil, false
	}
	lt, rt := l.Field(lc.Index).Type, r.Field(rc.Index).Type
	if !lt.EqualIgnoringNullability(rt) || !slotKey(lt) {
		return nil, nil, false
	}
	// dropped tells whether the join drops a side's rows with a NULL key.
	leftDropped := !k.nullSafe && (kind == eddy.InnerJoin || kind == eddy.RightJoin)
	rightDropped := !k.nullSafe && (kind == eddy.InnerJoin || kind == eddy.LeftJoin)
	if (lt.IsNullable() && !leftDropped) || (rt.IsNullable() && !rightDropped) {
		return nil, nil, false
	}
	li, ri := lc.Index, rc.Index
	return func(r types.Row) int64 { return r.Int64(li) }, func(r types.Row) int64 { return r.Int64(ri) }, true
}

// slotKey tells whether the values of t are their row slot, read whole by
// Row.Int64: equal slots are equal values.
func slotKey(t types.Type) bool {
	switch t.Kind() {
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt, types.KindDate:
		return true
	case types.KindTimestamp, types.KindTimestampLTZ:
		return t.Precision() <= types.MaxCompactTimestampPrecision
	}
	return false
}

// columnsOf returns the references to every column of rt.
func columnsOf(rt *types.RowType) []expr.Expr {
	cols := make([]expr.Expr, rt.Len())
	for i, f := range rt.Fields() {
		cols[i] = &expr.Column{Index: i, Name: f.Name, T: f.Type}
	}
	return cols
}

// stateTTL reads SET 'table.exec.state.ttl' (0 for none).
func stateTTL(cat *Catalog) (time.Duration, error) {
	v, ok := cat.Settings["table.exec.state.ttl"]
	if !ok {
		return 0, nil
	}
	d, err := connector.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("setting 'table.exec.state.ttl' = '%s': %w", v, err)
	}
	return d, nil
}

// wholeRows turns an upsert stream into a retract stream (Flink's
// ChangelogNormalize, keyed by its upsert key), for operators that match
// rows by value.
func wholeRows(s *eddy.Stream[Rec], r Rel) *eddy.Stream[Rec] {
	m := s.ChangelogMode()
	if !m.Contains(changelog.UpdateAfter) || m.Contains(changelog.UpdateBefore) {
		return s
	}
	key := types.NewKeyEncoder(r.Schema(), uniqueKey(r)...)
	return eddy.ChangelogNormalize(eddy.GroupBy(cloneRows(s), key.Key))
}

// joinKeys computes the join key of one side's rows: the encoding of its
// key values cast to the type both sides share.
type joinKeys struct {
	rt    *types.RowType
	exprs []expr.Expr
	// cols are the key columns when every key is a column of the row.
	cols []int
	// notNull are the keys compared with = (not IS NOT DISTINCT FROM)
	// that may be NULL.
	notNull []expr.Expr
	kt      *types.RowType
	pool    sync.Pool
}

func newJoinKeys(keys []equiKey, side int, rt *types.RowType) (*joinKeys, error) {
	k := &joinKeys{rt: rt}
	var fs []types.Field
	for i, key := range keys {
		e := key.left
		if side == 1 {
			e = key.right
		}
		k.exprs = append(k.exprs, e)
		fs = append(fs, types.F(fmt.Sprintf("k%d", i), e.Type().Nullable()))
		if !key.nullSafe && e.Type().IsNullable() {
			k.notNull = append(k.notNull, e)
		}
	}
	k.kt = types.MustRowType(fs...)
	k.cols = make([]int, 0, len(keys))
	for _, e := range k.exprs {
		if c, ok := e.(*expr.Column); ok {
			k.cols = append(k.cols, c.Index)
		} else {
			k.cols = nil
			break
		}
	}
	if k.cols == nil {
		if _, err := newProjector(k.kt, k.exprs); err != nil {
			return nil, err
		}
		k.pool.New = func() any {
			p, _ := newProjector(k.kt, k.exprs)
			return p
		}
	}
	for _, e := range k.notNull {
		if _, err := expr.Compile(e); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func (k *joinKeys) nullable() bool { return len(k.notNull) > 0 }

// keyFunc returns the function of a row's key, safe for concurrent use.
func (k *joinKeys) keyFunc() func(types.Row) string {
	if k.cols != nil {
		return types.NewKeyEncoder(k.rt, k.cols...).Key
	}
	return func(r types.Row) string {
		p := k.pool.Get().(*projector)
		defer k.pool.Put(p)
		return strings.Clone(p.project(r).Encoding())
	}
}

// hasNull tells whether a key compared with = is NULL in r.
func (k *joinKeys) hasNull(r types.Row) bool {
	for _, e := range k.notNull {
		if c, ok := e.(*expr.Column); ok {
			if r.IsNull(c.Index) {
				return true
			}
			continue
		}
		ev, _ := expr.Compile(e)
		if valueIsNull(ev, r) {
			return true
		}
	}
	return false
}

// dropNullKeys filters out the rows with a NULL key compared with =.
func (k *joinKeys) dropNullKeys(s *eddy.Stream[Rec]) *eddy.Stream[Rec] {
	if len(k.notNull) == 0 {
		return s
	}
	return eddy.FilterRowsNonRetaining(s, func() func(types.Row) bool {
		evs := make([]*expr.Eval, len(k.notNull))
		for i, e := range k.notNull {
			evs[i], _ = expr.Compile(e)
		}
		return func(r types.Row) bool {
			for _, ev := range evs {
				if valueIsNull(ev, r) {
					return false
				}
			}
			return true
		}
	})
}

// valueIsNull tells whether ev's value for r is NULL.
func valueIsNull(ev *expr.Eval, r types.Row) bool {
	switch {
	case ev.Bool != nil:
		_, n := ev.Bool(r)
		return n
	case ev.Int != nil:
		_, n := ev.Int(r)
		return n
	case ev.Float != nil:
		_, n := ev.Float(r)
		return n
	case ev.Dec != nil:
		_, n := ev.Dec(r)
		return n
	case ev.Str != nil:
		_, n := ev.Str(r)
		return n
	case ev.TS != nil:
		_, n := ev.TS(r)
		return n
	case ev.Row != nil:
		_, n := ev.Row(r)
		return n
	case ev.Arr != nil:
		_, n := ev.Arr(r)
		return n
	case ev.Map != nil:
		_, n := ev.Map(r)
		return n
	}
	return false
}

// joinEvals hands out the row writers and compiled conditions of a join's
// result rows, one at a time per goroutine: a join's functions are called
// by all its subtasks.
type joinEvals struct{ pool sync.Pool }

// forSubtask returns an evaluator of a subtask's own, whose result rows go
// into memory that rewind hands out again if reuse (the readers of the
// results keep nothing of them; eddy.JoinOutputReusing).
func (evs *joinEvals) forSubtask(reuse bool) (*joinEval, func()) {
	e := evs.pool.New().(*joinEval)
	if !reuse {
		return e, func() {}
	}
	a := types.NewRecyclingArena(0)
	e.w = types.NewRowWriter(e.w.RowType(), a)
	return e, a.Rewind
}

// joinEval builds the result row of a pair and tests the rest of the join
// condition on it. Both are compiled over the pair of rows (expr.Pair):
// the joined row is never written.
type joinEval struct {
	w    *types.RowWriter
	pair expr.Pair
	// copies are the columns of the result that are columns of a side as
	// they are; sets write the others.
	copies []joinCopy
	sets   []func(types.Row, *types.RowWriter)
	// pos, if set, starts each result row with the columns of the left
	// side that keep their positions, copied at once (see
	// types.PositionCopier); copies holds the others.
	pos *types.PositionCopier
	// nullL and nullR are rows of every column NULL, the padded side of
	// an outer join's unmatched row.
	nullL, nullR types.Row
	cond         func(types.Row) (bool, bool)
}

// newJoinEvals compiles the result rows (of type out) of projs and the
// condition cond, both over the joined row of an l row and an r row; nil
// projs are the joined row itself.
func newJoinEvals(out *types.RowType, projs []expr.Expr, l, r *types.RowType, cond expr.Expr, own bool) (*joinEvals, error) {
	if projs == nil {
		projs = columnsOf(out)
	}
	mk := func() (*joinEval, error) {
		a := types.NewArena(0)
		if own {
			a = types.NewOwnArena()
		}
		e := &joinEval{w: types.NewRowWriter(out, a), nullL: nullRow(l), nullR: nullRow(r)}
		e.pair.Split = l.Len()
		for i, p := range projs {
			if c, ok := joinCopyOf(p, i, out, l, r); ok {
				e.copies = append(e.copies, c)
				continue
			}
			set, err := e.pair.Setter(p, i)
			if err != nil {
				return nil, err
			}
			e.sets = append(e.sets, set)
		}
		e.leftInPlace(l)
		if cond != nil {
			ev, err := e.pair.Compile(cond)
			if err != nil {
				return nil, err
			}
			e.cond = ev.Bool
		}
		return e, nil
	}
	if _, err := mk(); err != nil {
		return nil, err
	}
	evs := &joinEvals{}
	evs.pool.New = func() any {
		e, _ := mk()
		return e
	}
	return evs, nil
}

// joinCopy is a column of a join's result that is column in of a side
// (the right one if right) as it is: column out of the result.
type joinCopy struct {
	out, in int
	right   bool
}

// joinCopyOf tells whether projection p, column i of the result rows (of
// type out), is a column of the left (l) or right (r) side whose type is
// the result column's up to nullability, and if so which.
func joinCopyOf(p expr.Expr, i int, out, l, r *types.RowType) (joinCopy, bool) {
	col, ok := p.(*expr.Column)
	if !ok || col.Index < 0 || col.Index >= l.Len()+r.Len() || !col.T.EqualIgnoringNullability(out.FieldType(i)) {
		return joinCopy{}, false
	}
	c := joinCopy{out: i, in: col.Index}
	side := l
	if c.in >= l.Len() {
		c.in, c.right, side = c.in-l.Len(), true, r
	}
	return c, side.FieldType(c.in).EqualIgnoringNullability(col.T)
}

// nullRow returns the row of type rt whose every column is NULL.
func nullRow(rt *types.RowType) types.Row {
	w := types.NewRowWriter(rt, types.NewArena(0))
	return w.Finish()
}

func (evs *joinEvals) get() *joinEval  { return evs.pool.Get().(*joinEval) }
func (evs *joinEvals) put(e *joinEval) { evs.pool.Put(e) }

// leftInPlace makes e copy the columns of the left side, of type l, that
// keep their positions in the result rows with one copy of the left row's
// bitmap and slots: worth it when there are two or more.
func (e *joinEval) leftInPlace(l *types.RowType) {
	e.pos, e.copies = positionCopier(l, e.w.RowType(), e.copies, func(c joinCopy) (int, bool) { return c.out, !c.right && c.in == c.out })
}

// join writes the result row of a and b (nil for the padded side).
func (e *joinEval) join(a, b *types.Row) types.Row {
	e.pair.A, e.pair.B = e.nullL, e.nullR
	if a != nil {
		e.pair.A = *a
	}
	if b != nil {
		e.pair.B = *b
	}
	if e.pos != nil {
		e.pos.Start(e.w, e.pair.A)
	}
	for _, c := range e.copies {
		src := e.pair.A
		if c.right {
			src = e.pair.B
		}
		e.w.CopyFieldRef(c.out, src, c.in)
	}
	for _, set := range e.sets {
		set(types.Row{}, e.w)
	}
	e.pair.A, e.pair.B = types.Row{}, types.Row{}
	return e.w.Finish()
}

// test evaluates the rest of the join condition on the pair of a and b.
func (e *joinEval) test(a, b types.Row) bool {
	if e.cond == nil {
		return true
	}
	e.pair.A, e.pair.B = a, b
	v, null := e.cond(types.Row{})
	e.pair.A, e.pair.B = types.Row{}, types.Row{}
	return v && !null
}

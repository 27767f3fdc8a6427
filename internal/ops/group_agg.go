package ops

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// GroupAggLogic is an unbounded GROUP BY over a changelog: how to fold rows
// of type T into an accumulator ACC per group, take them back out, and turn
// the accumulator into the group's row R.
type GroupAggLogic[K comparable, T, ACC, R any] struct {
	// Create makes an empty accumulator.
	Create func() ACC
	// Add folds a row in; v gives the views (nil if Views is 0).
	Add func(acc ACC, row T, v agg.Views) ACC
	// Retract takes a row back out; nil if the function cannot (the input
	// must then be insert-only).
	Retract func(acc ACC, row T, v agg.Views) ACC
	// Merge combines two accumulators, for the global half of a local-global
	// aggregation.
	Merge func(a, b ACC) ACC
	// Views is the number of views the function keeps.
	Views int
	// InsertOnly tells that the input never takes a row back (its
	// changelog is insert-only); the views report it to the function.
	InsertOnly bool
	// Row makes the group's output row from its key and accumulator.
	Row func(key K, acc ACC) R
	// Equal, if set, compares two output rows: an update that leaves the
	// row equal is not emitted.
	Equal func(a, b R) bool
	// Keeps, if set (with Equal), tells before a row is added to a
	// group's accumulator that adding it leaves the group's row as it is
	// (agg.ResultKeeper): the operator then adds it without making the
	// group's row, and emits nothing.
	Keeps func(acc ACC, row T) bool
	// StableRows tells that a row Row made shares no memory that a later
	// change of the accumulator changes: the operator then keeps the row
	// it last emitted for the group it last changed, and takes it as that
	// group's row before its next change instead of making it again.
	StableRows bool
	// TTL, if positive, drops the state of a group not updated for that
	// long (Flink's idle state retention).
	TTL time.Duration
	// MiniBatch, if positive, buffers up to that many rows and applies them
	// per group at once: one state access and at most one change per group
	// and batch. MiniBatchInterval bounds how long a row waits.
	MiniBatch         int
	MiniBatchInterval time.Duration
}

// groupState is a group's state: its accumulator and the number of rows in
// it, which tells when the group is empty.
type groupState[ACC any] struct {
	Acc   ACC
	Count int64
}

// GroupAgg runs a GroupAggLogic over a keyed changelog.
type GroupAgg[K comparable, T, ACC, R any] struct {
	*relational[K, changelog.Change[T], R]
	logic GroupAggLogic[K, T, ACC, R]
	acc   *state.ValueHandle[K, state.VoidNamespace, groupState[ACC]]
	views *groupViews[K]
	batch miniBatch[K, changelog.Change[T]]
	// last is the row last emitted for the group lastKey, when lastOK
	// (with StableRows): the group's row until its state changes again.
	last    R
	lastKey K
	lastOK  bool
}

// NewGroupAgg returns the operator; it restores ctx.Restored.
func NewGroupAgg[K comparable, T, ACC, R any](ctx *runtime.Context, spec KeySpec[K, changelog.Change[T]], newBackend BackendFactory, logic GroupAggLogic[K, T, ACC, R], outs map[string]any) (*GroupAgg[K, T, ACC, R], error) {
	rel, err := newRelational[K, changelog.Change[T], R](ctx, spec, newBackend, logic.TTL, outs)
	if err != nil {
		return nil, err
	}
	g := &GroupAgg[K, T, ACC, R]{relational: rel, logic: logic}
	if g.acc, err = state.NewValueHandle[K, state.VoidNamespace, groupState[ACC]](rel.store, nil, nil, "group-acc", nil, rel.ttlConfig()); err != nil {
		rel.Close()
		return nil, err
	}
	if logic.Views > 0 {
		if g.views, err = newGroupViews(rel.store, rel.ttlConfig(), logic.Views, logic.InsertOnly); err != nil {
			rel.Close()
			return nil, err
		}
	}
	if err := rel.restore(ctx.Restored); err != nil {
		rel.Close()
		return nil, err
	}
	if g.views != nil {
		g.views.restored = ctx.Restored != nil
	}
	g.batch.init(ctx, logic.MiniBatch, logic.MiniBatchInterval, g.flushBatch)
	return g, nil
}

// views returns the views as the aggregate function sees them.
func (g *GroupAgg[K, T, ACC, R]) agViews() agg.Views {
	if g.views == nil {
		return nil
	}
	return g.views
}

// ProcessBatch applies every change to its group, or buffers it in the
// mini-batch.
func (g *GroupAgg[K, T, ACC, R]) ProcessBatch(b *runtime.Batch[changelog.Change[T]]) error {
	if g.batch.size > 0 {
		for i, c := range b.Data {
			kg := g.setKeyAt(b, i)
			g.batch.add(kg, g.kc.Key, c, b.TS[i])
		}
		if g.batch.full() {
			return g.flushBatch()
		}
		return nil
	}
	var one [1]changelog.Change[T]
	for i, c := range b.Data {
		g.setKeyAt(b, i)
		g.ts = b.TS[i]
		one[0] = c
		if err := g.apply(one[:]); err != nil {
			return err
		}
	}
	g.cleanup(b.Len())
	return g.flush()
}

// flushBatch applies the buffered changes, group by group.
func (g *GroupAgg[K, T, ACC, R]) flushBatch() error {
	var err error
	g.batch.drain(func(kg int, key K, rows []changelog.Change[T], ts int64) {
		if err != nil {
			return
		}
		g.setKey(kg, key)
		g.ts = ts
		err = g.apply(rows)
	})
	if err != nil {
		return err
	}
	g.cleanup(64)
	return g.flush()
}

// apply folds the changes of the current group into its state and emits the
// group's change, if its row changed.
func (g *GroupAgg[K, T, ACC, R]) apply(rows []changelog.Change[T]) error {
	st, existed := g.acc.Value()
	if !existed {
		st = groupState[ACC]{Acc: g.logic.Create()}
	}
	v := g.agViews()
	// The additions that leave the group's row as it is are folded in
	// first: the row before the others is then the row the group had.
	kept := 0
	if existed && g.logic.Keeps != nil && g.logic.Equal != nil {
		for _, c := range rows {
			if !c.Kind.IsAddition() || !g.logic.Keeps(st.Acc, c.Row) {
				break
			}
			st.Acc = g.logic.Add(st.Acc, c.Row, v)
			st.Count++
			kept++
		}
		if kept == len(rows) {
			g.acc.Update(st)
			return nil
		}
		rows = rows[kept:]
	}
	var before R
	if existed {
		if g.lastOK && g.lastKey == g.kc.Key {
			before = g.last
		} else {
			before = g.logic.Row(g.kc.Key, st.Acc)
		}
	}
	changed := kept > 0
	for _, c := range rows {
		if c.Kind.IsAddition() {
			st.Acc = g.logic.Add(st.Acc, c.Row, v)
			st.Count++
			changed = true
			continue
		}
		if st.Count <= 0 {
			g.retractedAbsent()
			continue
		}
		if g.logic.Retract == nil {
			return fmt.Errorf("received a %v row, but the aggregate function cannot retract and the input was declared insert-only", c.Kind)
		}
		st.Acc = g.logic.Retract(st.Acc, c.Row, v)
		st.Count--
		changed = true
	}
	if !changed {
		return nil
	}
	if st.Count <= 0 {
		g.acc.Clear()
		g.forgetLast()
		if g.views != nil {
			g.views.clear()
		}
		if existed {
			g.emit(changelog.Delete, before)
		}
		return nil
	}
	g.acc.Update(st)
	after := g.logic.Row(g.kc.Key, st.Acc)
	if g.logic.StableRows {
		g.last, g.lastKey, g.lastOK = after, g.kc.Key, true
	}
	switch {
	case !existed:
		g.emit(changelog.Insert, after)
	case g.logic.Equal != nil && g.logic.Equal(before, after):
	default:
		g.emitUpdate(before, after)
	}
	return nil
}

// forgetLast drops the row kept for the last group changed.
func (g *GroupAgg[K, T, ACC, R]) forgetLast() {
	var zeroR R
	var zeroK K
	g.last, g.lastKey, g.lastOK = zeroR, zeroK, false
}

// ProcessWatermark applies the mini-batch, then forwards the watermark.
func (g *GroupAgg[K, T, ACC, R]) ProcessWatermark(wm int64) error {
	if err := g.flushBatch(); err != nil {
		return err
	}
	return g.relational.ProcessWatermark(wm)
}

// EndInput applies the mini-batch and ends the output.
func (g *GroupAgg[K, T, ACC, R]) EndInput() error {
	if err := g.flushBatch(); err != nil {
		return err
	}
	return g.relational.EndInput()
}

// SnapshotStateAsync applies the mini-batch, so that its rows are in the
// state the checkpoint holds and their changes go out before the barrier.
func (g *GroupAgg[K, T, ACC, R]) SnapshotStateAsync(id int64) (func() (*runtime.OperatorSnapshot, error), error) {
	if err := g.flushBatch(); err != nil {
		return nil, err
	}
	return g.keyedBase.SnapshotStateAsync(id)
}

// groupViews are the views of the current group: map states from (view
// number, value) to count, one for views of strings and one for views of
// integers. It implements agg.Views.
type groupViews[K comparable] struct {
	insertOnly bool
	// restored says the operator restored its state from a snapshot.
	restored bool
	m        *state.MapHandle[K, state.VoidNamespace, string, int64]
	// ints holds a map state per view for views of integers, so that
	// their entries are keyed by the value alone.
	ints []*state.MapHandle[K, state.VoidNamespace, int64, int64]
	key  []byte
	buf  []viewEntry
	ibuf []intViewEntry
}

type intViewEntry struct {
	value, count int64
}

type viewEntry struct {
	value string
	count int64
}

func newGroupViews[K comparable](s *state.Store[K], ttl state.TTLConfig, views int, insertOnly bool) (*groupViews[K], error) {
	m, err := state.NewMapHandle[K, state.VoidNamespace, string, int64](s, nil, nil, "group-views", nil, nil, ttl)
	if err != nil {
		return nil, err
	}
	v := &groupViews[K]{insertOnly: insertOnly, m: m, ints: make([]*state.MapHandle[K, state.VoidNamespace, int64, int64], views)}
	for i := range v.ints {
		if v.ints[i], err = state.NewMapHandle[K, state.VoidNamespace, int64, int64](s, nil, nil, fmt.Sprintf("group-int-view-%d", i), nil, nil, ttl); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (v *groupViews[K]) InsertOnly() bool { return v.insertOnly }

// Restored reports whether the operator restored the views from a
// snapshot: a function whose views changed layout since older versions
// need look for values in the views of the old layout only then.
func (v *groupViews[K]) Restored() bool { return v.restored }

func (v *groupViews[K]) CountInt(view int, value int64) int64 {
	c, _ := v.ints[view].Get(value)
	return c
}

func (v *groupViews[K]) Count(view int, value string) int64 {
	c, _ := v.m.Get(v.userKey(view, value))
	return c
}

// MarkInt sets the bits of value's entry in view to those it has and bits,
// writing the entry only if that adds any, and returns the bits it had: a
// set of flags per value costs one read, and a write when it grows.
func (v *groupViews[K]) MarkInt(view int, value int64, bits int64) (before int64) {
	m := v.ints[view]
	before, _ = m.Get(value)
	if bits&^before != 0 {
		m.Put(value, before|bits)
	}
	return before
}

func (v *groupViews[K]) AddInt(view int, value int64, delta int64) (before, after int64) {
	m := v.ints[view]
	before, _ = m.Get(value)
	after = before + delta
	if after <= 0 {
		if before > 0 {
			m.Delete(value)
		}
		return before, 0
	}
	m.Put(value, after)
	return before, after
}

func (v *groupViews[K]) RangeInt(view int, fn func(value int64, count int64) bool) {
	v.ibuf = v.ibuf[:0]
	for k, c := range v.ints[view].Entries() {
		v.ibuf = append(v.ibuf, intViewEntry{k, c})
	}
	sort.Slice(v.ibuf, func(i, j int) bool { return v.ibuf[i].value < v.ibuf[j].value })
	for _, e := range v.ibuf {
		if !fn(e.value, e.count) {
			return
		}
	}
}

func (v *groupViews[K]) userKey(view int, value string) string {
	v.key = append(v.key[:0], byte(view))
	v.key = append(v.key, value...)
	return string(v.key)
}

func (v *groupViews[K]) Add(view int, value string, delta int64) (before, after int64) {
	k := v.userKey(view, value)
	before, _ = v.m.Get(k)
	after = before + delta
	if after <= 0 {
		if before > 0 {
			v.m.Delete(k)
		}
		return before, 0
	}
	v.m.Put(k, after)
	return before, after
}

func (v *groupViews[K]) Range(view int, fn func(value string, count int64) bool) {
	v.buf = v.buf[:0]
	prefix := string([]byte{byte(view)})
	for k, c := range v.m.Entries() {
		if strings.HasPrefix(k, prefix) {
			v.buf = append(v.buf, viewEntry{k[1:], c})
		}
	}
	sort.Slice(v.buf, func(i, j int) bool { return v.buf[i].value < v.buf[j].value })
	for _, e := range v.buf {
		if !fn(e.value, e.count) {
			return
		}
	}
}

func (v *groupViews[K]) clear() {
	v.m.Clear()
	for _, m := range v.ints {
		m.Clear()
	}
}

// miniBatch buffers rows per key, in the order keys first arrive, until it
// holds size rows or interval has passed since its first row.
type miniBatch[K comparable, T any] struct {
	size     int
	interval time.Duration
	ctx      *runtime.Context
	flushFn  func() error
	index    map[K]int
	groups   []batchGroup[K, T]
	n        int
	armed    bool
}

type batchGroup[K comparable, T any] struct {
	kg   int
	key  K
	rows []T
	ts   int64
}

func (m *miniBatch[K, T]) init(ctx *runtime.Context, size int, interval time.Duration, flush func() error) {
	m.size, m.interval, m.ctx, m.flushFn = size, interval, ctx, flush
	m.index = map[K]int{}
}

func (m *miniBatch[K, T]) add(kg int, key K, row T, ts int64) {
	i, ok := m.index[key]
	if !ok {
		i = len(m.groups)
		m.index[key] = i
		if i < cap(m.groups) {
			m.groups = m.groups[:i+1]
			m.groups[i].kg, m.groups[i].key, m.groups[i].rows = kg, key, m.groups[i].rows[:0]
		} else {
			m.groups = append(m.groups, batchGroup[K, T]{kg: kg, key: key})
		}
	}
	g := &m.groups[i]
	g.rows = append(g.rows, row)
	g.ts = ts
	m.n++
	if !m.armed && m.interval > 0 {
		m.armed = true
		m.ctx.WakeAt(m.ctx.ProcessingTime()+m.interval.Milliseconds(), func(int64) error {
			m.armed = false
			return m.flushFn()
		})
	}
}

func (m *miniBatch[K, T]) full() bool { return m.n >= m.size }

// drain calls fn for every buffered group, in arrival order, and empties
// the batch.
func (m *miniBatch[K, T]) drain(fn func(kg int, key K, rows []T, ts int64)) {
	if m.n == 0 {
		return
	}
	for i := range m.groups {
		g := &m.groups[i]
		fn(g.kg, g.key, g.rows, g.ts)
		clear(g.rows)
	}
	m.groups = m.groups[:0]
	clear(m.index)
	m.n = 0
}

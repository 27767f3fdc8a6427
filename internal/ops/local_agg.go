package ops

import (
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// LocalAggLogic is the local half of a local-global aggregation: it folds
// the rows of a mini-batch into one partial accumulator per group, before
// the exchange, and emits the partials.
type LocalAggLogic[K comparable, T, ACC, P any] struct {
	// Key is the group of a row.
	Key func(T) K
	// Create makes an empty accumulator.
	Create func() ACC
	// Fold folds a row into acc and returns the change of the group's row
	// count (+1 for an addition, -1 for a retraction).
	Fold func(acc ACC, row T) (ACC, int64)
	// Partial makes the record sent downstream for a group.
	Partial func(key K, acc ACC, count int64) P
	// Size and Interval bound the mini-batch.
	Size     int
	Interval time.Duration
}

// LocalAgg runs a LocalAggLogic. It keeps no state across checkpoints: it
// sends its partials downstream when a barrier passes.
type LocalAgg[K comparable, T, ACC, P any] struct {
	logic  LocalAggLogic[K, T, ACC, P]
	ctx    *runtime.Context
	out    *Emitter[P]
	index  map[K]int
	groups []localGroup[K, ACC]
	n      int
	ts     int64
	armed  bool
}

type localGroup[K comparable, ACC any] struct {
	key   K
	acc   ACC
	count int64
}

// NewLocalAgg returns the operator.
func NewLocalAgg[K comparable, T, ACC, P any](ctx *runtime.Context, logic LocalAggLogic[K, T, ACC, P], out runtime.Input[P]) *LocalAgg[K, T, ACC, P] {
	return &LocalAgg[K, T, ACC, P]{logic: logic, ctx: ctx, out: NewEmitter(out), index: map[K]int{}}
}

// ProcessBatch folds the rows into their groups' partials.
func (l *LocalAgg[K, T, ACC, P]) ProcessBatch(b *runtime.Batch[T]) error {
	for i, v := range b.Data {
		k := l.logic.Key(v)
		j, ok := l.index[k]
		if !ok {
			j = len(l.groups)
			l.index[k] = j
			l.groups = append(l.groups, localGroup[K, ACC]{key: k, acc: l.logic.Create()})
		}
		g := &l.groups[j]
		var d int64
		g.acc, d = l.logic.Fold(g.acc, v)
		g.count += d
		l.ts = b.TS[i]
		l.n++
	}
	if l.n >= l.logic.Size {
		return l.flush()
	}
	if !l.armed && l.logic.Interval > 0 && l.n > 0 {
		l.armed = true
		l.ctx.WakeAt(l.ctx.ProcessingTime()+l.logic.Interval.Milliseconds(), func(int64) error {
			l.armed = false
			return l.flush()
		})
	}
	return nil
}

// flush sends every group's partial.
func (l *LocalAgg[K, T, ACC, P]) flush() error {
	if l.n == 0 {
		return nil
	}
	for _, g := range l.groups {
		l.out.Emit(l.logic.Partial(g.key, g.acc, g.count), l.ts)
	}
	clear(l.groups)
	l.groups = l.groups[:0]
	clear(l.index)
	l.n = 0
	return l.out.Flush()
}

// ProcessWatermark sends the partials, then the watermark.
func (l *LocalAgg[K, T, ACC, P]) ProcessWatermark(wm int64) error {
	if err := l.flush(); err != nil {
		return err
	}
	return l.out.Out().ProcessWatermark(wm)
}

// EndInput sends the partials and ends the output.
func (l *LocalAgg[K, T, ACC, P]) EndInput() error {
	if err := l.flush(); err != nil {
		return err
	}
	return l.out.Out().EndInput()
}

// SnapshotState sends the partials downstream ahead of the barrier; the
// operator has nothing left to keep.
func (l *LocalAgg[K, T, ACC, P]) SnapshotState(int64) (*runtime.OperatorSnapshot, error) {
	return nil, l.flush()
}

// GlobalAgg is the global half of a local-global aggregation: it merges the
// partials of each group into the group's state and emits the group's
// changes, as GroupAgg does for rows.
type GlobalAgg[K comparable, P, ACC, R any] struct {
	*relational[K, P, R]
	logic  GroupAggLogic[K, struct{}, ACC, R]
	unpack func(P) (ACC, int64)
	acc    *state.ValueHandle[K, state.VoidNamespace, groupState[ACC]]
}

// NewGlobalAgg returns the operator; it restores ctx.Restored. Of logic it
// uses Create, Merge, Row, Equal and TTL.
func NewGlobalAgg[K comparable, T, P, ACC, R any](ctx *runtime.Context, spec KeySpec[K, P], newBackend BackendFactory, logic GroupAggLogic[K, T, ACC, R], unpack func(P) (ACC, int64), outs map[string]any) (*GlobalAgg[K, P, ACC, R], error) {
	rel, err := newRelational[K, P, R](ctx, spec, newBackend, logic.TTL, outs)
	if err != nil {
		return nil, err
	}
	g := &GlobalAgg[K, P, ACC, R]{relational: rel, unpack: unpack,
		logic: GroupAggLogic[K, struct{}, ACC, R]{Create: logic.Create, Merge: logic.Merge, Row: logic.Row, Equal: logic.Equal}}
	if g.acc, err = state.NewValueHandle[K, state.VoidNamespace, groupState[ACC]](rel.store, nil, nil, "group-acc", nil, rel.ttlConfig()); err != nil {
		rel.Close()
		return nil, err
	}
	if err := rel.restore(ctx.Restored); err != nil {
		rel.Close()
		return nil, err
	}
	return g, nil
}

// ProcessBatch merges every partial into its group.
func (g *GlobalAgg[K, P, ACC, R]) ProcessBatch(b *runtime.Batch[P]) error {
	for i, p := range b.Data {
		g.setKeyOf(p)
		g.ts = b.TS[i]
		acc, n := g.unpack(p)
		st, existed := g.acc.Value()
		if !existed {
			if n < 0 {
				g.retractedAbsent()
			}
			if n <= 0 {
				continue
			}
			st = groupState[ACC]{Acc: g.logic.Create()}
		}
		var before R
		if existed {
			before = g.logic.Row(g.kc.Key, st.Acc)
		}
		st.Acc = g.logic.Merge(st.Acc, acc)
		st.Count += n
		if st.Count <= 0 {
			g.acc.Clear()
			if existed {
				g.emit(changelog.Delete, before)
			}
			continue
		}
		g.acc.Update(st)
		after := g.logic.Row(g.kc.Key, st.Acc)
		switch {
		case !existed:
			g.emit(changelog.Insert, after)
		case g.logic.Equal != nil && g.logic.Equal(before, after):
		default:
			g.emitUpdate(before, after)
		}
	}
	g.cleanup(b.Len())
	return g.flush()
}

package ops

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// OverAggLogic is an OVER aggregation over the rows of each partition (key)
// of an insert-only changelog, ordered by time, as Flink's OverAggregate
// runs agg(x) OVER (PARTITION BY ... ORDER BY time [ROWS|RANGE] BETWEEN ...
// PRECEDING AND CURRENT ROW): every row comes out once, with the aggregate
// of its frame.
type OverAggLogic[T, ACC, V, R any] struct {
	// Create makes an empty accumulator.
	Create func() ACC
	// Add folds a row in; v gives the views (nil if Views is 0).
	Add func(acc ACC, row T, v agg.Views) ACC
	// Retract takes a row that leaves the frame back out; required for a
	// bounded frame.
	Retract func(acc ACC, row T, v agg.Views) ACC
	// Views is the number of views the function keeps.
	Views int
	// Result is the aggregate of an accumulator.
	Result func(acc ACC) V
	// Output makes the output row of an input row and the aggregate of its
	// frame.
	Output func(row T, v V) R
	// Rows measures the frame in rows (ROWS); otherwise in time (RANGE).
	Rows bool
	// Preceding is how far the frame reaches before the current row: rows
	// for Rows, milliseconds otherwise; negative for UNBOUNDED PRECEDING.
	Preceding int64
	// EventTime orders the rows by their timestamps; otherwise by arrival
	// (processing time).
	EventTime bool
	// TTL, if positive, drops the state of a partition not updated for that
	// long.
	TTL time.Duration
}

func (l *OverAggLogic[T, ACC, V, R]) bounded() bool { return l.Preceding >= 0 }

// overState is the state of a partition: the accumulator of the current
// frame; for a bounded frame, the sequence numbers of the first row in the
// frame and of the next row to enter it (the rows of the frame are kept
// under Head .. Tail-1, in order), and the time of the partition's cleanup
// timer (RANGE frames, 0 if none); on event time, the time of the last rows
// processed.
type overState[ACC any] struct {
	Acc        ACC
	Head, Tail int64
	Cleanup    int64
	Last       int64
}

// frameRow is a row of a bounded frame, with its time.
type frameRow[T any] struct {
	TS  int64
	Row T
}

// OverAgg runs an OverAggLogic over a keyed insert-only changelog.
//
// On event time a row waits in its partition's state until the watermark
// passes its timestamp (one event-time timer per partition and timestamp);
// then the rows of that timestamp are processed in arrival order, after
// the rows of every earlier timestamp. A row whose timestamp is at or
// before the watermark when it arrives, or at or before the last timestamp
// its partition processed, is late: it is dropped and counted
// (LateRecords). On processing time a row is processed when it arrives, at
// the operator's clock.
//
// Processing a row adds it to the accumulator and emits it with the
// aggregate. In a ROWS frame every row sees itself and the rows before it;
// in a RANGE frame the rows of one timestamp are added together and all see
// each other. A bounded frame keeps its rows, in order, and retracts those
// that leave it: in a ROWS frame the oldest once more than Preceding rows
// precede the current one, in a RANGE frame those more than Preceding
// milliseconds older. A RANGE frame also sets a timer Preceding+1 ms after
// its last rows, when every row has left it: it then clears the partition's
// state. An unbounded frame keeps only the accumulator (and the views).
//
// The state, the rows waiting and the timers are checkpointed and
// redistributed by key group.
type OverAgg[K comparable, T, ACC, V, R any] struct {
	*relational[K, changelog.Change[T], R]
	logic   OverAggLogic[T, ACC, V, R]
	acc     *state.ValueHandle[K, state.VoidNamespace, overState[ACC]]
	frame   *state.MapHandle[K, state.VoidNamespace, int64, frameRow[T]]
	pending *state.MapHandle[K, state.VoidNamespace, int64, []T]
	views   *groupViews[K]
	timers  state.Timers[K, state.VoidNamespace]
	wm      int64
	wakeAt  int64
	one     [1]T
}

// NewOverAgg returns the operator; it restores ctx.Restored.
func NewOverAgg[K comparable, T, ACC, V, R any](ctx *runtime.Context, spec KeySpec[K, changelog.Change[T]], newBackend BackendFactory, logic OverAggLogic[T, ACC, V, R], outs map[string]any) (o *OverAgg[K, T, ACC, V, R], err error) {
	if logic.bounded() && logic.Retract == nil {
		return nil, fmt.Errorf("an OVER aggregation over a bounded frame needs an aggregate function that retracts")
	}
	rel, err := newRelational[K, changelog.Change[T], R](ctx, spec, newBackend, logic.TTL, outs)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			// newTimers panics with a *kv.BackendError.
			o, err = nil, fmt.Errorf("creating the OVER aggregation's timers: %v", r)
			if e, ok := r.(error); ok {
				err = fmt.Errorf("creating the OVER aggregation's timers: %w", e)
			}
		}
		if err != nil {
			rel.Close()
		}
	}()
	o = &OverAgg[K, T, ACC, V, R]{relational: rel, logic: logic, wm: runtime.MinWatermark}
	ttl := rel.ttlConfig()
	if o.acc, err = state.NewValueHandle[K, state.VoidNamespace, overState[ACC]](rel.store, nil, nil, "over-acc", nil, ttl); err != nil {
		return nil, err
	}
	if logic.bounded() {
		if o.frame, err = state.NewMapHandle[K, state.VoidNamespace, int64, frameRow[T]](rel.store, nil, nil, "over-frame", nil, lazyCodec[frameRow[T]](), ttl); err != nil {
			return nil, err
		}
	}
	if logic.EventTime {
		if o.pending, err = state.NewMapHandle[K, state.VoidNamespace, int64, []T](rel.store, nil, nil, "over-pending", nil, lazyCodec[[]T](), ttl); err != nil {
			return nil, err
		}
	}
	if logic.Views > 0 {
		if o.views, err = newGroupViews(rel.store, ttl, logic.Views, !logic.bounded()); err != nil {
			return nil, err
		}
	}
	if logic.EventTime || (logic.bounded() && !logic.Rows) {
		o.timers = newTimers[K, state.VoidNamespace](rel.keyedBase, "over-timers")
	}
	if err = rel.restore(ctx.Restored); err != nil {
		return nil, err
	}
	o.scheduleWake()
	return o, nil
}

// agViews returns the views as the aggregate function sees them.
func (o *OverAgg[K, T, ACC, V, R]) agViews() agg.Views {
	if o.views == nil {
		return nil
	}
	return o.views
}

// ProcessBatch keeps every row until the watermark passes its time (event
// time) or processes it at once (processing time).
func (o *OverAgg[K, T, ACC, V, R]) ProcessBatch(b *runtime.Batch[changelog.Change[T]]) error {
	for i, c := range b.Data {
		if c.Kind != changelog.Insert {
			return fmt.Errorf("received a %v change, but an OVER aggregation takes insert-only input (a row emitted with its frame's aggregate cannot be taken back)", c.Kind)
		}
		kg := o.setKeyAt(b, i)
		ts := b.TS[i]
		if !o.logic.EventTime {
			o.ts = ts
			o.one[0] = c.Row
			o.process(kg, o.one[:], o.ctx.ProcessingTime())
			continue
		}
		if ts == runtime.NoTimestamp {
			return fmt.Errorf("an OVER aggregation on event time received a row without an event timestamp (its time attribute is NULL, or its source assigns no timestamps); give the source a watermark strategy with a timestamp extractor, or order by processing time")
		}
		if ts <= o.wm || o.lateForKey(ts) {
			o.ctx.Metrics.LateRecords.Add(1)
			continue
		}
		rows, _ := o.pending.Get(ts)
		o.pending.Put(ts, append(slices.Clip(rows), c.Row))
		if len(rows) == 0 {
			o.timers.RegisterEventTime(kg, o.kc.Key, state.VoidNamespace{}, ts)
		}
	}
	clear(o.one[:])
	o.cleanup(b.Len())
	return o.flush()
}

// lateForKey tells whether the current partition processed rows of time ts
// or later already (after a restore, before the first watermark, the
// partition's last time is what tells a late row).
func (o *OverAgg[K, T, ACC, V, R]) lateForKey(ts int64) bool {
	if o.wm != runtime.MinWatermark {
		return false
	}
	st, ok := o.acc.Value()
	return ok && ts <= st.Last
}

// ProcessWatermark processes the rows the watermark passes, partition by
// partition in order of time, then forwards it.
func (o *OverAgg[K, T, ACC, V, R]) ProcessWatermark(wm int64) error {
	o.wm = wm
	if o.logic.EventTime {
		if err := o.timers.AdvanceWatermark(wm, o.onTimer); err != nil {
			return err
		}
	}
	return o.relational.ProcessWatermark(wm)
}

// onTimer processes the rows of a partition at ts, or clears the partition
// if ts is its cleanup time and no row came since.
func (o *OverAgg[K, T, ACC, V, R]) onTimer(kg int, k K, _ state.VoidNamespace, ts int64) error {
	o.setKey(kg, k)
	if o.logic.EventTime {
		if rows, ok := o.pending.Get(ts); ok {
			o.pending.Delete(ts)
			o.ts = ts
			o.process(kg, rows, ts)
			return nil
		}
	}
	if st, ok := o.acc.Value(); ok && st.Cleanup == ts {
		o.clearPartition()
	}
	return nil
}

// process processes rows of the current partition, all of time t, in
// order, emitting each with the aggregate of its frame.
func (o *OverAgg[K, T, ACC, V, R]) process(kg int, rows []T, t int64) {
	l := &o.logic
	st, ok := o.acc.Value()
	if !ok {
		st = overState[ACC]{Acc: l.Create()}
	}
	v := o.agViews()
	if l.Rows {
		for _, row := range rows {
			if l.bounded() {
				for st.Tail-st.Head > l.Preceding {
					st.Acc = o.retractHead(&st, v)
				}
				o.frame.Put(st.Tail, frameRow[T]{TS: t, Row: row})
				st.Tail++
			}
			st.Acc = l.Add(st.Acc, row, v)
			o.emit(changelog.Insert, l.Output(row, l.Result(st.Acc)))
		}
	} else {
		if l.bounded() {
			for st.Head < st.Tail {
				r, ok := o.frame.Get(st.Head)
				if ok && t-r.TS <= l.Preceding {
					break
				}
				if ok {
					st.Acc = l.Retract(st.Acc, r.Row, v)
					o.frame.Delete(st.Head)
				}
				st.Head++
			}
		}
		for _, row := range rows {
			if l.bounded() {
				o.frame.Put(st.Tail, frameRow[T]{TS: t, Row: row})
				st.Tail++
			}
			st.Acc = l.Add(st.Acc, row, v)
		}
		res := l.Result(st.Acc)
		for _, row := range rows {
			o.emit(changelog.Insert, l.Output(row, res))
		}
		if l.bounded() {
			o.setCleanup(kg, &st, t)
		}
	}
	st.Last = t
	o.acc.Update(st)
}

// retractHead takes the oldest row of the frame out of the accumulator and
// the state. A row missing from the state (expired by the state TTL) is
// skipped.
func (o *OverAgg[K, T, ACC, V, R]) retractHead(st *overState[ACC], v agg.Views) ACC {
	acc := st.Acc
	if r, ok := o.frame.Get(st.Head); ok {
		acc = o.logic.Retract(acc, r.Row, v)
		o.frame.Delete(st.Head)
	}
	st.Head++
	return acc
}

// setCleanup moves the cleanup timer of the current partition (a RANGE
// frame) to the time its rows of time t leave the frame.
func (o *OverAgg[K, T, ACC, V, R]) setCleanup(kg int, st *overState[ACC], t int64) {
	at := int64(math.MaxInt64)
	if t < math.MaxInt64-o.logic.Preceding-1 {
		at = t + o.logic.Preceding + 1
	}
	if st.Cleanup == at {
		return
	}
	k := o.kc.Key
	if st.Cleanup != 0 {
		if o.logic.EventTime {
			// The timer of rows waiting at that time stays.
			if !o.pending.Contains(st.Cleanup) {
				o.timers.DeleteEventTime(kg, k, state.VoidNamespace{}, st.Cleanup)
			}
		} else {
			o.timers.DeleteProcessingTime(kg, k, state.VoidNamespace{}, st.Cleanup)
		}
	}
	st.Cleanup = at
	if o.logic.EventTime {
		o.timers.RegisterEventTime(kg, k, state.VoidNamespace{}, at)
		return
	}
	o.timers.RegisterProcessingTime(kg, k, state.VoidNamespace{}, at)
	o.scheduleWake()
}

// clearPartition drops the state of the current partition: every row has
// left its frame.
func (o *OverAgg[K, T, ACC, V, R]) clearPartition() {
	o.acc.Clear()
	if o.frame != nil {
		o.frame.Clear()
	}
	if o.views != nil {
		o.views.clear()
	}
}

// scheduleWake asks for a wake-up at the next processing-time timer.
func (o *OverAgg[K, T, ACC, V, R]) scheduleWake() {
	if o.timers == nil || o.logic.EventTime {
		return
	}
	ts, ok := o.timers.NextProcessingTime()
	if !ok || (o.wakeAt != 0 && o.wakeAt <= ts) {
		return
	}
	o.wakeAt = ts
	o.ctx.WakeAt(ts, func(now int64) error {
		o.wakeAt = 0
		if err := o.timers.AdvanceProcessingTime(now, o.onTimer); err != nil {
			return err
		}
		o.scheduleWake()
		return o.flush()
	})
}

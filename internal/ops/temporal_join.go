package ops

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// TemporalJoinLogic is an event-time temporal join (FOR SYSTEM_TIME AS OF
// the probe row's time) of a probe changelog with a versioned table, as
// Flink's TemporalRowTimeJoinOperator runs it.
type TemporalJoinLogic[A, B, O any] struct {
	// LeftOuter keeps probe rows that find no version, with a nil version.
	LeftOuter bool
	// Output makes the result row of a probe row and the version it joins
	// (nil if none). The pointers are valid only during the call.
	Output func(a *A, b *B) O
}

// probeRow is a change of the probe input waiting for the watermark to
// pass its time.
type probeRow[A any] struct {
	TS   int64
	Kind changelog.Kind
	Row  A
	// Pair is set on a +U that came right after the -U of its update (same
	// key, same batch), so that the two can go out as one update.
	Pair bool
}

// dueRow is a probe change the watermark has passed, with its position in
// the key's list of waiting changes.
type dueRow[A any] struct {
	probeRow[A]
	idx int
}

// version is a change of the versioned table at one time: the row valid
// from then on (an insertion or update), or the end of the key's row (a
// retraction).
type version[B any] struct {
	Kind changelog.Kind
	Row  B
}

// timedVersion is a version with its time, as read from state.
type timedVersion[B any] struct {
	TS int64
	V  version[B]
}

// TemporalJoin runs a TemporalJoinLogic over two keyed changelogs with
// event timestamps, as a one-input operator over Either: the left input is
// the probe side, the right one the versioned table, both keyed by the join
// key.
//
// State per key: the probe changes whose time the watermark has not passed
// yet (a list, in arrival order), the versioned table's changes by time (a
// map; the last change at a time wins, so that the -U and +U of an update
// at one time leave the +U), and the time of the key's event-time timer,
// which is the earliest time of a change that waits (Flink registers the
// same single timer per key). When the watermark passes a probe change's
// time t, the change joins the version of its key valid at t: the latest
// versioned change at or before t, if that change is an insertion or
// update. Results carry the probe change's kind and time, and go out in
// order of time per key. Then the versions older than the latest one at or
// before the watermark are deleted (and that one too if it is a deletion):
// no probe change to come can need them unless it is late, and a late
// probe change (behind the watermark when it arrives) joins the versions
// still kept, as in Flink.
type TemporalJoin[K comparable, A, B, O any] struct {
	*relational[K, Either[changelog.Change[A], changelog.Change[B]], O]
	logic    TemporalJoinLogic[A, B, O]
	probe    *state.ListHandle[K, state.VoidNamespace, probeRow[A]]
	versions *state.MapHandle[K, state.VoidNamespace, int64, version[B]]
	timer    *state.ValueHandle[K, state.VoidNamespace, int64]
	timers   state.Timers[K, state.VoidNamespace]
	wm       int64

	due      []dueRow[A]
	rest     []probeRow[A]
	vers     []timedVersion[B]
	probeCur A
	versCur  B
}

// NewTemporalJoin returns the operator; it restores ctx.Restored.
func NewTemporalJoin[K comparable, A, B, O any](ctx *runtime.Context, spec KeySpec[K, Either[changelog.Change[A], changelog.Change[B]]], newBackend BackendFactory, logic TemporalJoinLogic[A, B, O], outs map[string]any) (j *TemporalJoin[K, A, B, O], err error) {
	rel, err := newRelational[K, Either[changelog.Change[A], changelog.Change[B]], O](ctx, spec, newBackend, 0, outs)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			// newTimers panics with a *kv.BackendError.
			j, err = nil, fmt.Errorf("temporal join timers: %v", r)
		}
		if err != nil {
			rel.Close()
		}
	}()
	j = &TemporalJoin[K, A, B, O]{relational: rel, logic: logic, wm: runtime.MinWatermark}
	if j.probe, err = state.NewListHandle[K, state.VoidNamespace, probeRow[A]](rel.store, nil, nil, "temporal-probe", lazyCodec[probeRow[A]](), state.TTLConfig{}); err != nil {
		return nil, err
	}
	if j.versions, err = state.NewMapHandle[K, state.VoidNamespace, int64, version[B]](rel.store, nil, nil, "temporal-versions", nil, lazyCodec[version[B]](), state.TTLConfig{}); err != nil {
		return nil, err
	}
	if j.timer, err = state.NewValueHandle[K, state.VoidNamespace, int64](rel.store, nil, nil, "temporal-timer", nil, state.TTLConfig{}); err != nil {
		return nil, err
	}
	j.timers = newTimers[K, state.VoidNamespace](rel.keyedBase, "temporal-timers")
	if err = rel.restore(ctx.Restored); err != nil {
		return nil, err
	}
	return j, nil
}

// ProcessBatch keeps every change in the state of its key until the
// watermark passes its time.
func (j *TemporalJoin[K, A, B, O]) ProcessBatch(b *runtime.Batch[Either[changelog.Change[A], changelog.Change[B]]]) error {
	for i := range b.Data {
		e := &b.Data[i]
		ts := b.TS[i]
		if ts == runtime.NoTimestamp {
			side := "probe (left)"
			if e.IsRight {
				side = "versioned (right)"
			}
			return fmt.Errorf("a record of the %s input has no event timestamp, which a temporal join needs: give that input's source a watermark strategy with a timestamp extractor (eddy.BoundedOutOfOrder)", side)
		}
		kg := j.setKeyAt(b, i)
		if e.IsRight {
			j.versions.Put(ts, version[B]{Kind: e.Right.Kind, Row: e.Right.Row})
		} else {
			pair := e.Left.Kind == changelog.UpdateAfter && i > 0 && !b.Data[i-1].IsRight &&
				b.Data[i-1].Left.Kind == changelog.UpdateBefore && j.spec.Key(b.Data[i-1]) == j.kc.Key
			j.probe.Add(probeRow[A]{TS: ts, Kind: e.Left.Kind, Row: e.Left.Row, Pair: pair})
		}
		j.registerTimer(kg, ts)
	}
	return nil
}

// registerTimer makes sure the current key has a timer at or before ts.
func (j *TemporalJoin[K, A, B, O]) registerTimer(kg int, ts int64) {
	at, ok := j.timer.Value()
	if ok && at <= ts {
		return
	}
	if ok {
		j.timers.DeleteEventTime(kg, j.kc.Key, state.VoidNamespace{}, at)
	}
	j.timers.RegisterEventTime(kg, j.kc.Key, state.VoidNamespace{}, ts)
	j.timer.Update(ts)
}

// ProcessWatermark emits the results of every key whose timer wm passes,
// then forwards wm.
func (j *TemporalJoin[K, A, B, O]) ProcessWatermark(wm int64) error {
	j.wm = wm
	if err := j.timers.AdvanceWatermark(wm, j.onTimer); err != nil {
		return err
	}
	return j.relational.ProcessWatermark(wm)
}

func (j *TemporalJoin[K, A, B, O]) onTimer(kg int, k K, _ state.VoidNamespace, _ int64) error {
	j.setKey(kg, k)
	j.timer.Clear()
	if next := j.emitDue(j.wm); next != math.MaxInt64 {
		j.timers.RegisterEventTime(kg, k, state.VoidNamespace{}, next)
		j.timer.Update(next)
	}
	return nil
}

// emitDue joins the probe changes of the current key at or before wm with
// their versions, emits the results, deletes the versions no longer
// needed, and returns the earliest time of a probe change still waiting
// (MaxInt64 if none).
func (j *TemporalJoin[K, A, B, O]) emitDue(wm int64) int64 {
	j.due, j.rest = j.due[:0], j.rest[:0]
	next := int64(math.MaxInt64)
	pending := j.probe.Get()
	for i, p := range pending {
		if p.TS <= wm {
			j.due = append(j.due, dueRow[A]{p, i})
		} else {
			j.rest = append(j.rest, p)
			next = min(next, p.TS)
		}
	}
	if len(j.due) > 0 {
		if len(j.rest) == 0 {
			j.probe.Clear()
		} else {
			j.probe.Update(j.rest)
		}
	}
	j.vers = j.vers[:0]
	for ts, v := range j.versions.Entries() {
		j.vers = append(j.vers, timedVersion[B]{ts, v})
	}
	slices.SortFunc(j.vers, func(a, b timedVersion[B]) int {
		if a.TS < b.TS {
			return -1
		}
		if a.TS > b.TS {
			return 1
		}
		return 0
	})
	slices.SortStableFunc(j.due, func(a, b dueRow[A]) int {
		if a.TS < b.TS {
			return -1
		}
		if a.TS > b.TS {
			return 1
		}
		return 0
	})
	for i := 0; i < len(j.due); i++ {
		p := &j.due[i]
		if i+1 < len(j.due) && p.Kind == changelog.UpdateBefore && j.due[i+1].Pair && j.due[i+1].idx == p.idx+1 {
			q := &j.due[i+1]
			before, okb := j.result(&p.probeRow)
			after, oka := j.result(&q.probeRow)
			switch {
			case okb && oka:
				j.ts = q.TS
				j.emitUpdate(before, after)
			case okb:
				j.ts = p.TS
				j.emit(changelog.Delete, before)
			case oka:
				j.ts = q.TS
				j.emit(changelog.Insert, after)
			}
			i++
			continue
		}
		out, ok := j.result(&p.probeRow)
		if !ok {
			continue
		}
		kind := p.Kind
		switch kind {
		case changelog.UpdateBefore:
			kind = changelog.Delete
		case changelog.UpdateAfter:
			kind = changelog.Insert
		}
		j.ts = p.TS
		j.emit(kind, out)
	}
	clear(j.due)
	clear(j.rest)
	j.cleanVersions(wm)
	clear(j.vers)
	return next
}

// result joins probe change p with the version valid at its time.
func (j *TemporalJoin[K, A, B, O]) result(p *probeRow[A]) (O, bool) {
	// The first version after p.TS; the one before it is valid at p.TS.
	i := sort.Search(len(j.vers), func(i int) bool { return j.vers[i].TS > p.TS })
	j.probeCur = p.Row
	if i > 0 && j.vers[i-1].V.Kind.IsAddition() {
		j.versCur = j.vers[i-1].V.Row
		return j.logic.Output(&j.probeCur, &j.versCur), true
	}
	if j.logic.LeftOuter {
		return j.logic.Output(&j.probeCur, nil), true
	}
	var zero O
	return zero, false
}

// cleanVersions deletes the versions of the current key (sorted in j.vers)
// that no probe change at or after wm can need.
func (j *TemporalJoin[K, A, B, O]) cleanVersions(wm int64) {
	// keep is the latest version at or before wm.
	keep := sort.Search(len(j.vers), func(i int) bool { return j.vers[i].TS > wm }) - 1
	if keep < 0 {
		return
	}
	for _, v := range j.vers[:keep] {
		j.versions.Delete(v.TS)
	}
	if !j.vers[keep].V.Kind.IsAddition() {
		j.versions.Delete(j.vers[keep].TS)
	}
}

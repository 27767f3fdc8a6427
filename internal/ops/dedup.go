package ops

import (
	"fmt"
	"math"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// DedupLogic is a deduplication per key of an insert-only changelog, as
// Flink's Deduplicate operator runs ROW_NUMBER() OVER (PARTITION BY key
// ORDER BY time ASC|DESC) = 1.
type DedupLogic struct {
	// KeepLast keeps the last row of each key; otherwise the first.
	KeepLast bool
	// EventTime orders rows by their timestamps; otherwise by arrival
	// (processing time).
	EventTime bool
	// Upsert makes keep-last emit +I then +U for each new last row, with no
	// -U: an upsert stream on the key. Otherwise it emits -U of the row
	// replaced and +U of the new one.
	Upsert bool
	// TTL, if positive, drops the state of a key not updated for that long.
	TTL time.Duration
}

// dedupRow is the state of a key: the row kept, its timestamp, and for
// keep-first on event time whether it was emitted (once emitted, its row is
// no longer needed).
type dedupRow[T any] struct {
	Row     T
	TS      int64
	Emitted bool
}

// Dedup runs a DedupLogic over a keyed insert-only changelog.
//
// Keep-first on arrival order keeps a flag per key and emits the first row
// (+I): the output is insert-only. Keep-last keeps the last row per key and
// emits each new one as an update of the one before (+I for a key's first).
// On event time, keep-last replaces the row kept by a row of a later or
// equal timestamp (ties go to the later arrival) and ignores older rows.
// Keep-first on event time keeps the row of the earliest timestamp (ties go
// to the earlier arrival) and emits it once the watermark passes its
// timestamp, so that a row that arrives later with an earlier timestamp
// still wins and the output stays insert-only; a row that arrives for a key
// already emitted with a timestamp before the emitted one's is late: it is
// dropped and counted (LateRecords).
type Dedup[K comparable, T any] struct {
	*relational[K, changelog.Change[T], T]
	logic  DedupLogic
	seen   *state.ValueHandle[K, state.VoidNamespace, bool]
	kept   *state.ValueHandle[K, state.VoidNamespace, dedupRow[T]]
	timers state.Timers[K, state.VoidNamespace]
	wm     int64
}

// NewDedup returns the operator; it restores ctx.Restored.
func NewDedup[K comparable, T any](ctx *runtime.Context, spec KeySpec[K, changelog.Change[T]], newBackend BackendFactory, logic DedupLogic, outs map[string]any) (d *Dedup[K, T], err error) {
	rel, err := newRelational[K, changelog.Change[T], T](ctx, spec, newBackend, logic.TTL, outs)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			rel.Close()
			err = fmt.Errorf("creating the deduplication's timers: %v", r)
		}
	}()
	d = &Dedup[K, T]{relational: rel, logic: logic, wm: math.MinInt64}
	if !logic.KeepLast && !logic.EventTime {
		d.seen, err = state.NewValueHandle[K, state.VoidNamespace, bool](rel.store, nil, nil, "dedup-seen", nil, rel.ttlConfig())
	} else {
		d.kept, err = state.NewValueHandle[K, state.VoidNamespace, dedupRow[T]](rel.store, nil, nil, "dedup-row", nil, rel.ttlConfig())
	}
	if err != nil {
		rel.Close()
		return nil, err
	}
	if logic.EventTime && !logic.KeepLast {
		d.timers = newTimers[K, state.VoidNamespace](rel.keyedBase, "dedup-timers")
	}
	if err := rel.restore(ctx.Restored); err != nil {
		rel.Close()
		return nil, err
	}
	return d, nil
}

// ProcessBatch deduplicates every row under its key.
func (d *Dedup[K, T]) ProcessBatch(b *runtime.Batch[changelog.Change[T]]) error {
	for i, c := range b.Data {
		if c.Kind != changelog.Insert {
			return fmt.Errorf("received a %v change, but deduplication takes insert-only input (rows kept by arrival or time cannot be taken back); rank a changelog with eddy.TopN and N = 1 instead", c.Kind)
		}
		d.setKeyAt(b, i)
		d.ts = b.TS[i]
		if d.logic.EventTime && d.ts == runtime.NoTimestamp {
			return fmt.Errorf("deduplication on event time received a row without a timestamp; assign timestamps with a watermark strategy at the source, or deduplicate on processing time")
		}
		switch {
		case d.seen != nil:
			d.keepFirstArrival(c.Row)
		case d.logic.KeepLast:
			d.keepLast(c.Row)
		default:
			d.keepFirstEventTime(c.Row)
		}
	}
	d.cleanup(b.Len())
	return d.flush()
}

func (d *Dedup[K, T]) keepFirstArrival(row T) {
	if _, ok := d.seen.Value(); ok {
		return
	}
	d.seen.Update(true)
	d.emit(changelog.Insert, row)
}

func (d *Dedup[K, T]) keepLast(row T) {
	prev, ok := d.kept.Value()
	if ok && d.logic.EventTime && d.ts < prev.TS {
		return
	}
	d.kept.Update(dedupRow[T]{Row: row, TS: d.ts})
	switch {
	case !ok:
		d.emit(changelog.Insert, row)
	case d.logic.Upsert:
		d.emit(changelog.UpdateAfter, row)
	default:
		d.emitUpdate(prev.Row, row)
	}
}

func (d *Dedup[K, T]) keepFirstEventTime(row T) {
	prev, ok := d.kept.Value()
	switch {
	case ok && prev.Emitted:
		if d.ts < prev.TS {
			d.ctx.Metrics.LateRecords.Add(1)
		}
		return
	case ok && d.ts >= prev.TS:
		return
	case ok:
		d.timers.DeleteEventTime(d.kc.KG, d.kc.Key, state.VoidNamespace{}, prev.TS)
	}
	if d.ts <= d.wm {
		// The watermark has passed the row already: no row of an earlier
		// timestamp is to come.
		d.kept.Update(dedupRow[T]{TS: d.ts, Emitted: true})
		d.emit(changelog.Insert, row)
		return
	}
	d.kept.Update(dedupRow[T]{Row: row, TS: d.ts})
	d.timers.RegisterEventTime(d.kc.KG, d.kc.Key, state.VoidNamespace{}, d.ts)
}

// fire emits the row a key kept once the watermark passes its timestamp.
func (d *Dedup[K, T]) fire(kg int, key K, _ state.VoidNamespace, ts int64) error {
	d.setKey(kg, key)
	st, ok := d.kept.Value()
	if !ok || st.Emitted || st.TS != ts {
		// Expired by the state TTL, or replaced.
		return nil
	}
	d.kept.Update(dedupRow[T]{TS: ts, Emitted: true})
	d.ts = ts
	d.emit(changelog.Insert, st.Row)
	return nil
}

// ProcessWatermark emits the rows the watermark completes, then forwards
// it.
func (d *Dedup[K, T]) ProcessWatermark(wm int64) error {
	d.wm = wm
	if d.timers != nil {
		if err := d.timers.AdvanceWatermark(wm, d.fire); err != nil {
			return err
		}
	}
	return d.relational.ProcessWatermark(wm)
}

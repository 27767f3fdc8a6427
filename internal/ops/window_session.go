package ops

import (
	"fmt"

	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/window"
)

// session is one session window of a key with its accumulator.
type session[ACC any] struct {
	Start, End int64
	Acc        ACC
}

// SessionWindow evaluates session windows on a keyed stream: a record opens
// the window [ts, ts+gap) and windows that overlap or touch merge. A window
// fires when the watermark passes its end.
type SessionWindow[K comparable, T, ACC, O any] struct {
	*keyedBase[K, T]
	logic    WindowLogic[K, T, ACC, O]
	gap      int64
	late     int64
	proc     bool
	sessions state.ValueTable[K, state.VoidNamespace, []session[ACC]]
	timers   *state.TimerService[K, windowTimer]
	out      *Emitter[O]
	lateE    *Emitter[T]
	outs     map[string]any
	wm       int64
	fireTS   int64
	emitFn   func(O)
	one      []ACC
	wakeAt   int64
}

// NewSessionWindow returns a session window operator.
func NewSessionWindow[K comparable, T, ACC, O any](ctx *runtime.Context, spec KeySpec[K, T], newBackend BackendFactory,
	opts WindowOptions, logic WindowLogic[K, T, ACC, O], outs map[string]any) (*SessionWindow[K, T, ACC, O], error) {
	if err := opts.Assigner.Validate(); err != nil {
		return nil, err
	}
	if logic.Merge == nil {
		return nil, fmt.Errorf("ops: session windows need an aggregate that can merge")
	}
	base, err := newKeyedBase(ctx, spec, newBackend)
	if err != nil {
		return nil, err
	}
	sessions, err := state.NewValueTable(base.backend, "window-sessions", base.keyCodec(), lazyCodec[state.VoidNamespace](), lazyCodec[[]session[ACC]]())
	if err != nil {
		return nil, err
	}
	w := &SessionWindow[K, T, ACC, O]{
		keyedBase: base, logic: logic, gap: opts.Assigner.Gap(), late: opts.AllowedLateness, proc: opts.Assigner.IsProcessingTime(),
		sessions: sessions, timers: newTimers[K, windowTimer](base, "window-timers"),
		out: NewEmitter(outs[""].(runtime.Input[O])), outs: outs, wm: runtime.MinWatermark, one: make([]ACC, 1),
	}
	w.emitFn = func(o O) { w.out.Emit(o, w.fireTS) }
	if opts.LateTag != "" {
		if o, ok := outs[opts.LateTag]; ok {
			w.lateE = NewEmitter(o.(runtime.Input[T]))
		}
	}
	if err := base.restore(ctx.Restored); err != nil {
		return nil, err
	}
	w.scheduleWake()
	return w, nil
}

func (w *SessionWindow[K, T, ACC, O]) current() int64 {
	if w.proc {
		return w.ctx.ProcessingTime() - 1
	}
	return w.wm
}

// ProcessBatch adds every record to its key's sessions.
func (w *SessionWindow[K, T, ACC, O]) ProcessBatch(b *runtime.Batch[T]) error {
	var now int64
	if w.proc {
		now = w.ctx.ProcessingTime()
	}
	for i, v := range b.Data {
		ts := b.TS[i]
		if w.proc {
			ts = now
		} else if ts == runtime.NoTimestamp {
			return fmt.Errorf("record has no event timestamp; give the source a watermark strategy with a timestamp extractor, or use processing-time windows")
		}
		if err := w.add(v, ts); err != nil {
			return err
		}
	}
	return w.flush()
}

func (w *SessionWindow[K, T, ACC, O]) flush() error {
	if err := w.out.Flush(); err != nil {
		return err
	}
	if w.lateE != nil {
		return w.lateE.Flush()
	}
	return nil
}

func (w *SessionWindow[K, T, ACC, O]) add(v T, ts int64) error {
	kg := w.setKeyOf(v)
	key := w.kc.Key
	list, _ := w.sessions.Get(kg, key, state.VoidNamespace{})
	merged := session[ACC]{Start: ts, End: ts + w.gap, Acc: w.logic.Add(w.logic.Create(), v)}
	keep := list[:0]
	var absorbed []session[ACC]
	for _, s := range list {
		if s.Start <= merged.End && s.End >= merged.Start {
			absorbed = append(absorbed, s)
			continue
		}
		keep = append(keep, s)
	}
	now := w.current()
	for _, s := range absorbed {
		merged.Start, merged.End = min(merged.Start, s.Start), max(merged.End, s.End)
	}
	if merged.End-1+w.late <= now {
		// Late: the session it would belong to is gone (or would be).
		w.ctx.Metrics.LateRecords.Add(1)
		if w.lateE != nil {
			w.lateE.Emit(v, ts)
		}
		return nil
	}
	acc := w.logic.Create()
	for _, s := range absorbed {
		acc = w.logic.Merge(acc, s.Acc)
		if s.End != merged.End {
			// The absorbed session will not fire on its own.
			if w.proc {
				w.timers.DeleteProcessingTime(kg, key, windowTimer{End: s.End}, s.End-1)
			} else {
				w.timers.DeleteEventTime(kg, key, windowTimer{End: s.End}, s.End-1)
			}
		}
	}
	merged.Acc = w.logic.Merge(acc, merged.Acc)
	list = append(keep, merged)
	w.sessions.Put(kg, key, state.VoidNamespace{}, list)
	if merged.End-1 <= now {
		// The merged session has passed its end already: fire it now with
		// the late record, and keep it until its lateness ends.
		if err := w.fire(key, merged); err != nil {
			return err
		}
		registerTimer(w.timers, w.proc, kg, key, windowTimer{End: merged.End, Cleanup: true}, merged.End-1+w.late)
	} else {
		registerTimer(w.timers, w.proc, kg, key, windowTimer{End: merged.End}, merged.End-1)
	}
	if w.proc {
		w.scheduleWake()
	}
	return nil
}

func (w *SessionWindow[K, T, ACC, O]) fire(key K, s session[ACC]) error {
	w.fireTS = s.End - 1
	w.one[0] = s.Acc
	err := w.logic.Fire(key, window.Window{Start: s.Start, End: s.End}, w.one, w.emitFn)
	clear(w.one)
	return err
}

func (w *SessionWindow[K, T, ACC, O]) onTimer(kg int, key K, t windowTimer, ts int64) error {
	w.setKey(kg, key)
	list, ok := w.sessions.Get(kg, key, state.VoidNamespace{})
	if !ok {
		return nil
	}
	// Timers fire in time order, so every session ending at or before ts
	// has fired; those whose lateness has passed by ts go.
	keep := list[:0]
	for _, s := range list {
		if !t.Cleanup && s.End == t.End {
			if err := w.fire(key, s); err != nil {
				return err
			}
		}
		if s.End-1+w.late <= ts {
			continue
		}
		if s.End == t.End && !t.Cleanup && w.late > 0 {
			registerTimer(w.timers, w.proc, kg, key, windowTimer{End: s.End, Cleanup: true}, s.End-1+w.late)
		}
		keep = append(keep, s)
	}
	clear(list[len(keep):])
	if len(keep) == 0 {
		w.sessions.Delete(kg, key, state.VoidNamespace{})
	} else {
		w.sessions.Put(kg, key, state.VoidNamespace{}, keep)
	}
	return nil
}

func (w *SessionWindow[K, T, ACC, O]) scheduleWake() {
	ts, ok := w.timers.NextProcessingTime()
	if !ok || (w.wakeAt != 0 && w.wakeAt <= ts) {
		return
	}
	w.wakeAt = ts
	w.ctx.WakeAt(ts, func(now int64) error {
		w.wakeAt = 0
		if err := w.timers.AdvanceProcessingTime(now, w.onTimer); err != nil {
			return err
		}
		w.scheduleWake()
		return w.flush()
	})
}

// ProcessWatermark fires the sessions wm completes, then forwards wm.
func (w *SessionWindow[K, T, ACC, O]) ProcessWatermark(wm int64) error {
	if wm <= w.wm {
		return nil
	}
	w.wm = wm
	if !w.proc {
		if err := w.timers.AdvanceWatermark(wm, w.onTimer); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.out.Out().ProcessWatermark(wm); err != nil {
		return err
	}
	return ForwardWatermark(w.outs, wm)
}

// EndInput fires open processing-time sessions and ends the outputs.
func (w *SessionWindow[K, T, ACC, O]) EndInput() error {
	if w.proc {
		if err := w.timers.AdvanceProcessingTime(runtime.MaxWatermark, w.onTimer); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.out.Out().EndInput(); err != nil {
		return err
	}
	return ForwardEnd(w.outs)
}

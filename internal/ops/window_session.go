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
	*windowCore[K, T, O]
	logic    WindowLogic[K, T, ACC, O]
	gap      int64
	sessions state.ValueTable[K, state.VoidNamespace, []session[ACC]]
	one      []ACC
}

// NewSessionWindow returns a session window operator.
func NewSessionWindow[K comparable, T, ACC, O any](ctx *runtime.Context, spec KeySpec[K, T], newBackend BackendFactory,
	opts WindowOptions, logic WindowLogic[K, T, ACC, O], outs map[string]any) (*SessionWindow[K, T, ACC, O], error) {
	if logic.Merge == nil {
		return nil, fmt.Errorf("ops: session windows need an aggregate that can merge")
	}
	core, err := newWindowCore[K, T, O](ctx, spec, newBackend, opts, outs)
	if err != nil {
		return nil, err
	}
	sessions, err := state.NewValueTable(core.backend, "window-sessions", core.keyCodec(), lazyCodec[state.VoidNamespace](), lazyCodec[[]session[ACC]]())
	if err != nil {
		return nil, err
	}
	w := &SessionWindow[K, T, ACC, O]{windowCore: core, logic: logic, gap: opts.Assigner.Gap(), sessions: sessions, one: make([]ACC, 1)}
	core.add, core.fireTimer = w.add, w.onTimer
	if err := core.start(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *SessionWindow[K, T, ACC, O]) add(b *runtime.Batch[T], i int, ts int64) error {
	v := b.Data[i]
	kg := w.setKeyAt(b, i)
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
		w.lateRecord(v, ts)
		return nil
	}
	acc := w.logic.Create()
	for _, s := range absorbed {
		acc = w.logic.Merge(acc, s.Acc)
		if s.End != merged.End {
			// The absorbed session will not fire on its own.
			w.deleteTimer(kg, key, windowTimer{End: s.End}, s.End-1)
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
		w.timer(kg, key, windowTimer{End: merged.End, Cleanup: true}, merged.End-1+w.late)
	} else {
		w.timer(kg, key, windowTimer{End: merged.End}, merged.End-1)
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
			w.timer(kg, key, windowTimer{End: s.End, Cleanup: true}, s.End-1+w.late)
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

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
	absorbed []int // add's scratch: the indexes of the sessions a record merges
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
	// The record's session [ts, ts+gap) absorbs every session it overlaps
	// or touches; the list keeps the others in place, then the merged one.
	start, end := ts, ts+w.gap
	absorbed := w.absorbed[:0]
	keep := 0
	for j, s := range list {
		if s.Start <= end && s.End >= start {
			absorbed = append(absorbed, j)
			continue
		}
		keep++
	}
	for _, j := range absorbed {
		start, end = min(start, list[j].Start), max(end, list[j].End)
	}
	w.absorbed = absorbed
	now := w.current()
	if end-1+w.late <= now {
		// Late: the session it would belong to is gone (or would be).
		w.lateRecord(v, ts)
		return nil
	}
	// The accumulator: the absorbed sessions' merged in list order (into
	// the first, which the list read from state lets the operator change),
	// then the record.
	var acc ACC
	pending := false // an absorbed session has not fired: its timer is pending
	for n, j := range absorbed {
		s := list[j]
		if n == 0 {
			acc = s.Acc
		} else {
			acc = w.logic.Merge(acc, s.Acc)
		}
		pending = pending || s.End-1 > now
	}
	if len(absorbed) == 0 {
		acc = w.logic.Create()
	}
	acc = w.logic.Add(acc, v)
	merged := session[ACC]{Start: start, End: end, Acc: acc}
	if len(absorbed) > 0 {
		out := list[:0]
		a := 0
		for j, s := range list {
			if a < len(absorbed) && absorbed[a] == j {
				a++
				continue
			}
			out = append(out, s)
		}
		clear(list[keep:])
		list = out
	}
	list = append(list, merged)
	w.sessions.Put(kg, key, state.VoidNamespace{}, list)
	switch {
	case end-1 <= now:
		// The merged session has passed its end already: fire it now with
		// the late record, and keep it until its lateness ends.
		if err := w.fire(key, merged); err != nil {
			return err
		}
		w.timer(kg, key, windowTimer{End: end, Cleanup: true}, end-1+w.late)
	case !pending:
		w.timer(kg, key, windowTimer{End: end}, end-1)
	}
	// Otherwise the timer of an absorbed session that has not fired is
	// due at or before the merged session's end: when it fires, onTimer
	// moves it to the merged session's end. Sessions grow with most
	// records, and so a timer is not deleted and registered for each.
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
		if s.End > t.End && !t.Cleanup {
			// A session that grew past the end its timer was registered
			// for (see add), or one with a timer of its own (registering
			// it again does nothing): it fires at its end.
			w.timer(kg, key, windowTimer{End: s.End}, s.End-1)
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

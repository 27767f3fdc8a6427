package ops

import (
	"fmt"
	"slices"

	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/window"
)

// WindowLogic is what a window operator computes: how records accumulate in
// a pane (or session) and what a firing window emits from the accumulators
// of its panes.
type WindowLogic[K comparable, T, ACC, O any] struct {
	// Create returns an empty accumulator.
	Create func() ACC
	// Add adds a record to an accumulator and returns it.
	Add func(acc ACC, v T) ACC
	// Merge merges b into a and returns the result; it may modify a, not b.
	// Session windows use it when sessions merge.
	Merge func(a, b ACC) ACC
	// Fire emits the result of window w of key from the accumulators of its
	// panes, oldest first. It must not modify them.
	Fire func(key K, w window.Window, accs []ACC, emit func(O)) error
}

// WindowOptions are the settings shared by the window operators.
type WindowOptions struct {
	// Assigner places records into windows.
	Assigner window.Assigner
	// AllowedLateness keeps windows for this long (ms) after they fire;
	// records arriving in that time update the panes and fire the windows
	// again.
	AllowedLateness int64
	// LateTag is the side output of records that arrive after their windows
	// are gone, and of records that fall into the gaps of sliding windows
	// whose size is below their slide; "" drops them (they are always
	// counted, as late records and as window gap records).
	LateTag string
}

// paneSet is the state of one key: its panes with data, by start time.
type paneSet[ACC any] struct {
	Starts []int64
	Accs   []ACC
}

// find returns the index of the pane starting at start, or where it goes.
func (p *paneSet[ACC]) find(start int64) (int, bool) {
	// Records mostly land in the newest pane.
	if n := len(p.Starts); n > 0 && p.Starts[n-1] == start {
		return n - 1, true
	}
	return slices.BinarySearch(p.Starts, start)
}

// windowTimer is the namespace of a window operator's timers: the end of the
// window to fire, or a pane cleanup.
type windowTimer struct {
	End     int64
	Cleanup bool
}

// PaneWindow evaluates tumbling, sliding and cumulate windows on a keyed
// stream through panes: each record updates the accumulator of the one pane
// it falls in, and a window's result is assembled from its panes when the
// watermark passes its end. Per key, one timer chain walks the windows that
// have data; a watermark that passes several window ends fires them per key,
// each key's in order of their ends.
type PaneWindow[K comparable, T, ACC, O any] struct {
	*windowCore[K, T, O]
	logic  WindowLogic[K, T, ACC, O]
	a      window.Assigner
	panes  state.ValueTable[K, state.VoidNamespace, paneSet[ACC]]
	accBuf []ACC
}

// NewPaneWindow returns a pane window operator writing results to the main
// output of outs and late records to opts.LateTag.
func NewPaneWindow[K comparable, T, ACC, O any](ctx *runtime.Context, spec KeySpec[K, T], newBackend BackendFactory,
	opts WindowOptions, logic WindowLogic[K, T, ACC, O], outs map[string]any) (*PaneWindow[K, T, ACC, O], error) {
	if opts.Assigner.Kind() == window.SessionKind {
		return nil, fmt.Errorf("ops: session windows are not pane windows")
	}
	core, err := newWindowCore[K, T, O](ctx, spec, newBackend, opts, outs)
	if err != nil {
		return nil, err
	}
	panes, err := state.NewValueTable(core.backend, "window-panes", core.keyCodec(), lazyCodec[state.VoidNamespace](), lazyCodec[paneSet[ACC]]())
	if err != nil {
		return nil, err
	}
	w := &PaneWindow[K, T, ACC, O]{windowCore: core, logic: logic, a: opts.Assigner, panes: panes}
	core.add, core.fireTimer = w.add, w.onTimer
	if err := core.start(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *PaneWindow[K, T, ACC, O]) add(b *runtime.Batch[T], i int, ts int64) error {
	v := b.Data[i]
	p := w.a.Pane(ts)
	first, last := w.a.FirstEnd(p), w.a.LastEnd(p)
	now := w.current()
	if first > last {
		// The record falls in a gap between windows: it belongs to none.
		// It is counted, and goes to the late output if there is one.
		w.gapRecord(v, ts)
		return nil
	}
	if last-1+w.late <= now {
		w.lateRecord(v, ts)
		return nil
	}
	kg := w.setKeyAt(b, i)
	key := w.kc.Key
	set, _ := w.panes.Get(kg, key, state.VoidNamespace{})
	i, found := set.find(p.Start)
	if found {
		set.Accs[i] = w.logic.Add(set.Accs[i], v)
	} else {
		set.Starts = slices.Insert(set.Starts, i, p.Start)
		set.Accs = slices.Insert(set.Accs, i, w.logic.Add(w.logic.Create(), v))
	}
	w.panes.Put(kg, key, state.VoidNamespace{}, set)
	if first-1 > now {
		if !found {
			w.timer(kg, key, windowTimer{End: first}, first-1)
		}
		return nil
	}
	// Some windows of this pane have fired already: fire them again with
	// the late record, and make sure the rest will fire.
	e := first
	for e <= last && e-1+w.late <= now {
		e = w.a.Next(e) // closed: past its allowed lateness
	}
	for ; e <= last && e-1 <= now; e = w.a.Next(e) {
		if err := w.emitWindow(kg, key, set, e); err != nil {
			return err
		}
	}
	if e <= last {
		w.timer(kg, key, windowTimer{End: e}, e-1)
	} else {
		w.timer(kg, key, windowTimer{End: last, Cleanup: true}, last-1+w.late)
	}
	return nil
}

// emitWindow emits the result of the window ending at end from set.
func (w *PaneWindow[K, T, ACC, O]) emitWindow(kg int, key K, set paneSet[ACC], end int64) error {
	start := w.a.Start(end)
	w.accBuf = w.accBuf[:0]
	for i, s := range set.Starts {
		if s >= start && s < end {
			w.accBuf = append(w.accBuf, set.Accs[i])
		}
	}
	if len(w.accBuf) == 0 {
		return nil
	}
	w.fireTS = end - 1
	err := w.logic.Fire(key, window.Window{Start: start, End: end}, w.accBuf, w.emitFn)
	clear(w.accBuf)
	return err
}

// onTimer fires a window or cleans up panes. A window timer fires its
// window and every later window of the key with data that is due too (the
// watermark may pass several window ends at once: a catch-up, the end of
// input), so that the key's panes are read and written, and a timer
// registered, once for all of them; the timers that later windows may have
// of their own are deleted.
func (w *PaneWindow[K, T, ACC, O]) onTimer(kg int, key K, t windowTimer, ts int64) error {
	w.setKey(kg, key)
	set, ok := w.panes.Get(kg, key, state.VoidNamespace{})
	if !ok {
		return nil
	}
	now := max(ts, w.current())
	fired := t.End // every window ending at or before fired has fired
	if !t.Cleanup {
		for e := t.End; ; {
			if err := w.emitWindow(kg, key, set, e); err != nil {
				return err
			}
			fired = e
			n, ok := w.nextEnd(set, e)
			if !ok || n-1 > now {
				break
			}
			w.deleteTimer(kg, key, windowTimer{End: n}, n-1)
			e = n
		}
	}
	// Drop the panes whose windows have all fired and whose lateness has
	// passed; find the next window with data.
	next := int64(0)
	hasNext := false
	keep := 0
	for i, s := range set.Starts {
		p := window.Window{Start: s, End: s + w.a.PaneSize()}
		last := w.a.LastEnd(p)
		if last <= fired {
			// Every window of the pane has fired.
			if last-1+w.late <= now {
				continue
			}
			w.timer(kg, key, windowTimer{End: last, Cleanup: true}, last-1+w.late)
		}
		set.Starts[keep], set.Accs[keep] = s, set.Accs[i]
		keep++
		if t.Cleanup {
			continue
		}
		c := max(w.a.FirstEnd(p), w.a.Next(fired))
		if c <= last && (!hasNext || c < next) {
			next, hasNext = c, true
		}
	}
	clear(set.Accs[keep:])
	set.Starts, set.Accs = set.Starts[:keep], set.Accs[:keep]
	if keep == 0 {
		w.panes.Delete(kg, key, state.VoidNamespace{})
	} else {
		w.panes.Put(kg, key, state.VoidNamespace{}, set)
	}
	if hasNext {
		w.timer(kg, key, windowTimer{End: next}, next-1)
	}
	return nil
}

// nextEnd returns the end of the first window after the one ending at end
// that holds data of set.
func (w *PaneWindow[K, T, ACC, O]) nextEnd(set paneSet[ACC], end int64) (int64, bool) {
	next, ok := int64(0), false
	after := w.a.Next(end)
	for _, s := range set.Starts {
		p := window.Window{Start: s, End: s + w.a.PaneSize()}
		c := max(w.a.FirstEnd(p), after)
		if c <= w.a.LastEnd(p) && (!ok || c < next) {
			next, ok = c, true
		}
	}
	return next, ok
}

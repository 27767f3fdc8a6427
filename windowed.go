package eddy

import (
	"iter"
	"time"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/window"
)

// WindowedStream is a keyed stream cut into windows, ready for an
// aggregation (Aggregate, Reduce) or a whole-window function
// (ProcessWindow).
type WindowedStream[K comparable, T any] struct {
	k        *KeyedStream[K, T]
	a        window.Assigner
	lateness time.Duration
	lateTag  string
	name     string
}

// Window cuts a keyed stream into the windows of a.
func Window[K comparable, T any](k *KeyedStream[K, T], a window.Assigner) *WindowedStream[K, T] {
	if err := a.Validate(); err != nil {
		k.s.env.fail(err)
	}
	return &WindowedStream[K, T]{k: k, a: a}
}

// WindowAll cuts a whole stream (not keyed) into windows. Its operator runs
// as a single subtask.
func WindowAll[T any](s *Stream[T], a window.Assigner) *WindowedStream[struct{}, T] {
	ws := Window(KeyBy(s, func(T) struct{} { return struct{}{} }), a)
	ws.name = "WindowAll"
	return ws
}

// AllowedLateness keeps each window's state for d after the window fires:
// records arriving in that time update the window and fire it again.
func (w *WindowedStream[K, T]) AllowedLateness(d time.Duration) *WindowedStream[K, T] {
	w.lateness = d
	return w
}

// SideOutputLateData sends records that arrive after their windows are
// gone to the side output tag (read it with SideOutput on the window's
// result), and so too the records that fall into the gaps of sliding
// windows whose size is below their slide, which belong to no window. Both
// are counted whether or not they are kept: late records as LateRecords,
// gap records as WindowGapRecords in the operator's metrics.
func (w *WindowedStream[K, T]) SideOutputLateData(tag OutputTag[T]) *WindowedStream[K, T] {
	w.lateTag = tag.id
	return w
}

// Windowed is the result of a keyed window: the key, the window, and the
// value computed for it.
type Windowed[K comparable, R any] struct {
	Key    K             `json:"key"`
	Window window.Window `json:"window"`
	Value  R             `json:"value"`
}

func (w *WindowedStream[K, T]) options() ops.WindowOptions {
	return ops.WindowOptions{Assigner: w.a, AllowedLateness: w.lateness.Milliseconds(), LateTag: w.lateTag}
}

// windowNode adds the window operator for logic.
func windowNode[K comparable, T, ACC, O any](w *WindowedStream[K, T], name string, logic ops.WindowLogic[K, T, ACC, O]) *Stream[O] {
	return windowNodeOf(w, name, func() ops.WindowLogic[K, T, ACC, O] { return logic })
}

// windowNodeOf adds the window operator whose subtasks run the logic
// newLogic makes, one for each.
func windowNodeOf[K comparable, T, ACC, O any](w *WindowedStream[K, T], name string, newLogic func() ops.WindowLogic[K, T, ACC, O]) *Stream[O] {
	env := w.k.s.env
	if w.name != "" {
		name = w.name
	}
	opts := w.options()
	out := keyedNode[K, T, O](w.k, name+" "+w.a.String(), func(ctx *runtime.Context, outs map[string]any) (runtime.Input[T], error) {
		logic := newLogic()
		if opts.Assigner.Kind() == window.SessionKind {
			return ops.NewSessionWindow(ctx, w.k.spec, env.backendFactory(), opts, logic, outs)
		}
		return ops.NewPaneWindow(ctx, w.k.spec, env.backendFactory(), opts, logic, outs)
	})
	if w.name == "WindowAll" {
		out.node.Parallelism = 1
	}
	if w.lateTag != "" {
		out.node.OutTypes[w.lateTag] = runtime.NewOutType[T]()
	}
	return out
}

// Aggregate computes f incrementally over each window: records are added to
// a per-pane accumulator as they arrive, so a window holds accumulators, not
// records, and overlapping sliding windows share them.
//
// A function implementing agg.Mutating folds records into the accumulators
// of the panes in place: the operator owns them (they are read from its
// state for update, and a window's result is merged into a new
// accumulator).
func Aggregate[K comparable, T, ACC, R any](w *WindowedStream[K, T], f agg.Function[T, ACC, R]) *Stream[Windowed[K, R]] {
	add := f.Add
	if m, ok := f.(agg.Mutating[T, ACC]); ok && agg.NumViews(f) == 0 {
		add = func(acc ACC, v T) ACC { return m.AddInPlace(acc, v, nil, 0) }
	}
	return windowNode(w, "Aggregate", ops.WindowLogic[K, T, ACC, Windowed[K, R]]{
		Create: f.Create, Add: add, Merge: f.Merge,
		Fire: func(key K, win window.Window, accs []ACC, emit func(Windowed[K, R])) error {
			acc := f.Create()
			for _, a := range accs {
				acc = f.Merge(acc, a)
			}
			emit(Windowed[K, R]{Key: key, Window: win, Value: f.Result(acc)})
			return nil
		},
	})
}

// PanesFunc makes the output of a firing window of key from the
// accumulators of its panes, oldest first (a session window has one): it
// emits what it makes with emit. It must not modify the accumulators.
type PanesFunc[K comparable, ACC, O any] func(key K, w window.Window, accs []ACC, emit func(O)) error

// AggregatePanes computes f incrementally over each window, as Aggregate
// does, and emits what the function newFire makes (one for each subtask)
// makes of each firing window's accumulators: the window's result need not
// be merged into one accumulator and computed first, when the function can
// read the panes' accumulators as they are. Session windows merge their
// accumulators with f's Merge.
func AggregatePanes[K comparable, T, ACC, R, O any](w *WindowedStream[K, T], f agg.Function[T, ACC, R], newFire func() PanesFunc[K, ACC, O]) *Stream[O] {
	add := f.Add
	if m, ok := f.(agg.Mutating[T, ACC]); ok && agg.NumViews(f) == 0 {
		add = func(acc ACC, v T) ACC { return m.AddInPlace(acc, v, nil, 0) }
	}
	return windowNodeOf(w, "Aggregate", func() ops.WindowLogic[K, T, ACC, O] {
		return ops.WindowLogic[K, T, ACC, O]{Create: f.Create, Add: add, Merge: f.Merge, Fire: newFire()}
	})
}

// Reduce combines the records of each window with fn, incrementally.
func Reduce[K comparable, T any](w *WindowedStream[K, T], fn func(a, b T) T) *Stream[Windowed[K, T]] {
	return Aggregate(w, agg.Reduce(fn))
}

// WindowFunc computes the result of a whole window from all its records.
// elems yields the window's records (in arrival order within each pane); it
// may be iterated more than once during the call.
type WindowFunc[K comparable, T, O any] func(key K, w window.Window, elems iter.Seq[T], emit func(O)) error

// ProcessWindow calls fn with all the records of each window when it fires.
// The records are stored once per pane and shared by overlapping windows.
func ProcessWindow[K comparable, T, O any](w *WindowedStream[K, T], fn WindowFunc[K, T, O]) *Stream[O] {
	return windowNode(w, "ProcessWindow", ops.WindowLogic[K, T, []T, O]{
		Create: func() []T { return nil },
		Add:    func(acc []T, v T) []T { return append(acc, v) },
		Merge:  func(a, b []T) []T { return append(a, b...) },
		Fire: func(key K, win window.Window, panes [][]T, emit func(O)) error {
			elems := func(yield func(T) bool) {
				for _, p := range panes {
					for _, v := range p {
						if !yield(v) {
							return
						}
					}
				}
			}
			return fn(key, win, elems, emit)
		},
	})
}

package ops

import (
	"fmt"

	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/window"
)

// JoinPane is a window join's accumulator: the records of both inputs that
// fell in one pane.
type JoinPane[A, B any] struct {
	Left  []A
	Right []B
}

// WindowJoinLogic returns the window logic of an inner join: when a window
// fires, fn is called for every pair of a left and a right record of the key
// in the window.
func WindowJoinLogic[K comparable, A, B, O any](fn func(a A, b B) O) WindowLogic[K, Either[A, B], JoinPane[A, B], O] {
	return WindowLogic[K, Either[A, B], JoinPane[A, B], O]{
		Create: func() JoinPane[A, B] { return JoinPane[A, B]{} },
		Add: func(p JoinPane[A, B], e Either[A, B]) JoinPane[A, B] {
			if e.IsRight {
				p.Right = append(p.Right, e.Right)
			} else {
				p.Left = append(p.Left, e.Left)
			}
			return p
		},
		Merge: func(a, b JoinPane[A, B]) JoinPane[A, B] {
			a.Left = append(a.Left, b.Left...)
			a.Right = append(a.Right, b.Right...)
			return a
		},
		Fire: func(_ K, _ window.Window, panes []JoinPane[A, B], emit func(O)) error {
			for _, pl := range panes {
				for _, a := range pl.Left {
					for _, pr := range panes {
						for _, b := range pr.Right {
							emit(fn(a, b))
						}
					}
				}
			}
			return nil
		},
	}
}

// timed is a buffered record with its timestamp.
type timed[T any] struct {
	TS int64
	V  T
}

// IntervalJoinLogic returns the keyed process logic of an interval join:
// a left record a and a right record b of the same key join when
// a.ts+lower <= b.ts <= a.ts+upper. Records are buffered until the watermark
// makes further matches impossible; records behind the watermark on arrival
// are late and dropped (and counted). A pair is emitted with the larger of
// the two timestamps.
func IntervalJoinLogic[K comparable, A, B, O any](lower, upper int64, fn func(a A, b B) O) (KeyedProcessLogic[K, Either[A, B], O], error) {
	if lower > upper {
		return KeyedProcessLogic[K, Either[A, B], O]{}, fmt.Errorf("interval join: lower bound %dms is above upper bound %dms", lower, upper)
	}
	var left state.ValueTable[K, state.VoidNamespace, []timed[A]]
	var right state.ValueTable[K, state.VoidNamespace, []timed[B]]
	return KeyedProcessLogic[K, Either[A, B], O]{
		Open: func(c *KeyedContext[K, O]) error {
			s := c.Store()
			var err error
			left, err = state.NewValueTable(s.Backend(), "interval-join-left", s.KeyCodec(), lazyCodec[state.VoidNamespace](), lazyCodec[[]timed[A]]())
			if err != nil {
				return err
			}
			right, err = state.NewValueTable(s.Backend(), "interval-join-right", s.KeyCodec(), lazyCodec[state.VoidNamespace](), lazyCodec[[]timed[B]]())
			return err
		},
		Process: func(c *KeyedContext[K, O], e Either[A, B]) error {
			ts := c.Timestamp()
			if ts == runtime.NoTimestamp {
				return fmt.Errorf("interval join: record has no event timestamp; give the source a watermark strategy with a timestamp extractor")
			}
			if ts < c.CurrentWatermark() {
				c.Runtime().Metrics.LateRecords.Add(1)
				return nil
			}
			kc := c.Store().KeyContext()
			kg, k := kc.KG, kc.Key
			if !e.IsRight {
				bs, _ := right.Get(kg, k, state.VoidNamespace{})
				for _, b := range bs {
					if ts+lower <= b.TS && b.TS <= ts+upper {
						c.EmitAt(fn(e.Left, b.V), max(ts, b.TS))
					}
				}
				as, _ := left.Get(kg, k, state.VoidNamespace{})
				left.Put(kg, k, state.VoidNamespace{}, append(as, timed[A]{ts, e.Left}))
				c.RegisterEventTimeTimer(ts + max(upper, 0))
				return nil
			}
			as, _ := left.Get(kg, k, state.VoidNamespace{})
			for _, a := range as {
				if a.TS+lower <= ts && ts <= a.TS+upper {
					c.EmitAt(fn(a.V, e.Right), max(ts, a.TS))
				}
			}
			bs, _ := right.Get(kg, k, state.VoidNamespace{})
			right.Put(kg, k, state.VoidNamespace{}, append(bs, timed[B]{ts, e.Right}))
			c.RegisterEventTimeTimer(ts + max(-lower, 0))
			return nil
		},
		OnTimer: func(c *KeyedContext[K, O], now int64) error {
			kc := c.Store().KeyContext()
			kg, k := kc.KG, kc.Key
			if as, ok := left.Get(kg, k, state.VoidNamespace{}); ok {
				keep := as[:0]
				for _, a := range as {
					if a.TS+max(upper, 0) > now {
						keep = append(keep, a)
					}
				}
				clear(as[len(keep):])
				if len(keep) == 0 {
					left.Delete(kg, k, state.VoidNamespace{})
				} else {
					left.Put(kg, k, state.VoidNamespace{}, keep)
				}
			}
			if bs, ok := right.Get(kg, k, state.VoidNamespace{}); ok {
				keep := bs[:0]
				for _, b := range bs {
					if b.TS+max(-lower, 0) > now {
						keep = append(keep, b)
					}
				}
				clear(bs[len(keep):])
				if len(keep) == 0 {
					right.Delete(kg, k, state.VoidNamespace{})
				} else {
					right.Put(kg, k, state.VoidNamespace{}, keep)
				}
			}
			return nil
		},
	}, nil
}

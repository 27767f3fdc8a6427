package eddy

import (
	"time"

	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/window"
)

// WindowJoin joins two keyed streams on their key within windows: when a
// window fires, fn is called for every pair of a left and a right record of
// the same key in that window (an inner join). Results carry the window's
// last timestamp.
func WindowJoin[K comparable, A, B, O any](c *ConnectedKeyed[K, A, B], a window.Assigner, fn func(a A, b B) O) *Stream[O] {
	env := c.a.s.env
	if err := a.Validate(); err != nil {
		env.fail(err)
	}
	opts := ops.WindowOptions{Assigner: a}
	logic := ops.WindowJoinLogic[K, A, B, O](fn)
	return twoKeyed[K, A, B, O](c, "WindowJoin "+a.String(), func(ctx *runtime.Context, spec ops.KeySpec[K, ops.Either[A, B]], outs map[string]any) (runtime.Input[ops.Either[A, B]], error) {
		if a.Kind() == window.SessionKind {
			return ops.NewSessionWindow(ctx, spec, env.backendFactory(), opts, logic, outs)
		}
		return ops.NewPaneWindow(ctx, spec, env.backendFactory(), opts, logic, outs)
	})
}

// IntervalJoin joins two keyed streams on their key and on time: a left
// record a and a right record b join when
// a.ts+lower <= b.ts <= a.ts+upper. Each pair is emitted once, with the
// larger timestamp of the two. Records are kept until the watermark rules out
// further matches; records that arrive behind the watermark are dropped and
// counted as late.
func IntervalJoin[K comparable, A, B, O any](c *ConnectedKeyed[K, A, B], lower, upper time.Duration, fn func(a A, b B) O) *Stream[O] {
	env := c.a.s.env
	lo, hi := lower.Milliseconds(), upper.Milliseconds()
	if lo > hi {
		env.fail(errf("IntervalJoin: lower bound %v is above upper bound %v", lower, upper))
	}
	return twoKeyed[K, A, B, O](c, "IntervalJoin", func(ctx *runtime.Context, spec ops.KeySpec[K, ops.Either[A, B]], outs map[string]any) (runtime.Input[ops.Either[A, B]], error) {
		logic, err := ops.IntervalJoinLogic[K, A, B, O](lo, hi, fn)
		if err != nil {
			return nil, err
		}
		return ops.NewKeyedProcess(ctx, spec, env.backendFactory(), logic, outs)
	})
}

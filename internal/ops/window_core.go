package ops

import (
	"fmt"

	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// windowCore is what the pane and session window operators share: keyed
// state, the window timers, the outputs, and the driving of records,
// watermarks, processing time and end of input. The operator supplies add
// (record i of a batch) and fire (one timer).
type windowCore[K comparable, T, O any] struct {
	*keyedBase[K, T]
	timers state.Timers[K, windowTimer]
	out    *Emitter[O]
	lateE  *Emitter[T]
	outs   map[string]any
	wm     int64
	proc   bool
	late   int64
	wakeAt int64
	fireTS int64
	emitFn func(O)

	add       func(b *runtime.Batch[T], i int, ts int64) error
	fireTimer func(kg int, key K, t windowTimer, ts int64) error
}

func newWindowCore[K comparable, T, O any](ctx *runtime.Context, spec KeySpec[K, T], newBackend BackendFactory,
	opts WindowOptions, outs map[string]any) (*windowCore[K, T, O], error) {
	if err := opts.Assigner.Validate(); err != nil {
		return nil, err
	}
	base, err := newKeyedBase(ctx, spec, newBackend)
	if err != nil {
		return nil, err
	}
	c := &windowCore[K, T, O]{
		keyedBase: base, timers: newTimers[K, windowTimer](base, "window-timers"),
		out: NewEmitter(outs[""].(runtime.Input[O])), outs: outs, wm: runtime.MinWatermark,
		proc: opts.Assigner.IsProcessingTime(), late: opts.AllowedLateness,
	}
	c.emitFn = func(o O) { c.out.Emit(o, c.fireTS) }
	if opts.LateTag != "" {
		if o, ok := outs[opts.LateTag]; ok {
			c.lateE = NewEmitter(o.(runtime.Input[T]))
		}
	}
	return c, nil
}

// start restores state, once the operator has declared its tables, and
// schedules restored processing-time timers.
func (c *windowCore[K, T, O]) start() error {
	if err := c.restore(c.ctx.Restored); err != nil {
		return err
	}
	c.scheduleWake()
	return nil
}

// ProcessBatch adds every record to the window state.
func (c *windowCore[K, T, O]) ProcessBatch(b *runtime.Batch[T]) error {
	var now int64
	if c.proc {
		now = c.ctx.ProcessingTime()
	}
	for i := range b.Data {
		ts := b.TS[i]
		if c.proc {
			ts = now
		} else if ts == runtime.NoTimestamp {
			return fmt.Errorf("record has no event timestamp; give the source a watermark strategy with a timestamp extractor, or use processing-time windows")
		}
		if err := c.add(b, i, ts); err != nil {
			return err
		}
	}
	return c.flush()
}

func (c *windowCore[K, T, O]) flush() error {
	if err := c.out.Flush(); err != nil {
		return err
	}
	if c.lateE != nil {
		return c.lateE.Flush()
	}
	return nil
}

// current returns the operator's notion of "now" for lateness: the
// watermark, or processing time for processing-time windows.
func (c *windowCore[K, T, O]) current() int64 {
	if c.proc {
		return c.ctx.ProcessingTime() - 1
	}
	return c.wm
}

// lateRecord counts a late record and sends it to the late output, if any.
func (c *windowCore[K, T, O]) lateRecord(v T, ts int64) {
	c.ctx.Metrics.LateRecords.Add(1)
	if c.lateE != nil {
		c.lateE.Emit(v, ts)
	}
}

// gapRecord counts a record that falls between windows (sliding windows
// whose size is below their slide) and sends it to the late output, if any.
func (c *windowCore[K, T, O]) gapRecord(v T, ts int64) {
	c.ctx.Metrics.WindowGapRecords.Add(1)
	if c.lateE != nil {
		c.lateE.Emit(v, ts)
	}
}

// timer registers a timer of the operator's time domain.
func (c *windowCore[K, T, O]) timer(kg int, key K, t windowTimer, ts int64) {
	if c.proc {
		c.timers.RegisterProcessingTime(kg, key, t, ts)
		c.scheduleWake()
	} else {
		c.timers.RegisterEventTime(kg, key, t, ts)
	}
}

// deleteTimer deletes a timer of the operator's time domain.
func (c *windowCore[K, T, O]) deleteTimer(kg int, key K, t windowTimer, ts int64) {
	if c.proc {
		c.timers.DeleteProcessingTime(kg, key, t, ts)
	} else {
		c.timers.DeleteEventTime(kg, key, t, ts)
	}
}

// scheduleWake asks the subtask to wake the operator for its earliest
// processing-time timer.
func (c *windowCore[K, T, O]) scheduleWake() {
	ts, ok := c.timers.NextProcessingTime()
	if !ok || (c.wakeAt != 0 && c.wakeAt <= ts) {
		return
	}
	c.wakeAt = ts
	c.ctx.WakeAt(ts, func(now int64) error {
		c.wakeAt = 0
		if err := c.timers.AdvanceProcessingTime(now, c.fireTimer); err != nil {
			return err
		}
		c.scheduleWake()
		return c.flush()
	})
}

// ProcessWatermark fires the windows wm completes, then forwards wm.
func (c *windowCore[K, T, O]) ProcessWatermark(wm int64) error {
	if wm <= c.wm {
		return nil
	}
	c.wm = wm
	if !c.proc {
		if err := c.timers.AdvanceWatermark(wm, c.fireTimer); err != nil {
			return err
		}
	}
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.out.Out().ProcessWatermark(wm); err != nil {
		return err
	}
	return ForwardWatermark(c.outs, wm)
}

// EndInput fires what processing-time windows hold (event-time windows
// fired on the final watermark), then ends the outputs.
func (c *windowCore[K, T, O]) EndInput() error {
	if c.proc {
		if err := c.timers.AdvanceProcessingTime(runtime.MaxWatermark, c.fireTimer); err != nil {
			return err
		}
	}
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.out.Out().EndInput(); err != nil {
		return err
	}
	return ForwardEnd(c.outs)
}

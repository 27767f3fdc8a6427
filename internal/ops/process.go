package ops

import (
	"errors"
	"fmt"

	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// TimeDomain says which clock fired a timer.
type TimeDomain uint8

const (
	// EventTime timers fire when the watermark passes them.
	EventTime TimeDomain = iota
	// ProcessingTime timers fire when the wall clock passes them.
	ProcessingTime
)

// String names the domain.
func (d TimeDomain) String() string {
	if d == ProcessingTime {
		return "processing-time"
	}
	return "event-time"
}

// ProcessContext is what a process function sees while it handles a record:
// the record's timestamp, the watermark, and its outputs. It is valid only
// during the call.
type ProcessContext[O any] struct {
	ts    int64
	wm    int64
	rt    *runtime.Context
	out   *Emitter[O]
	sides *SideOutputs
	outs  map[string]any
}

// Timestamp returns the event timestamp of the record (or timer) being
// handled; NoTimestamp if it has none.
func (c *ProcessContext[O]) Timestamp() int64 { return c.ts }

// CurrentWatermark returns the operator's current event time.
func (c *ProcessContext[O]) CurrentWatermark() int64 { return c.wm }

// ProcessingTime returns the current processing time in milliseconds.
func (c *ProcessContext[O]) ProcessingTime() int64 { return c.rt.ProcessingTime() }

// Emit sends v to the main output with the current timestamp.
func (c *ProcessContext[O]) Emit(v O) { c.out.Emit(v, c.ts) }

// EmitAt sends v to the main output with timestamp ts.
func (c *ProcessContext[O]) EmitAt(v O, ts int64) { c.out.Emit(v, ts) }

// Subtask returns the index of the parallel instance running the function.
func (c *ProcessContext[O]) Subtask() int { return c.rt.Subtask }

// Parallelism returns the number of parallel instances.
func (c *ProcessContext[O]) Parallelism() int { return c.rt.Parallelism }

// Runtime returns the runtime context of the operator.
func (c *ProcessContext[O]) Runtime() *runtime.Context { return c.rt }

// SideOutputs returns the side outputs and the operator's outputs, for
// typed side-output emitters.
func (c *ProcessContext[O]) SideOutputs() (*SideOutputs, map[string]any) { return c.sides, c.outs }

func newProcessContext[O any](rt *runtime.Context, outs map[string]any) *ProcessContext[O] {
	return &ProcessContext[O]{rt: rt, out: NewEmitter(outs[""].(runtime.Input[O])), sides: NewSideOutputs(), outs: outs, wm: runtime.MinWatermark}
}

func (c *ProcessContext[O]) flush() error {
	if err := c.out.Flush(); err != nil {
		return err
	}
	return c.sides.Flush()
}

func (c *ProcessContext[O]) forwardWatermark(wm int64) error {
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.out.Out().ProcessWatermark(wm); err != nil {
		return err
	}
	return ForwardWatermark(c.outs, wm)
}

func (c *ProcessContext[O]) end() error {
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.out.Out().EndInput(); err != nil {
		return err
	}
	return ForwardEnd(c.outs)
}

// ProcessLogic is a process function on a stream that is not keyed.
type ProcessLogic[T, O any] struct {
	Open    func(c *ProcessContext[O]) error
	Process func(c *ProcessContext[O], v T) error
	// OnWatermark, if set, is called after the watermark advances and
	// before it is forwarded.
	OnWatermark func(c *ProcessContext[O], wm int64) error
	// OnEnd, if set, is called at end of input before the outputs end.
	OnEnd func(c *ProcessContext[O]) error
	// PrepareSnapshot, if set, is called when a checkpoint's barrier
	// reaches the operator; what it emits goes downstream ahead of the
	// barrier.
	PrepareSnapshot func(c *ProcessContext[O], id int64) error
	Close           func() error
}

// Process runs a ProcessLogic.
type Process[T, O any] struct {
	logic ProcessLogic[T, O]
	c     *ProcessContext[O]
	ended bool
}

// NewProcess returns a process operator and calls the logic's Open.
func NewProcess[T, O any](rt *runtime.Context, logic ProcessLogic[T, O], outs map[string]any) (*Process[T, O], error) {
	p := &Process[T, O]{logic: logic, c: newProcessContext[O](rt, outs)}
	if logic.Open != nil {
		if err := logic.Open(p.c); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// ProcessBatch calls the function for every record.
func (p *Process[T, O]) ProcessBatch(b *runtime.Batch[T]) error {
	for i, v := range b.Data {
		p.c.ts = b.TS[i]
		if err := p.logic.Process(p.c, v); err != nil {
			return err
		}
	}
	return p.c.flush()
}

// ProcessWatermark records and forwards the watermark.
func (p *Process[T, O]) ProcessWatermark(wm int64) error {
	p.c.wm = wm
	if p.logic.OnWatermark != nil {
		p.c.ts = wm
		if err := p.logic.OnWatermark(p.c, wm); err != nil {
			return err
		}
	}
	return p.c.forwardWatermark(wm)
}

// EndInput calls the logic's OnEnd — or, if it has none, its
// PrepareSnapshot with checkpoint id 0, so that what it holds is emitted —
// and ends the outputs. Hooks called after it do nothing.
func (p *Process[T, O]) EndInput() error {
	p.c.ts = runtime.NoTimestamp
	switch {
	case p.logic.OnEnd != nil:
		if err := p.logic.OnEnd(p.c); err != nil {
			return err
		}
	case p.logic.PrepareSnapshot != nil:
		if err := p.logic.PrepareSnapshot(p.c, 0); err != nil {
			return err
		}
	}
	p.ended = true
	return p.c.end()
}

// SnapshotState calls the logic's PrepareSnapshot and sends what it
// emitted downstream; the operator has no state of its own.
func (p *Process[T, O]) SnapshotState(id int64) (*runtime.OperatorSnapshot, error) {
	if p.logic.PrepareSnapshot == nil || p.ended {
		return nil, nil
	}
	p.c.ts = runtime.NoTimestamp
	if err := p.logic.PrepareSnapshot(p.c, id); err != nil {
		return nil, err
	}
	return nil, p.c.flush()
}

// Close calls the logic's Close.
func (p *Process[T, O]) Close() error {
	if p.logic.Close != nil {
		return p.logic.Close()
	}
	return nil
}

// KeyedContext is what a keyed process function sees: the current key, its
// state, timers and outputs. It is valid only during the call.
type KeyedContext[K comparable, O any] struct {
	ProcessContext[O]
	base   keyedHandle[K]
	timers state.Timers[K, state.VoidNamespace]
	domain TimeDomain
	wake   func()
}

type keyedHandle[K comparable] interface {
	currentKey() (int, K)
	stateStore() *state.Store[K]
}

func (k *keyedBase[K, T]) currentKey() (int, K)        { return k.kc.KG, k.kc.Key }
func (k *keyedBase[K, T]) stateStore() *state.Store[K] { return k.store }

// Key returns the current key.
func (c *KeyedContext[K, O]) Key() K { _, k := c.base.currentKey(); return k }

// Store returns the keyed state store, to declare state handles on (they
// follow the current key).
func (c *KeyedContext[K, O]) Store() *state.Store[K] { return c.base.stateStore() }

// TimeDomain says which clock fired the timer being handled.
func (c *KeyedContext[K, O]) TimeDomain() TimeDomain { return c.domain }

// RegisterEventTimeTimer asks for a call of OnTimer for the current key
// once the watermark reaches ts. Registering a timer twice has no effect.
func (c *KeyedContext[K, O]) RegisterEventTimeTimer(ts int64) {
	kg, k := c.base.currentKey()
	c.timers.RegisterEventTime(kg, k, state.VoidNamespace{}, ts)
}

// DeleteEventTimeTimer removes an event-time timer of the current key.
func (c *KeyedContext[K, O]) DeleteEventTimeTimer(ts int64) {
	kg, k := c.base.currentKey()
	c.timers.DeleteEventTime(kg, k, state.VoidNamespace{}, ts)
}

// RegisterProcessingTimeTimer asks for a call of OnTimer for the current
// key once processing time reaches ts.
func (c *KeyedContext[K, O]) RegisterProcessingTimeTimer(ts int64) {
	kg, k := c.base.currentKey()
	c.timers.RegisterProcessingTime(kg, k, state.VoidNamespace{}, ts)
	c.wake()
}

// DeleteProcessingTimeTimer removes a processing-time timer of the current
// key.
func (c *KeyedContext[K, O]) DeleteProcessingTimeTimer(ts int64) {
	kg, k := c.base.currentKey()
	c.timers.DeleteProcessingTime(kg, k, state.VoidNamespace{}, ts)
}

// KeyedProcessLogic is a process function on a keyed stream.
type KeyedProcessLogic[K comparable, T, O any] struct {
	Open    func(c *KeyedContext[K, O]) error
	Process func(c *KeyedContext[K, O], v T) error
	OnTimer func(c *KeyedContext[K, O], ts int64) error
	// PrepareSnapshot, if set, is called when a checkpoint's barrier
	// reaches the operator, before its state is snapshotted; what it emits
	// goes downstream ahead of the barrier.
	PrepareSnapshot func(c *KeyedContext[K, O], id int64) error
	// NotifyCheckpointComplete, if set, is called when a checkpoint
	// completes.
	NotifyCheckpointComplete func(c *KeyedContext[K, O], id int64) error
	// OnEnd, if set, is called at end of input before the outputs end.
	OnEnd func(c *KeyedContext[K, O]) error
	Close func() error
}

// KeyedProcess runs a KeyedProcessLogic with keyed state and timers.
type KeyedProcess[K comparable, T, O any] struct {
	*keyedBase[K, T]
	logic  KeyedProcessLogic[K, T, O]
	c      *KeyedContext[K, O]
	timers state.Timers[K, state.VoidNamespace]
	wakeAt int64
	ended  bool
}

// NewKeyedProcess returns a keyed process operator and calls Open.
func NewKeyedProcess[K comparable, T, O any](rt *runtime.Context, spec KeySpec[K, T], newBackend BackendFactory, logic KeyedProcessLogic[K, T, O], outs map[string]any) (*KeyedProcess[K, T, O], error) {
	base, err := newKeyedBase(rt, spec, newBackend)
	if err != nil {
		return nil, err
	}
	p := &KeyedProcess[K, T, O]{keyedBase: base, logic: logic, timers: newTimers[K, state.VoidNamespace](base, "timers")}
	p.c = &KeyedContext[K, O]{ProcessContext: *newProcessContext[O](rt, outs), base: base, timers: p.timers}
	p.c.wake = p.scheduleWake
	if logic.Open != nil {
		if err := callOpen(func() error { return logic.Open(p.c) }); err != nil {
			return nil, err
		}
	}
	if err := base.restore(rt.Restored); err != nil {
		return nil, err
	}
	p.scheduleWake()
	return p, nil
}

// callOpen runs an Open function; a panic in it (a bad state declaration,
// say) becomes its error.
func callOpen(open func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("open: %w", e)
			} else {
				err = fmt.Errorf("open: %v", r)
			}
		}
	}()
	return open()
}

// ProcessBatch calls the function for every record under its key, taking
// the key group from the batch when the hash exchange sent it.
func (p *KeyedProcess[K, T, O]) ProcessBatch(b *runtime.Batch[T]) error {
	for i, v := range b.Data {
		p.setKeyAt(b, i)
		p.c.ts = b.TS[i]
		if err := p.logic.Process(p.c, v); err != nil {
			return err
		}
	}
	return p.c.flush()
}

func (p *KeyedProcess[K, T, O]) onTimer(domain TimeDomain) func(kg int, k K, _ state.VoidNamespace, ts int64) error {
	return func(kg int, k K, _ state.VoidNamespace, ts int64) error {
		if p.logic.OnTimer == nil {
			return errors.New("a timer fired but the function has no OnTimer")
		}
		p.setKey(kg, k)
		p.c.ts, p.c.domain = ts, domain
		return p.logic.OnTimer(p.c, ts)
	}
}

func (p *KeyedProcess[K, T, O]) scheduleWake() {
	ts, ok := p.timers.NextProcessingTime()
	if !ok || (p.wakeAt != 0 && p.wakeAt <= ts) {
		return
	}
	p.wakeAt = ts
	p.ctx.WakeAt(ts, func(now int64) error {
		p.wakeAt = 0
		if err := p.timers.AdvanceProcessingTime(now, p.onTimer(ProcessingTime)); err != nil {
			return err
		}
		p.scheduleWake()
		return p.c.flush()
	})
}

// ProcessWatermark fires due event-time timers, then forwards wm.
func (p *KeyedProcess[K, T, O]) ProcessWatermark(wm int64) error {
	p.c.wm = wm
	if err := p.timers.AdvanceWatermark(wm, p.onTimer(EventTime)); err != nil {
		return err
	}
	return p.c.forwardWatermark(wm)
}

// EndInput calls the logic's OnEnd (or, if it has none, its
// PrepareSnapshot with checkpoint id 0) and ends the outputs. Pending
// processing-time timers do not fire; hooks called after it do nothing.
func (p *KeyedProcess[K, T, O]) EndInput() error {
	p.c.ts = runtime.NoTimestamp
	switch {
	case p.logic.OnEnd != nil:
		if err := p.logic.OnEnd(p.c); err != nil {
			return err
		}
	case p.logic.PrepareSnapshot != nil:
		if err := p.logic.PrepareSnapshot(p.c, 0); err != nil {
			return err
		}
	}
	p.ended = true
	return p.c.end()
}

// SnapshotStateAsync calls the logic's PrepareSnapshot and sends what it
// emitted downstream, then snapshots the keyed state.
func (p *KeyedProcess[K, T, O]) SnapshotStateAsync(id int64) (func() (*runtime.OperatorSnapshot, error), error) {
	if p.logic.PrepareSnapshot != nil && !p.ended {
		p.c.ts = runtime.NoTimestamp
		if err := p.logic.PrepareSnapshot(p.c, id); err != nil {
			return nil, err
		}
		if err := p.c.flush(); err != nil {
			return nil, err
		}
	}
	return p.keyedBase.SnapshotStateAsync(id)
}

// NotifyCheckpointComplete tells the keyed state, then the logic.
func (p *KeyedProcess[K, T, O]) NotifyCheckpointComplete(id int64) error {
	if err := p.keyedBase.NotifyCheckpointComplete(id); err != nil {
		return err
	}
	if p.logic.NotifyCheckpointComplete != nil && !p.ended {
		p.c.ts = runtime.NoTimestamp
		if err := p.logic.NotifyCheckpointComplete(p.c, id); err != nil {
			return err
		}
		return p.c.flush()
	}
	return nil
}

// Close calls the logic's Close and closes the state backend.
func (p *KeyedProcess[K, T, O]) Close() error {
	var err error
	if p.logic.Close != nil {
		err = p.logic.Close()
	}
	if cerr := p.keyedBase.Close(); err == nil {
		err = cerr
	}
	return err
}

package eddy

import (
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/state"
)

// ProcessContext is what a process function sees while it handles a record:
// the record's timestamp, the current watermark, and its outputs (Emit, and
// side outputs through OutputTag.Emit). It is valid only during the call,
// on the operator's goroutine.
type ProcessContext[O any] struct {
	c *ops.ProcessContext[O]
}

// Timestamp returns the event timestamp (milliseconds) of the record or
// timer being handled; NoTimestamp if it has none.
func (c *ProcessContext[O]) Timestamp() int64 { return c.c.Timestamp() }

// CurrentWatermark returns the operator's current event time: no record
// with a timestamp at or below it will arrive.
func (c *ProcessContext[O]) CurrentWatermark() int64 { return c.c.CurrentWatermark() }

// ProcessingTime returns the current processing time in milliseconds since
// the Unix epoch.
func (c *ProcessContext[O]) ProcessingTime() int64 { return c.c.ProcessingTime() }

// Emit sends v to the main output with the current timestamp.
func (c *ProcessContext[O]) Emit(v O) { c.c.Emit(v) }

// EmitAt sends v to the main output with timestamp ts.
func (c *ProcessContext[O]) EmitAt(v O, ts int64) { c.c.EmitAt(v, ts) }

// Subtask returns the index of the parallel instance running the function,
// in [0, Parallelism()).
func (c *ProcessContext[O]) Subtask() int { return c.c.Subtask() }

// Parallelism returns the number of parallel instances of the operator.
func (c *ProcessContext[O]) Parallelism() int { return c.c.Parallelism() }

func (c *ProcessContext[O]) sideOutputs() (*ops.SideOutputs, map[string]any) {
	return c.c.SideOutputs()
}

// processContext returns the public context of c, reusing last when it
// wraps c already (an operator keeps one context for its life).
func processContext[O any](last **ProcessContext[O], c *ops.ProcessContext[O]) *ProcessContext[O] {
	if *last == nil || (*last).c != c {
		*last = &ProcessContext[O]{c: c}
	}
	return *last
}

// TimeDomain says which clock fired a timer.
type TimeDomain uint8

// The time domains of timers.
const (
	// EventTime timers fire when the watermark passes them.
	EventTime TimeDomain = iota
	// ProcessingTime timers fire when the wall clock passes them.
	ProcessingTime
)

// String names the domain: "event-time" or "processing-time".
func (d TimeDomain) String() string {
	if d == ProcessingTime {
		return "processing-time"
	}
	return "event-time"
}

// KeyedContext is what a keyed process function sees: a ProcessContext
// plus the current key, its keyed state (Store) and its timers. It is valid
// only during the call, on the operator's goroutine.
type KeyedContext[K comparable, O any] struct {
	ProcessContext[O]
	k *ops.KeyedContext[K, O]
}

// keyedContext returns the public context of k, reusing last when it wraps
// k already.
func keyedContext[K comparable, O any](last **KeyedContext[K, O], k *ops.KeyedContext[K, O]) *KeyedContext[K, O] {
	if *last == nil || (*last).k != k {
		*last = &KeyedContext[K, O]{ProcessContext: ProcessContext[O]{c: &k.ProcessContext}, k: k}
	}
	return *last
}

// Key returns the key of the record or timer being handled.
func (c *KeyedContext[K, O]) Key() K { return c.k.Key() }

// Store returns the keyed state store, on which Open declares state
// handles (package state); the handles follow the current key.
func (c *KeyedContext[K, O]) Store() state.Store[K] { return c.k.Store() }

// TimeDomain says which clock fired the timer being handled.
func (c *KeyedContext[K, O]) TimeDomain() TimeDomain { return TimeDomain(c.k.TimeDomain()) }

// RegisterEventTimeTimer asks for a call of OnTimer for the current key
// once the watermark reaches ts. Registering a timer twice has no effect.
func (c *KeyedContext[K, O]) RegisterEventTimeTimer(ts int64) { c.k.RegisterEventTimeTimer(ts) }

// DeleteEventTimeTimer removes an event-time timer of the current key.
func (c *KeyedContext[K, O]) DeleteEventTimeTimer(ts int64) { c.k.DeleteEventTimeTimer(ts) }

// RegisterProcessingTimeTimer asks for a call of OnTimer for the current
// key once processing time reaches ts.
func (c *KeyedContext[K, O]) RegisterProcessingTimeTimer(ts int64) {
	c.k.RegisterProcessingTimeTimer(ts)
}

// DeleteProcessingTimeTimer removes a processing-time timer of the current
// key.
func (c *KeyedContext[K, O]) DeleteProcessingTimeTimer(ts int64) {
	c.k.DeleteProcessingTimeTimer(ts)
}

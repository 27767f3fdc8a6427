// Package ops holds the operators of the runtime: the typed implementations
// behind the Go API and SQL (sources, stateless transformations, process
// functions, windows, joins and sinks).
package ops

import (
	"time"

	"github.com/eddystream/eddy/internal/runtime"
)

// WatermarkGenerator tracks the event time of one split and says how far
// its watermark has advanced. It is called on the source subtask's
// goroutine.
type WatermarkGenerator[T any] interface {
	// OnEvent is called for every record with its timestamp.
	OnEvent(v T, ts int64)
	// Watermark returns the current watermark: no record with a timestamp
	// at or below it is expected any more.
	Watermark() int64
}

// Watermarks is how a source assigns timestamps and generates watermarks.
type Watermarks[T any] struct {
	// Timestamp extracts a record's event time in milliseconds; nil means
	// the record keeps the timestamp its source gives it (or none).
	Timestamp func(T) int64
	// NewGenerator creates the watermark generator of one split; nil means
	// the source emits no watermarks until it ends.
	NewGenerator func() WatermarkGenerator[T]
	// Idleness marks a split idle after it produced nothing for this long,
	// so it does not hold back the watermark; 0 means never.
	Idleness time.Duration
}

// BoundedOutOfOrderness is the generator of a stream whose records arrive
// at most Delay late: the watermark is the highest timestamp seen minus
// Delay, minus 1 ms.
type BoundedOutOfOrderness[T any] struct {
	Delay int64
	max   int64
	seen  bool
	_     CacheLinePad
}

// OnEvent records ts.
func (g *BoundedOutOfOrderness[T]) OnEvent(_ T, ts int64) {
	if !g.seen || ts > g.max {
		g.max, g.seen = ts, true
	}
}

// Watermark returns the highest timestamp minus the delay, minus 1.
func (g *BoundedOutOfOrderness[T]) Watermark() int64 {
	if !g.seen {
		return runtime.MinWatermark
	}
	return g.max - g.Delay - 1
}

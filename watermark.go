package eddy

import (
	"time"

	"github.com/eddystream/eddy/internal/ops"
)

// WatermarkGenerator tracks the event time of one source split and says how
// far its watermark has advanced. Custom strategies implement it (see
// CustomWatermarks); it is called on the source subtask's goroutine.
type WatermarkGenerator[T any] interface {
	// OnEvent is called for every record with its timestamp.
	OnEvent(v T, ts int64)
	// Watermark returns the current watermark: no record with a timestamp
	// at or below it is expected any more.
	Watermark() int64
}

// WatermarkStrategy says how a source timestamps its records and how its
// watermarks advance. Every split of a source runs its own generator; the
// source's watermark is the minimum over its splits that are not idle.
type WatermarkStrategy[T any] struct {
	ts       func(T) int64
	gen      func() WatermarkGenerator[T]
	idleness time.Duration
}

// BoundedOutOfOrder timestamps records with ts (milliseconds since the
// epoch) and expects them to arrive at most delay out of order: the
// watermark trails the highest timestamp seen by delay.
func BoundedOutOfOrder[T any](delay time.Duration, ts func(T) int64) WatermarkStrategy[T] {
	d := delay.Milliseconds()
	return WatermarkStrategy[T]{ts: ts, gen: func() WatermarkGenerator[T] {
		return &ops.BoundedOutOfOrderness[T]{Delay: d}
	}}
}

// Monotonous timestamps records with ts and expects timestamps never to
// decrease within a split.
func Monotonous[T any](ts func(T) int64) WatermarkStrategy[T] {
	return BoundedOutOfOrder(0, ts)
}

// CustomWatermarks timestamps records with ts and generates watermarks with
// a generator per split made by newGen.
func CustomWatermarks[T any](ts func(T) int64, newGen func() WatermarkGenerator[T]) WatermarkStrategy[T] {
	return WatermarkStrategy[T]{ts: ts, gen: newGen}
}

// NoWatermarks leaves records without timestamps; event time does not
// advance until the input ends. Use it for processing-time jobs and jobs
// without time.
func NoWatermarks[T any]() WatermarkStrategy[T] { return WatermarkStrategy[T]{} }

// WithIdleness marks a split idle once it has produced nothing for d, so
// that it stops holding back the watermark; it becomes active again with its
// next record.
func (w WatermarkStrategy[T]) WithIdleness(d time.Duration) WatermarkStrategy[T] {
	w.idleness = d
	return w
}

func (w WatermarkStrategy[T]) internal() ops.Watermarks[T] {
	wm := ops.Watermarks[T]{Timestamp: w.ts, Idleness: w.idleness}
	if gen := w.gen; gen != nil {
		wm.NewGenerator = func() ops.WatermarkGenerator[T] { return gen() }
	}
	return wm
}

// Millis converts a time to the milliseconds since the epoch that event
// timestamps are.
func Millis(t time.Time) int64 { return t.UnixMilli() }

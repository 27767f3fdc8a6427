// Package runtime executes a physical dataflow: one goroutine per parallel
// subtask, each running a chain of fused operators; subtasks exchange batches
// of records over bounded channels, with watermarks, checkpoint barriers,
// idleness and end-of-input travelling in-band between the batches.
//
// Concurrency: an operator and everything it owns runs on its subtask's
// goroutine. The only values shared between goroutines are the channels of
// the exchanges, the job's cancellation, and what the doc comments say.
package runtime

import (
	"math"
	"sync"
)

// NoTimestamp is the timestamp of a record that has none.
const NoTimestamp int64 = math.MinInt64

// MinWatermark is the watermark before any event time has passed.
const MinWatermark int64 = math.MinInt64

// MaxWatermark is the watermark at the end of input: every event-time timer
// and window fires on it.
const MaxWatermark int64 = math.MaxInt64

// Batch is a run of records with their event timestamps (TS[i] belongs to
// Data[i]). A batch handed to an operator is read-only and valid only for the
// duration of the call: the operator copies what it keeps.
type Batch[T any] struct {
	Data []T
	TS   []int64
	// KG, when not empty, holds the key group of each record (KG[i] belongs
	// to Data[i]), as the hash exchange that delivered the batch computed
	// it for the receiving keyed operator, so that the operator does not
	// hash the key again. Only batches from a hash exchange carry it; an
	// operator that builds or forwards batches leaves it empty. Key groups
	// are below state.MaxKeyGroups, so they fit 16 bits.
	KG []uint16
}

// Len returns the number of records in the batch.
func (b *Batch[T]) Len() int { return len(b.Data) }

// Append adds one record with its timestamp.
func (b *Batch[T]) Append(v T, ts int64) {
	b.Data = append(b.Data, v)
	b.TS = append(b.TS, ts)
}

// Reset empties the batch, keeping its capacity. It clears the records so
// that the batch does not keep them alive.
func (b *Batch[T]) Reset() {
	clear(b.Data)
	b.Data = b.Data[:0]
	b.TS = b.TS[:0]
	b.KG = b.KG[:0]
}

// NewBatch returns an empty batch with room for n records.
func NewBatch[T any](n int) *Batch[T] {
	return &Batch[T]{Data: make([]T, 0, n), TS: make([]int64, 0, n)}
}

// batchPool recycles the batches that travel over one exchange.
type batchPool[T any] struct {
	size int
	p    sync.Pool
}

func newBatchPool[T any](size int) *batchPool[T] {
	bp := &batchPool[T]{size: size}
	bp.p.New = func() any { return NewBatch[T](size) }
	return bp
}

func (bp *batchPool[T]) get() *Batch[T] { return bp.p.Get().(*Batch[T]) }

func (bp *batchPool[T]) put(b *Batch[T]) {
	b.Reset()
	bp.p.Put(b)
}

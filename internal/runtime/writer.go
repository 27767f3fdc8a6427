package runtime

import (
	"errors"

	"github.com/eddystream/eddy/internal/state"
)

// errCanceled is returned by blocked sends when the job is cancelled.
var errCanceled = errors.New("runtime: job cancelled")

// flusher is implemented by exchange writers: the subtask flushes partly
// filled batches when it has nothing else to do or when they have lingered.
type flusher interface {
	flush() error
	setIdle(idle bool) error
	broadcastBarrier(id int64) error
}

// writer is the output of an operator into an exchange: it partitions
// records into one batch per receiving subtask and sends full batches.
// Watermarks, barriers and end of input go to every channel, after the
// records buffered before them.
type writer[T any] struct {
	mode   Partitioning
	outs   []*inChannel
	bufs   []*Batch[T]
	pool   *batchPool[T]
	size   int
	hash   func(T) uint64
	maxP   int
	rr     int
	idle   bool
	closed bool
	// before, for records that carry a change kind, reports a -U: a batch
	// never ends with one, and rebalancing sends the record after it to the
	// same subtask (see UpdateBeforeOf).
	before func(T) bool
	// task measures the time spent waiting for room in a full channel
	// (nil: not measured).
	task *TaskMetrics
}

func newWriter[T any](mode Partitioning, outs []*inChannel, pool *batchPool[T], size int, hash func(T) uint64, maxP int, task *TaskMetrics) *writer[T] {
	w := &writer[T]{mode: mode, outs: outs, pool: pool, size: size, hash: hash, maxP: maxP, before: UpdateBeforeOf[T](), task: task}
	w.bufs = make([]*Batch[T], len(outs))
	for i := range w.bufs {
		w.bufs[i] = pool.get()
	}
	return w
}

func (w *writer[T]) ProcessBatch(b *Batch[T]) error {
	if w.idle {
		if err := w.setIdle(false); err != nil {
			return err
		}
	}
	switch w.mode {
	case Forward:
		return w.appendAll(0, b)
	case Broadcast:
		for t := range w.outs {
			if err := w.appendAll(t, b); err != nil {
				return err
			}
		}
		return nil
	case Rebalance:
		n := len(w.outs)
		for i, v := range b.Data {
			t := w.rr
			half := w.before != nil && w.before(v)
			if !half {
				w.rr++
				if w.rr == n {
					w.rr = 0
				}
			}
			buf := w.bufs[t]
			buf.Data = append(buf.Data, v)
			buf.TS = append(buf.TS, b.TS[i])
			if len(buf.Data) >= w.size && !half {
				if err := w.send(t); err != nil {
					return err
				}
			}
		}
		return nil
	default: // Hash
		// The key group goes with the record, so that the receiving keyed
		// operator does not hash the key again.
		n, maxP := len(w.outs), w.maxP
		for i, v := range b.Data {
			kg := state.KeyGroupOf(w.hash(v), maxP)
			t := state.SubtaskOf(kg, n, maxP)
			buf := w.bufs[t]
			buf.Data = append(buf.Data, v)
			buf.TS = append(buf.TS, b.TS[i])
			buf.KG = append(buf.KG, uint16(kg))
			if len(buf.Data) >= w.size && (w.before == nil || !w.before(v)) {
				if err := w.send(t); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// appendAll copies all of b into the batch for target t.
func (w *writer[T]) appendAll(t int, b *Batch[T]) error {
	data, ts := b.Data, b.TS
	for len(data) > 0 {
		buf := w.bufs[t]
		// At least one record: a full batch that ends with a -U waits for
		// the +U.
		n := min(max(w.size-len(buf.Data), 1), len(data))
		if w.before != nil && n < len(data) && w.before(data[n-1]) {
			n++ // the +U after a -U goes in the same batch
		}
		buf.Data = append(buf.Data, data[:n]...)
		buf.TS = append(buf.TS, ts[:n]...)
		data, ts = data[n:], ts[n:]
		if len(buf.Data) >= w.size && (w.before == nil || !w.before(buf.Data[len(buf.Data)-1])) {
			if err := w.send(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// send sends the batch of target t and starts a new one.
func (w *writer[T]) send(t int) error {
	b := w.bufs[t]
	w.bufs[t] = w.pool.get()
	return w.outs[t].send(message{kind: msgData, payload: b}, w.task)
}

func (w *writer[T]) flush() error {
	for t, b := range w.bufs {
		if len(b.Data) > 0 {
			if err := w.send(t); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *writer[T]) control(m message) error {
	if err := w.flush(); err != nil {
		return err
	}
	for _, o := range w.outs {
		if err := o.send(m, w.task); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer[T]) ProcessWatermark(wm int64) error {
	return w.control(message{kind: msgWatermark, val: wm})
}

func (w *writer[T]) EndInput() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.control(message{kind: msgEnd})
}

func (w *writer[T]) setIdle(idle bool) error {
	if idle == w.idle || w.closed {
		return nil
	}
	w.idle = idle
	kind := msgActive
	if idle {
		kind = msgIdle
	}
	return w.control(message{kind: kind})
}

func (w *writer[T]) broadcastBarrier(id int64) error {
	return w.control(message{kind: msgBarrier, val: id})
}

package eddy

import (
	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// ProcessFunction handles the records of a stream one at a time with full
// access to timestamps, the watermark and side outputs. It may also
// implement Open(*ProcessContext[O]) error, Close() error, and, as a
// KeyedProcessFunction may, PrepareSnapshot(ctx *ProcessContext[O],
// checkpointID int64) error (what it emits goes downstream ahead of the
// checkpoint's barrier) and EndInput(ctx *ProcessContext[O]) error.
type ProcessFunction[T, O any] interface {
	ProcessElement(ctx *ProcessContext[O], v T) error
}

// ProcessFunc adapts a function to a ProcessFunction.
type ProcessFunc[T, O any] func(ctx *ProcessContext[O], v T) error

// ProcessElement calls f.
func (f ProcessFunc[T, O]) ProcessElement(ctx *ProcessContext[O], v T) error { return f(ctx, v) }

// KeyedProcessFunction handles the records of a keyed stream with keyed
// state and timers. It may also implement
// Open(*KeyedContext[K, O]) error (declare state there),
// OnTimer(*KeyedContext[K, O], ts int64) error, Close() error, and the
// checkpoint hooks of a function that writes to the outside world:
//
//   - PrepareSnapshot(ctx *KeyedContext[K, O], checkpointID int64) error is
//     called when a checkpoint's barrier reaches the operator, before its
//     state is snapshotted; what it emits goes downstream ahead of the
//     barrier, so it belongs to the checkpoint (Flink's
//     prepareSnapshotPreBarrier).
//   - NotifyCheckpointComplete(ctx *KeyedContext[K, O], checkpointID int64)
//     error is called when a checkpoint completes; the call may be lost
//     in a failure.
//   - EndInput(ctx *KeyedContext[K, O]) error is called once when the
//     input ends, before the outputs end, to emit what the function still
//     holds. A function with PrepareSnapshot and no EndInput has
//     PrepareSnapshot called there instead, with checkpoint id 0. No hook
//     is called after it.
//
// What the hooks emit carries no timestamp. There is no current key in
// any of them: they must not use keyed state.
type KeyedProcessFunction[K comparable, T, O any] interface {
	ProcessElement(ctx *KeyedContext[K, O], v T) error
}

type opener[C any] interface{ Open(C) error }
type snapshotPreparer[C any] interface {
	PrepareSnapshot(ctx C, checkpointID int64) error
}
type checkpointNotified[C any] interface {
	NotifyCheckpointComplete(ctx C, checkpointID int64) error
}
type inputEnder[C any] interface{ EndInput(ctx C) error }
type closer interface{ Close() error }
type timerHandler[C any] interface {
	OnTimer(ctx C, ts int64) error
}

// Process applies a process function to every record. newFn is called once
// per parallel subtask, so each has its own function value.
func Process[T, O any](s *Stream[T], newFn func() ProcessFunction[T, O]) *Stream[O] {
	return oneInput[T, O](s, "Process", func(ctx *runtime.Context, outs map[string]any) (runtime.Input[T], error) {
		return ops.NewProcess(ctx, processLogic(newFn()), outs)
	})
}

func processLogic[T, O any](fn ProcessFunction[T, O]) ops.ProcessLogic[T, O] {
	var pc *ProcessContext[O]
	l := ops.ProcessLogic[T, O]{Process: func(c *ops.ProcessContext[O], v T) error {
		return fn.ProcessElement(processContext(&pc, c), v)
	}}
	if o, ok := fn.(opener[*ProcessContext[O]]); ok {
		l.Open = func(c *ops.ProcessContext[O]) error { return o.Open(processContext(&pc, c)) }
	}
	if c, ok := fn.(closer); ok {
		l.Close = c.Close
	}
	if p, ok := fn.(snapshotPreparer[*ProcessContext[O]]); ok {
		l.PrepareSnapshot = func(c *ops.ProcessContext[O], id int64) error {
			return p.PrepareSnapshot(processContext(&pc, c), id)
		}
	}
	if e, ok := fn.(inputEnder[*ProcessContext[O]]); ok {
		l.OnEnd = func(c *ops.ProcessContext[O]) error { return e.EndInput(processContext(&pc, c)) }
	}
	return l
}

// ProcessKeyed applies a keyed process function to every record, with
// state and timers scoped to the record's key. newFn is called once per
// parallel subtask.
func ProcessKeyed[K comparable, T, O any](k *KeyedStream[K, T], newFn func() KeyedProcessFunction[K, T, O]) *Stream[O] {
	env := k.s.env
	return keyedNode[K, T, O](k, "KeyedProcess", func(ctx *runtime.Context, outs map[string]any) (runtime.Input[T], error) {
		return ops.NewKeyedProcess(ctx, k.spec, env.backendFactory(), keyedLogic(newFn()), outs)
	})
}

func keyedLogic[K comparable, T, O any](fn KeyedProcessFunction[K, T, O]) ops.KeyedProcessLogic[K, T, O] {
	var kc *KeyedContext[K, O]
	l := ops.KeyedProcessLogic[K, T, O]{Process: func(c *ops.KeyedContext[K, O], v T) error {
		return fn.ProcessElement(keyedContext(&kc, c), v)
	}}
	if o, ok := fn.(opener[*KeyedContext[K, O]]); ok {
		l.Open = func(c *ops.KeyedContext[K, O]) error { return o.Open(keyedContext(&kc, c)) }
	}
	if t, ok := fn.(timerHandler[*KeyedContext[K, O]]); ok {
		l.OnTimer = func(c *ops.KeyedContext[K, O], ts int64) error { return t.OnTimer(keyedContext(&kc, c), ts) }
	}
	if p, ok := fn.(snapshotPreparer[*KeyedContext[K, O]]); ok {
		l.PrepareSnapshot = func(c *ops.KeyedContext[K, O], id int64) error {
			return p.PrepareSnapshot(keyedContext(&kc, c), id)
		}
	}
	if n, ok := fn.(checkpointNotified[*KeyedContext[K, O]]); ok {
		l.NotifyCheckpointComplete = func(c *ops.KeyedContext[K, O], id int64) error {
			return n.NotifyCheckpointComplete(keyedContext(&kc, c), id)
		}
	}
	if e, ok := fn.(inputEnder[*KeyedContext[K, O]]); ok {
		l.OnEnd = func(c *ops.KeyedContext[K, O]) error { return e.EndInput(keyedContext(&kc, c)) }
	}
	if c, ok := fn.(closer); ok {
		l.Close = c.Close
	}
	return l
}

package eddy

import (
	"fmt"

	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// Connected is two streams of possibly different types processed together
// by one operator that can share state between them.
type Connected[A, B any] struct {
	a *Stream[A]
	b *Stream[B]
}

// Connect connects two streams for CoProcess.
func Connect[A, B any](a *Stream[A], b *Stream[B]) *Connected[A, B] {
	return &Connected[A, B]{a: a, b: b}
}

// CoProcessFunction handles the records of two connected streams. It may
// also implement Open(*ProcessContext[O]) error and Close() error.
type CoProcessFunction[A, B, O any] interface {
	ProcessElement1(ctx *ProcessContext[O], v A) error
	ProcessElement2(ctx *ProcessContext[O], v B) error
}

// CoProcess applies a co-process function to two connected streams. The
// operator's watermark is the minimum of both inputs'. newFn is called once
// per parallel subtask.
func CoProcess[A, B, O any](c *Connected[A, B], newFn func() CoProcessFunction[A, B, O]) *Stream[O] {
	env := c.a.env
	n := newNode[O](env, "CoProcess", runtime.NewInType[A](), runtime.NewInType[B]())
	n.Build = func(ctx *runtime.Context, outs map[string]any) (*runtime.Built, error) {
		fn := newFn()
		var pc *ProcessContext[O]
		l := ops.ProcessLogic[ops.Either[A, B], O]{Process: func(c *ops.ProcessContext[O], e ops.Either[A, B]) error {
			if e.IsRight {
				return fn.ProcessElement2(processContext(&pc, c), e.Right)
			}
			return fn.ProcessElement1(processContext(&pc, c), e.Left)
		}}
		if o, ok := fn.(opener[*ProcessContext[O]]); ok {
			l.Open = func(c *ops.ProcessContext[O]) error { return o.Open(processContext(&pc, c)) }
		}
		if cl, ok := fn.(closer); ok {
			l.Close = cl.Close
		}
		p, err := ops.NewProcess(ctx, l, outs)
		if err != nil {
			return nil, err
		}
		return ops.TwoInputs[A, B](p), nil
	}
	c.a.connect(n, 0)
	c.b.connect(n, 1)
	return &Stream[O]{env: env, node: n}
}

// ConnectedKeyed is two keyed streams with the same key type, processed
// together with state and timers per key.
type ConnectedKeyed[K comparable, A, B any] struct {
	a *KeyedStream[K, A]
	b *KeyedStream[K, B]
}

// ConnectKeyed connects two keyed streams for CoProcessKeyed and joins.
func ConnectKeyed[K comparable, A, B any](a *KeyedStream[K, A], b *KeyedStream[K, B]) *ConnectedKeyed[K, A, B] {
	return &ConnectedKeyed[K, A, B]{a: a, b: b}
}

// KeyedCoProcessFunction handles the records of two connected keyed streams
// with keyed state and timers shared by both inputs. It may also implement
// Open(*KeyedContext[K, O]) error, OnTimer(*KeyedContext[K, O], ts int64)
// error and Close() error.
type KeyedCoProcessFunction[K comparable, A, B, O any] interface {
	ProcessElement1(ctx *KeyedContext[K, O], v A) error
	ProcessElement2(ctx *KeyedContext[K, O], v B) error
}

// twoKeyed adds a keyed two-input operator over c that runs a keyed
// one-input operator on Either.
func twoKeyed[K comparable, A, B, O any](c *ConnectedKeyed[K, A, B], name string, build func(ctx *runtime.Context, spec ops.KeySpec[K, ops.Either[A, B]], outs map[string]any) (runtime.Input[ops.Either[A, B]], error)) *Stream[O] {
	env := c.a.s.env
	if c.b.s.env != env {
		panic("eddy: connecting streams of different environments")
	}
	n := newNode[O](env, name, runtime.NewInType[A](), runtime.NewInType[B]())
	spec := ops.EitherKeySpec(c.a.spec, c.b.spec)
	n.Build = func(ctx *runtime.Context, outs map[string]any) (*runtime.Built, error) {
		in, err := build(ctx, spec, outs)
		if err != nil {
			return nil, err
		}
		return ops.TwoInputs[A, B](in), nil
	}
	c.a.connect(n, 0)
	c.b.connect(n, 1)
	return &Stream[O]{env: env, node: n}
}

// CoProcessKeyed applies a keyed co-process function to two connected
// keyed streams. newFn is called once per parallel subtask.
func CoProcessKeyed[K comparable, A, B, O any](c *ConnectedKeyed[K, A, B], newFn func() KeyedCoProcessFunction[K, A, B, O]) *Stream[O] {
	env := c.a.s.env
	return twoKeyed[K, A, B, O](c, "KeyedCoProcess", func(ctx *runtime.Context, spec ops.KeySpec[K, ops.Either[A, B]], outs map[string]any) (runtime.Input[ops.Either[A, B]], error) {
		fn := newFn()
		var kc *KeyedContext[K, O]
		l := ops.KeyedProcessLogic[K, ops.Either[A, B], O]{Process: func(c *ops.KeyedContext[K, O], e ops.Either[A, B]) error {
			if e.IsRight {
				return fn.ProcessElement2(keyedContext(&kc, c), e.Right)
			}
			return fn.ProcessElement1(keyedContext(&kc, c), e.Left)
		}}
		if o, ok := fn.(opener[*KeyedContext[K, O]]); ok {
			l.Open = func(c *ops.KeyedContext[K, O]) error { return o.Open(keyedContext(&kc, c)) }
		}
		if t, ok := fn.(timerHandler[*KeyedContext[K, O]]); ok {
			l.OnTimer = func(c *ops.KeyedContext[K, O], ts int64) error { return t.OnTimer(keyedContext(&kc, c), ts) }
		}
		if cl, ok := fn.(closer); ok {
			l.Close = cl.Close
		}
		return ops.NewKeyedProcess(ctx, spec, env.backendFactory(), l, outs)
	})
}

func errf(format string, args ...any) error { return fmt.Errorf("eddy: "+format, args...) }

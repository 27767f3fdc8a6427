package eddy

import (
	"io"
	"time"

	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// SplitReader reads the splits of one source subtask; see FromReader.
type SplitReader[T any] = ops.SplitReader[T]

// SourceOutput is where a SplitReader emits records.
type SourceOutput[T any] = ops.SourceOutput[T]

// FromReader adds a source whose subtask i reads with the reader newReader
// returns for (i, parallelism). It is the general form of the built-in
// sources.
func FromReader[T any](env *Environment, name string, ws WatermarkStrategy[T], newReader func(subtask, parallelism int) (SplitReader[T], error)) *Stream[T] {
	n := newNode[T](env, "Source: "+name)
	wm := ws.internal()
	n.Source = func(ctx *runtime.Context, outs map[string]any) (runtime.SourceDriver, error) {
		r, err := newReader(ctx.Subtask, ctx.Parallelism)
		if err != nil {
			return nil, err
		}
		return ops.NewSourceDriver(ctx, r, wm, outs, env.cfg.BatchSize), nil
	}
	return &Stream[T]{env: env, node: n}
}

// FromSlice adds a bounded source emitting the values of data. With
// parallelism p, subtask i emits the i-th of p contiguous parts, so records
// keep their order within a part.
func FromSlice[T any](env *Environment, data []T, ws WatermarkStrategy[T]) *Stream[T] {
	return FromReader(env, "Slice", ws, func(i, p int) (SplitReader[T], error) {
		lo, hi := len(data)*i/p, len(data)*(i+1)/p
		return &sliceReader[T]{data: data[lo:hi], split: i}, nil
	})
}

type sliceReader[T any] struct {
	data  []T
	pos   int
	split int
}

func (r *sliceReader[T]) Read(out *SourceOutput[T]) error {
	if r.pos == 0 {
		out.AddSplit(r.split)
	}
	n := min(out.Room(), len(r.data)-r.pos)
	for _, v := range r.data[r.pos : r.pos+n] {
		out.Emit(r.split, v)
	}
	r.pos += n
	if r.pos == len(r.data) {
		out.FinishSplit(r.split)
		return io.EOF
	}
	return nil
}

func (r *sliceReader[T]) Close() error { return nil }

// GeneratorOptions configures FromGenerator.
type GeneratorOptions struct {
	// Count is the number of records; a negative count generates forever.
	Count int64
	// RatePerSecond limits the records per second over all subtasks; 0
	// means as fast as possible.
	RatePerSecond float64
}

// FromGenerator adds a source that emits fn(0), fn(1), … up to
// opts.Count records. Subtask i of p generates the indices i, i+p, i+2p, …,
// so each subtask's indices increase.
func FromGenerator[T any](env *Environment, opts GeneratorOptions, fn func(i int64) T, ws WatermarkStrategy[T]) *Stream[T] {
	return FromReader(env, "Generator", ws, func(i, p int) (SplitReader[T], error) {
		return &generatorReader[T]{fn: fn, next: int64(i), step: int64(p), count: opts.Count, rate: opts.RatePerSecond / float64(p), split: i}, nil
	})
}

type generatorReader[T any] struct {
	fn          func(int64) T
	next, step  int64
	count       int64
	rate        float64
	split       int
	started     time.Time
	emitted     int64
	initialised bool
}

func (r *generatorReader[T]) Read(out *SourceOutput[T]) error {
	if !r.initialised {
		r.initialised = true
		r.started = time.Now()
		out.AddSplit(r.split)
	}
	room := out.Room()
	if r.rate > 0 {
		allowed := int64(time.Since(r.started).Seconds()*r.rate) - r.emitted
		if allowed <= 0 {
			time.Sleep(time.Millisecond)
			return nil
		}
		room = int(min(int64(room), allowed))
	}
	for ; room > 0; room-- {
		if r.count >= 0 && r.next >= r.count {
			out.FinishSplit(r.split)
			return io.EOF
		}
		out.Emit(r.split, r.fn(r.next))
		r.next += r.step
		r.emitted++
	}
	if r.count >= 0 && r.next >= r.count {
		out.FinishSplit(r.split)
		return io.EOF
	}
	return nil
}

func (r *generatorReader[T]) Close() error { return nil }

package eddy

import (
	"fmt"
	"io"
	"time"

	"github.com/eddystream/eddy/internal/ops"
	"github.com/eddystream/eddy/internal/runtime"
)

// SplitReader reads the splits of one source subtask; see FromReader.
type SplitReader[T any] = ops.SplitReader[T]

// SourceOutput is where a SplitReader emits records.
type SourceOutput[T any] = ops.SourceOutput[T]

// SplitSource is a source whose input is divided into splits whose
// positions are checkpointed; see FromSource.
type SplitSource[T any] = ops.SplitSource[T]

// CheckpointedReader reads the splits of one source subtask and reports
// their positions for checkpoints.
type CheckpointedReader[T any] = ops.CheckpointedReader[T]

// FromSource adds a source reading src. Its splits are enumerated when the
// job first starts, dealt round-robin to the subtasks, and checkpointed with
// their positions, so a restored job resumes each split where its checkpoint
// left it, with any parallelism.
func FromSource[T any](env *Environment, name string, src SplitSource[T], ws WatermarkStrategy[T]) *Stream[T] {
	n := newNode[T](env, "Source: "+name)
	wm := ws.internal()
	n.Source = func(ctx *runtime.Context, outs map[string]any) (runtime.SourceDriver, error) {
		return ops.NewSplitSourceDriver(ctx, src, wm, outs, env.cfg.BatchSize)
	}
	return &Stream[T]{env: env, node: n}
}

// FromReader adds a source whose subtask i reads with the reader newReader
// returns for (i, parallelism). Its position is not checkpointed, so a job
// that takes checkpoints refuses it; use FromSource for such jobs.
func FromReader[T any](env *Environment, name string, ws WatermarkStrategy[T], newReader func(subtask, parallelism int) (SplitReader[T], error)) *Stream[T] {
	n := newNode[T](env, "Source: "+name)
	wm := ws.internal()
	n.Source = func(ctx *runtime.Context, outs map[string]any) (runtime.SourceDriver, error) {
		if ctx.Checkpointing {
			return nil, fmt.Errorf("source %q cannot be checkpointed (it was made with FromReader); make it a SplitSource and use FromSource, or run without checkpoints", name)
		}
		r, err := newReader(ctx.Subtask, ctx.Parallelism)
		if err != nil {
			return nil, err
		}
		return ops.NewSourceDriver(ctx, r, wm, outs, env.cfg.BatchSize), nil
	}
	return &Stream[T]{env: env, node: n}
}

// FromSlice adds a bounded source emitting the values of data. On a first
// start with parallelism p it cuts data into p contiguous splits, so records
// keep their order within a split.
func FromSlice[T any](env *Environment, data []T, ws WatermarkStrategy[T]) *Stream[T] {
	return FromSource[T](env, "Slice", &sliceSource[T]{data: data}, ws)
}

type sliceSource[T any] struct{ data []T }

// A slice split is (number, start, end, position).
func (s *sliceSource[T]) Splits(p int) ([][]byte, error) {
	var out [][]byte
	for i := 0; i < p; i++ {
		lo, hi := int64(len(s.data)*i/p), int64(len(s.data)*(i+1)/p)
		out = append(out, ops.EncodeSplit("", int64(i), lo, hi, lo))
	}
	return out, nil
}

func (s *sliceSource[T]) NewReader(_ *runtime.Context, splits [][]byte) (CheckpointedReader[T], error) {
	r := &sliceReader[T]{data: s.data}
	for _, b := range splits {
		v, _, err := ops.DecodeSplit(b, 4)
		if err != nil {
			return nil, fmt.Errorf("slice source: %w", err)
		}
		if v[3] > int64(len(s.data)) || v[2] > int64(len(s.data)) {
			return nil, fmt.Errorf("slice source: split [%d,%d) does not fit a slice of %d values; the job's input changed since the checkpoint", v[1], v[2], len(s.data))
		}
		r.splits = append(r.splits, sliceSplit{num: int(v[0]), lo: v[1], hi: v[2], pos: v[3]})
	}
	return r, nil
}

type sliceSplit struct {
	num         int
	lo, hi, pos int64
	announced   bool
}

type sliceReader[T any] struct {
	data   []T
	splits []sliceSplit
	cur    int
}

func (r *sliceReader[T]) Read(out *SourceOutput[T]) error {
	for i := range r.splits {
		if sp := &r.splits[i]; !sp.announced {
			sp.announced = true
			out.AddSplit(sp.num)
		}
	}
	for r.cur < len(r.splits) && !out.Full() {
		sp := &r.splits[r.cur]
		n := min(int64(out.Room()), sp.hi-sp.pos)
		for _, v := range r.data[sp.pos : sp.pos+n] {
			out.Emit(sp.num, v)
		}
		sp.pos += n
		if sp.pos == sp.hi {
			out.FinishSplit(sp.num)
			r.cur++
		}
	}
	if r.cur == len(r.splits) {
		return io.EOF
	}
	return nil
}

func (r *sliceReader[T]) SnapshotSplits() ([][]byte, error) {
	var out [][]byte
	for _, sp := range r.splits[r.cur:] {
		out = append(out, ops.EncodeSplit("", int64(sp.num), sp.lo, sp.hi, sp.pos))
	}
	return out, nil
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
// opts.Count records. On a first start with parallelism p it has p splits;
// split j generates the indices j, j+p, j+2p, …, so each split's indices
// increase. fn must be deterministic for checkpoints to replay the same
// records.
func FromGenerator[T any](env *Environment, opts GeneratorOptions, fn func(i int64) T, ws WatermarkStrategy[T]) *Stream[T] {
	return FromSource[T](env, "Generator", &generatorSource[T]{fn: fn, opts: opts}, ws)
}

type generatorSource[T any] struct {
	fn   func(int64) T
	opts GeneratorOptions
}

// A generator split is (number, step, next index).
func (g *generatorSource[T]) Splits(p int) ([][]byte, error) {
	var out [][]byte
	for j := 0; j < p; j++ {
		out = append(out, ops.EncodeSplit("", int64(j), int64(p), int64(j)))
	}
	return out, nil
}

func (g *generatorSource[T]) NewReader(ctx *runtime.Context, splits [][]byte) (CheckpointedReader[T], error) {
	r := &generatorReader[T]{fn: g.fn, count: g.opts.Count}
	if g.opts.RatePerSecond > 0 {
		r.rate = g.opts.RatePerSecond / float64(ctx.Parallelism)
	}
	for _, b := range splits {
		v, _, err := ops.DecodeSplit(b, 3)
		if err != nil {
			return nil, fmt.Errorf("generator source: %w", err)
		}
		r.splits = append(r.splits, genSplit{num: int(v[0]), step: v[1], next: v[2]})
	}
	return r, nil
}

type genSplit struct {
	num        int
	step, next int64
	done       bool
}

type generatorReader[T any] struct {
	fn          func(int64) T
	count       int64
	rate        float64
	splits      []genSplit
	started     time.Time
	emitted     int64
	initialised bool
	rr          int
}

func (r *generatorReader[T]) Read(out *SourceOutput[T]) error {
	if !r.initialised {
		r.initialised = true
		r.started = time.Now()
		for _, sp := range r.splits {
			out.AddSplit(sp.num)
		}
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
	live := 0
	for i := range r.splits {
		sp := &r.splits[i]
		if sp.done {
			continue
		}
		live++
	}
	if live == 0 {
		return io.EOF
	}
	// Split the room among the live splits so they advance together.
	share := max(room/live, 1)
	for i := range r.splits {
		sp := &r.splits[i]
		if sp.done {
			continue
		}
		for k := 0; k < share && !out.Full(); k++ {
			if r.count >= 0 && sp.next >= r.count {
				break
			}
			out.Emit(sp.num, r.fn(sp.next))
			sp.next += sp.step
			r.emitted++
		}
		if r.count >= 0 && sp.next >= r.count {
			sp.done = true
			out.FinishSplit(sp.num)
		}
	}
	return nil
}

func (r *generatorReader[T]) SnapshotSplits() ([][]byte, error) {
	var out [][]byte
	for _, sp := range r.splits {
		if !sp.done {
			out = append(out, ops.EncodeSplit("", int64(sp.num), sp.step, sp.next))
		}
	}
	return out, nil
}

func (r *generatorReader[T]) Close() error { return nil }

package ops

import "github.com/eddystream/eddy/internal/runtime"

// forward passes watermarks and end of input to an output; operators embed
// it when they do not act on either.
type forward[O any] struct {
	out runtime.Input[O]
}

func (f *forward[O]) ProcessWatermark(wm int64) error { return f.out.ProcessWatermark(wm) }
func (f *forward[O]) EndInput() error                 { return f.out.EndInput() }

// Map applies a function to every record.
type Map[I, O any] struct {
	forward[O]
	fn  func(I) O
	buf *runtime.Batch[O]
	// copies says that no record fn returns shares memory with its input.
	copies bool
	// rewind, if set, is called once the operators of the output have
	// taken a batch: the records fn returned are no longer read, and fn
	// may write the next ones into their memory.
	rewind func()
}

// NewMap returns a map operator writing to out.
func NewMap[I, O any](fn func(I) O, out runtime.Input[O]) *Map[I, O] {
	return &Map[I, O]{forward: forward[O]{out}, fn: fn, buf: runtime.NewBatch[O](0)}
}

// NewCopyingMap returns a map operator writing to out whose function
// copies what it keeps of its input: no record fn returns shares memory
// with the record it was given.
func NewCopyingMap[I, O any](fn func(I) O, out runtime.Input[O]) *Map[I, O] {
	m := NewMap(fn, out)
	m.copies = true
	return m
}

// NewReusingMap is NewCopyingMap for a function writing its records into
// memory that rewind hands out again: the map calls rewind after each
// batch has gone to out, whose operators must keep nothing of it
// (runtime.Context.RecordsReused).
func NewReusingMap[I, O any](fn func(I) O, rewind func(), out runtime.Input[O]) *Map[I, O] {
	m := NewCopyingMap(fn, out)
	m.rewind = rewind
	return m
}

// RetainsNoInput implements runtime.InputRetainer: a map whose function
// copies keeps nothing of its input.
func (m *Map[I, O]) RetainsNoInput() bool { return m.copies }

// ProcessBatch maps every record; timestamps are kept.
func (m *Map[I, O]) ProcessBatch(b *runtime.Batch[I]) error {
	buf := m.buf
	buf.Data = buf.Data[:0]
	for _, v := range b.Data {
		buf.Data = append(buf.Data, m.fn(v))
	}
	buf.TS = append(buf.TS[:0], b.TS...)
	err := m.out.ProcessBatch(buf)
	clear(buf.Data)
	if m.rewind != nil && err == nil {
		m.rewind()
	}
	return err
}

// TryMap applies a function that can fail to every record; a failure fails
// the job.
type TryMap[I, O any] struct {
	forward[O]
	fn  func(I) (O, error)
	buf *runtime.Batch[O]
}

// NewTryMap returns a fallible map operator writing to out.
func NewTryMap[I, O any](fn func(I) (O, error), out runtime.Input[O]) *TryMap[I, O] {
	return &TryMap[I, O]{forward: forward[O]{out}, fn: fn, buf: runtime.NewBatch[O](0)}
}

// ProcessBatch maps every record, stopping at the first error.
func (m *TryMap[I, O]) ProcessBatch(b *runtime.Batch[I]) error {
	buf := m.buf
	buf.Data = buf.Data[:0]
	for _, v := range b.Data {
		o, err := m.fn(v)
		if err != nil {
			return err
		}
		buf.Data = append(buf.Data, o)
	}
	buf.TS = append(buf.TS[:0], b.TS...)
	err := m.out.ProcessBatch(buf)
	clear(buf.Data)
	return err
}

// Filter keeps the records a predicate accepts.
type Filter[T any] struct {
	forward[T]
	pred func(T) bool
	buf  *runtime.Batch[T]
}

// NewFilter returns a filter operator writing to out.
func NewFilter[T any](pred func(T) bool, out runtime.Input[T]) *Filter[T] {
	return &Filter[T]{forward: forward[T]{out}, pred: pred, buf: runtime.NewBatch[T](0)}
}

// ProcessBatch forwards the accepted records of b.
func (f *Filter[T]) ProcessBatch(b *runtime.Batch[T]) error {
	buf := f.buf
	buf.Data, buf.TS = buf.Data[:0], buf.TS[:0]
	for i, v := range b.Data {
		if f.pred(v) {
			buf.Data = append(buf.Data, v)
			buf.TS = append(buf.TS, b.TS[i])
		}
	}
	if len(buf.Data) == 0 {
		return nil
	}
	err := f.out.ProcessBatch(buf)
	clear(buf.Data)
	return err
}

// FlatMap turns every record into zero or more records.
type FlatMap[I, O any] struct {
	forward[O]
	fn   func(I, func(O))
	buf  *runtime.Batch[O]
	ts   int64
	emit func(O)
}

// NewFlatMap returns a flat-map operator writing to out. fn calls emit for
// every record it produces; emitted records take the input's timestamp.
func NewFlatMap[I, O any](fn func(v I, emit func(O)), out runtime.Input[O]) *FlatMap[I, O] {
	m := &FlatMap[I, O]{forward: forward[O]{out}, fn: fn, buf: runtime.NewBatch[O](0)}
	m.emit = func(o O) {
		m.buf.Data = append(m.buf.Data, o)
		m.buf.TS = append(m.buf.TS, m.ts)
	}
	return m
}

// ProcessBatch applies fn to every record of b.
func (m *FlatMap[I, O]) ProcessBatch(b *runtime.Batch[I]) error {
	m.buf.Data, m.buf.TS = m.buf.Data[:0], m.buf.TS[:0]
	for i, v := range b.Data {
		m.ts = b.TS[i]
		m.fn(v, m.emit)
	}
	if len(m.buf.Data) == 0 {
		return nil
	}
	err := m.out.ProcessBatch(m.buf)
	clear(m.buf.Data)
	return err
}

// Sink hands every record to a function; it is the end of a pipeline.
type Sink[T any] struct {
	fn    func(v T, ts int64) error
	flush func() error
	close func() error
}

// NewSink returns a sink calling fn per record, flush at end of input (may
// be nil) and close when the subtask ends (may be nil).
func NewSink[T any](fn func(v T, ts int64) error, flush, close func() error) *Sink[T] {
	return &Sink[T]{fn: fn, flush: flush, close: close}
}

// ProcessBatch hands every record to the sink function.
func (s *Sink[T]) ProcessBatch(b *runtime.Batch[T]) error {
	for i, v := range b.Data {
		if err := s.fn(v, b.TS[i]); err != nil {
			return err
		}
	}
	return nil
}

// ProcessWatermark does nothing: a sink has no output.
func (s *Sink[T]) ProcessWatermark(int64) error { return nil }

// EndInput flushes the sink.
func (s *Sink[T]) EndInput() error {
	if s.flush != nil {
		return s.flush()
	}
	return nil
}

// Close closes the sink.
func (s *Sink[T]) Close() error {
	if s.close != nil {
		return s.close()
	}
	return nil
}

// BatchSink hands whole batches to a function, for sinks that write in bulk.
type BatchSink[T any] struct {
	Sink[T]
	batch func(b *runtime.Batch[T]) error
}

// NewBatchSink returns a sink that calls fn once per batch.
func NewBatchSink[T any](fn func(b *runtime.Batch[T]) error, flush, close func() error) *BatchSink[T] {
	return &BatchSink[T]{Sink: Sink[T]{flush: flush, close: close}, batch: fn}
}

// ProcessBatch hands b to the sink function.
func (s *BatchSink[T]) ProcessBatch(b *runtime.Batch[T]) error { return s.batch(b) }

// Union forwards the records of several inputs of the same type.
type Union[T any] struct {
	forward[T]
}

// NewUnion returns an identity operator writing to out.
func NewUnion[T any](out runtime.Input[T]) *Union[T] { return &Union[T]{forward[T]{out}} }

// ProcessBatch forwards b.
func (u *Union[T]) ProcessBatch(b *runtime.Batch[T]) error { return u.out.ProcessBatch(b) }

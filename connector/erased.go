package connector

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
)

// The adapters in this file turn the Source[any], Sink[any], Decoder[any]
// and Encoder[any] that reflective factories make into typed ones.

// unbox returns v as a T, or panics naming both types: a factory that made
// values of another type than it was asked for is broken.
func unbox[T any](v any) T {
	t, ok := v.(T)
	if !ok {
		var zero T
		panic(fmt.Errorf("connector: a factory made a %T where a %T was asked for", v, zero))
	}
	return t
}

func unboxSource[T any](s Source[any]) Source[T] { return unboxedSource[T]{s} }

type unboxedSource[T any] struct{ s Source[any] }

func (u unboxedSource[T]) NewEnumerator(ctx EnumeratorContext, restored []byte) (Enumerator, error) {
	return u.s.NewEnumerator(ctx, restored)
}

func (u unboxedSource[T]) NewReader(ctx ReaderContext) (Reader[T], error) {
	r, err := u.s.NewReader(ctx)
	if err != nil {
		return nil, err
	}
	ur := &unboxedReader[T]{r: r, outs: map[string]*unboxedSplit[T]{}}
	if sr, ok := r.(StatusReporter); ok {
		return statusUnboxedReader[T]{ur, sr}, nil
	}
	return ur, nil
}

// statusUnboxedReader is an unboxedReader whose reader reports its status.
type statusUnboxedReader[T any] struct {
	*unboxedReader[T]
	sr StatusReporter
}

func (u statusUnboxedReader[T]) Status() map[string]any { return u.sr.Status() }

// unboxedReader reads with a Reader[any] and emits its records as T.
type unboxedReader[T any] struct {
	r    Reader[any]
	out  Output[T]
	outs map[string]*unboxedSplit[T]
}

func (u *unboxedReader[T]) AddSplits(s []Split) error { return u.r.AddSplits(s) }
func (u *unboxedReader[T]) Close() error              { return u.r.Close() }
func (u *unboxedReader[T]) SnapshotState(id int64) ([]Split, error) {
	return u.r.SnapshotState(id)
}

func (u *unboxedReader[T]) Read(out Output[T]) error {
	u.out = out
	return u.r.Read(unboxedOutput[T]{u})
}

func (u *unboxedReader[T]) NoMoreSplits() {
	if h, ok := u.r.(NoMoreSplitsHandler); ok {
		h.NoMoreSplits()
	}
}

func (u *unboxedReader[T]) HandleEvent(e []byte) error {
	if h, ok := u.r.(ReaderEventHandler); ok {
		return h.HandleEvent(e)
	}
	return fmt.Errorf("the enumerator sent an event but the %T reader handles none", u.r)
}

func (u *unboxedReader[T]) NotifyCheckpointComplete(id int64) error {
	return NotifyIfListening(u.r, id)
}

type unboxedOutput[T any] struct{ u *unboxedReader[T] }

func (o unboxedOutput[T]) Room() int                    { return o.u.out.Room() }
func (o unboxedOutput[T]) BadRecord(d DeadLetter) error { return o.u.out.BadRecord(d) }
func (o unboxedOutput[T]) Split(id string) SplitOutput[any] {
	s := o.u.outs[id]
	if s == nil {
		s = &unboxedSplit[T]{u: o.u, id: id}
		o.u.outs[id] = s
	}
	return s
}

type unboxedSplit[T any] struct {
	u  *unboxedReader[T]
	id string
}

func (s *unboxedSplit[T]) target() SplitOutput[T] { return s.u.out.Split(s.id) }
func (s *unboxedSplit[T]) Emit(v any)             { s.target().Emit(unbox[T](v)) }
func (s *unboxedSplit[T]) EmitAt(v any, ts int64) { s.target().EmitAt(unbox[T](v), ts) }
func (s *unboxedSplit[T]) Finish() {
	delete(s.u.outs, s.id)
	s.target().Finish()
}

func boxSink[T any](s Sink[any]) Sink[T] {
	if ts, ok := s.(TransactionalSink[any]); ok {
		return boxedTxSink[T]{ts}
	}
	return boxedSink[T]{s}
}

type boxedSink[T any] struct{ s Sink[any] }

func (b boxedSink[T]) NewWriter(ctx WriterContext) (Writer[T], error) {
	w, err := b.s.NewWriter(ctx)
	if err != nil {
		return nil, err
	}
	return &boxedWriter[T]{w: w}, nil
}

func (b boxedSink[T]) ChangelogMode() changelog.Mode { return sinkMode(b.s) }

type boxedWriter[T any] struct {
	w   Writer[any]
	buf []any
}

func box[T any](buf []any, records []T) []any {
	buf = buf[:0]
	for _, r := range records {
		buf = append(buf, r)
	}
	return buf
}

func (b *boxedWriter[T]) Write(records []T, ts []int64) error {
	b.buf = box(b.buf, records)
	return b.w.Write(b.buf, ts)
}
func (b *boxedWriter[T]) Flush() error { return b.w.Flush() }
func (b *boxedWriter[T]) Close() error { return b.w.Close() }

// RetainsNoRecords implements NonRetainingWriter: the boxes of a batch are
// not read once Write returns, so the writer keeps what the one it boxes
// for keeps.
func (b *boxedWriter[T]) RetainsNoRecords() bool { return RetainsNoRecords(b.w) }

func (b *boxedWriter[T]) NotifyCheckpointComplete(id int64) error {
	return NotifyIfListening(b.w, id)
}

// ProcessWatermark passes the watermark on to the writer it boxes.
func (b *boxedWriter[T]) ProcessWatermark(wm int64) error { return PassWatermark(b.w, wm) }

type boxedTxSink[T any] struct{ s TransactionalSink[any] }

func (b boxedTxSink[T]) NewWriter(ctx WriterContext) (Writer[T], error) {
	return boxedSink[T]{b.s}.NewWriter(ctx)
}

func (b boxedTxSink[T]) ChangelogMode() changelog.Mode { return sinkMode(b.s) }

func (b boxedTxSink[T]) NewTransactionalWriter(ctx WriterContext) (TransactionalWriter[T], error) {
	w, err := b.s.NewTransactionalWriter(ctx)
	if err != nil {
		return nil, err
	}
	return &boxedTxWriter[T]{TransactionalWriter: w}, nil
}

type boxedTxWriter[T any] struct {
	TransactionalWriter[any]
	buf []any
}

func (b *boxedTxWriter[T]) Write(records []T, ts []int64) error {
	b.buf = box(b.buf, records)
	return b.TransactionalWriter.Write(b.buf, ts)
}

// RetainsNoRecords implements NonRetainingWriter, as boxedWriter's does.
func (b *boxedTxWriter[T]) RetainsNoRecords() bool { return RetainsNoRecords(b.TransactionalWriter) }

// NotifyCheckpointComplete passes the notification on: the embedded
// interface does not carry the method of the writer it holds.
func (b *boxedTxWriter[T]) NotifyCheckpointComplete(id int64) error {
	return NotifyIfListening(b.TransactionalWriter, id)
}

// ProcessWatermark passes the watermark on, as NotifyCheckpointComplete
// passes the notification.
func (b *boxedTxWriter[T]) ProcessWatermark(wm int64) error {
	return PassWatermark(b.TransactionalWriter, wm)
}

func unboxDecoder[T any](d Decoder[any]) Decoder[T] {
	return decoderFunc[T](func(data []byte, emit func(T)) error {
		return d.Decode(data, func(v any) { emit(unbox[T](v)) })
	})
}

type decoderFunc[T any] func(data []byte, emit func(T)) error

func (f decoderFunc[T]) Decode(data []byte, emit func(T)) error { return f(data, emit) }

func boxEncoder[T any](e Encoder[any]) Encoder[T] {
	return EncoderFunc[T](func(dst []byte, v T) ([]byte, error) { return e.Encode(dst, v) })
}

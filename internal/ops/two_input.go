package ops

import "github.com/eddystream/eddy/internal/runtime"

// Either holds a record of the first input (Left) or of the second
// (Right). Operators with two inputs run as one-input operators over Either:
// connected streams, co-process functions and joins.
type Either[A, B any] struct {
	Left    A
	Right   B
	IsRight bool
}

// eitherInput converts the batches of one input into batches of Either.
// The key groups a hash exchange sent with a batch (Batch.KG) go along, so
// that a keyed two-input operator does not hash the keys again: both
// inputs of a keyed two-input operator are routed by the same key rule
// (EitherKeySpec hashes both sides' keys with one hash).
type eitherInput[A, B, X any] struct {
	target runtime.Input[Either[A, B]]
	buf    *runtime.Batch[Either[A, B]]
	wrap   func(X) Either[A, B]
}

func (e *eitherInput[A, B, X]) ProcessBatch(b *runtime.Batch[X]) error {
	e.buf.Data = e.buf.Data[:0]
	for _, v := range b.Data {
		e.buf.Data = append(e.buf.Data, e.wrap(v))
	}
	e.buf.TS = append(e.buf.TS[:0], b.TS...)
	e.buf.KG = append(e.buf.KG[:0], b.KG...)
	err := e.target.ProcessBatch(e.buf)
	clear(e.buf.Data)
	return err
}

// Watermarks and end of input reach the target once, through the
// operator's Control, never through an input.
func (e *eitherInput[A, B, X]) ProcessWatermark(int64) error { return nil }
func (e *eitherInput[A, B, X]) EndInput() error              { return nil }

// TwoInputs returns the runtime parts of a two-input operator that runs as
// target over Either: the two typed inputs and the control.
func TwoInputs[A, B any](target runtime.Input[Either[A, B]]) *runtime.Built {
	left := &eitherInput[A, B, A]{target: target, buf: runtime.NewBatch[Either[A, B]](0),
		wrap: func(a A) Either[A, B] { return Either[A, B]{Left: a} }}
	right := &eitherInput[A, B, B]{target: target, buf: runtime.NewBatch[Either[A, B]](0),
		wrap: func(b B) Either[A, B] { return Either[A, B]{Right: b, IsRight: true} }}
	return &runtime.Built{Inputs: []any{runtime.Input[A](left), runtime.Input[B](right)}, Control: target}
}

// EitherKeySpec returns the key spec of Either records keyed by ka on the
// left and kb on the right.
func EitherKeySpec[K comparable, A, B any](ka KeySpec[K, A], kb KeySpec[K, B]) KeySpec[K, Either[A, B]] {
	fa, fb := ka.Key, kb.Key
	return KeySpec[K, Either[A, B]]{
		Key: func(e Either[A, B]) K {
			if e.IsRight {
				return fb(e.Right)
			}
			return fa(e.Left)
		},
		Hash:  ka.Hash,
		Codec: ka.Codec,
	}
}

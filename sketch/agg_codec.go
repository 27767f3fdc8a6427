package sketch

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"fmt"

	"github.com/eddystream/eddy/state"
)

// Binary is the constraint of BinaryCodec and BinaryValueCodec: a pointer
// to a type that marshals itself, as every synopsis of this package does.
type Binary[T any] interface {
	*T
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// BinaryCodec returns a state codec for pointers to T that stores each
// synopsis by its MarshalBinary encoding (version byte and type tag
// included), prefixed by its length. A nil pointer is encoded as an empty
// encoding and decoded as nil. With it a synopsis lives in keyed state and is
// checkpointed and restored exactly, random state included:
//
//	hll := state.NewValue(ctx.Store(), state.ValueDescriptor[*sketch.HyperLogLog]{
//		Name: "distinct", Codec: sketch.BinaryCodec[sketch.HyperLogLog]()})
//
// It also serves as the Codec of a state.AggregatingDescriptor whose
// function is one of this package's adapters. Append panics if MarshalBinary
// fails (only a Reservoir of items that encoding/gob cannot encode does);
// the job then fails with the operator's name.
func BinaryCodec[T any, P Binary[T]]() state.Codec[P] { return binaryCodec[T, P]{} }

type binaryCodec[T any, P Binary[T]] struct{}

func (binaryCodec[T, P]) Append(dst []byte, v P) []byte {
	if v == nil {
		return append(dst, 0)
	}
	return appendMarshaled(dst, v)
}

func (binaryCodec[T, P]) Decode(src []byte) (P, int, error) {
	body, n, err := decodeMarshaled[T](src)
	if err != nil || body == nil {
		return nil, n, err
	}
	p := P(new(T))
	if err := p.UnmarshalBinary(body); err != nil {
		return nil, 0, fmt.Errorf("sketch: decoding %T from state: %w", p, err)
	}
	return p, n, nil
}

// BinaryValueCodec returns a state codec for values of a type T whose
// pointer marshals itself, such as Moments, the accumulator of MomentsAgg.
// The encoding is that of BinaryCodec for a non-nil pointer.
func BinaryValueCodec[T any, P Binary[T]]() state.Codec[T] { return binaryValueCodec[T, P]{} }

type binaryValueCodec[T any, P Binary[T]] struct{}

func (binaryValueCodec[T, P]) Append(dst []byte, v T) []byte { return appendMarshaled(dst, P(&v)) }

func (binaryValueCodec[T, P]) Decode(src []byte) (T, int, error) {
	var v T
	body, n, err := decodeMarshaled[T](src)
	if err != nil {
		return v, n, err
	}
	if body == nil {
		return v, 0, fmt.Errorf("sketch: decoding %T from state: empty encoding", v)
	}
	if err := P(&v).UnmarshalBinary(body); err != nil {
		return v, 0, fmt.Errorf("sketch: decoding %T from state: %w", v, err)
	}
	return v, n, nil
}

// appendMarshaled appends the length-prefixed encoding of v.
func appendMarshaled(dst []byte, v encoding.BinaryMarshaler) []byte {
	b, err := v.MarshalBinary()
	if err != nil {
		panic(fmt.Errorf("sketch: encoding %T for state: %w", v, err))
	}
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// decodeMarshaled reads a length-prefixed encoding from src. It returns a
// copy of the body, which UnmarshalBinary may keep (a decoded value must not
// share memory with src), or nil for an empty one, and the number of bytes
// read.
func decodeMarshaled[T any](src []byte) ([]byte, int, error) {
	l, k := binary.Uvarint(src)
	if k <= 0 {
		return nil, 0, fmt.Errorf("sketch: decoding %T from state: bad length prefix: %w", *new(T), ErrTruncated)
	}
	if l > uint64(len(src)-k) {
		return nil, 0, fmt.Errorf("sketch: decoding %T from state: %d bytes announced, %d left: %w", *new(T), l, len(src)-k, ErrTruncated)
	}
	if l == 0 {
		return nil, k, nil
	}
	return bytes.Clone(src[k : k+int(l)]), k + int(l), nil
}

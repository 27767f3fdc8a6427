package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
)

// JSON returns a codec that encodes values with encoding/json, prefixed
// by their length as a uvarint. It suits types that Default cannot
// handle (interfaces, say) or whose encoding must be readable; it is several
// times slower than Default and does not keep the order of keys. Values
// that encoding/json cannot encode (NaN, channels) make Append panic with an
// error, which fails the job.
func JSON[T any]() Codec[T] {
	return jsonCodec[T]{name: reflect.TypeFor[T]().String()}
}

type jsonCodec[T any] struct{ name string }

// Append appends the length-prefixed JSON encoding of v to dst.
func (c jsonCodec[T]) Append(dst []byte, v T) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Errorf("state: json codec: encoding %s: %w", c.name, err))
	}
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// Decode decodes one length-prefixed JSON value from the start of src.
func (c jsonCodec[T]) Decode(src []byte) (v T, n int, err error) {
	l, k := binary.Uvarint(src)
	if k <= 0 || l > uint64(len(src)-k) {
		return v, 0, Truncated(c.name + " (json)")
	}
	if err := json.Unmarshal(src[k:k+int(l)], &v); err != nil {
		return v, 0, fmt.Errorf("state: json codec: decoding %s: %w", c.name, err)
	}
	return v, k + int(l), nil
}

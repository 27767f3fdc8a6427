package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Default returns the codec used for T when a descriptor names none. It
// returns an error if T (or a type it contains) is an interface, a channel, a
// function or an unsafe pointer; use JSON or a Codec of your own then.
//
// The encodings are fixed binary and sort like the values where keys can have
// the type: bool as one byte; signed integers big-endian with the sign bit
// flipped, unsigned ones big-endian, both in their own size (int and uint in
// 8 bytes); floats as IEEE bits with the sign bit flipped, or all bits for
// negative numbers (so -0 and +0 differ, and NaN sorts at the ends); strings
// with each zero byte escaped as 0x00 0xFF and terminated by 0x00 0x01;
// time.Time as the instant (Unix seconds as an int64, then nanoseconds as a
// uint32, decoded in UTC: the location is not kept); time.Duration as an
// int64; empty structs (the void namespace of state) as nothing. Structs and arrays
// concatenate their fields and elements, unexported fields included. Values
// that cannot be keys are length-prefixed: []byte and other slices by a
// uvarint count, maps by a count and their entries sorted by encoded key,
// pointers by a byte that says whether they are nil (a cyclic value never
// finishes encoding). A nil slice or map and an empty one encode alike and
// decode as nil.
//
// The codec is built once per type, by reflection, and cached; encoding and
// decoding do not reflect on values except for the slices, maps and pointers
// inside them.
func Default[T any]() (Codec[T], error) {
	t := reflect.TypeFor[T]()
	if c, ok := codecCache.Load(t); ok {
		return c.(Codec[T]), nil
	}
	c, err := newDefaultCodec[T](t)
	if err != nil {
		return nil, err
	}
	actual, _ := codecCache.LoadOrStore(t, c)
	return actual.(Codec[T]), nil
}

// codecCache maps a reflect.Type to its default Codec.
var codecCache sync.Map

func newDefaultCodec[T any](t reflect.Type) (Codec[T], error) {
	if t == timeType {
		return any(timeCodec{}).(Codec[T]), nil
	}
	var c any
	switch t.Kind() {
	case reflect.Bool:
		c = boolCodec[T]{}
	case reflect.Int8:
		c = int8Codec[T]{}
	case reflect.Int16:
		c = int16Codec[T]{}
	case reflect.Int32:
		c = int32Codec[T]{}
	case reflect.Int64:
		c = int64Codec[T]{}
	case reflect.Int:
		if t.Size() == 8 {
			c = int64Codec[T]{}
		} else {
			c = int32Codec[T]{}
		}
	case reflect.Uint8:
		c = uint8Codec[T]{}
	case reflect.Uint16:
		c = uint16Codec[T]{}
	case reflect.Uint32:
		c = uint32Codec[T]{}
	case reflect.Uint64:
		c = uint64Codec[T]{}
	case reflect.Uint, reflect.Uintptr:
		if t.Size() == 8 {
			c = uint64Codec[T]{}
		} else {
			c = uint32Codec[T]{}
		}
	case reflect.Float32:
		c = float32Codec[T]{}
	case reflect.Float64:
		c = float64Codec[T]{}
	case reflect.String:
		c = stringCodec[T]{}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			c = bytesCodec[T]{}
		}
	}
	if c == nil && t.Size() == 0 {
		c = emptyCodec[T]{}
	}
	if c != nil {
		return c.(Codec[T]), nil
	}
	b := coderBuilder{done: map[reflect.Type]*coder{}}
	cd, err := b.build(t, t.String())
	if err != nil {
		return nil, err
	}
	return newReflectCodec[T](t, cd), nil
}

var timeType = reflect.TypeFor[time.Time]()

// Fixed encodings of primitive values, shared by the primitive codecs and the
// reflective coders.

const signBit = 1 << 63

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func decodeBool(src []byte) (bool, int, error) {
	if len(src) < 1 {
		return false, 0, Truncated("bool")
	}
	switch src[0] {
	case 0:
		return false, 1, nil
	case 1:
		return true, 1, nil
	}
	return false, 0, fmt.Errorf("state: decoding bool: invalid byte %#x", src[0])
}

func appendFloat64(dst []byte, f float64) []byte {
	b := math.Float64bits(f)
	if b&signBit != 0 {
		b = ^b
	} else {
		b |= signBit
	}
	return binary.BigEndian.AppendUint64(dst, b)
}

func decodeFloat64(src []byte) float64 {
	b := binary.BigEndian.Uint64(src)
	if b&signBit != 0 {
		b &^= signBit
	} else {
		b = ^b
	}
	return math.Float64frombits(b)
}

func appendFloat32(dst []byte, f float32) []byte {
	b := math.Float32bits(f)
	if b&(1<<31) != 0 {
		b = ^b
	} else {
		b |= 1 << 31
	}
	return binary.BigEndian.AppendUint32(dst, b)
}

func decodeFloat32(src []byte) float32 {
	b := binary.BigEndian.Uint32(src)
	if b&(1<<31) != 0 {
		b &^= 1 << 31
	} else {
		b = ^b
	}
	return math.Float32frombits(b)
}

// appendString appends s with each zero byte escaped as 0x00 0xFF and a
// terminating 0x00 0x01, which keeps both order and prefix-freedom.
func appendString(dst []byte, s string) []byte {
	i := strings.IndexByte(s, 0)
	if i < 0 {
		dst = append(dst, s...)
		return append(dst, 0, 1)
	}
	// Binary strings (encoded keys) hold many zero bytes: escape them in
	// one pass rather than searching for each.
	dst = slices.Grow(dst, len(s)+(len(s)-i)/4+4)
	dst = append(dst, s[:i]...)
	for ; i < len(s); i++ {
		if c := s[i]; c != 0 {
			dst = append(dst, c)
		} else {
			dst = append(dst, 0, 0xff)
		}
	}
	return append(dst, 0, 1)
}

// decodeString decodes an encoding made by appendString.
func decodeString(src []byte) (string, int, error) {
	i := bytes.IndexByte(src, 0)
	if i < 0 || i+1 >= len(src) {
		return "", 0, Truncated("string")
	}
	if src[i+1] == 1 {
		return string(src[:i]), i + 2, nil
	}
	var buf []byte
	pos := 0
	for {
		switch src[pos+i+1] {
		case 1:
			buf = append(buf, src[pos:pos+i]...)
			return string(buf), pos + i + 2, nil
		case 0xff:
			buf = append(buf, src[pos:pos+i+1]...)
			pos += i + 2
		default:
			return "", 0, fmt.Errorf("state: decoding string: invalid escape %#x", src[pos+i+1])
		}
		i = bytes.IndexByte(src[pos:], 0)
		if i < 0 || pos+i+1 >= len(src) {
			return "", 0, Truncated("string")
		}
	}
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func decodeBytes(src []byte) ([]byte, int, error) {
	n, k := binary.Uvarint(src)
	if k <= 0 || n > uint64(len(src)-k) {
		return nil, 0, Truncated("[]byte")
	}
	if n == 0 {
		return nil, k, nil
	}
	return bytes.Clone(src[k : k+int(n)]), k + int(n), nil
}

func appendTime(dst []byte, t time.Time) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.Unix())^signBit)
	return binary.BigEndian.AppendUint32(dst, uint32(t.Nanosecond()))
}

func decodeTime(src []byte) (time.Time, int, error) {
	if len(src) < 12 {
		return time.Time{}, 0, Truncated("time.Time")
	}
	s := int64(binary.BigEndian.Uint64(src) ^ signBit)
	ns := int64(binary.BigEndian.Uint32(src[8:]))
	return time.Unix(s, ns).UTC(), 12, nil
}

// Codecs of primitive kinds. They are generic so that named types of those
// kinds (type AuctionID int64) get them too; the value is reinterpreted in
// place, which does not make it escape.

type boolCodec[T any] struct{}

func (boolCodec[T]) Append(dst []byte, v T) []byte {
	return appendBool(dst, *(*bool)(unsafe.Pointer(&v)))
}

func (boolCodec[T]) Decode(src []byte) (v T, n int, err error) {
	b, n, err := decodeBool(src)
	*(*bool)(unsafe.Pointer(&v)) = b
	return v, n, err
}

type int8Codec[T any] struct{}

func (int8Codec[T]) Append(dst []byte, v T) []byte {
	return append(dst, uint8(*(*int8)(unsafe.Pointer(&v)))^0x80)
}

func (int8Codec[T]) Decode(src []byte) (v T, n int, err error) {
	if len(src) < 1 {
		return v, 0, Truncated("int8")
	}
	*(*int8)(unsafe.Pointer(&v)) = int8(src[0] ^ 0x80)
	return v, 1, nil
}

type int16Codec[T any] struct{}

func (int16Codec[T]) Append(dst []byte, v T) []byte {
	return binary.BigEndian.AppendUint16(dst, uint16(*(*int16)(unsafe.Pointer(&v)))^(1<<15))
}

func (int16Codec[T]) Decode(src []byte) (v T, n int, err error) {
	if len(src) < 2 {
		return v, 0, Truncated("int16")
	}
	*(*int16)(unsafe.Pointer(&v)) = int16(binary.BigEndian.Uint16(src) ^ (1 << 15))
	return v, 2, nil
}

type int32Codec[T any] struct{}

func (int32Codec[T]) Append(dst []byte, v T) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(*(*int32)(unsafe.Pointer(&v)))^(1<<31))
}

func (int32Codec[T]) Decode(src []byte) (v T, n int, err error) {
	if len(src) < 4 {
		return v, 0, Truncated("int32")
	}
	*(*int32)(unsafe.Pointer(&v)) = int32(binary.BigEndian.Uint32(src) ^ (1 << 31))
	return v, 4, nil
}

type int64Codec[T any] struct{}

func (int64Codec[T]) Append(dst []byte, v T) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(*(*int64)(unsafe.Pointer(&v)))^signBit)
}

func (int64Codec[T]) Decode(src []byte) (v T, n int, err error) {
	if len(src) < 8 {
		return v, 0, Truncated("int64")
	}
	*(*int64)(unsafe.Pointer(&v)) = int64(binary.BigEndian.Uint64(src) ^ signBit)
	return v, 8, nil
}

type uint8Codec[T any] struct{}

func (uint8Codec[T]) Append(dst []byte, v T) []byte {
	return append(dst, *(*uint8)(unsafe.Pointer(&v)))
}

func (uint8Codec[T]) Decode(src []byte) (v T, n int, err error) {
	if len(src) < 1 {
		return v, 0, Truncated("uint8")
	}
	*(*uint8)(unsafe.Pointer(&v)) = src[0]
	return v, 1, nil
}

type uint16Codec[T any] struct{}

func (uint16Codec[T]) Append(dst []byte, v T) []byte {
	return binary.BigEndian.AppendUint16(dst, *(*uint16)(unsafe.Pointer(&v)))
}

func (uint16Codec[T]) Decode(src []byte) (v T, n int, err error) {
	if len(src) < 2 {
		return v, 0, Truncated("uint16")
	}
	*(*uint16)(unsafe.Pointer(&v)) = binary.BigEndian.Uint16(src)
	return v, 2, nil
}

type uint32Codec[T any] struct{}

func (uint32Codec[T]) Append(dst []byte, v T) []byte {
	return binary.BigEndian.AppendUint32(dst, *(*uint32)(unsafe.Pointer(&v)))
}

func (uint32Codec[T]) Decode(src []byte) (v T, n int, err error) {
	if len(src) < 4 {
		return v, 0, Truncated("uint32")
	}
	*(*uint32)(unsafe.Pointer(&v)) = binary.BigEndian.Uint32(src)
	return v, 4, nil
}

type uint64Codec[T any] struct{}

func (uint64Codec[T]) Append(dst []byte, v T) []byte {
	return binary.BigEndian.AppendUint64(dst, *(*uint64)(unsafe.Pointer(&v)))
}

func (uint64Codec[T]) Decode(src []byte) (v T, n int, err error) {
	if len(src) < 8 {
		return v, 0, Truncated("uint64")
	}
	*(*uint64)(unsafe.Pointer(&v)) = binary.BigEndian.Uint64(src)
	return v, 8, nil
}

type float32Codec[T any] struct{}

func (float32Codec[T]) Append(dst []byte, v T) []byte {
	return appendFloat32(dst, *(*float32)(unsafe.Pointer(&v)))
}

func (float32Codec[T]) Decode(src []byte) (v T, n int, err error) {
	if len(src) < 4 {
		return v, 0, Truncated("float32")
	}
	*(*float32)(unsafe.Pointer(&v)) = decodeFloat32(src)
	return v, 4, nil
}

type float64Codec[T any] struct{}

func (float64Codec[T]) Append(dst []byte, v T) []byte {
	return appendFloat64(dst, *(*float64)(unsafe.Pointer(&v)))
}

func (float64Codec[T]) Decode(src []byte) (v T, n int, err error) {
	if len(src) < 8 {
		return v, 0, Truncated("float64")
	}
	*(*float64)(unsafe.Pointer(&v)) = decodeFloat64(src)
	return v, 8, nil
}

type stringCodec[T any] struct{}

func (stringCodec[T]) Append(dst []byte, v T) []byte {
	return appendString(dst, *(*string)(unsafe.Pointer(&v)))
}

func (stringCodec[T]) Decode(src []byte) (v T, n int, err error) {
	s, n, err := decodeString(src)
	*(*string)(unsafe.Pointer(&v)) = s
	return v, n, err
}

type bytesCodec[T any] struct{}

func (bytesCodec[T]) Append(dst []byte, v T) []byte {
	return appendBytes(dst, *(*[]byte)(unsafe.Pointer(&v)))
}

func (bytesCodec[T]) Decode(src []byte) (v T, n int, err error) {
	b, n, err := decodeBytes(src)
	*(*[]byte)(unsafe.Pointer(&v)) = b
	return v, n, err
}

type timeCodec struct{}

func (timeCodec) Append(dst []byte, v time.Time) []byte { return appendTime(dst, v) }

func (timeCodec) Decode(src []byte) (time.Time, int, error) { return decodeTime(src) }

// emptyCodec encodes values of zero size, such as the void namespace, as
// nothing.
type emptyCodec[T any] struct{}

func (emptyCodec[T]) Append(dst []byte, _ T) []byte { return dst }

func (emptyCodec[T]) Decode([]byte) (v T, n int, err error) { return v, 0, nil }

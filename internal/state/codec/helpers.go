package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrTruncated means a codec's input ended inside an encoding.
var ErrTruncated = errors.New("unexpected end of input")

// Truncated returns the error for input that ends inside the encoding of
// what (a type, or a part of a record). It wraps ErrTruncated.
func Truncated(what string) error {
	return fmt.Errorf("state: decoding %s: %w", what, ErrTruncated)
}

// DecodeAt decodes one value from data[pos:] into *v with c and returns the
// position after it.
func DecodeAt[T any](c Codec[T], data []byte, pos int, v *T) (int, error) {
	x, n, err := c.Decode(data[pos:])
	if err != nil {
		return 0, err
	}
	*v = x
	return pos + n, nil
}

// DecodeWhole decodes b into *v with c, and returns an error if c does not
// use all of b.
func DecodeWhole[T any](c Codec[T], b []byte, v *T) error {
	pos, err := DecodeAt(c, b, 0, v)
	if err == nil && pos != len(b) {
		err = fmt.Errorf("%d trailing bytes", len(b)-pos)
	}
	return err
}

// AppendInt64 appends v as Default[int64] encodes it: eight bytes,
// big-endian, with the sign bit flipped, so that the encodings sort like
// the numbers. Timestamps in keys use it.
func AppendInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^signBit)
}

// ReadInt64 returns the int64 that AppendInt64 encoded in the first eight
// bytes of src. It panics if src is shorter.
func ReadInt64(src []byte) int64 {
	return int64(binary.BigEndian.Uint64(src) ^ signBit)
}

package codec

import (
	"encoding/binary"
	"errors"
)

// Key/value entries are the framing of the canonical keyed-state format,
// which savepoints use: a sequence of
//
//	uvarint len(key) | key | uvarint len(value) | value
//
// where key and value are encodings made by the codecs of a table.

// ErrCorruptKV means key/value entries do not parse.
var ErrCorruptKV = errors.New("corrupt key/value entries")

// AppendKV appends one key/value entry to dst.
func AppendKV(dst, key, value []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return append(dst, value...)
}

// EachKV calls fn for each entry of entries, in order, and stops at the
// first error fn returns. The slices fn gets are parts of entries. It
// returns an error wrapping ErrCorruptKV if entries do not parse.
func EachKV(entries []byte, fn func(key, value []byte) error) error {
	for len(entries) > 0 {
		k, rest, ok := cutBytes(entries)
		if !ok {
			return ErrCorruptKV
		}
		v, rest, ok := cutBytes(rest)
		if !ok {
			return ErrCorruptKV
		}
		entries = rest
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// cutBytes cuts a uvarint-prefixed byte string off the front of data.
func cutBytes(data []byte) (b, rest []byte, ok bool) {
	n, m := binary.Uvarint(data)
	if m <= 0 || uint64(len(data)-m) < n {
		return nil, nil, false
	}
	return data[m : m+int(n)], data[m+int(n):], true
}

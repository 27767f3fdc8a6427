package ops

import (
	"encoding/binary"
	"fmt"
)

// EncodeSplit encodes a split's state as a sequence of integers followed by
// an optional string, the form every built-in source uses.
func EncodeSplit(s string, vals ...int64) []byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(vals)))
	for _, v := range vals {
		b = binary.AppendVarint(b, v)
	}
	return append(b, s...)
}

// DecodeSplit decodes a split encoded by EncodeSplit with want integers.
func DecodeSplit(b []byte, want int) (vals []int64, s string, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || int(n) != want {
		return nil, "", fmt.Errorf("split state is corrupt or from another source: expected %d fields", want)
	}
	b = b[k:]
	vals = make([]int64, want)
	for i := range vals {
		v, k := binary.Varint(b)
		if k <= 0 {
			return nil, "", fmt.Errorf("split state is truncated")
		}
		vals[i], b = v, b[k:]
	}
	return vals, string(b), nil
}

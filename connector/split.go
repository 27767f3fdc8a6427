package connector

import (
	"encoding/binary"
	"fmt"
)

// Split is a part of a source's input that one reader reads from start to
// end: a file, a partition, a key range of a table. State is the source's
// own encoding of the split and of the position reached in it; it travels in
// checkpoints and comes back to a reader of the same source, possibly in
// another subtask after a restore at another parallelism.
type Split struct {
	// ID names the split uniquely within its source.
	ID string
	// State is the split and its position, in the source's encoding.
	State []byte
}

// AppendSplit appends an encoding of s to dst, for enumerators that keep
// splits in their own state.
func AppendSplit(dst []byte, s Split) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s.ID)))
	dst = append(dst, s.ID...)
	dst = binary.AppendUvarint(dst, uint64(len(s.State)))
	return append(dst, s.State...)
}

// DecodeSplit decodes a split encoded by AppendSplit from the start of src
// and returns it with the number of bytes it took.
func DecodeSplit(src []byte) (Split, int, error) {
	var s Split
	n := 0
	for i := 0; i < 2; i++ {
		l, k := binary.Uvarint(src[n:])
		if k <= 0 || uint64(len(src)-n-k) < l {
			return Split{}, 0, fmt.Errorf("connector: split encoding is truncated or corrupt")
		}
		b := src[n+k : n+k+int(l)]
		if i == 0 {
			s.ID = string(b)
		} else {
			s.State = append([]byte(nil), b...)
		}
		n += k + int(l)
	}
	return s, n, nil
}

// EncodeSplits encodes a list of splits, as AppendSplit does each.
func EncodeSplits(splits []Split) []byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(splits)))
	for _, s := range splits {
		b = AppendSplit(b, s)
	}
	return b
}

// DecodeSplits decodes a list encoded by EncodeSplits.
func DecodeSplits(b []byte) ([]Split, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("connector: split list encoding is truncated or corrupt")
	}
	b = b[k:]
	out := make([]Split, 0, n)
	for i := uint64(0); i < n; i++ {
		s, m, err := DecodeSplit(b)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		b = b[m:]
	}
	return out, nil
}

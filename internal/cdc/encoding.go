package cdc

import (
	"encoding/binary"
	"fmt"

	"github.com/eddystream/eddy/connector"
)

// Decoder reads the encodings of a CDC source's splits and enumerator
// state: unsigned and signed varints, and strings written by AppendString.
// The first truncation sets Err; reads after it return zero values.
type Decoder struct {
	b []byte
	// Err is the first error met.
	Err error
	// source names the connector in errors ("mysql-cdc").
	source string
}

// NewDecoder returns a decoder of b, whose errors name source.
func NewDecoder(source string, b []byte) Decoder { return Decoder{b: b, source: source} }

// More reports whether bytes are left to read.
func (d *Decoder) More() bool { return len(d.b) > 0 }

func (d *Decoder) truncated() {
	if d.Err == nil {
		d.Err = fmt.Errorf("%s: split or state encoding is truncated", d.source)
	}
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.truncated()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Varint reads a signed varint.
func (d *Decoder) Varint() int64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.truncated()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Int reads an int written as an unsigned varint.
func (d *Decoder) Int() int { return int(d.Uvarint()) }

// Flag reads a bool written by AppendFlag.
func (d *Decoder) Flag() bool { return d.Uvarint() == 1 }

// String reads a string written by AppendString.
func (d *Decoder) String() string {
	n := d.Uvarint()
	if d.Err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.truncated()
		return ""
	}
	v := string(d.b[:n])
	d.b = d.b[n:]
	return v
}

// Ints reads the ints written by AppendInts.
func (d *Decoder) Ints() []int {
	n := d.Uvarint()
	var out []int
	for i := uint64(0); i < n && d.Err == nil; i++ {
		out = append(out, d.Int())
	}
	return out
}

// AppendString appends a string: its length, then its bytes.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendFlag appends a bool as an unsigned varint, 1 for true.
func AppendFlag(b []byte, v bool) []byte {
	if v {
		return binary.AppendUvarint(b, 1)
	}
	return binary.AppendUvarint(b, 0)
}

// AppendInts appends non-negative ints: their count, then each.
func AppendInts(b []byte, v []int) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	for _, x := range v {
		b = binary.AppendUvarint(b, uint64(x))
	}
	return b
}

// ChunkCodec encodes a CDC source's chunks in splits and in the
// enumerator's state, and decodes them. A split's encoding starts with
// Version, then its kind: 'c' for a chunk.
type ChunkCodec[C Chunk] struct {
	// Source names the connector in errors ("mysql-cdc").
	Source string
	// Version is the version of the encodings of the source's splits and
	// state: one that reads otherwise refuses them.
	Version byte
	// Append appends a chunk, Read reads what it wrote.
	Append func(b []byte, c C) []byte
	Read   func(d *Decoder) C
}

// Split returns the split of a chunk.
func (k ChunkCodec[C]) Split(c C) connector.Split {
	return connector.Split{ID: c.ID(), State: k.Append([]byte{k.Version, 'c'}, c)}
}

// DecodeSplit decodes a split: a chunk, or a split of kind other, which
// readOther reads (the chunk is then the zero C).
func (k ChunkCodec[C]) DecodeSplit(s connector.Split, other byte, readOther func(d *Decoder)) (C, error) {
	var c C
	if len(s.State) < 2 || s.State[0] != k.Version {
		return c, fmt.Errorf("%s: split %q has an encoding this version does not read", k.Source, s.ID)
	}
	d := NewDecoder(k.Source, s.State[2:])
	switch s.State[1] {
	case 'c':
		c = k.Read(&d)
	case other:
		readOther(&d)
	default:
		return c, fmt.Errorf("%s: split %q is of an unknown kind", k.Source, s.ID)
	}
	if d.Err != nil {
		var zero C
		return zero, fmt.Errorf("split %q: %w", s.ID, d.Err)
	}
	return c, nil
}

// decodeChunk decodes the state of a chunk's split.
func (k ChunkCodec[C]) decodeChunk(state []byte) (C, error) {
	var c C
	if len(state) < 2 || state[1] != 'c' {
		return c, fmt.Errorf("%s: the split is not a chunk", k.Source)
	}
	return k.DecodeSplit(connector.Split{ID: "chunk", State: state}, 'c', nil)
}

// decodeState checks the version of an enumerator state's encoding and
// returns a decoder of the rest.
func (k ChunkCodec[C]) decodeState(b []byte) (*Decoder, error) {
	if len(b) < 1 || b[0] != k.Version {
		return nil, fmt.Errorf("%s: the enumerator state has an encoding this version does not read", k.Source)
	}
	d := NewDecoder(k.Source, b[1:])
	return &d, nil
}

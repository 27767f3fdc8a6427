package sketch

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Every serialized synopsis starts with two bytes: the encoding version and
// a type tag naming the synopsis. The body uses unsigned varints for counts
// and sizes, little-endian fixed 8-byte words for float64 values and RNG
// state.

// Type tags; each synopsis has its own so that a blob of one type is never
// silently decoded as another.
const (
	tagMoments           byte = 'M'
	tagFlajoletMartin    byte = 'F'
	tagPCSA              byte = 'P'
	tagHyperLogLog       byte = 'H'
	tagCountMin          byte = 'C'
	tagAMS               byte = 'A'
	tagReservoir         byte = 'R'
	tagWeightedReservoir byte = 'W'
	tagBloom             byte = 'L'
	tagDGIM              byte = 'D'
	tagKLL               byte = 'K'
	tagTriestBase        byte = 'b'
	tagTriestImpr        byte = 'i'
	tagTriestFD          byte = 'f'
)

type encoder struct {
	buf []byte
}

func newEncoder(version, tag byte, sizeHint int) *encoder {
	e := &encoder{buf: make([]byte, 0, sizeHint+2)}
	e.buf = append(e.buf, version, tag)
	return e
}

func (e *encoder) u8(v byte)         { e.buf = append(e.buf, v) }
func (e *encoder) uvarint(v uint64)  { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) varint(v int64)    { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) u64(v uint64)      { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }
func (e *encoder) f64(v float64)     { e.u64(math.Float64bits(v)) }
func (e *encoder) raw(b []byte)      { e.buf = append(e.buf, b...) }
func (e *encoder) bool(v bool)       { e.u8(boolByte(v)) }
func (e *encoder) bytes() []byte     { return e.buf }
func (e *encoder) rng(r splitMix64)  { e.u64(r.state) }
func (e *encoder) lenBytes(b []byte) { e.uvarint(uint64(len(b))); e.raw(b) }
func (e *encoder) count(n int)       { e.uvarint(uint64(n)) }
func (e *encoder) f64s(vs []float64) {
	e.count(len(vs))
	for _, v := range vs {
		e.f64(v)
	}
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// decoder reads an encoding with sticky errors: after the first failure every
// read returns a zero value and err reports the failure.
type decoder struct {
	data []byte
	off  int
	name string
	err  error
}

// newDecoder checks the version byte and type tag and positions the decoder
// at the start of the body.
func newDecoder(data []byte, name string, version, tag byte) *decoder {
	d := &decoder{data: data, name: name}
	if len(data) < 2 {
		d.err = fmt.Errorf("%w %s encoding: need at least 2 header bytes, have %d", ErrTruncated, name, len(data))
		return d
	}
	if data[0] != version {
		d.err = fmt.Errorf("%w %d for %s (supported: %d)", ErrVersion, data[0], name, version)
		return d
	}
	if data[1] != tag {
		d.err = fmt.Errorf("%w %s encoding: type tag %q, want %q", ErrCorrupt, name, data[1], tag)
		return d
	}
	d.off = 2
	return d
}

func (d *decoder) remaining() int { return len(d.data) - d.off }

func (d *decoder) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || d.remaining() < n {
		d.err = fmt.Errorf("%w %s encoding: need %d bytes at offset %d, have %d", ErrTruncated, d.name, n, d.off, d.remaining())
		return false
	}
	return true
}

// fail records a corruption error unless an earlier error is pending.
func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w %s encoding: %s", ErrCorrupt, d.name, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) u8() byte {
	if !d.need(1) {
		return 0
	}
	v := d.data[d.off]
	d.off++
	return v
}

func (d *decoder) bool() bool {
	switch v := d.u8(); v {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail("boolean byte %d at offset %d", v, d.off-1)
		return false
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data[d.off:])
	switch {
	case n == 0:
		d.err = fmt.Errorf("%w %s encoding: varint at offset %d runs past the end", ErrTruncated, d.name, d.off)
		return 0
	case n < 0:
		d.fail("varint at offset %d overflows 64 bits", d.off)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (d *decoder) u64() uint64 {
	if !d.need(8) {
		return 0
	}
	v := binary.LittleEndian.Uint64(d.data[d.off:])
	d.off += 8
	return v
}

func (d *decoder) f64() float64 { return math.Float64frombits(d.u64()) }

func (d *decoder) rng() splitMix64 { return splitMix64{state: d.u64()} }

func (d *decoder) raw(n int) []byte {
	if !d.need(n) {
		return nil
	}
	b := d.data[d.off : d.off+n]
	d.off += n
	return b
}

// count reads an element count and checks that at least minSize bytes per
// element remain, so that a corrupt count cannot trigger a huge allocation.
func (d *decoder) count(minSize int) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > uint64(d.remaining()/minSize) {
		d.err = fmt.Errorf("%w %s encoding: %d elements of at least %d bytes need more than the %d bytes left at offset %d",
			ErrTruncated, d.name, n, minSize, d.remaining(), d.off)
		return 0
	}
	return int(n)
}

func (d *decoder) lenBytes() []byte {
	n := d.count(1)
	return d.raw(n)
}

func (d *decoder) f64s() []float64 {
	n := d.count(8)
	if d.err != nil {
		return nil
	}
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = d.f64()
	}
	return vs
}

// finish reports the first error, or a corruption error if bytes remain.
func (d *decoder) finish() error {
	if d.err != nil {
		return d.err
	}
	if d.off != len(d.data) {
		return fmt.Errorf("%w %s encoding: %d trailing bytes after offset %d", ErrCorrupt, d.name, len(d.data)-d.off, d.off)
	}
	return nil
}

package mysqlcdc

import (
	"encoding/binary"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// position is a place in the server's binary log: a file and a byte offset
// in it.
type position struct {
	File string
	Pos  uint32
}

func (p position) String() string { return fmt.Sprintf("%s:%d", p.File, p.Pos) }

// compare orders positions: by file (their numeric suffixes), then offset.
func (p position) compare(o position) int {
	if c := mysql.CompareBinlogFileName(p.File, o.File); c != 0 {
		return c
	}
	switch {
	case p.Pos < o.Pos:
		return -1
	case p.Pos > o.Pos:
		return 1
	}
	return 0
}

func (p position) isZero() bool { return p.File == "" }

func appendPosition(b []byte, p position) []byte {
	b = binary.AppendUvarint(b, uint64(len(p.File)))
	b = append(b, p.File...)
	return binary.AppendUvarint(b, uint64(p.Pos))
}

// decoder reads the encodings of the source's splits and state.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("mysql-cdc: split or state encoding is truncated")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("mysql-cdc: split or state encoding is truncated")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes()) }

func (d *decoder) position() position {
	f := d.string()
	return position{File: f, Pos: uint32(d.uvarint())}
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

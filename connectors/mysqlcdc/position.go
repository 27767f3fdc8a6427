package mysqlcdc

import (
	"encoding/binary"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/eddystream/eddy/internal/cdc"
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
	b = cdc.AppendString(b, p.File)
	return binary.AppendUvarint(b, uint64(p.Pos))
}

func readPosition(d *cdc.Decoder) position {
	f := d.String()
	return position{File: f, Pos: uint32(d.Uvarint())}
}

package mysqlcdc

import (
	"encoding/binary"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/eddystream/eddy/internal/cdc"
)

// position is a place in the server's binary log: a file and a byte offset
// in it, valid on that server only, and, where known, the GTID set the
// server had executed there, which names the same place on any server that
// has the same transactions (a replica after a failover).
type position struct {
	File string
	Pos  uint32
	// GTIDs is the GTID set executed before the position, in the text of
	// the server's flavour (MySQL's 'uuid:1-100,...', MariaDB's
	// 'domain-server-sequence,...'), when HasGTIDs is set; it may then
	// be empty (a MariaDB server that has written no transaction yet, a
	// MySQL server without gtid_mode).
	GTIDs    string
	HasGTIDs bool
}

func (p position) String() string {
	if p.File == "" && p.HasGTIDs {
		return "GTID set '" + p.GTIDs + "'"
	}
	return fmt.Sprintf("%s:%d", p.File, p.Pos)
}

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

func (p position) isZero() bool { return p.File == "" && !p.HasGTIDs }

// byGTID tells whether reading resumes at the position by its GTID set
// rather than its file and offset: when the set is known and not empty.
func (p position) byGTID() bool { return p.HasGTIDs && p.GTIDs != "" }

func appendPosition(b []byte, p position) []byte {
	b = cdc.AppendString(b, p.File)
	b = binary.AppendUvarint(b, uint64(p.Pos))
	b = cdc.AppendFlag(b, p.HasGTIDs)
	return cdc.AppendString(b, p.GTIDs)
}

func readPosition(d *cdc.Decoder) position {
	p := position{File: d.String(), Pos: uint32(d.Uvarint())}
	p.HasGTIDs = d.Flag()
	p.GTIDs = d.String()
	return p
}

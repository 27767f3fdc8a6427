package mysqlcdc

import (
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
)

// TestChunkOfTableNoLongerSplit checks that a chunk with key bounds whose
// table is no longer split on its key (its key's type or collation changed
// before a restore) fails the read instead of reading the whole table as
// the chunk, once per chunk.
func TestChunkOfTableNoLongerSplit(t *testing.T) {
	tbl := &tableInfo{db: "app", name: "users", chunkKey: -1}
	r := &reader[int]{conn: &client.Conn{}, tables: map[string]*tableInfo{tbl.id(): tbl}}
	for _, c := range []*chunk{{table: tbl.id(), index: 1, start: "m"}, {table: tbl.id(), index: 0, end: "m"}} {
		_, err := r.readChunk(nil, c)
		if err == nil || !strings.Contains(err.Error(), "no longer one it splits on") || !strings.Contains(err.Error(), "app") {
			t.Fatalf("chunk %d [%q, %q) of a table read as one chunk: err = %v, want the table-changed error", c.index, c.start, c.end, err)
		}
	}
}

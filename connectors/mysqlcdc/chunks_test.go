package mysqlcdc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/sql/types"
)

// TestNullChunkKeys snapshots a table split on a nullable column: rows
// whose chunk key is NULL are in no key range, and belong to the first
// chunk.
func TestNullChunkKeys(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "CREATE TABLE "+db+".accounts (id INT PRIMARY KEY, balance BIGINT NULL, note VARCHAR(32))",
		"INSERT INTO "+db+".accounts VALUES (1, 10, 'a'), (2, 20, 'b'), (3, NULL, 'c'), (4, 40, 'd'), (5, 50, 'e'), (6, 60, 'f'), (7, NULL, 'g')")
	for _, split := range []struct{ name, extra string }{
		{"even", ""},
		{"uneven", "INSERT INTO " + db + ".accounts VALUES (8, 1000000000, 'h')"},
	} {
		t.Run(split.name, func(t *testing.T) {
			if split.extra != "" {
				c.Exec(t, split.extra)
			}
			got := startupRun(t, s.options(db, "accounts", "scan.startup.mode", "snapshot",
				"scan.incremental.snapshot.chunk.key-column", "balance", "scan.incremental.snapshot.chunk.size", "2"), nil, -1)
			want := []string{"+I|1|10|a", "+I|2|20|b", "+I|3|NULL|c", "+I|4|40|d", "+I|5|50|e", "+I|6|60|f", "+I|7|NULL|g"}
			if split.extra != "" {
				want = append(want, "+I|8|1000000000|h")
			}
			cdctest.WantKeys(t, got, want...)
		})
	}
}

// TestChunkContainsNull places a NULL chunk key, as changes of the binary
// log carry it, in the first chunk, where the snapshot reads it.
func TestChunkContainsNull(t *testing.T) {
	cs := chunksOf("db.t", []string{"10", "20"})
	for i, c := range cs {
		if got, want := c.contains(orderInteger, "", true), i == 0; got != want {
			t.Errorf("chunk %d [%q, %q) contains NULL: %v, want %v", i, c.start, c.end, got, want)
		}
	}
}

// TestFloatSnapshotAndBinlog reads FLOAT and DOUBLE values from the
// snapshot and, the same values, from the binary log: the snapshot must not
// round them to the six digits the server's text of a FLOAT has.
func TestFloatSnapshotAndBinlog(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	values := "(%d, 1.2345678, 1.2345678901234567), (%d, 123456789, 1e300), (%d, 0.000012345678, -0.1), (%d, 1.1, 1.1)"
	c.Exec(t, "CREATE TABLE "+db+".floats (id INT PRIMARY KEY, f FLOAT, d DOUBLE)",
		"INSERT INTO "+db+".floats VALUES "+fmt.Sprintf(values, 1, 2, 3, 4))
	tab := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("f", types.Float()),
		types.F("d", types.Double())), PrimaryKey: []int{0}}
	j := job(openSource(t, s.options(db, "floats"), tab))
	j.Checkpoints, j.Timeout = 20*time.Millisecond, 20*time.Second
	r := j.Start(t)
	r.WaitFor(t, 4)
	c.Exec(t, "INSERT INTO "+db+".floats VALUES "+fmt.Sprintf(values, 11, 12, 13, 14))
	r.WaitFor(t, 8)
	r.Stop()
	got := map[string]string{}
	for _, k := range cdctest.Keys(tab.Schema, r.Sink.Committed()) {
		id, rest, _ := strings.Cut(strings.TrimPrefix(k, "+I|"), "|")
		got[id] = rest
	}
	for i := 1; i <= 4; i++ {
		snap, bin := got[fmt.Sprint(i)], got[fmt.Sprint(i+10)]
		if snap == "" || snap != bin {
			t.Errorf("row %d: the snapshot gives %q, the binary log %q", i, snap, bin)
		}
	}
}

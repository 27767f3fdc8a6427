package mysqlcdc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql/types"
)

// TestNullChunkKeys snapshots a table split on a nullable column: rows
// whose chunk key is NULL are in no key range, and belong to the first
// chunk.
func TestNullChunkKeys(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	exec(t, c, "CREATE TABLE "+db+".accounts (id INT PRIMARY KEY, balance BIGINT NULL, note VARCHAR(32))",
		"INSERT INTO "+db+".accounts VALUES (1, 10, 'a'), (2, 20, 'b'), (3, NULL, 'c'), (4, 40, 'd'), (5, 50, 'e'), (6, 60, 'f'), (7, NULL, 'g')")
	for _, split := range []struct{ name, extra string }{
		{"even", ""},
		{"uneven", "INSERT INTO " + db + ".accounts VALUES (8, 1000000000, 'h')"},
	} {
		t.Run(split.name, func(t *testing.T) {
			if split.extra != "" {
				exec(t, c, split.extra)
			}
			got := startupRun(t, s, s.options(db, "accounts", "scan.startup.mode", "snapshot",
				"scan.incremental.snapshot.chunk.key-column", "balance", "scan.incremental.snapshot.chunk.size", "2"), nil, -1)
			want := []string{"+I|1|10|a", "+I|2|20|b", "+I|3|NULL|c", "+I|4|40|d", "+I|5|50|e", "+I|6|60|f", "+I|7|NULL|g"}
			if split.extra != "" {
				want = append(want, "+I|8|1000000000|h")
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// TestChunkContainsNull places a NULL chunk key, as changes of the binary
// log carry it, in the first chunk, where the snapshot reads it.
func TestChunkContainsNull(t *testing.T) {
	cs := chunksOf("db.t", []string{"10", "20"})
	for i, c := range cs {
		if got, want := c.contains(nullText), i == 0; got != want {
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
	exec(t, c, "CREATE TABLE "+db+".floats (id INT PRIMARY KEY, f FLOAT, d DOUBLE)",
		"INSERT INTO "+db+".floats VALUES "+fmt.Sprintf(values, 1, 2, 3, 4))
	tab := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("f", types.Float()),
		types.F("d", types.Double())), PrimaryKey: []int{0}}
	src := openSource(t, s.options(db, "floats"), tab)
	sink := connectortest.NewMemorySink[connector.TableRecord]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "mysql-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{}), "memory sink", sink.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "floats") }()
	if err := sink.WaitFor(ctx, 4); err != nil {
		t.Fatal(err)
	}
	exec(t, c, "INSERT INTO "+db+".floats VALUES "+fmt.Sprintf(values, 11, 12, 13, 14))
	if err := sink.WaitFor(ctx, 8); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	key := recordKey(tab.Schema)
	got := map[string]string{}
	for _, r := range sink.Committed() {
		k := key(r)
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

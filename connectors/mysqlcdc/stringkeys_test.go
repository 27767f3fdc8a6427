package mysqlcdc

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/sql/types"
)

// keyedTable is the SQL table of the string-keyed tables of these tests:
// (k <key type> PRIMARY KEY, n INT, note VARCHAR(32)), the key read as
// text (its raw bytes for a BINARY key).
var keyedTable = &connector.Table{
	Schema: types.MustRowType(
		types.F("k", types.String().NotNull()),
		types.F("n", types.Int()),
		types.F("note", types.String()),
	),
	PrimaryKey: []int{0},
}

// keyCase is a type of key and the keys of its rows: key(i) is the SQL
// literal of the i-th key, all distinct as the key's collation compares
// them.
type keyCase struct {
	name, decl string
	key        func(i int) string
	split      bool // the source splits the table into chunks
}

func uuidOf(i int) string {
	h := md5.Sum([]byte(fmt.Sprint(i)))
	s := hex.EncodeToString(h[:])
	return s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
}

var keyCases = []keyCase{
	{name: "varchar_bin", decl: "VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", split: true, key: func(i int) string {
		// Keys that differ in case only, keys with trailing spaces and
		// tabs, sorting around their neighbours.
		base := fmt.Sprintf("k%05d", i/3)
		switch i % 3 {
		case 1:
			base = strings.ToUpper(base)
		case 2:
			base += "\t"
		}
		if i%7 == 0 {
			base += " "
		}
		return fmt.Sprintf("X'%x'", base)
	}},
	{name: "binary16", decl: "BINARY(16)", split: true, key: func(i int) string {
		u := strings.ReplaceAll(uuidOf(i), "-", "")
		if i%4 == 0 {
			u = u[:24] + "00000000" // trailing zero bytes, which the binary log leaves out
		}
		return "X'" + u + "'"
	}},
	{name: "char36_general_ci", decl: "CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", key: func(i int) string {
		u := uuidOf(i)
		if i%2 == 1 {
			u = strings.ToUpper(u)
		}
		return "'" + u + "'"
	}},
}

// TestStringKeysUnderLoad mirrors tables keyed by strings and bytes that
// a concurrent load inserts into, updates (keys too) and deletes from while
// the source reads their snapshot in chunks at parallelism 2, with failures
// injected downstream: at the end the changelog, applied as a multiset,
// equals the table row for row.
func TestStringKeysUnderLoad(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	for _, kc := range keyCases {
		t.Run(kc.name, func(t *testing.T) {
			db := s.newDatabase(admin)
			table := db + ".keyed"
			const rows = 3000
			admin.Exec(t, "CREATE TABLE "+table+" (k "+kc.decl+" PRIMARY KEY, n INT, note VARCHAR(32))")
			cdctest.InsertRows(t, admin, table, 1, rows, 1000, func(i int) string { return fmt.Sprintf("(%s, %d, 'n%d')", kc.key(i), i, i) })
			ti := &tableInfo{db: db, name: "keyed", chunkKey: -1}
			cfg := &config{chunkSize: 250}
			if err := cfg.describe(admin.Conn, ti, nil); err != nil {
				t.Fatal(err)
			}
			chunks, err := cfg.splitTable(admin.Conn, ti)
			if err != nil {
				t.Fatal(err)
			}
			if split := len(chunks) > 1; split != kc.split || kc.split && len(chunks) < rows/250 {
				t.Fatalf("the table is split into %d chunks", len(chunks))
			}
			src := openSource(t, s.options(db, "keyed", "scan.incremental.snapshot.chunk.size", "250"), keyedTable)
			failures := cdctest.NewFailures(true, 700, 1700, 2600)
			j := job(src)
			j.Parallelism, j.Checkpoints, j.Restarts, j.Timeout, j.Hook = 2, 30*time.Millisecond, 20, 3*time.Minute, failures.Hook
			r := j.Start(t)
			keyedLoad(t, s.conn(), table, kc, rows+1, 1200)
			want := map[string]int{}
			for _, row := range admin.Query(t, "SELECT k, n, note FROM "+table) {
				want[row]++
			}
			cdctest.CheckMirror(t, r, failures, keyedTable.Schema, want)
		})
	}
}

// keyedLoad runs n random transactions of one to three statements on a
// keyed table: updates, deletes, inserts of keys from first on, and key
// changes.
func keyedLoad(t testing.TB, c *conn, table string, kc keyCase, first, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 2))
	next := first
	for tx := 0; tx < n; tx++ {
		var stmts []string
		for range 1 + rng.IntN(3) {
			k := kc.key(1 + rng.IntN(next-1))
			switch op := rng.IntN(10); {
			case op < 5:
				stmts = append(stmts, fmt.Sprintf("UPDATE %s SET n = n + %d, note = 'u%d' WHERE k = %s", table, rng.IntN(100)-50, tx, k))
			case op < 7:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE k = %s", table, k))
			case op < 9:
				stmts = append(stmts, fmt.Sprintf("INSERT INTO %s VALUES (%s, %d, 'i%d')", table, kc.key(next), tx, tx))
				next++
			default:
				stmts = append(stmts, fmt.Sprintf("UPDATE %s SET k = %s WHERE k = %s", table, kc.key(next), k))
				next++
			}
		}
		c.Tx(t, stmts...)
	}
}

// TestOneChunkChangesDuringSnapshot reads tables keyed by a
// case-insensitive collation, read as one chunk: an InnoDB table in a
// transaction WITH CONSISTENT SNAPSHOT, a MyISAM table under a table
// read lock. Rows are inserted, updated (keys too, to keys equal as the
// collation compares them) and deleted after the InnoDB chunk's snapshot
// is taken and before its query runs, and just before the MyISAM table is
// locked: the changelog mirrors the table, each row once.
func TestOneChunkChangesDuringSnapshot(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	for _, engine := range []string{"InnoDB", "MyISAM"} {
		t.Run(engine, func(t *testing.T) {
			db := s.newDatabase(admin)
			table := db + ".keyed"
			admin.Exec(t, "CREATE TABLE "+table+" (k CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci PRIMARY KEY, n INT, note VARCHAR(32)) ENGINE = "+engine,
				"INSERT INTO "+table+" VALUES ('abc', 1, 'a'), ('Abd', 2, 'b'), ('ABE', 3, 'c'), ('x  ', 4, 'd'), ('y', 5, 'e')")
			during := changeAtChunkQuery(t, s.conn(), table,
				"UPDATE "+table+" SET k = 'ABC', n = 10 WHERE k = 'abc'",
				"UPDATE "+table+" SET n = 20 WHERE k = 'abd'",
				"DELETE FROM "+table+" WHERE k = 'abe'",
				"INSERT INTO "+table+" VALUES ('abe', 30, 'new'), ('Z', 6, 'f')",
				"UPDATE "+table+" SET k = 'X' WHERE k = 'x'")
			j := job(openSource(t, s.options(db, "keyed"), keyedTable))
			j.Checkpoints, j.Timeout = 20*time.Millisecond, time.Minute
			r := j.Start(t)
			want := map[string]int{"ABC|10|a": 1, "Abd|20|b": 1, "abe|30|new": 1, "X|4|d": 1, "y|5|e": 1, "Z|6|f": 1}
			got := cdctest.WaitMirror(t, r, keyedTable.Schema, want)
			r.Stop()
			during.check(t)
			if !maps.Equal(got, want) {
				t.Fatalf("the changelog does not mirror the table:\n%s", cdctest.DiffCounts(got, want))
			}
			if table := admin.Query(t, "SELECT k, n, note FROM "+table+" ORDER BY k"); len(table) != len(want) {
				t.Fatalf("the table holds %v", table)
			}
		})
	}
}

// chunkChanges are statements run while the snapshot reads a table's
// first chunk (see changeAtChunkQuery).
type chunkChanges struct {
	ran int
	err error
}

// changeAtChunkQuery runs stmts over load once, when the source first
// queries a chunk of table (between the chunk's low position and its
// query), until t ends.
func changeAtChunkQuery(t *testing.T, load *conn, table string, stmts ...string) *chunkChanges {
	c := &chunkChanges{}
	chunkQueryHook = func(id string) {
		if id != table || c.ran > 0 {
			return
		}
		c.ran++
		for _, q := range stmts {
			if _, err := load.Execute(q); err != nil && c.err == nil {
				c.err = fmt.Errorf("%s: %w", q, err)
			}
		}
	}
	t.Cleanup(func() { chunkQueryHook = nil })
	return c
}

// check fails t unless the statements ran once, without error.
func (c *chunkChanges) check(t *testing.T) {
	t.Helper()
	if c.err != nil || c.ran != 1 {
		t.Fatalf("the changes during the snapshot ran %d times: %v", c.ran, c.err)
	}
}

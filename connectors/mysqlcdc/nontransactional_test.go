package mysqlcdc

import (
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/sql/types"
)

// TestNonTransactionalChunksUnderLoad mirrors an Aria and a MyISAM table
// that four writers insert into, update (keys too) and delete from, each
// statement on its own, while the source reads their snapshots in chunks of
// 20 rows at parallelism 2, and until the source reads the binary log. The
// changelog, replayed key by key (checkChangelogByKey), must never insert a
// key it holds, never retract or delete a row other than the key's current
// one, and must end equal to the table. Read between two positions of the
// binary log, an Aria chunk could miss a row inserted before its low,
// which Aria shows only once the insert commits, after the binary log has
// it: the changelog later retracted a row it never had.
func TestNonTransactionalChunksUnderLoad(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	for _, engine := range []string{"Aria", "MyISAM"} {
		t.Run(engine, func(t *testing.T) {
			db := s.newDatabase(admin)
			table := db + ".accounts"
			const rows = 1000
			admin.Exec(t, "CREATE TABLE "+table+" "+cdctest.AccountsColumns+" ENGINE = "+engine)
			// Keys 10, 20, ...: the writers insert between them, into
			// every chunk.
			cdctest.InsertRows(t, admin, table, 1, rows, 500, func(i int) string { return fmt.Sprintf("(%d, %d, 'n%d')", 10*i, i, i) })
			if got := admin.Query(t, "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = '"+db+"' AND TABLE_NAME = 'accounts'"); len(got) != 1 || !strings.EqualFold(got[0], engine) {
				t.Fatalf("the table's engine is %v, want %s", got, engine)
			}
			j := job(openSource(t, s.options(db, "accounts", "scan.incremental.snapshot.chunk.size", "20"), accountsTable))
			j.Parallelism, j.Checkpoints, j.Timeout = 2, 30*time.Millisecond, 4*time.Minute
			r := j.Start(t)
			const writers = 4
			var wg sync.WaitGroup
			ops := make([]int, writers)
			for w := range writers {
				c := s.conn()
				wg.Add(1)
				go func() {
					defer wg.Done()
					ops[w] = nonTransactionalLoad(t, c, table, w, rows, func() bool { return readsBinlog(r) })
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			// A change after the load, which only the binary log holds.
			admin.Exec(t, fmt.Sprintf("INSERT INTO %s VALUES (%d, 0, 'last')", table, 10*rows+9))
			want := cdctest.TableCounts(t, admin, table)
			got := cdctest.WaitMirror(t, r, accountsTable.Schema, want)
			records := r.Sink.Committed()
			r.Stop()
			t.Logf("%s: %d statements by %d writers, %d records", engine, ops[0]+ops[1]+ops[2]+ops[3], writers, len(records))
			if p := r.Sink.Problems(); len(p) > 0 {
				t.Errorf("sink problems: %v", p)
			}
			if bad := checkChangelogByKey(accountsTable.Schema, records); len(bad) > 0 {
				if len(bad) > 20 {
					bad = append(bad[:20], fmt.Sprintf("... and %d more", len(bad)-20))
				}
				t.Errorf("the changelog is not consistent key by key:\n  %s", strings.Join(bad, "\n  "))
			}
			if !maps.Equal(got, want) {
				t.Fatalf("the changelog does not mirror the table:\n%s", cdctest.DiffCounts(got, want))
			}
		})
	}
}

// readsBinlog tells whether a reader of r reports that it reads the binary
// log, the snapshot being read.
func readsBinlog(r *cdctest.Running) bool {
	for _, m := range r.Env.Metrics() {
		if m.Status != nil && m.Status["phase"] == "binlog" {
			return true
		}
	}
	select {
	case <-r.Finished():
		return true // nothing more to wait for
	default:
		return false
	}
}

// nonTransactionalLoad runs statements of writer w (of at most four) on
// an accounts table whose rows have keys 10, 20, ..., 10*rows, each in
// autocommit: updates and deletes of any key, inserts of keys and key
// changes to keys of the writer's own (10*k + w%4 + 1 and 10*k + w%4 + 5,
// past 10*rows once those are mostly taken), so that the writers never
// collide. It runs at least 300 of them, and goes on until done reports
// true (100000 at the most); it returns how many ran.
func nonTransactionalLoad(t *testing.T, c *conn, table string, w, rows int, done func() bool) int {
	rng := rand.New(rand.NewPCG(uint64(w)+11, 3))
	used := map[int]bool{}
	var mine []int
	beyond := 10 * (rows + 1)
	fresh := func() int {
		for range 20 {
			k := 10*rng.IntN(rows+1) + w%4 + 1 + 4*rng.IntN(2)
			if !used[k] {
				used[k] = true
				return k
			}
		}
		// The keys between the table's are mostly taken: one past them.
		beyond += 10
		return beyond + w%4 + 1
	}
	some := func() int {
		if len(mine) > 0 && rng.IntN(2) == 0 {
			return mine[rng.IntN(len(mine))]
		}
		return 10 * (1 + rng.IntN(rows))
	}
	n := 0
	for ; n < 300 || !done(); n++ {
		if n >= 100000 {
			break
		}
		var q string
		switch op := rng.IntN(20); {
		case op < 8:
			q = fmt.Sprintf("UPDATE %s SET balance = balance + %d, note = 'u%d.%d' WHERE id = %d", table, rng.IntN(100)-50, w, n, some())
		case op < 11:
			q = fmt.Sprintf("DELETE FROM %s WHERE id = %d", table, some())
		case op < 17:
			k := fresh()
			mine = append(mine, k)
			q = fmt.Sprintf("INSERT INTO %s VALUES (%d, %d, 'i%d.%d')", table, k, n, w, n)
		default:
			k := fresh()
			mine = append(mine, k)
			q = fmt.Sprintf("UPDATE %s SET id = %d WHERE id = %d", table, k, some())
		}
		if _, err := c.Execute(q); err != nil {
			t.Errorf("writer %d: %s: %v", w, q, err)
			return n
		}
	}
	return n
}

// checkChangelogByKey replays a changelog of rows keyed by their first
// field and returns what is wrong with it: an insertion (+I, +U) of a key
// it holds, a retraction (-U, -D) of a key it does not hold or of a row
// other than the key's current one.
func checkChangelogByKey(rt *types.RowType, records []connector.TableRecord) []string {
	text := cdctest.RecordKey(rt)
	held := map[string]string{}
	var bad []string
	for i, r := range records {
		row := strings.TrimPrefix(text(connector.TableRecord{Kind: changelog.Insert, Row: r.Row}), "+I|")
		key, _, _ := strings.Cut(row, "|")
		cur, ok := held[key]
		if r.Kind.IsAddition() {
			if ok {
				bad = append(bad, fmt.Sprintf("record %d: %s %s while key %s holds %s", i, r.Kind, row, key, cur))
			}
			held[key] = row
			continue
		}
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("record %d: %s %s of key %s, which the changelog does not hold", i, r.Kind, row, key))
		case cur != row:
			bad = append(bad, fmt.Sprintf("record %d: %s %s while key %s holds %s", i, r.Kind, row, key, cur))
		}
		delete(held, key)
	}
	return bad
}

// TestNonTransactionalChunkNeedsLockTables checks that a user without the
// LOCK TABLES privilege reads an InnoDB table, whose chunks take no lock,
// and that a MyISAM table stops the job with an error naming the table,
// the privilege and the GRANT that gives it; once granted, the job reads
// the table.
func TestNonTransactionalChunkNeedsLockTables(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	db := s.newDatabase(admin)
	admin.Exec(t, "CREATE TABLE "+db+".accounts "+cdctest.AccountsColumns+" ENGINE = MyISAM",
		"CREATE TABLE "+db+".ledger "+cdctest.AccountsColumns+" ENGINE = InnoDB",
		"CREATE USER 'locker'@'%' IDENTIFIED BY 'pw'",
		"GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'locker'@'%'")
	cdctest.FillAccounts(t, admin, db+".accounts", 1, 30)
	cdctest.FillAccounts(t, admin, db+".ledger", 1, 30)
	as := func(table string) map[string]string {
		return s.options(db, table, "username", "locker", "password", "pw", "scan.incremental.snapshot.chunk.size", "10")
	}

	start := func(table string) *cdctest.Running {
		j := job(openSource(t, as(table), accountsTable))
		j.Checkpoints = 20 * time.Millisecond
		return j.Start(t)
	}
	r := start("ledger")
	want := cdctest.TableCounts(t, admin, db+".ledger")
	if got := cdctest.WaitMirror(t, r, accountsTable.Schema, want); !maps.Equal(got, want) {
		t.Fatalf("the InnoDB table, read without LOCK TABLES:\n%s", cdctest.DiffCounts(got, want))
	}
	r.Stop()

	err := runFails(t, as("accounts"), accountsTable)
	t.Logf("without LOCK TABLES: %v", err)
	cdctest.WantError(t, err, db+".accounts", "ENGINE = MyISAM", "LOCK TABLES", "user 'locker'", "GRANT LOCK TABLES ON `"+db+"`.* TO 'locker'")

	admin.Exec(t, "GRANT LOCK TABLES ON "+db+".* TO 'locker'@'%'")
	r = start("accounts")
	want = cdctest.TableCounts(t, admin, db+".accounts")
	if got := cdctest.WaitMirror(t, r, accountsTable.Schema, want); !maps.Equal(got, want) {
		t.Fatalf("the MyISAM table, with LOCK TABLES granted:\n%s", cdctest.DiffCounts(got, want))
	}
	r.Stop()
}

// TestLockedChunkReleasesLock reads chunks of an Aria table with a reader
// of the source: after a chunk is read, the reader's connection is not
// locked (it reads a table it did not lock) and the table takes writes;
// after a chunk's query fails under the lock, the connection is closed and
// the table takes writes; the next chunk is read on a new connection.
func TestLockedChunkReleasesLock(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	db := s.newDatabase(admin)
	table := db + ".accounts"
	admin.Exec(t, "CREATE TABLE "+table+" "+cdctest.AccountsColumns+" ENGINE = Aria",
		"CREATE TABLE "+db+".other (id INT PRIMARY KEY) ENGINE = Aria",
		// A lock left held fails the test instead of holding it for a day.
		"SET SESSION lock_wait_timeout = 60")
	cdctest.FillAccounts(t, admin, table, 1, 30)
	src, ok := openSource(t, s.options(db, "accounts"), accountsTable).(*Source)
	if !ok {
		t.Fatal("the connector's source is not a *Source")
	}
	rd, err := src.NewReader(testReaderContext{})
	if err != nil {
		t.Fatal(err)
	}
	r := rd.(*reader[connector.TableRecord])
	defer r.Close()
	if _, err := r.connection(); err != nil {
		t.Fatal(err)
	}
	ti := r.tables[table]
	if ti == nil || transactional(ti.engine) {
		t.Fatalf("the table is %+v, want an Aria table", ti)
	}

	var out countingOutput
	rows, err := r.readChunk(&out, &chunk{table: table})
	if err != nil || rows != 30 || out.rows != 30 {
		t.Fatalf("reading the table as one chunk: %d rows, %d emitted, %v", rows, out.rows, err)
	}
	if r.snapConn == nil {
		t.Fatal("the reader closed its connection after a chunk read without error")
	}
	if _, err := r.snapConn.Execute("SELECT COUNT(*) FROM " + db + ".other"); err != nil {
		t.Fatalf("the reader's connection, after the chunk: %v", err)
	}
	admin.Exec(t, "INSERT INTO "+table+" VALUES (31, 31, 'after the first read')")

	name := ti.cols[1].name
	ti.cols[1].name = "no_such_column"
	_, err = r.readChunk(&out, &chunk{table: table, index: 1})
	ti.cols[1].name = name
	cdctest.WantError(t, err, "chunk 1", table, "LOCK TABLES", "no_such_column")
	if r.snapConn != nil {
		t.Fatal("the reader kept its connection after a chunk's query failed under the lock")
	}
	admin.Exec(t, "INSERT INTO "+table+" VALUES (32, 32, 'after the failed read')")

	out.rows = 0
	if rows, err := r.readChunk(&out, &chunk{table: table, index: 2}); err != nil || rows != 32 || out.rows != 32 {
		t.Fatalf("reading the table again: %d rows, %d emitted, %v", rows, out.rows, err)
	}
	admin.Exec(t, "INSERT INTO "+table+" VALUES (33, 33, 'after the last read')")
}

// testReaderContext is the context of a reader a test runs itself: only
// its logger and its names are used.
type testReaderContext struct{ connector.ReaderContext }

// Log returns the default logger.
func (testReaderContext) Log() *slog.Logger { return slog.Default() }

// SourceName names the source.
func (testReaderContext) SourceName() string { return "mysql-cdc" }

// Subtask is the first.
func (testReaderContext) Subtask() int { return 0 }

// Parallelism is one.
func (testReaderContext) Parallelism() int { return 1 }

// countingOutput counts the records a reader emits.
type countingOutput struct{ rows int }

// Split returns the output of any split, which counts into o.
func (o *countingOutput) Split(string) connector.SplitOutput[connector.TableRecord] {
	return countingSplit{o: o}
}

// Room is unlimited.
func (o *countingOutput) Room() int { return 1 << 30 }

// BadRecord fails the read.
func (o *countingOutput) BadRecord(d connector.DeadLetter) error {
	return fmt.Errorf("bad record at %s: %s", d.Location, d.Error)
}

// countingSplit is a split's output of countingOutput.
type countingSplit struct {
	connector.SplitOutput[connector.TableRecord]
	o *countingOutput
}

// Emit counts a record.
func (s countingSplit) Emit(connector.TableRecord) { s.o.rows++ }

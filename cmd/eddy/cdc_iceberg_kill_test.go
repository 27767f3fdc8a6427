package main

import (
	"context"
	"database/sql"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icebergo "github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/go-mysql-org/go-mysql/client"
	_ "modernc.org/sqlite" // database/sql driver "sqlite" of the Iceberg catalog

	"github.com/eddystream/eddy/internal/testservers"
)

// TestCDCIcebergKill9 mirrors a MariaDB table into an Iceberg upsert table
// with `eddy run job.sql` (a mysql-cdc table inserted into an iceberg table
// of a SQLite catalog and a local warehouse) while writers on three
// connections insert, update, upsert and delete rows, and kills the eddy
// process with SIGKILL four times (once before the load, three times
// during it), restarting it on the same checkpoint directory each time;
// with the heap backend the sink compacts its small files meanwhile.
//
// Every transaction of the load first takes the next number of a counter
// row, which it holds locked until it commits, so the numbers order the
// transactions as the binary log does; every row a transaction writes
// carries a version made of that number and the row's place in it. The
// test thus knows the source table after every change, and checks that
// every Iceberg snapshot, read by iceberg-go's scan, is exactly the source
// table after some prefix of the changes (and, before the load, part of
// the initial table, while the CDC source reads it), that the snapshots go
// forward through the changes, never back, and that the last snapshot
// equals the MariaDB table row for row.
func TestCDCIcebergKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the eddy binary against a private MariaDB server")
	}
	bin := buildEddy(t)
	// With the heap backend the sink also compacts its small files while
	// the job runs and is killed.
	t.Run("heap", func(t *testing.T) { testCDCIcebergKill9(t, bin, nil, true) })
	t.Run("pebble", func(t *testing.T) {
		testCDCIcebergKill9(t, bin, []string{"--state", "pebble", "--state-dir", t.TempDir()}, false)
	})
}

// icebergRow is a row of the test's table: its key, the version of the
// change that wrote it, and a text.
type icebergRow struct {
	id   int64
	ver  int64
	note string
}

func (r icebergRow) String() string { return fmt.Sprintf("%d|%d|%s", r.id, r.ver, r.note) }

// rowChange is one row change of the source: the row written, or the
// deletion of key id.
type rowChange struct {
	icebergRow
	deleted bool
}

// cdcTx is a committed transaction of the load: its number from the
// counter row and its row changes in order.
type cdcTx struct {
	n       int64
	changes []rowChange
}

// initialRows is the number of rows the table holds before the load, all
// of version 0.
const initialRows = 3000

func testCDCIcebergKill9(t *testing.T, bin string, state []string, compact bool) {
	m := testservers.StartMariaDB(t)
	my, err := client.Connect(m.Addr(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer my.Close()
	run := func(q string) {
		t.Helper()
		if _, err := my.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	run("CREATE DATABASE shop")
	run("CREATE TABLE shop.items (id INT PRIMARY KEY, ver BIGINT NOT NULL, note VARCHAR(32))")
	run("CREATE TABLE shop.counter (n INT PRIMARY KEY, v BIGINT NOT NULL)")
	run("INSERT INTO shop.counter VALUES (1, 0)")
	for i := 1; i <= initialRows; i += 500 {
		var vals []string
		for j := i; j < i+500; j++ {
			vals = append(vals, fmt.Sprintf("(%d, 0, 'init%d')", j, j))
		}
		run("INSERT INTO shop.items VALUES " + strings.Join(vals, ","))
	}

	dir := t.TempDir()
	catalogDB, warehouse := filepath.Join(dir, "iceberg", "catalog.db"), filepath.Join(dir, "iceberg", "wh")
	job := filepath.Join(dir, "iceberg-mirror.sql")
	compaction := ""
	if compact {
		compaction = ",\n  'compaction-enabled' = 'true', 'flink-maintenance.rewrite.min-input-files' = '2',\n  'flink-maintenance.rewrite.schedule.commit-count' = '1'"
	}
	script := fmt.Sprintf(`
CREATE TABLE items_src (
  id INT, ver BIGINT, note STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'mysql-cdc', 'hostname' = '%s', 'port' = '%d', 'username' = 'root', 'password' = '',
  'database-name' = 'shop', 'table-name' = 'items', 'server-id' = '5720-5730',
  'scan.incremental.snapshot.chunk.size' = '250'
);
CREATE TABLE items_dst (
  id INT, ver BIGINT, note STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'iceberg', 'catalog-name' = 'eddy', 'catalog-type' = 'sql',
  'uri' = 'sqlite://%s', 'warehouse' = 'file://%s',
  'catalog-database' = 'shop', 'catalog-table' = 'items'%s
);
INSERT INTO items_dst SELECT * FROM items_src;
`, m.Host, m.Port, catalogDB, warehouse, compaction)
	if err := os.WriteFile(job, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	chk := filepath.Join(dir, "checkpoints")
	args := append([]string{"run", job, "--parallelism", "2", "--checkpoint-dir", chk, "--checkpoint-interval", "200ms"}, state...)
	runs := newKillRuns(t, bin, dir, args...)
	ice := &icebergReader{t: t, catalogDB: catalogDB, warehouse: warehouse, ident: table.Identifier{"shop", "items"}}

	initial := map[int64]icebergRow{}
	for id := int64(1); id <= initialRows; id++ {
		initial[id] = icebergRow{id: id, note: "init" + strconv.FormatInt(id, 10)}
	}
	initialState := sortedRows(initial)

	// The first run is killed while the CDC source reads the table (or
	// before its first checkpoint); the second one must get the whole
	// table into Iceberg before the load begins.
	rng := rand.New(rand.NewPCG(11, 12))
	first := runs.start()
	time.Sleep(500*time.Millisecond + time.Duration(rng.Int64N(int64(time.Second))))
	kill(first)
	kills := 1
	second := runs.start()
	if got, ok := ice.waitFor(90*time.Second, initialState); !ok {
		runs.dump()
		t.Fatalf("the Iceberg table never held the %d initial rows: it holds %d; first differences:\n%s", len(initialState), len(got), firstDiffs(got, initialState))
	}

	// The load runs on three connections while the process is killed
	// three more times and restarted.
	var (
		mu   sync.Mutex
		txs  []cdcTx
		wg   sync.WaitGroup
		stop = make(chan struct{})
		errs = make(chan error, 3)
	)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := icebergLoad(m.Addr(), w, stop, func(tx cdcTx) {
				mu.Lock()
				txs = append(txs, tx)
				mu.Unlock()
			}); err != nil {
				errs <- err
			}
		}()
	}
	time.Sleep(time.Second + time.Duration(rng.Int64N(int64(1500*time.Millisecond))))
	kill(second)
	kills++
	runs.killTimes(2, 13, 14, time.Second, 1500*time.Millisecond)
	kills += 2
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	runs.startLast()

	// The changes in the order of the binary log, and the source table
	// after each.
	sort.Slice(txs, func(i, j int) bool { return txs[i].n < txs[j].n })
	var changes []rowChange
	for i, tx := range txs {
		if tx.n != int64(i+1) {
			t.Fatalf("the load's transactions are numbered %d after %d: a transaction that took a number did not report its changes", tx.n, i)
		}
		changes = append(changes, tx.changes...)
	}
	hist := newSourceHistory(initial, changes)

	want := mariaRows(t, my)
	if final := sortedRows(hist.stateAt(len(changes))); !slices.Equal(final, want) {
		t.Fatalf("the load's own account of its changes ends with %d rows, MariaDB holds %d; first differences:\n%s", len(final), len(want), firstDiffs(final, want))
	}
	if got, ok := ice.waitFor(120*time.Second, want); !ok {
		runs.dump()
		t.Fatalf("the Iceberg table holds %d rows, MariaDB %d; first differences:\n%s", len(got), len(want), firstDiffs(got, want))
	}

	// Every snapshot, in the order of its sequence number.
	tbl := ice.load()
	snaps := slices.Clone(tbl.Metadata().Snapshots())
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].SequenceNumber < snaps[j].SequenceNumber })
	prev, atInitial, withLoad, compactions := 0, 0, 0, 0
	matched := false
	for _, s := range snaps {
		if s.Summary != nil && s.Summary.Operation == table.OpReplace {
			compactions++
		}
		rows := ice.scan(tbl.Scan(table.WithSnapshotID(s.SnapshotID)))
		seen := map[int64]bool{}
		for _, r := range rows {
			if seen[r.id] {
				t.Fatalf("snapshot %d holds key %d twice", s.SnapshotID, r.id)
			}
			seen[r.id] = true
			if !hist.held(r) {
				t.Fatalf("snapshot %d holds row %s, which the source never held", s.SnapshotID, r)
			}
		}
		c, ok := hist.prefix(rows, prev)
		switch {
		case ok:
			prev, matched = c, true
			withLoad++
		case !matched && hist.partOfInitial(rows):
			// Taken while the CDC source read the initial table.
			atInitial++
		default:
			runs.dump()
			t.Fatalf("snapshot %d (summary %v) with %d rows is not the source table after any prefix of its %d changes from change %d on",
				s.SnapshotID, s.Summary, len(rows), len(changes), prev)
		}
	}
	last := ice.scan(tbl.Scan())
	if got := renderRows(last); !slices.Equal(got, want) {
		t.Fatalf("the current snapshot holds %d rows, MariaDB %d; first differences:\n%s", len(got), len(want), firstDiffs(got, want))
	}
	if compact && compactions == 0 {
		runs.dump()
		t.Fatalf("compaction is on, but none of the %d snapshots compacted files", len(snaps))
	}
	resumed := 0
	for _, l := range runs.logs {
		if b, _ := os.ReadFile(l); strings.Contains(string(b), "resuming from the latest checkpoint") {
			resumed++
		}
	}
	t.Logf("%d kills, %d runs resumed from a checkpoint; %d transactions, %d row changes; %d snapshots (%d compactions): %d during the initial read, %d each the source after a prefix of the changes; %d rows at the end",
		kills, resumed, len(txs), len(changes), len(snaps), compactions, atInitial, withLoad, len(want))
}

// icebergLoad runs transactions of one to four row changes on a connection
// of its own until stop is closed, and reports each committed one. Worker
// w inserts new keys of its own, from (w+1)*1000000 on; its other changes
// hit random keys of 1 to 4000, which the workers share.
func icebergLoad(addr string, w int, stop <-chan struct{}, report func(cdcTx)) error {
	c, err := client.Connect(addr, "root", "", "")
	if err != nil {
		return fmt.Errorf("load %d: connecting to MariaDB at %s: %w", w, addr, err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(uint64(w), 99))
	next := int64(w+1) * 1_000_000
	exec := func(q string) (uint64, error) {
		r, err := c.Execute(q)
		if err != nil {
			return 0, fmt.Errorf("load %d: %s: %w", w, q, err)
		}
		defer r.Close()
		return r.AffectedRows, nil
	}
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if _, err := exec("BEGIN"); err != nil {
			return err
		}
		// The counter's row stays locked until COMMIT: numbers are taken
		// in the order transactions commit.
		r, err := c.Execute("UPDATE shop.counter SET v = LAST_INSERT_ID(v + 1) WHERE n = 1")
		if err != nil {
			return fmt.Errorf("load %d: taking a transaction number: %w", w, err)
		}
		tx := cdcTx{n: int64(r.InsertId)}
		r.Close()
		for k := range 1 + rng.IntN(4) {
			ver := tx.n*16 + int64(k)
			id := 1 + rng.Int64N(4000)
			switch op := rng.IntN(20); {
			case op < 8:
				note := "u" + strconv.FormatInt(ver, 10)
				n, err := exec(fmt.Sprintf("UPDATE shop.items SET ver = %d, note = '%s' WHERE id = %d", ver, note, id))
				if err != nil {
					return err
				}
				if n == 1 {
					tx.changes = append(tx.changes, rowChange{icebergRow: icebergRow{id, ver, note}})
				}
			case op < 12:
				n, err := exec(fmt.Sprintf("DELETE FROM shop.items WHERE id = %d", id))
				if err != nil {
					return err
				}
				if n == 1 {
					tx.changes = append(tx.changes, rowChange{icebergRow: icebergRow{id: id}, deleted: true})
				}
			case op < 17:
				note := "i" + strconv.FormatInt(ver, 10)
				if _, err := exec(fmt.Sprintf("INSERT INTO shop.items VALUES (%d, %d, '%s') ON DUPLICATE KEY UPDATE ver = VALUES(ver), note = VALUES(note)", id, ver, note)); err != nil {
					return err
				}
				tx.changes = append(tx.changes, rowChange{icebergRow: icebergRow{id, ver, note}})
			default:
				note := "n" + strconv.FormatInt(ver, 10)
				if _, err := exec(fmt.Sprintf("INSERT INTO shop.items VALUES (%d, %d, '%s')", next, ver, note)); err != nil {
					return err
				}
				tx.changes = append(tx.changes, rowChange{icebergRow: icebergRow{next, ver, note}})
				next++
			}
		}
		if _, err := exec("COMMIT"); err != nil {
			return err
		}
		report(tx)
		time.Sleep(time.Millisecond)
	}
}

// sourceHistory is the source table after every prefix of its changes:
// the initial rows, the changes, and a fingerprint of the table after
// each prefix, which finds the prefixes a snapshot can be.
type sourceHistory struct {
	initial map[int64]icebergRow
	changes []rowChange
	// byPrint lists the prefix lengths of each fingerprint, ascending.
	byPrint map[uint64][]int
	// versions holds every row the source held.
	versions map[icebergRow]bool
}

// rowSeed seeds the hashes of rows.
var rowSeed = maphash.MakeSeed()

// rowPrint is the hash of a row; a table's fingerprint is the sum of the
// hashes of its rows, which a change updates in constant time.
func rowPrint(r icebergRow) uint64 { return maphash.String(rowSeed, r.String()) }

func newSourceHistory(initial map[int64]icebergRow, changes []rowChange) *sourceHistory {
	h := &sourceHistory{initial: initial, changes: changes, byPrint: map[uint64][]int{}, versions: map[icebergRow]bool{}}
	cur := map[int64]icebergRow{}
	var print uint64
	for id, r := range initial {
		cur[id] = r
		print += rowPrint(r)
		h.versions[r] = true
	}
	h.byPrint[print] = append(h.byPrint[print], 0)
	for i, c := range changes {
		if old, ok := cur[c.id]; ok {
			print -= rowPrint(old)
			delete(cur, c.id)
		}
		if !c.deleted {
			cur[c.id] = c.icebergRow
			print += rowPrint(c.icebergRow)
			h.versions[c.icebergRow] = true
		}
		h.byPrint[print] = append(h.byPrint[print], i+1)
	}
	return h
}

// stateAt returns the source table after the first n changes.
func (h *sourceHistory) stateAt(n int) map[int64]icebergRow {
	cur := make(map[int64]icebergRow, len(h.initial))
	for id, r := range h.initial {
		cur[id] = r
	}
	for _, c := range h.changes[:n] {
		if c.deleted {
			delete(cur, c.id)
		} else {
			cur[c.id] = c.icebergRow
		}
	}
	return cur
}

// held reports whether the source held row r at some time.
func (h *sourceHistory) held(r icebergRow) bool { return h.versions[r] }

// prefix returns the smallest n ≥ from such that rows are exactly the
// source table after its first n changes.
func (h *sourceHistory) prefix(rows []icebergRow, from int) (int, bool) {
	var print uint64
	for _, r := range rows {
		print += rowPrint(r)
	}
	want := renderRows(rows)
	for _, n := range h.byPrint[print] {
		if n >= from && slices.Equal(sortedRows(h.stateAt(n)), want) {
			return n, true
		}
	}
	return 0, false
}

// partOfInitial reports whether rows are some of the initial rows.
func (h *sourceHistory) partOfInitial(rows []icebergRow) bool {
	for _, r := range rows {
		if h.initial[r.id] != r {
			return false
		}
	}
	return true
}

// sortedRows renders a table's rows, sorted.
func sortedRows(m map[int64]icebergRow) []string {
	out := make([]string, 0, len(m))
	for _, r := range m {
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}

// renderRows renders rows, sorted.
func renderRows(rows []icebergRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	slices.Sort(out)
	return out
}

// mariaRows returns the rows of shop.items, rendered and sorted.
func mariaRows(t *testing.T, my *client.Conn) []string {
	t.Helper()
	r, err := my.Execute("SELECT id, ver, note FROM shop.items")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows := make([]icebergRow, len(r.Values))
	for i, v := range r.Values {
		rows[i] = icebergRow{id: v[0].AsInt64(), ver: v[1].AsInt64(), note: string(v[2].AsString())}
	}
	return renderRows(rows)
}

// icebergReader reads the table the job writes, through a SQLite catalog
// of its own.
type icebergReader struct {
	t                    *testing.T
	catalogDB, warehouse string
	ident                table.Identifier
}

// tryLoad loads the table's current metadata.
func (r *icebergReader) tryLoad() (*table.Table, error) {
	// Opening a missing file would create it: the job makes the catalog.
	if _, err := os.Stat(r.catalogDB); err != nil {
		return nil, fmt.Errorf("the job has not made the SQLite catalog %s yet: %w", r.catalogDB, err)
	}
	db, err := sql.Open("sqlite", "file:"+r.catalogDB+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, fmt.Errorf("opening the SQLite catalog %s: %w", r.catalogDB, err)
	}
	defer db.Close()
	// The job creates the catalog's tables; the reader never does.
	cat, err := sqlcat.NewCatalog("eddy", db, sqlcat.SQLite, icebergo.Properties{
		"init_catalog_tables": "false", "warehouse": "file://" + r.warehouse,
	})
	if err != nil {
		return nil, fmt.Errorf("opening the Iceberg catalog in %s: %w", r.catalogDB, err)
	}
	tbl, err := cat.LoadTable(context.Background(), r.ident)
	if err != nil {
		return nil, fmt.Errorf("loading Iceberg table %v from %s: %w", r.ident, r.catalogDB, err)
	}
	return tbl, nil
}

// load loads the table, failing the test when it cannot.
func (r *icebergReader) load() *table.Table {
	r.t.Helper()
	tbl, err := r.tryLoad()
	if err != nil {
		r.t.Fatal(err)
	}
	return tbl
}

// waitFor waits until the table's current snapshot holds the rows want
// (rendered and sorted), for at most d, and returns the rows it last held.
func (r *icebergReader) waitFor(d time.Duration, want []string) ([]string, bool) {
	r.t.Helper()
	var got []string
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		tbl, err := r.tryLoad()
		if err != nil || tbl.CurrentSnapshot() == nil {
			continue // the job has not created the table or committed yet
		}
		if got = renderRows(r.scan(tbl.Scan())); slices.Equal(got, want) {
			return got, true
		}
	}
	return got, false
}

// scan reads the rows of a scan with iceberg-go.
func (r *icebergReader) scan(s *table.Scan) []icebergRow {
	r.t.Helper()
	at, err := s.ToArrowTable(context.Background())
	if err != nil {
		r.t.Fatalf("scanning Iceberg table %v: %v", r.ident, err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1<<16)
	defer tr.Release()
	var rows []icebergRow
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			id, err1 := strconv.ParseInt(rec.Column(0).ValueStr(i), 10, 64)
			ver, err2 := strconv.ParseInt(rec.Column(1).ValueStr(i), 10, 64)
			if err1 != nil || err2 != nil {
				r.t.Fatalf("Iceberg table %v: row %d of a batch has id %q and ver %q", r.ident, i, rec.Column(0).ValueStr(i), rec.Column(1).ValueStr(i))
			}
			rows = append(rows, icebergRow{id: id, ver: ver, note: rec.Column(2).ValueStr(i)})
		}
	}
	return rows
}

package iceberg

import (
	"context"
	"fmt"
	"maps"
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
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// upsertType is the row type of the sink tests' table: a key, the number of
// the change that wrote the row, and a text.
var upsertType = types.MustRowType(types.F("id", types.BigInt().NotNull()), types.F("seq", types.BigInt()), types.F("note", types.String()))

// sinkOptions returns the options of an iceberg table name in a SQLite
// catalog under dir.
func sinkOptions(dir, name string) map[string]string {
	return map[string]string{
		"catalog-name": "eddy", "catalog-type": "sql",
		"uri":              "sqlite://" + filepath.Join(dir, "catalog.db"),
		"warehouse":        "file://" + filepath.Join(dir, "warehouse"),
		"catalog-database": "db", "catalog-table": name,
	}
}

// loadTestTable loads db.name from the catalog under dir, through a
// catalog of its own.
func loadTestTable(t *testing.T, dir, name string) *table.Table {
	t.Helper()
	tbl, err := testCatalogAt(t, dir).LoadTable(context.Background(), table.Identifier{"db", name})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// testCatalogAt opens the SQLite catalog the sink options of dir name.
func testCatalogAt(t *testing.T, dir string) catalog.Catalog {
	t.Helper()
	cat, err := openCatalog(context.Background(), "sql", "eddy", "sqlite://"+filepath.Join(dir, "catalog.db"), "file://"+filepath.Join(dir, "warehouse"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, ok := cat.(catalog.Closer); ok {
			_ = c.Close()
		}
	})
	return cat
}

// kvChange is change i of the test stream: every fifth deletes key i%keys,
// the others write (i%keys, i, "n<i>").
func kvChange(i, keys int64) changelog.Change[types.Row] {
	k := i % keys
	if i%5 == 4 {
		return changelog.Of(changelog.Delete, types.MustBuildRow(upsertType, nil, k, nil, nil))
	}
	return changelog.Of(changelog.UpdateAfter, types.MustBuildRow(upsertType, nil, k, i, "n"+strconv.FormatInt(i, 10)))
}

// kvState is the table after changes [0, n), as scanRows renders it.
func kvState(n, keys int64) []string {
	rows := map[int64]string{}
	for i := int64(0); i < n; i++ {
		k := i % keys
		if i%5 == 4 {
			delete(rows, k)
		} else {
			rows[k] = fmt.Sprintf("%d | %d | n%d", k, i, i)
		}
	}
	var out []string
	for _, r := range rows {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

func openKVSink(t *testing.T, dir, name string) connector.Sink[connector.TableRecord] {
	t.Helper()
	s, err := connector.OpenTableSink(connector.Default, "iceberg", sinkOptions(dir, name), &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSinkExactlyOnceAcrossFailures(t *testing.T) {
	dir := t.TempDir()
	tbl := runKVWithFailures(t, dir, "kv")
	t.Logf("%d snapshots, %d rows", len(tbl.Metadata().Snapshots()), len(scanRows(t, tbl)))
}

// runKVWithFailures writes 30 000 changes of kvChange over 700 keys into
// the table name under dir through a job that fails three times, and
// checks the result: the job restarted three times, the table equals the
// source, no checkpoint was committed twice, and every snapshot is the
// table after some prefix of the changes — its newest row is change m,
// and at most the deletion after it is in too. It returns the table.
func runKVWithFailures(t *testing.T, dir, name string) *table.Table {
	t.Helper()
	return runKVWithFailuresWith(t, dir, name, nil)
}

// runKVWithFailuresWith is runKVWithFailures with the sink options extra
// added to those of sinkOptions. A snapshot of a compaction shares its
// checkpoint with the commit it follows.
func runKVWithFailuresWith(t *testing.T, dir, name string, extra map[string]string) *table.Table {
	t.Helper()
	const n, keys = 30000, 700
	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(40*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
	var mu sync.Mutex
	panicAt := map[int64]bool{7000: true, 16000: true, 24000: true}
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: 60000},
		func(i int64) int64 { return i }, eddy.NoWatermarks[int64]()).Parallelism(1)
	changes := eddy.Map(src, func(i int64) changelog.Change[types.Row] {
		mu.Lock()
		boom := panicAt[i]
		delete(panicAt, i)
		mu.Unlock()
		if boom {
			panic(fmt.Sprintf("injected failure at change %d", i))
		}
		return kvChange(i, keys)
	}).Parallelism(1)
	key := types.NewKeyEncoder(upsertType, 0)
	opts := sinkOptions(dir, name)
	maps.Copy(opts, extra)
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	eddy.WriteUpserts(changes, "kv", key.Key, sink, eddy.KeyedBySinkKey())
	if err := env.Execute(context.Background(), "iceberg-failures"); err != nil {
		t.Fatal(err)
	}
	if r := env.Restarts(); r != 3 {
		t.Fatalf("job restarted %d times, want 3", r)
	}
	tbl := loadTestTable(t, dir, name)
	if got, want := scanRows(t, tbl), kvState(n, keys); !slices.Equal(got, want) {
		t.Fatalf("the table holds %d rows, want %d; first differences:\n%s", len(got), len(want), rowDiff(got, want))
	}
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) < 3 {
		t.Fatalf("%d snapshots, want one per checkpoint", len(snaps))
	}
	seen := map[string]bool{}
	for _, s := range snaps {
		if s.Summary == nil || s.Summary.Properties[summaryCheckpointID] == "" {
			t.Fatalf("snapshot %d has no %s in its summary", s.SnapshotID, summaryCheckpointID)
		}
		id := s.Summary.Properties[summaryJobID] + "/" + s.Summary.Properties[summaryCheckpointID]
		if s.Summary.Properties[summaryCompaction] != "" {
			// Compactions are no checkpoints: a commit may be followed
			// by more than one (at the end of the input).
			id += "/compaction/" + strconv.FormatInt(s.SnapshotID, 10)
		}
		if seen[id] {
			t.Fatalf("checkpoint %s was committed twice", id)
		}
		seen[id] = true
		got := scanSnapshot(t, tbl, s.SnapshotID)
		m := int64(-1)
		for _, r := range got {
			var k, seq int64
			fmt.Sscanf(r, "%d | %d", &k, &seq)
			m = max(m, seq)
		}
		if !slices.Equal(got, kvState(m+1, keys)) && !slices.Equal(got, kvState(m+2, keys)) {
			t.Fatalf("snapshot %d (checkpoint %s) is no state of the source: newest change %d, %d rows", s.SnapshotID, id, m, len(got))
		}
	}
	return tbl
}

// scanSnapshot reads the rows of one snapshot, as scanRows does.
func scanSnapshot(t *testing.T, tbl *table.Table, id int64) []string {
	t.Helper()
	return scanRowsOf(t, tbl.Scan(table.WithSnapshotID(id)))
}

// rowDiff lists the first rows that only one of two sorted lists has.
func rowDiff(got, want []string) string {
	var out string
	shown := 0
	for _, r := range got {
		if _, ok := slices.BinarySearch(want, r); !ok && shown < 10 {
			out += "extra: " + r + "\n"
			shown++
		}
	}
	for _, r := range want {
		if _, ok := slices.BinarySearch(got, r); !ok && shown < 20 {
			out += "missing: " + r + "\n"
			shown++
		}
	}
	return out
}

// TestSinkDeleteInTheSameSnapshot writes a row and deletes it before the
// one commit at the end of the input: the position delete and the data
// file share a sequence number, and the row must still be gone.
func TestSinkDeleteInTheSameSnapshot(t *testing.T) {
	dir := t.TempDir()
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	row := func(k, seq int64) types.Row {
		return types.MustBuildRow(upsertType, nil, k, seq, "n"+strconv.FormatInt(seq, 10))
	}
	changes := eddy.FromSlice(env, []changelog.Change[types.Row]{
		changelog.Of(changelog.Insert, row(1, 1)),
		changelog.Of(changelog.Insert, row(2, 2)),
		changelog.Of(changelog.Delete, row(1, 1)),
		changelog.Of(changelog.UpdateAfter, row(2, 3)),
		changelog.Of(changelog.Insert, row(1, 4)),
		changelog.Of(changelog.Delete, row(1, 4)),
		changelog.Of(changelog.Insert, row(3, 5)),
	}, eddy.NoWatermarks[changelog.Change[types.Row]]())
	key := types.NewKeyEncoder(upsertType, 0)
	eddy.WriteUpserts(eddy.AsChangelog(changes, changelog.Upsert), "kv", key.Key, openKVSink(t, dir, "kv"), eddy.KeyedBySinkKey())
	if err := env.Execute(context.Background(), "same-snapshot"); err != nil {
		t.Fatal(err)
	}
	tbl := loadTestTable(t, dir, "kv")
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Fatalf("%d snapshots, want 1", n)
	}
	want := []string{"2 | 3 | n3", "3 | 5 | n5"}
	if got := scanRows(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// scanRowsOf reads the rows a scan returns, as scanRows renders them.
func scanRowsOf(t *testing.T, scan *table.Scan) []string {
	t.Helper()
	at, err := scan.ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1<<20)
	defer tr.Release()
	var rows []string
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			vals := make([]string, rec.NumCols())
			for c := range vals {
				vals[c] = rec.Column(c).ValueStr(i)
			}
			rows = append(rows, strings.Join(vals, " | "))
		}
	}
	sort.Strings(rows)
	return rows
}

func TestSinkMaintenance(t *testing.T) {
	const n, keys = 20000, 300
	dir := t.TempDir()
	// An orphan of an old failed attempt, and a file as new as the
	// uncommitted files of a checkpoint in flight.
	dataDir := filepath.Join(dir, "warehouse", "db.db", "kv", "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, fresh := filepath.Join(dataDir, "eddy-00000000000000aa.parquet"), filepath.Join(dataDir, "eddy-00000000000000bb.parquet")
	for _, f := range []string{old, fresh} {
		if err := os.WriteFile(f, []byte("not parquet"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	weekAgo := time.Now().Add(-7 * 24 * time.Hour)
	if err := os.Chtimes(old, weekAgo, weekAgo); err != nil {
		t.Fatal(err)
	}
	opts := sinkOptions(dir, "kv")
	opts["maintenance.interval"] = "1 ms"
	opts["history.expire.max-snapshot-age-ms"] = "0"
	opts["history.expire.min-snapshots-to-keep"] = "2"
	opts["maintenance.orphan-files.older-than"] = "1 h"
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: 20000},
		func(i int64) changelog.Change[types.Row] { return kvChange(i, keys) }, eddy.NoWatermarks[changelog.Change[types.Row]]()).Parallelism(1)
	key := types.NewKeyEncoder(upsertType, 0)
	eddy.WriteUpserts(eddy.AsChangelog(src, changelog.Upsert), "kv", key.Key, sink, eddy.KeyedBySinkKey())
	if err := env.Execute(context.Background(), "iceberg-maintenance"); err != nil {
		t.Fatal(err)
	}
	tbl := loadTestTable(t, dir, "kv")
	if got, want := scanRows(t, tbl), kvState(n, keys); !slices.Equal(got, want) {
		t.Fatalf("the table holds %d rows, want %d; first differences:\n%s", len(got), len(want), rowDiff(got, want))
	}
	last, _ := strconv.Atoi(tbl.CurrentSnapshot().Summary.Properties[summaryCheckpointID])
	if snaps := len(tbl.Metadata().Snapshots()); snaps*2 > last {
		t.Errorf("%d snapshots after %d checkpoints: old snapshots were not expired", snaps, last)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the week-old orphan file is still there (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("the new unreferenced file was removed: %v", err)
	}
}

func TestSQLInsertIntoIceberg(t *testing.T) {
	dir := t.TempDir()
	with := func(name string) string {
		return fmt.Sprintf(`'connector' = 'iceberg', 'catalog-name' = 'eddy', 'uri' = 'sqlite://%s', 'warehouse' = 'file://%s', 'catalog-database' = 'lake', 'catalog-table' = '%s'`,
			filepath.Join(dir, "catalog.db"), filepath.Join(dir, "warehouse"), name)
	}
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '50 ms';
CREATE TABLE totals (k INT, n BIGINT, total DECIMAL(12, 2), PRIMARY KEY (k) NOT ENFORCED) WITH (%s);
CREATE TABLE events (k INT, amount DECIMAL(12, 2), note STRING) WITH (%s);
CREATE VIEW input AS SELECT * FROM (VALUES (1, 1.50, 'a'), (2, 2.25, 'b'), (1, 3.00, 'c'), (3, 0.10, 'd'), (2, 1.00, 'e')) AS t(k, amount, note);
BEGIN STATEMENT SET;
INSERT INTO totals SELECT k, COUNT(*), SUM(amount) FROM input GROUP BY k;
INSERT INTO events SELECT * FROM input;
END;
`, with("totals"), with("events"))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(context.Background(), "sql-iceberg"); err != nil {
		t.Fatal(err)
	}
	cat := testCatalogAt(t, dir)
	totals, err := cat.LoadTable(context.Background(), table.Identifier{"lake", "totals"})
	if err != nil {
		t.Fatal(err)
	}
	sc := totals.Schema()
	var ids []string
	for _, id := range sc.IdentifierFieldIDs {
		f, _ := sc.FindFieldByID(id)
		ids = append(ids, f.Name)
	}
	if !slices.Equal(ids, []string{"k"}) {
		t.Errorf("identifier fields %q, want [k]", ids)
	}
	// Arrow prints decimals without trailing zeros.
	want := []string{"1 | 2 | 4.5", "2 | 2 | 3.25", "3 | 1 | 0.1"}
	if got := scanRows(t, totals); !slices.Equal(got, want) {
		t.Errorf("totals: got %q, want %q", got, want)
	}
	events, err := cat.LoadTable(context.Background(), table.Identifier{"lake", "events"})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"1 | 1.5 | a", "1 | 3 | c", "2 | 1 | e", "2 | 2.25 | b", "3 | 0.1 | d"}
	if got := scanRows(t, events); !slices.Equal(got, want) {
		t.Errorf("events: got %q, want %q", got, want)
	}
}

// TestCommitRefusesMissingFiles commits a checkpoint one of whose files is
// gone: the commit fails, naming the file, and the table is unchanged.
func TestCommitRefusesMissingFiles(t *testing.T) {
	tbl := testTable(t, testCatalog(t), "missing", upsertType, []int{0}, 2)
	missing := fileMeta{Content: contentData, Path: tbl.Location() + "/data/eddy-00000000000000ff.parquet", Format: "PARQUET", RecordCount: 1, FileSize: 100}
	_, err := commitOnce(context.Background(), tbl, "job", 7, []fileMeta{missing}, nil)
	if err == nil || !strings.Contains(err.Error(), "eddy-00000000000000ff.parquet is gone") {
		t.Fatalf("commit of a missing file: %v", err)
	}
	if tbl.CurrentSnapshot() != nil {
		t.Fatalf("the table has a snapshot after a failed commit")
	}
}

// TestSinkOneSnapshotOfManyUpdates writes many updates of few keys in one
// snapshot, at the end of a bounded input without checkpoints: the
// position deletes name data files of the same commit.
func TestSinkOneSnapshotOfManyUpdates(t *testing.T) {
	const n, keys = 400, 50
	for _, p := range []int{1, 2} {
		dir := t.TempDir()
		env := eddy.NewEnvironment(eddy.WithParallelism(p))
		src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n},
			func(i int64) changelog.Change[types.Row] { return kvChange(i, keys) }, eddy.NoWatermarks[changelog.Change[types.Row]]()).Parallelism(1)
		key := types.NewKeyEncoder(upsertType, 0)
		eddy.WriteUpserts(eddy.AsChangelog(src, changelog.Upsert), "kv", key.Key, openKVSink(t, dir, "kv"), eddy.KeyedBySinkKey())
		if err := env.Execute(context.Background(), "one-snapshot"); err != nil {
			t.Fatalf("parallelism %d: %v", p, err)
		}
		tbl := loadTestTable(t, dir, "kv")
		if s := len(tbl.Metadata().Snapshots()); s != 1 {
			t.Errorf("parallelism %d: %d snapshots, want 1", p, s)
		}
		if got, want := scanRows(t, tbl), kvState(n, keys); !slices.Equal(got, want) {
			t.Errorf("parallelism %d: %d rows, want %d:\n%s", p, len(got), len(want), rowDiff(got, want))
		}
	}
}

// TestSQLPartitionKey creates a table partitioned by transforms named in
// the 'partition.key' option of SQL's DDL.
func TestSQLPartitionKey(t *testing.T) {
	dir := t.TempDir()
	s := sql.NewSession(sql.WithParallelism(1))
	script := fmt.Sprintf(`
CREATE TABLE visits (id BIGINT, region STRING, at TIMESTAMP(6), PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'iceberg', 'catalog-name' = 'eddy', 'uri' = 'sqlite://%s', 'warehouse' = 'file://%s',
  'catalog-database' = 'web', 'partition.key' = 'day(at), bucket(4, id)');
INSERT INTO visits VALUES (1, 'eu', TIMESTAMP '2026-01-01 10:00:00'), (2, 'us', TIMESTAMP '2026-01-02 11:00:00'), (3, 'eu', TIMESTAMP '2026-01-02 12:00:00');
`, filepath.Join(dir, "catalog.db"), filepath.Join(dir, "warehouse"))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(context.Background(), "sql-partition-key"); err != nil {
		t.Fatal(err)
	}
	tbl, err := testCatalogAt(t, dir).LoadTable(context.Background(), table.Identifier{"web", "visits"})
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	spec := tbl.Spec()
	for _, f := range spec.Fields() {
		fields = append(fields, f.Name+" "+f.Transform.String())
	}
	if want := []string{"at_day day", "id_bucket bucket[4]"}; !slices.Equal(fields, want) {
		t.Errorf("partition fields %q, want %q", fields, want)
	}
	if got := scanRows(t, tbl); len(got) != 3 {
		t.Errorf("got rows %q, want 3", got)
	}
}

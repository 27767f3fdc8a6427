package iceberg

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// equalityOptions are the sink options of equality-delete mode.
var equalityOptions = map[string]string{deleteModeOption: deleteModeEquality}

// deleteFileCounts counts the delete files of the current snapshot of tbl
// by content: position deletes (Parquet or deletion vectors) and equality
// deletes, and the equality deletes' rows.
func deleteFileCounts(t *testing.T, tbl *table.Table) (pos, eq int, eqRows int64) {
	t.Helper()
	_, deletes := currentFiles(t, tbl)
	for _, d := range deletes {
		switch d.ContentType() {
		case icebergo.EntryContentPosDeletes:
			pos++
		case icebergo.EntryContentEqDeletes:
			eq++
			eqRows += d.Count()
		}
	}
	return pos, eq, eqRows
}

// TestSinkEqualityDeletesInTheSameSnapshot writes, in one snapshot, over
// rows another writer committed: key 1 updated, deleted and inserted
// again; key 2 inserted and deleted; key 3 (the other writer's) deleted;
// key 5 inserted and updated; key 4 left alone. The equality delete of a
// key and the row inserted with it share a sequence number, so the
// inserted row survives; the rows written and replaced in the snapshot
// are deleted by position. An iceberg-go scan reads the result.
func TestSinkEqualityDeletesInTheSameSnapshot(t *testing.T) {
	for _, version := range []int{2, 3} {
		t.Run("v"+strconv.Itoa(version), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			cat := testCatalogAt(t, dir)
			tbl, err := loadOrCreateTable(ctx, cat, "db", "kv", &connector.Table{Schema: upsertType, PrimaryKey: []int{0}}, version, nil)
			if err != nil {
				t.Fatal(err)
			}
			row := func(k, seq int64) types.Row {
				return types.MustBuildRow(upsertType, nil, k, seq, "n"+strconv.FormatInt(seq, 10))
			}
			// Another writer's rows.
			tf, err := newTableFiles(ctx, tbl)
			if err != nil {
				t.Fatal(err)
			}
			w, err := tf.newDataFileWriter(upsertType, "other")
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int64{1, 3, 4} {
				if _, err := w.Append(row(k, k)); err != nil {
					t.Fatal(err)
				}
			}
			m, err := w.Close()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := commitFiles(ctx, tbl, []fileMeta{m}, nil, ioSummary("other", 1)); err != nil {
				t.Fatal(err)
			}

			env := eddy.NewEnvironment(eddy.WithParallelism(1))
			changes := eddy.FromSlice(env, []changelog.Change[types.Row]{
				changelog.Of(changelog.UpdateAfter, row(1, 10)),
				changelog.Of(changelog.Insert, row(2, 20)),
				changelog.Of(changelog.Delete, row(1, 10)),
				changelog.Of(changelog.Delete, row(3, 3)),
				changelog.Of(changelog.Insert, row(5, 50)),
				changelog.Of(changelog.Insert, row(1, 12)),
				changelog.Of(changelog.Delete, row(2, 20)),
				changelog.Of(changelog.UpdateAfter, row(5, 51)),
			}, eddy.NoWatermarks[changelog.Change[types.Row]]())
			writeEqualityUpserts(t, changes, dir, map[string]string{"format-version": strconv.Itoa(version)})
			if err := env.Execute(ctx, "equality-same-snapshot"); err != nil {
				t.Fatal(err)
			}
			tbl = loadTestTable(t, dir, "kv")
			if n := len(tbl.Metadata().Snapshots()); n != 2 {
				t.Fatalf("%d snapshots, want the other writer's and the sink's", n)
			}
			want := []string{"1 | 12 | n12", "4 | 4 | n4", "5 | 51 | n51"}
			if got := scanRows(t, tbl); !slices.Equal(got, want) {
				t.Fatalf("got %q, want %q", got, want)
			}
			// One equality delete per key changed (1, 2, 3, 5), position
			// deletes of the rows of keys 1, 2 and 5 the snapshot replaced.
			pos, eq, eqRows := deleteFileCounts(t, tbl)
			if eq != 1 || eqRows != 4 || pos == 0 {
				t.Errorf("%d position-delete files, %d equality-delete files of %d rows; want some, 1 and 4", pos, eq, eqRows)
			}
		})
	}
}

// TestSinkEqualityDeletesAcrossFailures runs the failure test of
// TestSinkExactlyOnceAcrossFailures in equality-delete mode: many
// checkpoints of upserts and deletions, three injected failures, every
// snapshot a state of the source and the last one all of it, in format
// versions 2 and 3.
func TestSinkEqualityDeletesAcrossFailures(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			dir := t.TempDir()
			opts := maps.Clone(equalityOptions)
			opts["format-version"] = version
			tbl := runKVWithFailuresWith(t, dir, "kv", opts)
			pos, eq, eqRows := deleteFileCounts(t, tbl)
			if eq == 0 {
				t.Fatalf("the table holds no equality-delete file (%d position-delete files)", pos)
			}
			t.Logf("%d snapshots, %d rows, %d position-delete files, %d equality-delete files of %d keys",
				len(tbl.Metadata().Snapshots()), len(scanRows(t, tbl)), pos, eq, eqRows)
		})
	}
}

// TestSinkEqualityDeletesReplaceOtherWritersRows writes, checkpoint after
// checkpoint, updates and deletions of keys whose rows another writer
// committed before the job started, which a key index would not know:
// every snapshot equals the source.
func TestSinkEqualityDeletesReplaceOtherWritersRows(t *testing.T) {
	const n, keys = 6000, 100
	ctx := context.Background()
	dir := t.TempDir()
	cat := testCatalogAt(t, dir)
	tbl, err := loadOrCreateTable(ctx, cat, "db", "kv", &connector.Table{Schema: upsertType, PrimaryKey: []int{0}}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tf.newDataFileWriter(upsertType, "other")
	if err != nil {
		t.Fatal(err)
	}
	// The other writer's rows have seq -1: each is replaced or deleted by
	// the first change of its key.
	for k := range int64(keys) {
		if _, err := w.Append(types.MustBuildRow(upsertType, nil, k, int64(-1), "other")); err != nil {
			t.Fatal(err)
		}
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := commitFiles(ctx, tbl, []fileMeta{m}, nil, ioSummary("other", 1)); err != nil {
		t.Fatal(err)
	}

	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: 20000},
		func(i int64) changelog.Change[types.Row] { return kvChange(i, keys) }, eddy.NoWatermarks[changelog.Change[types.Row]]()).Parallelism(1)
	writeEqualityUpserts(t, src, dir, nil)
	if err := env.Execute(ctx, "equality-other-writer"); err != nil {
		t.Fatal(err)
	}
	tbl = loadTestTable(t, dir, "kv")
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) < 2 {
		t.Fatalf("%d snapshots, want the other writer's and the sink's", len(snaps))
	}
	t.Logf("%d snapshots of the sink", len(snaps)-1)
	// stateAfter is the table after changes [0, m) over the other
	// writer's rows.
	stateAfter := func(m int64) []string {
		rows := map[int64]string{}
		for k := range int64(keys) {
			rows[k] = fmt.Sprintf("%d | -1 | other", k)
		}
		for i := range m {
			k := i % keys
			if i%5 == 4 {
				delete(rows, k)
			} else {
				rows[k] = fmt.Sprintf("%d | %d | n%d", k, i, i)
			}
		}
		return slices.Sorted(maps.Values(rows))
	}
	for _, s := range snaps[1:] {
		got := scanSnapshot(t, tbl, s.SnapshotID)
		m := int64(-1)
		for _, r := range got {
			var k, seq int64
			fmt.Sscanf(r, "%d | %d", &k, &seq)
			m = max(m, seq)
		}
		if !slices.Equal(got, stateAfter(m+1)) && !slices.Equal(got, stateAfter(m+2)) {
			t.Fatalf("snapshot %d is no state of the source: newest change %d, %d rows:\n%s", s.SnapshotID, m, len(got), rowDiff(got, stateAfter(m+1)))
		}
	}
	if got, want := scanRows(t, tbl), stateAfter(n); !slices.Equal(got, want) {
		t.Fatalf("the table holds %d rows, want %d:\n%s", len(got), len(want), rowDiff(got, want))
	}
}

// TestSQLEqualityDeletes writes an aggregation's updates with
// 'write.upsert.delete-mode' = 'equality' from SQL, and refuses the mode
// with compaction and on a table partitioned by a column outside the key.
func TestSQLEqualityDeletes(t *testing.T) {
	dir := t.TempDir()
	with := func(name, extra string) string {
		return fmt.Sprintf(`'connector' = 'iceberg', 'catalog-name' = 'eddy', 'uri' = 'sqlite://%s', 'warehouse' = 'file://%s', 'catalog-database' = 'lake', 'catalog-table' = '%s', 'write.upsert.delete-mode' = 'equality'%s`,
			filepath.Join(dir, "catalog.db"), filepath.Join(dir, "warehouse"), name, extra)
	}
	run := func(script string) error {
		s := sql.NewSession(sql.WithParallelism(2))
		if _, err := s.Execute(script); err != nil {
			return err
		}
		env := eddy.NewEnvironment(eddy.WithParallelism(2))
		if err := s.Build(env); err != nil {
			return err
		}
		return env.Execute(context.Background(), "sql-iceberg-equality")
	}
	err := run(fmt.Sprintf(`
CREATE TABLE totals (k INT, n BIGINT, total DECIMAL(12, 2), PRIMARY KEY (k) NOT ENFORCED) WITH (%s);
CREATE VIEW input AS SELECT * FROM (VALUES (1, 1.50), (2, 2.25), (1, 3.00), (3, 0.10), (2, 1.00), (4, 1.00), (1, 0.50)) AS t(k, amount);
INSERT INTO totals SELECT k, COUNT(*), SUM(amount) FROM input GROUP BY k HAVING COUNT(*) < 3;
`, with("totals", "")))
	if err != nil {
		t.Fatal(err)
	}
	totals, err := testCatalogAt(t, dir).LoadTable(context.Background(), table.Identifier{"lake", "totals"})
	if err != nil {
		t.Fatal(err)
	}
	// Key 1 reaches three rows and is deleted by the HAVING.
	want := []string{"2 | 2 | 3.25", "3 | 1 | 0.1", "4 | 1 | 1"}
	if got := scanRows(t, totals); !slices.Equal(got, want) {
		t.Errorf("totals: got %q, want %q", got, want)
	}
	if _, eq, _ := deleteFileCounts(t, totals); eq == 0 {
		t.Errorf("no equality-delete file in the table")
	}

	err = run(fmt.Sprintf(`CREATE TABLE c (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH (%s);
INSERT INTO c SELECT k, COUNT(*) FROM (VALUES (1)) AS t(k) GROUP BY k;`, with("c", ", 'compaction-enabled' = 'true'")))
	if err == nil || !strings.Contains(err.Error(), "compaction-enabled") {
		t.Errorf("equality deletes with compaction: %v", err)
	}
	err = run(fmt.Sprintf(`CREATE TABLE p (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH (%s);
INSERT INTO p SELECT k, CAST(COUNT(*) AS INT) FROM (VALUES (1)) AS t(k) GROUP BY k;`, with("p", ", 'partition.key' = 'v'")))
	if err == nil || !strings.Contains(err.Error(), "not in the primary key") {
		t.Errorf("equality deletes on a table partitioned outside the key: %v", err)
	}
}

// writeEqualityUpserts adds to the job of changes an upsert sink of the
// table kv (upsertType, keyed by its first column) under dir, deleting by
// equality, with the options extra on top.
func writeEqualityUpserts(t *testing.T, changes *eddy.Stream[changelog.Change[types.Row]], dir string, extra map[string]string) {
	t.Helper()
	opts := sinkOptions(dir, "kv")
	maps.Copy(opts, equalityOptions)
	maps.Copy(opts, extra)
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	key := types.NewKeyEncoder(upsertType, 0)
	eddy.WriteUpserts(eddy.AsChangelog(changes, changelog.Upsert), "kv", key.Key, sink, eddy.KeyedBySinkKey())
}

package iceberg

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	icebergo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// liveFileCounts returns the numbers of data and delete files of the
// table's current snapshot.
func liveFileCounts(t *testing.T, tbl *table.Table) (data, deletes int) {
	t.Helper()
	d, x := currentFiles(t, tbl)
	return len(d), len(x)
}

// currentFiles returns the live data and delete files of tbl's current
// snapshot.
func currentFiles(t *testing.T, tbl *table.Table) (data, deletes []icebergo.DataFile) {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data, deletes, err = snapshotFiles(tbl, fsys)
	if err != nil {
		t.Fatal(err)
	}
	return data, deletes
}

// runKV writes n changes of kvChange over keys keys through a job with
// parallelism 2 that checkpoints every 20 ms into the table kv under dir,
// with the sink options extra, and checks that the table then equals the
// source and that every snapshot is a state of the source. It returns the
// table.
func runKV(t *testing.T, dir string, n, keys int64, extra map[string]string) *table.Table {
	t.Helper()
	opts := sinkOptions(dir, "kv")
	maps.Copy(opts, extra)
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
	if err := env.Execute(context.Background(), "iceberg-compaction"); err != nil {
		t.Fatal(err)
	}
	tbl := loadTestTable(t, dir, "kv")
	if got, want := scanRows(t, tbl), kvState(n, keys); !slices.Equal(got, want) {
		t.Fatalf("the table holds %d rows, want %d; first differences:\n%s", len(got), len(want), rowDiff(got, want))
	}
	checkSnapshotsAreStates(t, tbl, keys)
	return tbl
}

// checkSnapshotsAreStates checks that every snapshot of tbl is the table
// after a prefix of the changes of kvChange, and that a compaction's
// snapshot holds the rows of the snapshot before it.
func checkSnapshotsAreStates(t *testing.T, tbl *table.Table, keys int64) {
	t.Helper()
	var prev []string
	for _, s := range tbl.Metadata().Snapshots() {
		got := scanSnapshot(t, tbl, s.SnapshotID)
		if s.Summary != nil && s.Summary.Properties[summaryCompaction] != "" {
			if s.Summary.Operation != table.OpReplace {
				t.Errorf("compaction snapshot %d has operation %s, want replace", s.SnapshotID, s.Summary.Operation)
			}
			if !slices.Equal(got, prev) {
				t.Fatalf("compaction snapshot %d changed the rows:\n%s", s.SnapshotID, rowDiff(got, prev))
			}
		}
		m := int64(-1)
		for _, r := range got {
			var k, seq int64
			fmt.Sscanf(r, "%d | %d", &k, &seq)
			m = max(m, seq)
		}
		if !slices.Equal(got, kvState(m+1, keys)) && !slices.Equal(got, kvState(m+2, keys)) {
			t.Fatalf("snapshot %d is no state of the source: newest change %d, %d rows", s.SnapshotID, m, len(got))
		}
		prev = got
	}
}

// compactions returns the number of compaction snapshots of tbl.
func compactions(tbl *table.Table) int {
	n := 0
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[summaryCompaction] != "" {
			n++
		}
	}
	return n
}

// TestCompactionKeepsUpsertsRight writes updates and deletions of keys
// whose rows compaction moved, again and again, with position-delete files
// (format version 2) and deletion vectors (3): the table and every
// snapshot are states of the source, and compaction leaves far fewer files
// than the same job writes without it.
func TestCompactionKeepsUpsertsRight(t *testing.T) {
	const n, keys = 12000, 400
	for _, c := range []struct{ name, version, partition string }{{"v2", "2", ""}, {"v3", "3", ""}, {"v2-bucketed", "2", "bucket(2, id)"}, {"v3-bucketed", "3", "bucket(2, id)"}} {
		t.Run(c.name, func(t *testing.T) {
			v := c.version
			opts := map[string]string{"format-version": v, "compaction-enabled": "false"}
			if c.partition != "" {
				opts["partition.key"] = c.partition
			}
			off := runKV(t, t.TempDir(), n, keys, opts)
			opts["compaction-enabled"] = "true"
			opts["flink-maintenance.rewrite.schedule.commit-count"] = "1"
			opts["flink-maintenance.rewrite.min-input-files"] = "4"
			on := runKV(t, t.TempDir(), n, keys, opts)
			if c := compactions(on); c == 0 {
				t.Fatal("no compaction snapshot")
			}
			offData, offDeletes := liveFileCounts(t, off)
			onData, onDeletes := liveFileCounts(t, on)
			t.Logf("format version %s: without compaction %d data and %d delete files after %d snapshots; with it %d data and %d delete files after %d snapshots (%d compactions)",
				v, offData, offDeletes, len(off.Metadata().Snapshots()), onData, onDeletes, len(on.Metadata().Snapshots()), compactions(on))
			if onData >= offData {
				t.Errorf("%d data files with compaction, %d without", onData, offData)
			}
			// The compaction after the last commit left fewer uncompacted
			// files in every partition than it takes to compact them.
			fsys, err := on.FS(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			data, _, err := snapshotFiles(on, fsys)
			if err != nil {
				t.Fatal(err)
			}
			fresh := map[string]int{}
			for _, df := range data {
				if !isCompacted(df.FilePath()) {
					fresh[fmt.Sprint(df.Partition())]++
				}
			}
			for part, n := range fresh {
				if n >= 4 {
					t.Errorf("partition %s has %d uncompacted data files after the last compaction", part, n)
				}
			}
			if onDeletes >= offDeletes {
				t.Errorf("%d delete files with compaction, %d without", onDeletes, offDeletes)
			}
		})
	}
}

// TestCompactionExactlyOnceAcrossFailures runs the failure test of the
// sink with compaction on after every few commits: restored committers
// find the moved rows in the compacted files' footers, and nothing is
// lost or doubled.
func TestCompactionExactlyOnceAcrossFailures(t *testing.T) {
	for _, v := range []string{"2", "3"} {
		t.Run("v"+v, func(t *testing.T) {
			tbl := runKVWithFailuresWith(t, t.TempDir(), "kv", map[string]string{"format-version": v,
				"compaction-enabled": "true", "flink-maintenance.rewrite.min-input-files": "3",
				"flink-maintenance.rewrite.schedule.commit-count": "1"})
			if c := compactions(tbl); c == 0 {
				t.Fatal("no compaction snapshot")
			}
			checkSnapshotsAreStates(t, tbl, 700)
			d, x := liveFileCounts(t, tbl)
			t.Logf("%d snapshots (%d compactions), %d data and %d delete files", len(tbl.Metadata().Snapshots()), compactions(tbl), d, x)
		})
	}
}

// TestCompactionOfAppends compacts the small files of a table without a
// primary key.
func TestCompactionOfAppends(t *testing.T) {
	const n = 6000
	dir := t.TempDir()
	opts := sinkOptions(dir, "log")
	opts["compaction-enabled"] = "true"
	opts["flink-maintenance.rewrite.schedule.commit-count"] = "1"
	opts["flink-maintenance.rewrite.min-input-files"] = "3"
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType})
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: 20000},
		func(i int64) types.Row {
			return types.MustBuildRow(upsertType, nil, i, i, "n"+strconv.FormatInt(i, 10))
		},
		eddy.NoWatermarks[types.Row]()).Parallelism(1)
	eddy.WriteTo(eddy.AsChangelog(eddy.Map(src, func(r types.Row) connector.TableRecord { return changelog.Of(changelog.Insert, r) }), changelog.InsertOnly), "log", sink)
	if err := env.Execute(context.Background(), "iceberg-append-compaction"); err != nil {
		t.Fatal(err)
	}
	tbl := loadTestTable(t, dir, "log")
	got := scanRows(t, tbl)
	if len(got) != n {
		t.Fatalf("%d rows, want %d", len(got), n)
	}
	if c := compactions(tbl); c == 0 {
		t.Fatal("no compaction snapshot")
	}
	// Compaction leaves a number of files that depends on where the
	// checkpoints fell: its outputs are rewritten again only with files
	// as large as they are, so they are not one file. What holds whatever
	// the timing: the compaction at the end of the input left fewer
	// uncompacted files than it takes to compact them, and every
	// compacted file holds at least min-input-files written ones.
	data, _ := currentFiles(t, tbl)
	fresh := 0
	for _, df := range data {
		if !isCompacted(df.FilePath()) {
			fresh++
		}
	}
	written := writtenDataFiles(t, tbl)
	t.Logf("%d data files written, %d live (%d uncompacted) after %d compactions", written, len(data), fresh, compactions(tbl))
	if fresh >= 3 {
		t.Errorf("%d uncompacted data files after the last compaction", fresh)
	}
	if compacted := len(data) - fresh; 3*compacted > written-fresh {
		t.Errorf("%d compacted data files hold %d written ones: fewer than 3 each", compacted, written-fresh)
	}
}

// writtenDataFiles returns the number of data files the snapshots of tbl
// other than compactions added.
func writtenDataFiles(t *testing.T, tbl *table.Table) int {
	t.Helper()
	n := 0
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil || s.Summary.Properties[summaryCompaction] != "" {
			continue
		}
		v, ok := s.Summary.Properties["added-data-files"]
		if !ok {
			continue // a snapshot that added no data file
		}
		k, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("snapshot %d: added-data-files: %v", s.SnapshotID, err)
		}
		n += k
	}
	return n
}

// commitCompacted commits tx to tbl as the committer does, and then
// compacts as it does at the end of the input, waiting for the
// compaction. It returns the table as it then is, nil when it committed
// nothing.
func commitCompacted(ctx context.Context, tbl *table.Table, comp *compactor, tx icebergTx) (*table.Table, error) {
	out, err := commitTranslated(ctx, tbl, comp, tx)
	if err != nil {
		return nil, err
	}
	if out != nil {
		tbl = out
	}
	return comp.afterCommit(ctx, tbl, tx.Job, tx.Checkpoint, true), nil
}

// TestCompactionMovesDeletesAcrossRestarts commits checkpoints through
// commitCompacted as the committer does: the first two data files are
// compacted after the second checkpoint; the third checkpoint, committed
// by a compactor that knows nothing yet (a restored committer), deletes
// rows of both by their old places, and must delete them where they are
// now; committed again by yet another one (a replay), it changes nothing.
func TestCompactionMovesDeletesAcrossRestarts(t *testing.T) {
	for _, c := range []struct {
		v     int
		arrow bool
	}{{2, true}, {3, true}, {2, false}, {3, false}} {
		v := c.v
		t.Run(fmt.Sprintf("v%d/arrow=%v", v, c.arrow), func(t *testing.T) {
			copyArrow = c.arrow
			t.Cleanup(func() { copyArrow = true })
			ctx := context.Background()
			tbl := testTable(t, testCatalog(t), "kv", ioKVType, []int{0}, v)
			tf, err := newTableFiles(ctx, tbl)
			if err != nil {
				t.Fatal(err)
			}
			write := func(rows ...any) fileMeta {
				w, err := tf.newDataFileWriter(ioKVType, filePrefix)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < len(rows); i += 2 {
					if _, err := w.Append(types.MustBuildRow(ioKVType, nil, int64(rows[i].(int)), rows[i+1])); err != nil {
						t.Fatal(err)
					}
				}
				m, err := w.Close()
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			// del writes the deletes of the rows at (file, position) pairs.
			del := func(pairs ...any) []fileMeta {
				var ms []fileMeta
				var err error
				if v >= 3 {
					w := tf.newDeletionVectorWriter(filePrefix + "-dv")
					for i := 0; i < len(pairs); i += 2 {
						w.Delete(pairs[i].(string), int64(pairs[i+1].(int)), "")
					}
					ms, err = w.Close()
				} else {
					w := tf.newPositionDeleteWriter(filePrefix + "-deletes")
					for i := 0; i < len(pairs); i += 2 {
						w.Delete(pairs[i].(string), int64(pairs[i+1].(int)))
					}
					ms, err = w.Close()
				}
				if err != nil {
					t.Fatal(err)
				}
				return ms
			}
			cfg := compactionConfig{enabled: true, minInputFiles: 2, minFileSize: 1 << 30, maxRewriteBytes: 1 << 30, targetFileSize: 1 << 30}
			newCompactor := func() *compactor {
				return &compactor{cfg: cfg, rt: ioKVType, where: "test", log: slog.New(slog.DiscardHandler)}
			}
			commit := func(comp *compactor, checkpoint int64, data, deletes []fileMeta) {
				t.Helper()
				tx := icebergTx{Job: "job-1", Checkpoint: checkpoint, Data: roundTrip(t, data), Deletes: roundTrip(t, deletes)}
				out, err := commitCompacted(ctx, tbl, comp, tx)
				if err != nil {
					t.Fatalf("checkpoint %d: %v", checkpoint, err)
				}
				if out != nil {
					tbl = out
				}
			}

			a := write(1, "one", 2, "two", 3, "three", 4, "four")
			commit(newCompactor(), 1, []fileMeta{a}, nil)
			// A compacted file of a compaction that never committed (its
			// committer failed first) claims a's rows: it must be ignored.
			w, err := tf.newDataFileWriterAt(ioKVType, tf.newFilePath(compactPrefix))
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range []string{"one", "two", "three", "four"} {
				if _, err := w.Append(types.MustBuildRow(ioKVType, nil, int64(i+1), v)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.SetKeyValue(movedRowsKey, `[{"from":"`+a.Path+`","offset":0,"runs":[[0,4]]}]`); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Close(); err != nil {
				t.Fatal(err)
			}
			b := write(5, "five", 6, "six", 2, "two'", 7, "seven")
			commit(newCompactor(), 2, []fileMeta{b}, del(a.Path, 1, b.Path, 1))
			if c := compactions(tbl); c != 1 {
				t.Fatalf("%d compactions after checkpoint 2, want 1", c)
			}
			want := []string{"1 | one", "2 | two'", "3 | three", "4 | four", "5 | five", "7 | seven"}
			if got := scanRows(t, tbl); !slices.Equal(got, want) {
				t.Fatalf("after the compaction: %q, want %q", got, want)
			}
			if d, x := liveFileCounts(t, tbl); d != 1 || x != 0 {
				t.Fatalf("after the compaction: %d data and %d delete files, want 1 and 0", d, x)
			}

			// Checkpoint 3: 3 is updated, 5 and 2 are deleted, by the places
			// the writers know: a's row 2, b's rows 0 and 2.
			c := write(3, "three'")
			third := del(a.Path, 2, b.Path, 0, b.Path, 2)
			commit(newCompactor(), 3, []fileMeta{c}, third)
			want = []string{"1 | one", "3 | three'", "4 | four", "7 | seven"}
			if got := scanRows(t, tbl); !slices.Equal(got, want) {
				t.Fatalf("after checkpoint 3: %q, want %q", got, want)
			}
			// A replay of checkpoint 3 is recognised, translated or not.
			commit(newCompactor(), 3, []fileMeta{c}, third)
			if got := scanRows(t, tbl); !slices.Equal(got, want) {
				t.Fatalf("after checkpoint 3 again: %q, want %q", got, want)
			}
			fsys, err := tbl.FS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, deletes, err := snapshotFiles(tbl, fsys)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range deletes {
				if ref := d.ReferencedDataFile(); ref != nil && (*ref == a.Path || *ref == b.Path) {
					t.Errorf("delete file %s names %s, which compaction removed", d.FilePath(), *ref)
				}
			}
			checkSnapshotsHaveSummary(t, tbl)
		})
	}
}

// checkSnapshotsHaveSummary checks that every snapshot names its job and
// checkpoint, and that no checkpoint was committed twice.
func checkSnapshotsHaveSummary(t *testing.T, tbl *table.Table) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		p := s.Summary.Properties
		id := p[summaryJobID] + "/" + p[summaryCheckpointID]
		if p[summaryCompaction] != "" {
			id += "/compaction/" + strconv.FormatInt(s.SnapshotID, 10)
		}
		if p[summaryJobID] == "" || p[summaryCheckpointID] == "" || seen[id] {
			t.Errorf("snapshot %d: summary %v (seen before: %v)", s.SnapshotID, p, seen[id])
		}
		seen[id] = true
	}
}

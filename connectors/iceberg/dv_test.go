package iceberg

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// liveDVs returns the deletion vectors of the data file path in the
// table's current snapshot.
func liveDVs(t *testing.T, tbl *table.Table, path string) []int64 {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var counts []int64
	for _, task := range tasks {
		if task.File.FilePath() != path {
			continue
		}
		if len(task.DeleteFiles) > 0 {
			t.Errorf("data file %s has Parquet position deletes in a format version 3 table", path)
		}
		for _, d := range task.DeletionVectorFiles {
			counts = append(counts, d.Count())
		}
	}
	return counts
}

// TestDeletionVectorCommits commits deletion vectors to a format version 3
// table: of a data file of an earlier snapshot and of one of the same
// snapshot, then new deletes of a data file that has a deletion vector
// already (merged with it, the old one removed), from one writer and from
// two in the same commit.
func TestDeletionVectorCommits(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog(t)
	tbl := testTable(t, cat, "kv", ioKVType, []int{0}, 3)
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	a := ioWriteKV(t, tf, 1, "one", 2, "two", 3, "three", 4, "four", 5, "five")
	if tbl, err = commitFiles(ctx, tbl, []fileMeta{a}, nil, ioSummary("j", 1)); err != nil {
		t.Fatal(err)
	}
	commit := func(checkpoint int, data []fileMeta, writers ...map[string][]int64) {
		t.Helper()
		var deletes []fileMeta
		for _, dels := range writers {
			w := tf.newDeletionVectorWriter("kv-dv")
			for path, ps := range dels {
				for _, p := range ps {
					w.Delete(path, p, "")
				}
			}
			ms, err := w.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if !m.isDeletionVector() || m.ContentOffset == nil || m.ContentSize == nil || m.ReferencedDataFile == "" {
					t.Fatalf("deletion vector %+v", m)
				}
			}
			deletes = append(deletes, ms...)
		}
		if tbl, err = commitFiles(ctx, tbl, roundTrip(t, data), roundTrip(t, deletes), ioSummary("j", checkpoint)); err != nil {
			t.Fatal(err)
		}
	}

	// Snapshot 2: 2 is deleted from a; b adds 6 and 7, and 6 is deleted
	// again in the same snapshot.
	b := ioWriteKV(t, tf, 6, "six", 7, "seven")
	commit(2, []fileMeta{b}, map[string][]int64{a.Path: {1}, b.Path: {0}})
	want := []string{"1 | one", "3 | three", "4 | four", "5 | five", "7 | seven"}
	if got := scanRows(t, tbl); !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot 2: %q, want %q", got, want)
	}
	if got := liveDVs(t, tbl, a.Path); !reflect.DeepEqual(got, []int64{1}) {
		t.Errorf("snapshot 2: deletion vectors of a: %v, want one of 1 row", got)
	}

	// Snapshot 3: 4 is deleted from a, whose deletion vector grows.
	commit(3, nil, map[string][]int64{a.Path: {3}})
	want = []string{"1 | one", "3 | three", "5 | five", "7 | seven"}
	if got := scanRows(t, tbl); !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot 3: %q, want %q", got, want)
	}
	if got := liveDVs(t, tbl, a.Path); !reflect.DeepEqual(got, []int64{2}) {
		t.Errorf("snapshot 3: deletion vectors of a: %v, want one of 2 rows", got)
	}

	// Snapshot 4: two writers delete 1 and 5 from a, and 7 from b.
	commit(4, nil, map[string][]int64{a.Path: {0}}, map[string][]int64{a.Path: {4}, b.Path: {1}})
	want = []string{"3 | three"}
	if got := scanRows(t, tbl); !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot 4: %q, want %q", got, want)
	}
	if got := liveDVs(t, tbl, a.Path); !reflect.DeepEqual(got, []int64{4}) {
		t.Errorf("snapshot 4: deletion vectors of a: %v, want one of 4 rows", got)
	}
	if got := liveDVs(t, tbl, b.Path); !reflect.DeepEqual(got, []int64{2}) {
		t.Errorf("snapshot 4: deletion vectors of b: %v, want one of 2 rows", got)
	}
	// Every snapshot still reads as it did.
	for i, s := range tbl.Metadata().Snapshots() {
		if n := len(scanSnapshot(t, tbl, s.SnapshotID)); n != []int{5, 5, 4, 1}[i] {
			t.Errorf("snapshot %d has %d rows", i+1, n)
		}
	}
}

// TestSinkFormatVersion3Upserts writes upserts into a format version 3
// table over many checkpoints: the same data file gets deletes in several
// snapshots, whose deletion vectors are merged.
func TestSinkFormatVersion3Upserts(t *testing.T) {
	const n, keys = 20000, 300
	dir := t.TempDir()
	opts := sinkOptions(dir, "kv")
	opts["format-version"] = "3"
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
	if err := env.Execute(context.Background(), "iceberg-v3"); err != nil {
		t.Fatal(err)
	}
	tbl := loadTestTable(t, dir, "kv")
	if v := tbl.Metadata().Version(); v != 3 {
		t.Fatalf("format version %d", v)
	}
	if got, want := scanRows(t, tbl), kvState(n, keys); !slices.Equal(got, want) {
		t.Fatalf("the table holds %d rows, want %d; first differences:\n%s", len(got), len(want), rowDiff(got, want))
	}
	checkOneDVPerDataFile(t, tbl)
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	merged := 0
	for _, task := range tasks {
		for _, d := range task.DeletionVectorFiles {
			if strings.Contains(d.FilePath(), "/"+filePrefix+"-dv-merged-") {
				merged++
			}
		}
	}
	if merged == 0 {
		t.Errorf("no data file has a merged deletion vector after %d snapshots", len(tbl.Metadata().Snapshots()))
	}
}

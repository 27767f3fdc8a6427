package iceberg

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy/sql/types"
)

var ioKVType = types.MustRowType(types.F("id", types.BigInt().NotNull()), types.F("v", types.String()))

// ioWriteKV writes rows (id, v) into a new data file and returns its
// description.
func ioWriteKV(t *testing.T, tf *tableFiles, rows ...any) fileMeta {
	t.Helper()
	w, err := tf.newDataFileWriter(ioKVType, "kv")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(rows); i += 2 {
		pos, err := w.Append(types.MustBuildRow(ioKVType, nil, int64(rows[i].(int)), rows[i+1]))
		if err != nil {
			t.Fatal(err)
		}
		if pos != int64(i/2) {
			t.Fatalf("position %d, want %d", pos, i/2)
		}
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newKVTable creates the table kv of rows (id, v) in a new catalog and
// returns it with the files of its data.
func newKVTable(t *testing.T) (*table.Table, *tableFiles) {
	t.Helper()
	tbl := testTable(t, testCatalog(t), "kv", ioKVType, []int{0}, 2)
	tf, err := newTableFiles(context.Background(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, tf
}

func ioSummary(job string, checkpoint int) map[string]string {
	return map[string]string{summaryJobID: job, summaryCheckpointID: fmt.Sprint(checkpoint)}
}

func TestCommitDeletes(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog(t)
	tbl := testTable(t, cat, "kv", ioKVType, []int{0}, 2)
	if _, ok := committedCheckpoint(tbl, "job-1"); ok {
		t.Errorf("a new table has a committed checkpoint")
	}
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}

	// Snapshot 1: ids 1 to 5.
	a := ioWriteKV(t, tf, 1, "one", 2, "two", 3, "three", 4, "four", 5, "five")
	if tbl, err = commitFiles(ctx, tbl, roundTrip(t, []fileMeta{a}), nil, ioSummary("job-1", 7)); err != nil {
		t.Fatal(err)
	}

	// Snapshot 2: 2 and 4 are updated (position deletes in a, new rows in
	// b); 6 is inserted into b and deleted again by position in the same
	// snapshot.
	b := ioWriteKV(t, tf, 2, "two'", 6, "six", 4, "four'")
	pd := tf.newPositionDeleteWriter("kv-deletes")
	pd.Delete(b.Path, 1)
	pd.Delete(a.Path, 3)
	pd.Delete(a.Path, 1)
	deletes, err := pd.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(deletes) != 1 || deletes[0].RecordCount != 3 || deletes[0].Content != contentPositionDeletes || deletes[0].ReferencedDataFile != "" {
		t.Fatalf("position delete files %+v", deletes)
	}
	if tbl, err = commitFiles(ctx, tbl, roundTrip(t, []fileMeta{b}), roundTrip(t, deletes), ioSummary("job-1", 8)); err != nil {
		t.Fatal(err)
	}
	want := []string{"1 | one", "2 | two'", "3 | three", "4 | four'", "5 | five"}
	if got := scanRows(t, tbl); !reflect.DeepEqual(got, want) {
		t.Errorf("after position deletes: %q, want %q", got, want)
	}
	if op := tbl.CurrentSnapshot().Summary.Operation; op != "overwrite" {
		t.Errorf("operation %s, want overwrite", op)
	}

	// A delete file for one data file names it.
	pd.Delete(a.Path, 0)
	one, err := pd.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 1 || one[0].ReferencedDataFile != a.Path {
		t.Errorf("referenced data file %q, want %q", one[0].ReferencedDataFile, a.Path)
	}
	fsys, _ := tbl.FS(ctx)
	if err := removeFiles(fsys, []string{one[0].Path, one[0].Path + ".missing"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open(one[0].Path); err == nil {
		t.Errorf("removeFiles left %s", one[0].Path)
	}

	// Snapshot 3 (another job): an equality delete removes 3 of snapshot 1
	// and 5 entirely; the new row 3 of the same snapshot stays.
	ew, err := tf.newEqualityDeleteWriter(ioKVType.Project(0), "kv-eq")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{3, 5} {
		if _, err := ew.Append(types.MustBuildRow(ioKVType.Project(0), nil, id)); err != nil {
			t.Fatal(err)
		}
	}
	eq, err := ew.Close()
	if err != nil {
		t.Fatal(err)
	}
	if eq.Content != contentEqualityDeletes || !reflect.DeepEqual(eq.EqualityIDs, []int{1}) || eq.RecordCount != 2 {
		t.Errorf("equality delete file %+v", eq)
	}
	c := ioWriteKV(t, tf, 3, "three'")
	if tbl, err = commitFiles(ctx, tbl, roundTrip(t, []fileMeta{c}), roundTrip(t, []fileMeta{eq}), ioSummary("job-2", 1)); err != nil {
		t.Fatal(err)
	}
	want = []string{"1 | one", "2 | two'", "3 | three'", "4 | four'"}
	if got := scanRows(t, tbl); !reflect.DeepEqual(got, want) {
		t.Errorf("after equality deletes: %q, want %q", got, want)
	}

	// The reloaded table knows the checkpoints committed per job.
	tbl, err = cat.LoadTable(ctx, tbl.Identifier())
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := committedCheckpoint(tbl, "job-1"); !ok || id != 8 {
		t.Errorf("committedCheckpoint(job-1) = %d, %v, want 8", id, ok)
	}
	if id, ok := committedCheckpoint(tbl, "job-2"); !ok || id != 1 {
		t.Errorf("committedCheckpoint(job-2) = %d, %v, want 1", id, ok)
	}
	if _, ok := committedCheckpoint(tbl, "job-3"); ok {
		t.Errorf("committedCheckpoint(job-3) found a checkpoint")
	}

	// Nothing to commit is no commit.
	before := tbl.CurrentSnapshot().SnapshotID
	if tbl, err = commitFiles(ctx, tbl, []fileMeta{{}}, nil, ioSummary("job-1", 9)); err != nil || tbl.CurrentSnapshot().SnapshotID != before {
		t.Errorf("an empty commit: %v", err)
	}
}

func TestCommitSpecMismatch(t *testing.T) {
	ctx := context.Background()
	tbl, tf := newKVTable(t)
	a := ioWriteKV(t, tf, 1, "one")
	a.SpecID = 5
	if _, err := commitFiles(ctx, tbl, []fileMeta{a}, nil, nil); err == nil {
		t.Errorf("no error committing a file of another partition spec")
	}
}

func TestFormatVersion3(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog(t)
	rt := types.MustRowType(types.F("id", types.BigInt().NotNull()), types.F("ts", types.TimestampType(9)), types.F("ltz", types.TimestampLTZType(9)))
	tbl := testTable(t, cat, "ns", rt, []int{0}, 3)
	tf, err := newTableFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tf.newDataFileWriter(rt, "ns")
	if err != nil {
		t.Fatal(err)
	}
	ts := types.TimestampOf(2024, 5, 6, 7, 8, 9, 123456789)
	if _, err := w.Append(types.MustBuildRow(rt, nil, int64(1), ts, ts)); err != nil {
		t.Fatal(err)
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = commitFiles(ctx, tbl, []fileMeta{m}, nil, ioSummary("j", 1)); err != nil {
		t.Fatal(err)
	}
	want := []string{"1 | 2024-05-06T07:08:09.123456789 | 2024-05-06T07:08:09.123456789Z"}
	if got := scanRows(t, tbl); !reflect.DeepEqual(got, want) {
		t.Errorf("nanosecond timestamps: %q, want %q", got, want)
	}

	pd := tf.newPositionDeleteWriter("ns-deletes")
	pd.Delete(m.Path, 0)
	deletes, err := pd.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := commitFiles(ctx, tbl, nil, deletes, ioSummary("j", 2)); err == nil || !strings.Contains(err.Error(), "is a Parquet position-delete file") {
		t.Errorf("position deletes in format version 3: %v", err)
	}
}

// TestCommitConflictOfStaleTable checks that a commit built on a table
// another commit has moved on from counts as a conflict (commitConflict),
// which a pipeline sink's schema change retries on the table as it is
// then (retryConflicts): the SQL catalog reports the broken requirement
// without table.ErrCommitFailed.
func TestCommitConflictOfStaleTable(t *testing.T) {
	ctx := context.Background()
	tbl, tf := newKVTable(t)
	var err error
	if tbl, err = commitFiles(ctx, tbl, roundTrip(t, []fileMeta{ioWriteKV(t, tf, 1, "one")}), nil, ioSummary("job-1", 1)); err != nil {
		t.Fatal(err)
	}
	stale := tbl
	if _, err = commitFiles(ctx, tbl, roundTrip(t, []fileMeta{ioWriteKV(t, tf, 2, "two")}), nil, ioSummary("job-1", 2)); err != nil {
		t.Fatal(err)
	}
	tx := stale.NewTransaction()
	if err := tx.SetProperties(map[string]string{"eddy.test": "x"}); err != nil {
		t.Fatal(err)
	}
	_, err = tx.Commit(ctx)
	if err == nil {
		t.Fatal("a commit on a table another commit moved on from went through")
	}
	if !commitConflict(err) {
		t.Errorf("commitConflict(%v) = false, want true", err)
	}
	if commitConflict(nil) || commitConflict(fmt.Errorf("iceberg table kv: disk full")) {
		t.Error("commitConflict holds for no error or for another failure")
	}
}

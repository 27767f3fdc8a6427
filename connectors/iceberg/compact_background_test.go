package iceberg

import (
	"context"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
)

// holdCompactions makes the background compactions of the test wait,
// once their rewrite is done and before they may commit: the first limit
// of them until the table under dir has deletes commits more snapshots
// that delete rows (or the compaction is stopped, or timeout passes);
// with deletes 0, until the compaction is stopped or timeout passes. It
// returns the number of deletes compactions moved to rows' new places and
// the number of held compactions that were stopped.
func holdCompactions(t *testing.T, dir string, limit, deletes int, timeout time.Duration) (moved, stopped *atomic.Int64) {
	t.Helper()
	cat := testCatalogAt(t, dir)
	moved, stopped = new(atomic.Int64), new(atomic.Int64)
	var mu sync.Mutex
	held := 0
	// deleting counts the snapshots of the table that deleted rows.
	deleting := func(ctx context.Context) int {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"db", "kv"})
		if err != nil {
			return 0
		}
		n := 0
		for _, s := range tbl.Metadata().Snapshots() {
			if s.Summary == nil || s.Summary.Properties[summaryCompaction] != "" {
				continue
			}
			if v, _ := strconv.Atoi(s.Summary.Properties["added-position-deletes"]); v > 0 {
				n++
			}
		}
		return n
	}
	compactionHold = func(ctx context.Context) {
		mu.Lock()
		held++
		hold := held <= limit
		mu.Unlock()
		if !hold {
			return
		}
		if deletes == 0 {
			select {
			case <-ctx.Done():
				stopped.Add(1)
			case <-time.After(timeout):
			}
			return
		}
		start := deleting(ctx)
		deadline := time.Now().Add(timeout)
		for deleting(ctx)-start < deletes && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				stopped.Add(1)
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	compactionCommitted = func(n int) { moved.Add(int64(n)) }
	t.Cleanup(func() { compactionHold, compactionCommitted = nil, nil })
	return moved, stopped
}

// TestCompactionWhileCommitting holds every compaction, after it rewrote
// its files, until checkpoints that update and delete rows (the source
// changes every key all the time) have committed: those deletes, made to
// rows at their old places, must be moved to the rows' new places when
// the compaction commits. The table, read by iceberg-go's scan, and every
// snapshot are states of the source.
func TestCompactionWhileCommitting(t *testing.T) {
	const n, keys = 12000, 400
	for _, v := range []string{"2", "3"} {
		t.Run("v"+v, func(t *testing.T) {
			dir := t.TempDir()
			moved, _ := holdCompactions(t, dir, 4, 3, 2*time.Second)
			tbl := runKV(t, dir, n, keys, map[string]string{"format-version": v,
				"compaction-enabled": "true", "flink-maintenance.rewrite.min-input-files": "3",
				"flink-maintenance.rewrite.schedule.commit-count": "1"})
			if c := compactions(tbl); c == 0 {
				t.Fatal("no compaction snapshot")
			}
			if moved.Load() == 0 {
				t.Fatal("no compaction moved deletes committed while it ran")
			}
			checkNoLeftoverCompactedFiles(t, dir, tbl)
			t.Logf("%d snapshots, %d compactions, %d deletes moved at their commits", len(tbl.Metadata().Snapshots()), compactions(tbl), moved.Load())
		})
	}
}

// TestCompactionStoppedByFailures holds the first two compactions until
// the job fails (it fails three times): a restored job loses and repeats
// nothing, and the files of the compactions that never committed are
// removed.
func TestCompactionStoppedByFailures(t *testing.T) {
	for _, v := range []string{"2", "3"} {
		t.Run("v"+v, func(t *testing.T) {
			dir := t.TempDir()
			_, stopped := holdCompactions(t, dir, 2, 0, 20*time.Second)
			tbl := runKVWithFailuresWith(t, dir, "kv", map[string]string{"format-version": v,
				"compaction-enabled": "true", "flink-maintenance.rewrite.min-input-files": "3",
				"flink-maintenance.rewrite.schedule.commit-count": "1"})
			checkSnapshotsAreStates(t, tbl, 700)
			if stopped.Load() == 0 {
				t.Fatal("no failure struck a running compaction")
			}
			checkNoLeftoverCompactedFiles(t, dir, tbl)
			t.Logf("%d snapshots, %d compactions, %d stopped by failures", len(tbl.Metadata().Snapshots()), compactions(tbl), stopped.Load())
		})
	}
}

// checkNoLeftoverCompactedFiles checks that every file compaction wrote
// under dir's warehouse is one a snapshot of tbl holds: the files of the
// compactions that did not commit are gone.
func checkNoLeftoverCompactedFiles(t *testing.T, dir string, tbl *table.Table) {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		mfs, err := s.Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			entries, err := mf.FetchEntries(fsys, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				known[strings.TrimPrefix(e.DataFile().FilePath(), "file://")] = true
			}
		}
	}
	err = filepath.WalkDir(filepath.Join(dir, "warehouse"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), compactPrefix) {
			return err
		}
		if !known[p] {
			t.Errorf("compaction left %s, which no snapshot holds", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

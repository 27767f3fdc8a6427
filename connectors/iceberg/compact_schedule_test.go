package iceberg

import (
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestCompactionSchedule runs upsert jobs whose compactions start by each
// of the schedule's thresholds and checks, from the snapshots' summaries,
// that no compaction started before its threshold was reached: the k-th
// compaction committed while the job ran follows at least k times the
// threshold's commits, data files or seconds (a compaction commits after
// the commit that started it). The compactions at the end of the input
// are left out: they run whatever the schedule.
func TestCompactionSchedule(t *testing.T) {
	const keys = 300
	for _, c := range []struct {
		name string
		// n is the number of changes, written at 20000 a second.
		n     int64
		opts  map[string]string
		reach func(commits, files int64, elapsed time.Duration, k int) bool
	}{
		{"commit-count", 20000, map[string]string{"flink-maintenance.rewrite.schedule.commit-count": "4"},
			func(commits, _ int64, _ time.Duration, k int) bool { return commits >= int64(4*k+1) }},
		{"data-file-count", 20000, map[string]string{"flink-maintenance.rewrite.schedule.commit-count": "100000",
			"flink-maintenance.rewrite.schedule.data-file-count": "7"},
			func(_, files int64, _ time.Duration, k int) bool { return files >= int64(7*k) }},
		{"interval-second", 60000, map[string]string{"flink-maintenance.rewrite.schedule.commit-count": "100000",
			"flink-maintenance.rewrite.schedule.interval-second": "1"},
			func(_, _ int64, elapsed time.Duration, k int) bool { return elapsed >= time.Duration(k)*time.Second }},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := map[string]string{"compaction-enabled": "true", "flink-maintenance.rewrite.min-input-files": "2"}
			for k, v := range c.opts {
				opts[k] = v
			}
			tbl := runKV(t, t.TempDir(), c.n, keys, opts)
			snaps := tbl.Metadata().Snapshots()
			last := -1
			for i, s := range snaps {
				if !isCompactionSnapshot(s) {
					last = i
				}
			}
			var commits, files int64
			var first time.Time
			running := 0
			for i, s := range snaps {
				if !isCompactionSnapshot(s) {
					if commits == 0 {
						first = time.UnixMilli(s.TimestampMs)
					}
					commits++
					added, _ := strconv.ParseInt(s.Summary.Properties["added-data-files"], 10, 64)
					files += added
					continue
				}
				if i > last {
					continue
				}
				running++
				elapsed := time.UnixMilli(s.TimestampMs).Sub(first)
				if !c.reach(commits, files, elapsed, running) {
					t.Errorf("compaction %d committed after %d commits adding %d data files, %v after the first commit: before its schedule",
						running, commits, files, elapsed)
				}
			}
			if compactions(tbl) == 0 {
				t.Error("no compaction")
			}
			t.Logf("%d commits, %d compactions while the job ran, %d in all", commits, running, compactions(tbl))
		})
	}
}

// isCompactionSnapshot reports whether s is the snapshot of a compaction.
func isCompactionSnapshot(s table.Snapshot) bool {
	return s.Summary != nil && s.Summary.Properties[summaryCompaction] != ""
}

// TestCompactionScheduleDue checks when a compaction is due: at a commit
// after which any threshold is reached, never before a commit.
func TestCompactionScheduleDue(t *testing.T) {
	s := compactionSchedule{commits: 3, dataFiles: 10, dataBytes: 1000, interval: time.Minute}
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		name string
		p    pendingCommits
		at   time.Duration
		want bool
	}{
		{"nothing yet", pendingCommits{since: t0}, 2 * time.Minute, false},
		{"below every threshold", pendingCommits{since: t0, commits: 2, files: 9, bytes: 999}, 59 * time.Second, false},
		{"commits", pendingCommits{since: t0, commits: 3}, 0, true},
		{"files", pendingCommits{since: t0, commits: 1, files: 10}, 0, true},
		{"bytes", pendingCommits{since: t0, commits: 1, bytes: 1000}, 0, true},
		{"interval", pendingCommits{since: t0, commits: 1}, time.Minute, true},
	} {
		if got := c.p.due(s, t0.Add(c.at)); got != c.want {
			t.Errorf("%s: due = %v, want %v", c.name, got, c.want)
		}
	}
	p := pendingCommits{since: t0, snapshot: 7, commits: 5, files: 50, bytes: 5000}
	p.reset(t0.Add(time.Hour))
	if p != (pendingCommits{since: t0.Add(time.Hour), snapshot: 7}) {
		t.Errorf("after reset: %+v", p)
	}
}

// TestEndOfInputCompacts checks the end of the input's compaction when
// every file went with the checkpoint before: a writer with no files
// still tells the committer that the input ended, and the committer's
// commit of that empty transaction compacts the table though no
// threshold of the schedule is reached.
func TestEndOfInputCompacts(t *testing.T) {
	var got []writeResult
	var w fileWriter
	emit := func(r writeResult) { got = append(got, r) }
	if err := w.flush(emit, 7); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("a checkpoint without files emitted %+v", got)
	}
	if err := w.flush(emit, 0); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Checkpoint != 0 || len(got[0].Data)+len(got[0].Deletes) != 0 {
		t.Fatalf("the end of the input without files emitted %+v, want one empty result", got)
	}

	dir := t.TempDir()
	runKV(t, dir, 2000, 50, nil)
	before := loadTestTable(t, dir, "kv")
	if compactions(before) != 0 {
		t.Fatal("compaction ran with compaction off")
	}
	opts := sinkOptions(dir, "kv")
	maps.Copy(opts, map[string]string{"compaction-enabled": "true", "flink-maintenance.rewrite.min-input-files": "2",
		"flink-maintenance.rewrite.schedule.commit-count": "100000"})
	sink, err := connector.OpenTableSink(connector.Default, "iceberg", opts, &connector.Table{Schema: upsertType, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := sink.(*Sink)
	if !ok {
		t.Fatalf("the iceberg sink is a %T", sink)
	}
	c, err := s.newCommitter(connectortest.WriterContext{Name: "iceberg"})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if err := c.Write(&tx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.PreCommit(&tx); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(tx); err != nil {
		t.Fatal(err)
	}
	after := loadTestTable(t, dir, "kv")
	if compactions(after) != 1 {
		t.Errorf("the end of the input's empty transaction made %d compactions, want 1", compactions(after))
	}
	if got, want := scanRows(t, after), kvState(2000, 50); !slices.Equal(got, want) {
		t.Errorf("the compacted table holds %d rows, want %d", len(got), len(want))
	}
}

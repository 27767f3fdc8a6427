package postgrescdc

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// restoreRun runs a job of a fresh schema's accounts (3000 rows, chunks of
// 200) that, once the snapshot is read, gets one transaction of 20000
// inserts and 3000 updates; failAt injects failures downstream at those
// records. It returns the committed records.
func restoreRun(t *testing.T, s *server, failAt ...int64) []string {
	t.Helper()
	admin := s.conn()
	schema, slot := s.newSchema(admin)
	createAccounts(t, admin, schema, 3000)
	failures := cdctest.NewFailures(false, failAt...)
	j := job(openSource(t, s.options(schema, "accounts", slot, "scan.incremental.snapshot.chunk.size", "200"), accountsTable))
	j.Parallelism, j.Checkpoints, j.Restarts, j.Timeout, j.Hook = 2, 5*time.Millisecond, 20, 2*time.Minute, failures.Hook
	r := j.Start(t)
	r.WaitFor(t, 3000) // the snapshot
	admin.Tx(t, "INSERT INTO "+schema+".accounts SELECT g, g, 'big' FROM generate_series(100001, 120000) g",
		"UPDATE "+schema+".accounts SET balance = balance + 1 WHERE id <= 3000")
	const total = 3000 + 20000 + 2*3000
	r.WaitFor(t, total)                // the transaction
	time.Sleep(200 * time.Millisecond) // anything more would be a duplicate
	r.Stop()
	if left := failures.Left(); len(left) != 0 {
		t.Errorf("failures not injected: %v", left)
	}
	return cdctest.Keys(accountsTable.Schema, r.Sink.Committed())
}

// TestRestoreMidSnapshotAndTransaction compares the output of a job that
// fails in the middle of its snapshot (the restored job reads the chunks
// left in a new exported snapshot) and twice in the middle of one large
// transaction (the restored job reads the transaction again and skips the
// changes it had emitted) with that of a job without failures: they must
// be the same records, each once.
func TestRestoreMidSnapshotAndTransaction(t *testing.T) {
	s := startServer(t)
	want := restoreRun(t, s)
	got := restoreRun(t, s, 1500, 3000+9000, 3000+21000)
	if !slices.Equal(got, want) {
		t.Fatalf("with failures the job emitted %d records, without %d; first differences:\n%s", len(got), len(want), firstDiffs(got, want))
	}
}

// firstDiffs lists records in one list and not the other.
func firstDiffs(got, want []string) string {
	in := map[string]int{}
	for _, r := range want {
		in[r]++
	}
	for _, r := range got {
		in[r]--
	}
	var lines []string
	for r, n := range in {
		if n != 0 {
			lines = append(lines, fmt.Sprintf("%+d %s", -n, r))
		}
	}
	slices.Sort(lines)
	if len(lines) > 20 {
		lines = lines[:20]
	}
	return fmt.Sprint(lines)
}

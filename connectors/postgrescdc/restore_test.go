package postgrescdc

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// restoreRun runs a job of a fresh schema's accounts (3000 rows, chunks of
// 200) that, once the snapshot is read, gets one transaction of 20000
// inserts and 3000 updates; failAt injects failures downstream at those
// records. It returns the committed records.
func restoreRun(t *testing.T, s *server, failAt map[int64]bool) []string {
	t.Helper()
	admin := s.conn()
	schema, slot := s.newSchema(admin)
	createAccounts(t, admin, schema, 3000)
	src := openSource(t, s.options(schema, "accounts", slot, "scan.incremental.snapshot.chunk.size", "200"), accountsTable)
	sink := connectortest.NewMemorySink[connector.TableRecord]()
	var seen atomic.Int64
	var mu sync.Mutex
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(5*time.Millisecond),
		eddy.WithCheckpointDir(filepath.Join(t.TempDir(), "checkpoints")),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(20, 10*time.Millisecond)))
	st := eddy.FromSource(env, "postgres-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{})
	st = eddy.Map(st, func(r connector.TableRecord) connector.TableRecord {
		n := seen.Add(1)
		mu.Lock()
		fail := failAt[n]
		delete(failAt, n)
		mu.Unlock()
		if fail {
			panic(fmt.Sprintf("failure injected at record %d", n))
		}
		return r
	}).Name("failure hook")
	eddy.WriteTo(st, "memory sink", sink.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "restore") }()
	if err := sink.WaitFor(ctx, 3000); err != nil {
		t.Fatalf("the snapshot: %v", err)
	}
	run(t, admin, "BEGIN; INSERT INTO "+schema+".accounts SELECT g, g, 'big' FROM generate_series(100001, 120000) g; "+
		"UPDATE "+schema+".accounts SET balance = balance + 1 WHERE id <= 3000; COMMIT")
	const total = 3000 + 20000 + 2*3000
	if err := sink.WaitFor(ctx, total); err != nil {
		t.Fatalf("the transaction: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // anything more would be a duplicate
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(failAt) != 0 {
		t.Errorf("failures not injected: %v", failAt)
	}
	key := recordKey(accountsTable.Schema)
	var out []string
	for _, r := range sink.Committed() {
		out = append(out, key(r))
	}
	slices.Sort(out)
	return out
}

// TestRestoreMidSnapshotAndTransaction compares the output of a job that
// fails in the middle of its snapshot (the restored job reads the chunks
// left in a new exported snapshot) and twice in the middle of one large
// transaction (the restored job reads the transaction again and skips the
// changes it had emitted) with that of a job without failures: they must
// be the same records, each once.
func TestRestoreMidSnapshotAndTransaction(t *testing.T) {
	s := startServer(t)
	want := restoreRun(t, s, map[int64]bool{})
	got := restoreRun(t, s, map[int64]bool{1500: true, 3000 + 9000: true, 3000 + 21000: true})
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

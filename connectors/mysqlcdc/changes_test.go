package mysqlcdc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql/types"
)

var accountsTable = &connector.Table{
	Schema: types.MustRowType(
		types.F("id", types.Int().NotNull()),
		types.F("balance", types.BigInt()),
		types.F("note", types.String()),
	),
	PrimaryKey: []int{0},
}

// materialize applies a changelog as a multiset: each row's additions
// minus its retractions. A mirror of the table holds each of its rows once
// and nothing else.
func materialize(rt *types.RowType, changes []connector.TableRecord) map[string]int {
	key := recordKey(rt)
	m := map[string]int{}
	for _, c := range changes {
		k := key(connector.TableRecord{Kind: changelog.Insert, Row: c.Row})
		k = strings.TrimPrefix(k, "+I|")
		if c.Kind.IsAddition() {
			m[k]++
		} else {
			m[k]--
		}
		if m[k] == 0 {
			delete(m, k)
		}
	}
	return m
}

// TestChangesUnderLoad mirrors a table that a concurrent load inserts
// into, updates (primary keys too) and deletes from while the source reads
// its snapshot and then its binlog, with failures injected downstream three
// times: at the end the changelog, applied as a multiset, equals the table
// row for row.
func TestChangesUnderLoad(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	db := s.newDatabase(admin)
	exec(t, admin, "CREATE TABLE "+db+".accounts (id INT PRIMARY KEY, balance BIGINT, note VARCHAR(32))")
	const rows = 4000
	for i := 1; i <= rows; i += 500 {
		var vals []string
		for j := i; j < i+500; j++ {
			vals = append(vals, fmt.Sprintf("(%d, %d, 'n%d')", j, j*10, j))
		}
		exec(t, admin, "INSERT INTO "+db+".accounts VALUES "+strings.Join(vals, ","))
	}
	src := openSource(t, s.options(db, "accounts", "scan.incremental.snapshot.chunk.size", "300"), accountsTable)

	sink := connectortest.NewMemorySink[connector.TableRecord]()
	var seen atomic.Int64
	failAt := map[int64]bool{1000: true, 2000: true, 3000: true}
	var streamFailed atomic.Bool
	var failMu sync.Mutex
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(30*time.Millisecond),
		eddy.WithCheckpointDir(filepath.Join(t.TempDir(), "checkpoints")),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(20, 10*time.Millisecond)))
	st := eddy.FromSource(env, "mysql-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{})
	st = eddy.Map(st, func(r connector.TableRecord) connector.TableRecord {
		n := seen.Add(1)
		failMu.Lock()
		fail := failAt[n]
		delete(failAt, n)
		failMu.Unlock()
		if fail {
			panic(fmt.Sprintf("failure injected at record %d", n))
		}
		// And once in the stream, at its first update (the snapshot's rows
		// are all inserts), when the load outlasts the snapshot.
		if r.Kind == changelog.UpdateBefore && streamFailed.CompareAndSwap(false, true) {
			panic(fmt.Sprintf("failure injected at record %d, the stream's first update", n))
		}
		return r
	}).Name("failure hook")
	eddy.WriteTo(st, "memory sink", sink.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "mysql-cdc under load") }()

	// The load: transactions of one to three statements.
	load := s.conn()
	rng := rand.New(rand.NewPCG(1, 2))
	next := rows + 1
	for tx := 0; tx < 1500; tx++ {
		exec(t, load, "BEGIN")
		for k := 0; k <= rng.IntN(3); k++ {
			id := 1 + rng.IntN(next)
			switch op := rng.IntN(10); {
			case op < 5:
				exec(t, load, fmt.Sprintf("UPDATE %s.accounts SET balance = balance + %d, note = 'u%d' WHERE id = %d", db, rng.IntN(100)-50, tx, id))
			case op < 7:
				exec(t, load, fmt.Sprintf("DELETE FROM %s.accounts WHERE id = %d", db, id))
			case op < 9:
				exec(t, load, fmt.Sprintf("INSERT INTO %s.accounts VALUES (%d, %d, 'i%d')", db, next, tx, tx))
				next++
			default:
				exec(t, load, fmt.Sprintf("UPDATE IGNORE %s.accounts SET id = %d WHERE id = %d", db, next, id))
				next++
			}
		}
		exec(t, load, "COMMIT")
	}
	want := map[string]int{}
	for _, r := range query(t, admin, "SELECT id, balance, note FROM "+db+".accounts") {
		want[r]++
	}
	deadline := time.Now().Add(2 * time.Minute)
	var got map[string]int
	for {
		got = materialize(accountsTable.Schema, sink.Committed())
		if mapsEqual(got, want) || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the job ended: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	<-done
	if p := sink.Problems(); len(p) > 0 {
		t.Errorf("sink problems: %v", p)
	}
	if len(failAt) != 0 {
		t.Errorf("failures not injected (the job read fewer records than expected): %v", failAt)
	}
	if !mapsEqual(got, want) {
		t.Fatalf("the changelog does not mirror the table:\n%s", diffCounts(got, want))
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func diffCounts(got, want map[string]int) string {
	var lines []string
	for k, v := range got {
		if want[k] != v {
			lines = append(lines, fmt.Sprintf("  %s: %d in the mirror, %d in the table", k, v, want[k]))
		}
	}
	for k, v := range want {
		if _, ok := got[k]; !ok {
			lines = append(lines, fmt.Sprintf("  %s: 0 in the mirror, %d in the table", k, v))
		}
	}
	slices.Sort(lines)
	if len(lines) > 30 {
		lines = append(lines[:30], fmt.Sprintf("  ... and %d more", len(lines)-30))
	}
	return strings.Join(lines, "\n")
}

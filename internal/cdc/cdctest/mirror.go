package cdctest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// Materialize applies a changelog as a multiset: each row's additions
// minus its retractions, a row as the text of its fields separated by '|'.
// A mirror of a table holds each of its rows once and nothing else.
func Materialize(rt *types.RowType, changes []connector.TableRecord) map[string]int {
	key := RecordKey(rt)
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

// DiffCounts lists the rows whose counts differ between a mirror and its
// table, 30 at the most.
func DiffCounts(got, want map[string]int) string {
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

// TableCounts returns the rows of the accounts table named table as a
// multiset.
func TableCounts(t testing.TB, c Conn, table string) map[string]int {
	t.Helper()
	want := map[string]int{}
	for _, r := range c.Query(t, "SELECT id, balance, note FROM "+table) {
		want[r]++
	}
	return want
}

// WaitMirror waits (up to two minutes) for what the sink of r committed to
// mirror want (Materialize), failing t if the job ends first, and returns
// what it mirrors.
func WaitMirror(t testing.TB, r *Running, rt *types.RowType, want map[string]int) map[string]int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got := Materialize(rt, r.Sink.Committed())
		if maps.Equal(got, want) || time.Now().After(deadline) {
			return got
		}
		r.Ended(t)
		time.Sleep(50 * time.Millisecond)
	}
}

// Load runs n random transactions of one to three statements on the
// accounts table named table: updates, deletes, inserts of keys from first
// on, and primary key changes. The same seed gives the same statements.
func Load(t testing.TB, c Conn, table string, seed uint64, first, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	next := first
	for tx := 0; tx < n; tx++ {
		var stmts []string
		for k := 0; k <= rng.IntN(3); k++ {
			id := 1 + rng.IntN(next)
			switch op := rng.IntN(10); {
			case op < 5:
				stmts = append(stmts, fmt.Sprintf("UPDATE %s SET balance = balance + %d, note = 'u%d' WHERE id = %d", table, rng.IntN(100)-50, tx, id))
			case op < 7:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE id = %d", table, id))
			case op < 9:
				stmts = append(stmts, fmt.Sprintf("INSERT INTO %s VALUES (%d, %d, 'i%d')", table, next, tx, tx))
				next++
			default:
				stmts = append(stmts, fmt.Sprintf("UPDATE %s SET id = %d WHERE id = %d", table, next, id))
				next++
			}
		}
		c.Tx(t, stmts...)
	}
}

// LoadCase is an accounts table under load, for ChangesUnderLoad.
type LoadCase struct {
	// Connector is the source's connector.
	Connector Connector
	// Admin reads the table at the end.
	Admin Conn
	// Load runs the load.
	Load Conn
	// Table is the name of the accounts table.
	Table string
	// Rows is the count of rows the table holds, 1..Rows (FillAccounts).
	Rows int
	// Source reads the table, in chunks small enough for several
	// checkpoints during the snapshot.
	Source connector.Source[connector.TableRecord]
}

// ChangesUnderLoad mirrors a table that a concurrent load (1500
// transactions) inserts into, updates (primary keys too) and deletes from
// while the source reads its snapshot at parallelism 2 and then its
// stream, with failures injected downstream three times, and once at the
// stream's first update if the load outlasts the snapshot: at the end the
// changelog, applied as a multiset, must equal the table row for row.
func ChangesUnderLoad(t *testing.T, c LoadCase) {
	t.Helper()
	failures := NewFailures(true, 1000, 2000, 3000)
	j := c.Connector.Job(c.Source)
	j.Parallelism, j.Checkpoints, j.Restarts, j.Timeout, j.Hook = 2, 30*time.Millisecond, 20, 3*time.Minute, failures.Hook
	r := j.Start(t)
	Load(t, c.Load, c.Table, 1, c.Rows+1, 1500)
	want := TableCounts(t, c.Admin, c.Table)
	CheckMirror(t, r, failures, AccountsTable.Schema, want)
}

// CheckMirror waits until r's changelog, of rows of type rt applied as a
// multiset, equals want (WaitMirror), stops r, and fails t if it does not
// or if the sink saw problems or failures were left uninjected.
func CheckMirror(t testing.TB, r *Running, failures *Failures, rt *types.RowType, want map[string]int) {
	t.Helper()
	got := WaitMirror(t, r, rt, want)
	r.Stop()
	if p := r.Sink.Problems(); len(p) > 0 {
		t.Errorf("sink problems: %v", p)
	}
	if left := failures.Left(); len(left) != 0 {
		t.Errorf("failures not injected (the job read fewer records than expected): %v", left)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("the changelog does not mirror the table:\n%s", DiffCounts(got, want))
	}
}

package mysqlcdc

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestChunkReadWhileCommitPending reads a table split into chunks while a
// DELETE of a row of its first chunk is in the binary log and not yet
// committed in InnoDB: the server writes a transaction to its binary log
// before InnoDB commits it, and semi-synchronous replication waiting after
// the binary log's sync (AFTER_SYNC), with no replica to acknowledge, holds
// it there until the test turns it off, once the first chunk is read. The
// binary log's end is then past the DELETE while the chunk's query still
// sees the row: the changelog must delete it all the same.
func TestChunkReadWhileCommitPending(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	db := s.newDatabase(admin)
	table := db + ".keyed"
	kc := keyCases[1] // BINARY(16)
	admin.Exec(t, "CREATE TABLE "+table+" (k "+kc.decl+" PRIMARY KEY, n INT, note VARCHAR(32)) ENGINE = InnoDB")
	cdctest.InsertRows(t, admin, table, 1, 40, 40, func(i int) string { return fmt.Sprintf("(%s, %d, 'n%d')", kc.key(i), i, i) })

	admin.Exec(t, "SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC",
		"SET GLOBAL rpl_semi_sync_master_timeout = 600000",
		"SET GLOBAL rpl_semi_sync_master_enabled = ON")
	release := s.conn()
	var once sync.Once
	releaseDelete := func() {
		once.Do(func() {
			if _, err := release.Execute("SET GLOBAL rpl_semi_sync_master_enabled = OFF"); err != nil {
				t.Errorf("turning semi-synchronous replication off: %v", err)
			}
		})
	}
	t.Cleanup(releaseDelete)

	before, err := binlogEnd(admin.Conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	deleted := make(chan error, 1)
	writer := s.conn()
	go func() {
		// The first key of the table, in the first chunk.
		_, err := writer.Execute("DELETE FROM " + table + " ORDER BY k LIMIT 1")
		deleted <- err
	}()
	for {
		end, err := binlogEnd(admin.Conn, nil)
		if err != nil {
			t.Fatal(err)
		}
		if end.compare(before) > 0 {
			break // the DELETE is in the binary log
		}
		select {
		case err := <-deleted:
			t.Fatalf("the DELETE returned (%v) before its commit was held", err)
		case <-time.After(time.Millisecond):
		}
	}
	if got := admin.Query(t, "SELECT COUNT(*) FROM "+table); len(got) != 1 || got[0] != "40" {
		t.Fatalf("the DELETE is visible before it commits: %v rows", got)
	}

	// The hook runs on the reader's goroutine: it says on read what became
	// of the DELETE once the first chunk is read, or that it committed too
	// early.
	read := make(chan error, 1)
	tell := func(err error) {
		select {
		case read <- err:
		default: // told already
		}
	}
	var chunks int
	chunkQueryHook = func(id string) {
		if id != table {
			return
		}
		chunks++
		switch chunks {
		case 1:
			select {
			case err := <-deleted:
				tell(fmt.Errorf("the DELETE committed (%v) before the first chunk's query", err))
			default:
			}
		case 2:
			// The first chunk is read: let the DELETE commit.
			releaseDelete()
			select {
			case err := <-deleted:
				if err != nil {
					err = fmt.Errorf("the DELETE: %w", err)
				}
				tell(err)
			case <-time.After(time.Minute):
				tell(fmt.Errorf("the DELETE did not commit within a minute of its release"))
			}
		}
	}
	t.Cleanup(func() { chunkQueryHook = nil })

	j := job(openSource(t, s.options(db, "keyed", "scan.incremental.snapshot.chunk.size", "10"), keyedTable))
	j.Checkpoints, j.Timeout = 20*time.Millisecond, 2*time.Minute
	r := j.Start(t)
	deadline := time.Now().Add(time.Minute)
	select {
	case err := <-read:
		if err != nil {
			r.Stop()
			t.Fatal(err)
		}
	case <-r.Finished():
		t.Fatalf("the job ended before its second chunk: %v", r.Wait())
	case <-time.After(time.Until(deadline)):
		r.Stop()
		t.Fatal("the snapshot did not read a second chunk within a minute")
	}
	// A change after the snapshot, which only the binary log, after the
	// DELETE, holds: once the changelog has it, it has the DELETE's.
	r.WaitStatus(t, "the binary log", func(m map[string]any) bool { return m["phase"] == "binlog" })
	admin.Exec(t, "INSERT INTO "+table+" VALUES ("+kc.key(1000)+", 1000, 'last')")
	want := map[string]int{}
	for _, row := range admin.Query(t, "SELECT k, n, note FROM "+table) {
		want[row]++
	}
	var got map[string]int
	for {
		got = cdctest.Materialize(keyedTable.Schema, r.Sink.Committed())
		if hasNote(got, "|1000|last") || time.Now().After(deadline) {
			break
		}
		r.Ended(t)
		time.Sleep(20 * time.Millisecond)
	}
	r.Stop()
	if !maps.Equal(got, want) {
		t.Fatalf("the changelog does not mirror the table:\n%s", cdctest.DiffCounts(got, want))
	}
}

// hasNote tells whether a mirror has a row that ends with suffix.
func hasNote(mirror map[string]int, suffix string) bool {
	for row, n := range mirror {
		if n > 0 && strings.HasSuffix(row, suffix) {
			return true
		}
	}
	return false
}

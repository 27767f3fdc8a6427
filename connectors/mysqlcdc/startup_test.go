package mysqlcdc

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// startupRun runs a source of db.accounts, calls during once the job runs,
// and returns what it read once it has read n records (or, with n < 0, once
// the job ends by itself).
func startupRun(t *testing.T, s *server, options map[string]string, during func(), n int) []string {
	t.Helper()
	src := openSource(t, options, accountsTable)
	sink := connectortest.NewMemorySink[connector.TableRecord]()
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "mysql-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{}), "memory sink", sink.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "startup") }()
	if during != nil {
		// The job reads its start position before anything changes.
		time.Sleep(500 * time.Millisecond)
		during()
	}
	if n < 0 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	} else {
		if err := sink.WaitFor(ctx, n); err != nil {
			t.Fatalf("waiting for %d records: %v (got %d)", n, err, len(sink.Committed()))
		}
		cancel()
		<-done
	}
	key := recordKey(accountsTable.Schema)
	var out []string
	for _, r := range sink.Committed() {
		out = append(out, key(r))
	}
	slices.Sort(out)
	return out
}

// TestStartupModes checks where each 'scan.startup.mode' starts reading.
func TestStartupModes(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	exec(t, c, "CREATE TABLE "+db+".accounts (id INT PRIMARY KEY, balance BIGINT, note VARCHAR(32))",
		"INSERT INTO "+db+".accounts VALUES (1, 10, 'a'), (2, 20, 'b')")
	time.Sleep(1100 * time.Millisecond) // binlog timestamps are in seconds
	mid := time.Now().UnixMilli()
	midPos := position{}
	if r, err := c.Execute("SHOW MASTER STATUS"); err == nil {
		midPos = position{File: text(r, 0, 0)}
		p, _ := r.GetUint(0, 1)
		midPos.Pos = uint32(p)
		r.Close()
	}
	exec(t, c, "UPDATE "+db+".accounts SET balance = 11 WHERE id = 1", "DELETE FROM "+db+".accounts WHERE id = 2")

	t.Run("snapshot", func(t *testing.T) {
		got := startupRun(t, s, s.options(db, "accounts", "scan.startup.mode", "snapshot"), nil, -1)
		want := []string{"+I|1|11|a"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("earliest-offset", func(t *testing.T) {
		got := startupRun(t, s, s.options(db, "accounts", "scan.startup.mode", "earliest-offset"), nil, 5)
		want := []string{"+I|1|10|a", "+I|2|20|b", "+U|1|11|a", "-D|2|20|b", "-U|1|10|a"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("timestamp", func(t *testing.T) {
		got := startupRun(t, s, s.options(db, "accounts", "scan.startup.mode", "timestamp", "scan.startup.timestamp-millis", fmt.Sprint(mid)), nil, 3)
		want := []string{"+U|1|11|a", "-D|2|20|b", "-U|1|10|a"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("specific-offset", func(t *testing.T) {
		got := startupRun(t, s, s.options(db, "accounts", "scan.startup.mode", "specific-offset",
			"scan.startup.specific-offset.file", midPos.File, "scan.startup.specific-offset.pos", fmt.Sprint(midPos.Pos)), nil, 3)
		want := []string{"+U|1|11|a", "-D|2|20|b", "-U|1|10|a"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("latest-offset", func(t *testing.T) {
		load := s.conn()
		got := startupRun(t, s, s.options(db, "accounts", "scan.startup.mode", "latest-offset"), func() {
			exec(t, load, "INSERT INTO "+db+".accounts VALUES (3, 30, 'c')")
		}, 1)
		want := []string{"+I|3|30|c"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("specific-offset of a file the server does not have", func(t *testing.T) {
		err := runFails(t, s.options(db, "accounts", "scan.startup.mode", "specific-offset",
			"scan.startup.specific-offset.file", "nosuch.000009", "scan.startup.specific-offset.pos", "4"), accountsTable)
		wantError(t, err, "nosuch.000009", "not a binary log")
	})
}

package postgrescdc

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// startupRun runs a source of schema.accounts (tab, or accountsTable),
// calls during once the job streams, and returns what it read once it has
// read n records (or, with n < 0, once the job ends by itself).
func startupRun(t *testing.T, options map[string]string, tab *connector.Table, during func(), n int) []string {
	t.Helper()
	if tab == nil {
		tab = accountsTable
	}
	src := openSource(t, options, tab)
	sink := connectortest.NewMemorySink[connector.TableRecord]()
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "postgres-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{}), "memory sink", sink.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "startup") }()
	if during != nil {
		// The job creates its slot, or reads its start position, first.
		time.Sleep(700 * time.Millisecond)
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
		time.Sleep(100 * time.Millisecond) // more would be wrong
		cancel()
		<-done
	}
	key := recordKey(tab.Schema)
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
	schema, slot := s.newSchema(c)
	run(t, c, "CREATE TABLE "+schema+".accounts (id INT PRIMARY KEY, balance BIGINT, note VARCHAR(32))",
		"ALTER TABLE "+schema+".accounts REPLICA IDENTITY FULL",
		"INSERT INTO "+schema+".accounts VALUES (1, 10, 'a'), (2, 20, 'b')")

	t.Run("snapshot", func(t *testing.T) {
		got := startupRun(t, s.options(schema, "accounts", slot, "scan.startup.mode", "snapshot"), nil, nil, -1)
		want := []string{"+I|1|10|a", "+I|2|20|b"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		if rows(t, c, "SELECT count(*) FROM pg_replication_slots")[0] != "0" {
			t.Error("a snapshot alone created a replication slot")
		}
	})
	t.Run("committed-offset", func(t *testing.T) {
		run(t, c, "CREATE PUBLICATION pub_"+slot+" FOR ALL TABLES",
			"SELECT pg_create_logical_replication_slot('"+slot+"', 'pgoutput')",
			"UPDATE "+schema+".accounts SET balance = 11 WHERE id = 1", "DELETE FROM "+schema+".accounts WHERE id = 2")
		got := startupRun(t, s.options(schema, "accounts", slot, "scan.startup.mode", "committed-offset"), nil, nil, 3)
		want := []string{"+U|1|11|a", "-D|2|20|b", "-U|1|10|a"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("latest-offset", func(t *testing.T) {
		run(t, c, "INSERT INTO "+schema+".accounts VALUES (3, 30, 'c')")
		got := startupRun(t, s.options(schema, "accounts", slot, "scan.startup.mode", "latest-offset"), nil, func() {
			run(t, c, "INSERT INTO "+schema+".accounts VALUES (4, 40, 'd')")
		}, 1)
		want := []string{"+I|4|40|d"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("initial with an existing slot", func(t *testing.T) {
		got := startupRun(t, s.options(schema, "accounts", slot), nil, func() {
			run(t, c, "INSERT INTO "+schema+".accounts VALUES (5, 50, 'e')")
		}, 4)
		want := []string{"+I|1|11|a", "+I|3|30|c", "+I|4|40|d", "+I|5|50|e"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("drop on stop", func(t *testing.T) {
		_, other := s.newSchema(c)
		got := startupRun(t, s.options(schema, "accounts", other, "debezium.slot.drop.on.stop", "true"), nil, nil, 4)
		if len(got) != 4 {
			t.Errorf("got %q", got)
		}
		if n := rows(t, c, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '"+other+"'")[0]; n != "0" {
			t.Errorf("the slot is still there after the job stopped")
		}
	})
}

// TestHeartbeatAdvancesSlot checks that the slot of a source whose tables
// are idle, on a server that writes WAL for other tables, advances past
// that WAL after the next checkpoints: the source does not pin it.
func TestHeartbeatAdvancesSlot(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	createAccounts(t, c, schema, 10)
	run(t, c, "CREATE TABLE "+schema+".other (id SERIAL PRIMARY KEY, v TEXT)")
	src := openSource(t, s.options(schema, "accounts", slot, "debezium.publication.autocreate.mode", "filtered",
		"heartbeat.interval.ms", "50ms"), accountsTable)
	sink := connectortest.NewMemorySink[connector.TableRecord]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "postgres-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{}), "memory sink", sink.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "heartbeat") }()
	if err := sink.WaitFor(ctx, 10); err != nil {
		t.Fatal(err)
	}
	confirmed := func() pglogrepl.LSN {
		r := rows(t, c, "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '"+slot+"'")
		lsn, err := pglogrepl.ParseLSN(r[0])
		if err != nil {
			t.Fatal(err)
		}
		return lsn
	}
	for i := 0; i < 20; i++ {
		run(t, c, "INSERT INTO "+schema+".other (v) SELECT repeat('x', 100) FROM generate_series(1, 500)")
	}
	end, err := pglogrepl.ParseLSN(rows(t, c, "SELECT pg_current_wal_lsn()")[0])
	if err != nil {
		t.Fatal(err)
	}
	before := confirmed()
	var got pglogrepl.LSN
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = confirmed(); got >= end {
			break
		}
	}
	cancel()
	<-done
	if got < end {
		t.Fatalf("confirmed_flush_lsn is %s (was %s before the writes), and the WAL of other tables reached %s", got, before, end)
	}
	if len(sink.Committed()) != 10 {
		t.Errorf("the source emitted %d records, want the 10 of its snapshot", len(sink.Committed()))
	}
	_ = strconv.Itoa
}

package postgrescdc

import (
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// startupRun runs a source of schema.accounts (tab, or accountsTable),
// calls during once the job streams, and returns what it read once it has
// read n records (or, with n < 0, once the job ends by itself).
func startupRun(t *testing.T, options map[string]string, tab *connector.Table, during func(), n int) []string {
	t.Helper()
	if tab == nil {
		tab = accountsTable
	}
	j := job(openSource(t, options, tab))
	j.Parallelism, j.Checkpoints, j.Timeout = 2, 20*time.Millisecond, 30*time.Second
	// The job creates its slot, or reads its start position, first; after
	// n records, more would be wrong.
	return cdctest.Read(t, j, cdctest.Reading{Schema: tab.Schema, Settle: 700 * time.Millisecond, During: during, N: n, Linger: 100 * time.Millisecond})
}

// TestStartupModes checks where each 'scan.startup.mode' starts reading.
func TestStartupModes(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	createAccounts(t, c, schema, 0)
	c.Exec(t, "INSERT INTO "+schema+".accounts VALUES (1, 10, 'a'), (2, 20, 'b')")

	t.Run("snapshot", func(t *testing.T) {
		got := startupRun(t, s.options(schema, "accounts", slot, "scan.startup.mode", "snapshot"), nil, nil, -1)
		cdctest.WantKeys(t, got, "+I|1|10|a", "+I|2|20|b")
		if rows(t, c, "SELECT count(*) FROM pg_replication_slots")[0] != "0" {
			t.Error("a snapshot alone created a replication slot")
		}
	})
	t.Run("committed-offset", func(t *testing.T) {
		run(t, c, "CREATE PUBLICATION pub_"+slot+" FOR ALL TABLES",
			"SELECT pg_create_logical_replication_slot('"+slot+"', 'pgoutput')",
			"UPDATE "+schema+".accounts SET balance = 11 WHERE id = 1", "DELETE FROM "+schema+".accounts WHERE id = 2")
		got := startupRun(t, s.options(schema, "accounts", slot, "scan.startup.mode", "committed-offset"), nil, nil, 3)
		cdctest.WantKeys(t, got, "+U|1|11|a", "-D|2|20|b", "-U|1|10|a")
	})
	t.Run("latest-offset", func(t *testing.T) {
		run(t, c, "INSERT INTO "+schema+".accounts VALUES (3, 30, 'c')")
		got := startupRun(t, s.options(schema, "accounts", slot, "scan.startup.mode", "latest-offset"), nil, func() {
			run(t, c, "INSERT INTO "+schema+".accounts VALUES (4, 40, 'd')")
		}, 1)
		cdctest.WantKeys(t, got, "+I|4|40|d")
	})
	t.Run("initial with an existing slot", func(t *testing.T) {
		got := startupRun(t, s.options(schema, "accounts", slot), nil, func() {
			run(t, c, "INSERT INTO "+schema+".accounts VALUES (5, 50, 'e')")
		}, 4)
		cdctest.WantKeys(t, got, "+I|1|11|a", "+I|3|30|c", "+I|4|40|d", "+I|5|50|e")
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
	j := job(src)
	j.Checkpoints = 20 * time.Millisecond
	r := j.Start(t)
	r.WaitFor(t, 10)
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
	r.Stop()
	if got < end {
		t.Fatalf("confirmed_flush_lsn is %s (was %s before the writes), and the WAL of other tables reached %s", got, before, end)
	}
	if n := len(r.Sink.Committed()); n != 10 {
		t.Errorf("the source emitted %d records, want the 10 of its snapshot", n)
	}
}

package postgrescdc

import (
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestStatusAfterSnapshot reads a table in several chunks, then changes of
// the slot: the enumerator then reports every chunk and table read and the
// stream phase, and the reader of the stream its LSNs, the messages it
// received and its lag.
func TestStatusAfterSnapshot(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	createAccounts(t, c, schema, 10)
	src := connectortest.NewStatusSource(openSource(t, s.options(schema, "accounts", slot, "scan.incremental.snapshot.chunk.size", "3"), accountsTable))
	j := job(src.Source())
	j.Parallelism, j.Checkpoints, j.Timeout = 2, 20*time.Millisecond, 30*time.Second
	r := j.Start(t)
	r.WaitFor(t, 10)
	run(t, c, "INSERT INTO "+schema+".accounts VALUES (11, 110, 'k')", "DELETE FROM "+schema+".accounts WHERE id = 1")
	r.WaitFor(t, 12)
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}

	e := src.EnumeratorStatus()
	table := e["snapshotTables"].(map[string]any)[schema+".accounts"].(map[string]any)
	if e["phase"] != "stream" || e["snapshotChunksTotal"].(int) < 2 || e["snapshotChunksDone"] != e["snapshotChunksTotal"] ||
		e["snapshotChunksInFlight"] != 0 || e["snapshotTablesTotal"] != 1 || e["snapshotTablesDone"] != 1 || e["snapshotRecords"] != int64(10) ||
		table["chunksDone"] != e["snapshotChunksTotal"] || table["chunks"] != e["snapshotChunksTotal"] {
		t.Fatalf("enumerator status after the snapshot: %v", e)
	}
	var stream map[string]any
	chunks, rows := 0, int64(0)
	for _, st := range src.ReaderStatuses() {
		chunks += st["snapshotChunksRead"].(int)
		rows += st["snapshotRecords"].(int64)
		if st["phase"] == "stream" {
			stream = st
		}
	}
	if chunks != e["snapshotChunksTotal"] || rows != 10 {
		t.Fatalf("the readers read %d chunks, %d rows; want %v, 10", chunks, rows, e["snapshotChunksTotal"])
	}
	if stream == nil {
		t.Fatal("no reader reports reading the stream")
	}
	lsn := func(key string) pglogrepl.LSN {
		t.Helper()
		s, _ := stream[key].(string)
		l, err := pglogrepl.ParseLSN(s)
		if err != nil {
			t.Fatalf("status entry %s: %v (%v)", key, err, stream)
		}
		return l
	}
	// Two transactions: BEGIN, RELATION, a change and COMMIT, then BEGIN,
	// a change and COMMIT.
	if stream["slot"] != slot || stream["eventsRecords"].(int64) < 7 || stream["lagMillis"].(int64) < 0 || stream["lastEventTime"] == nil ||
		lsn("receivedLsn") == 0 || lsn("confirmedFlushLsn") == 0 || lsn("positionLsn") < lsn("receivedLsn") {
		t.Fatalf("stream reader status: %v", stream)
	}
	t.Logf("enumerator: %v; stream reader: %v", e, stream)
	if l, ok := stream["lagBytes"]; ok && l.(int64) < 0 {
		t.Fatalf("stream reader status: %v", stream)
	}
}

// TestStatusLagBytes: rows written while the reader is slowed down show as
// lagBytes, measured against the server's current WAL position, until the
// reader has read them; the WAL read and not yet confirmed shows as
// unconfirmedBytes.
func TestStatusLagBytes(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	createAccounts(t, c, schema, 1)
	j := job(openSource(t, s.options(schema, "accounts", slot), accountsTable))
	behind, caughtUp := cdctest.CheckLagBytes(t, j, 1, func() { cdctest.FillAccounts(t, c, schema+".accounts", 2, 3001) }, 3001)
	if _, ok := behind["unconfirmedBytes"].(int64); !ok || behind["serverWalLsn"] == nil {
		t.Fatalf("status while behind: %v; once caught up: %v", behind, caughtUp)
	}
	t.Logf("status while behind: %v; once caught up: %v", behind, caughtUp)
}

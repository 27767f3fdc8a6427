package mysqlcdc

import (
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestStatusAfterSnapshot reads a table in several chunks, then changes of
// the binary log: the enumerator then reports every chunk and table read
// and the binlog phase, and the reader of the binary log its position, the
// events it read and its lag.
func TestStatusAfterSnapshot(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	createAccounts(t, c, db, 10)
	src := cdctest.NewStatusSource(openSource(t, s.options(db, "accounts", "scan.incremental.snapshot.chunk.size", "3"), accountsTable))
	j := job(src)
	j.Parallelism, j.Checkpoints, j.Timeout = 2, 20*time.Millisecond, 30*time.Second
	r := j.Start(t)
	r.WaitFor(t, 10)
	c.Exec(t, "INSERT INTO "+db+".accounts VALUES (11, 110, 'k')", "DELETE FROM "+db+".accounts WHERE id = 1")
	r.WaitFor(t, 12)
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}

	e := src.EnumeratorStatus()
	table := e["snapshotTables"].(map[string]any)[db+".accounts"].(map[string]any)
	if e["phase"] != "binlog" || e["snapshotChunksTotal"].(int) < 2 || e["snapshotChunksDone"] != e["snapshotChunksTotal"] ||
		e["snapshotChunksInFlight"] != 0 || e["snapshotTablesTotal"] != 1 || e["snapshotTablesDone"] != 1 || e["snapshotRecords"] != int64(10) ||
		table["chunksDone"] != e["snapshotChunksTotal"] || table["chunks"] != e["snapshotChunksTotal"] {
		t.Fatalf("enumerator status after the snapshot: %v", e)
	}
	var binlog map[string]any
	chunks, rows := 0, int64(0)
	for _, st := range src.ReaderStatuses() {
		chunks += st["snapshotChunksRead"].(int)
		rows += st["snapshotRecords"].(int64)
		if st["phase"] == "binlog" {
			binlog = st
		}
	}
	if chunks != e["snapshotChunksTotal"] || rows != 10 {
		t.Fatalf("the readers read %d chunks, %d rows; want %v, 10", chunks, rows, e["snapshotChunksTotal"])
	}
	if binlog == nil {
		t.Fatal("no reader reports reading the binary log")
	}
	if binlog["binlogFile"] == "" || binlog["binlogPosition"].(uint32) == 0 || binlog["eventsRecords"].(int64) < 2 ||
		binlog["lagMillis"].(int64) < 0 || binlog["lastEventTime"] == nil || binlog["gtidSet"] == "" {
		t.Fatalf("binlog reader status: %v", binlog)
	}
	for k, v := range binlog {
		if s, ok := v.(string); ok && s == "" && k != "gtidSet" {
			t.Fatalf("status entry %s is empty: %v", k, binlog)
		}
	}
}

// TestBinlogStatusLag: the lag is the time since the last event was
// written while events come, and 0 once a heartbeat or an empty read shows
// the reader caught up.
func TestBinlogStatusLag(t *testing.T) {
	b := &binlogReader[connector.TableRecord]{s: &stream{cur: position{File: "binlog.000002", Pos: 900}}}
	now := time.Unix(1000, 0)
	b.observe(&replication.BinlogEvent{Header: &replication.EventHeader{Timestamp: 990, EventType: replication.QUERY_EVENT}})
	m := map[string]any{}
	b.status(m, now)
	if m["lagMillis"] != int64(10000) || m["eventsRecords"] != int64(1) || m["binlogFile"] != "binlog.000002" || m["binlogPosition"] != uint32(900) ||
		m["lastEventTime"] != "1970-01-01T00:16:30Z" {
		t.Fatalf("status while events come: %v", m)
	}
	b.observe(&replication.BinlogEvent{Header: &replication.EventHeader{EventType: replication.HEARTBEAT_EVENT}})
	m = map[string]any{}
	b.status(m, now)
	if m["lagMillis"] != int64(0) || m["eventsRecords"] != int64(1) {
		t.Fatalf("status after a heartbeat: %v", m)
	}
	b.observe(&replication.BinlogEvent{Header: &replication.EventHeader{Timestamp: 999, EventType: replication.XID_EVENT}})
	m = map[string]any{}
	b.status(m, now)
	if m["lagMillis"] != int64(1000) || m["eventsRecords"] != int64(2) {
		t.Fatalf("status after the next event: %v", m)
	}
}

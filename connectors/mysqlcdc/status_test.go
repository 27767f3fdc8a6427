package mysqlcdc

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/internal/cdc"
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
	src := connectortest.NewStatusSource(openSource(t, s.options(db, "accounts", "scan.incremental.snapshot.chunk.size", "3"), accountsTable))
	j := job(src.Source())
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

// TestStatusLagBytes: rows written while the reader is slowed down show as
// lagBytes, measured against where the server writes its binary log, until
// the reader has read them.
func TestStatusLagBytes(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	createAccounts(t, c, db, 1)
	j := job(openSource(t, s.options(db, "accounts"), accountsTable))
	behind, caughtUp := cdctest.CheckLagBytes(t, j, 1, func() { cdctest.FillAccounts(t, c, db+".accounts", 2, 3001) }, 3001)
	if behind["serverBinlogFile"] == nil || caughtUp["serverBinlogFile"] != caughtUp["binlogFile"] {
		t.Fatalf("status while behind: %v; once caught up: %v", behind, caughtUp)
	}
	t.Logf("status while behind: %v; once caught up: %v", behind, caughtUp)
}

// TestLagBytes: the lag across files counts the rest of the reader's file,
// the files between and the server's file up to its position; it is
// unknown without the reader's file or the size of a file before the
// server's.
func TestLagBytes(t *testing.T) {
	srv := serverLog{end: position{File: "binlog.000012", Pos: 300},
		sizes: map[string]uint64{"binlog.000009": 1000, "binlog.000010": 2000, "binlog.000011": 4000, "binlog.000012": 300}}
	for _, c := range []struct {
		cur  position
		want int64
		ok   bool
	}{
		{position{File: "binlog.000012", Pos: 100}, 200, true},
		{position{File: "binlog.000012", Pos: 300}, 0, true},
		{position{File: "binlog.000012", Pos: 400}, 0, true},
		{position{File: "binlog.000013", Pos: 4}, 0, true},
		{position{File: "binlog.000010", Pos: 500}, 1500 + 4000 + 300, true},
		{position{File: "binlog.000011", Pos: 4000}, 300, true},
		{position{File: "binlog.000008", Pos: 4}, 0, false},
		{position{GTIDs: "0-1-5", HasGTIDs: true}, 0, false},
	} {
		if got, ok := lagBytes(c.cur, srv); got != c.want || ok != c.ok {
			t.Errorf("lagBytes(%v) = %d, %v; want %d, %v", c.cur, got, ok, c.want, c.ok)
		}
	}
	if _, ok := lagBytes(position{File: "binlog.000011", Pos: 4}, serverLog{end: position{File: "binlog.000012", Pos: 4}}); ok {
		t.Error("a lag across files without their sizes is known")
	}
}

// TestServerLogLag reads the server's binary log position as a reader's
// probe does, before and after rows written around a rotation: the lag
// from the first to the second spans the files.
func TestServerLogLag(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	createAccounts(t, c, db, 1)
	l := &logConn{cfg: &config{host: s.Host, port: s.Port, user: "root", connectTimeout: 30 * time.Second}}
	defer l.close()
	ctx := context.Background()
	start, err := l.read(ctx, "")
	if err != nil || start.end.File == "" || start.end.Pos == 0 || start.sizes != nil {
		t.Fatalf("the server's position: %+v, %v", start, err)
	}
	cur := start.end
	cdctest.FillAccounts(t, c, db+".accounts", 2, 500)
	c.Exec(t, "FLUSH BINARY LOGS")
	cdctest.FillAccounts(t, c, db+".accounts", 501, 1000)
	now, err := l.read(ctx, cur.File)
	if err != nil || mysql.CompareBinlogFileName(now.end.File, cur.File) <= 0 {
		t.Fatalf("the server's position after a rotation: %+v, %v", now, err)
	}
	size, ok := now.sizes[cur.File]
	lag, known := lagBytes(cur, now)
	// Tests running meanwhile may write more.
	if !ok || !known || lag < int64(size)-int64(cur.Pos)+int64(now.end.Pos) || lag < 999*10 {
		t.Fatalf("lag %d (%v) from %v to %+v", lag, known, cur, now)
	}
	if lag, known := lagBytes(now.end, now); lag != 0 || !known {
		t.Fatalf("lag %d (%v) at the server's position", lag, known)
	}
	t.Logf("lag %d from %v to %+v", lag, cur, now)
}

// TestLagUnknownWithoutServer: while the server's position cannot be read,
// the status leaves lagBytes out, and reports the rest.
func TestLagUnknownWithoutServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there now
	l := &logConn{cfg: &config{host: "127.0.0.1", port: port, user: "root", connectTimeout: time.Second}}
	b := &binlogReader[connector.TableRecord]{s: &stream{cur: position{File: "binlog.000002", Pos: 900}}, streaming: true,
		logConn: l, log: cdc.NewProbe[serverLog](time.Millisecond, slog.Default(), "mysql-cdc: test", l.close)}
	defer b.log.Close()
	// Each status starts a query once the last has failed; none answers.
	for i := 0; i < 50; i++ {
		m := map[string]any{}
		b.status(m, time.Now())
		if _, ok := m["lagBytes"]; ok || m["binlogPosition"] != uint32(900) {
			t.Fatalf("status without a server: %v", m)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

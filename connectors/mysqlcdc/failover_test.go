package mysqlcdc

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// failoverJob runs a source of db.accounts on a server into sink, with
// checkpoints in dir (resuming from the latest one there), through hook.
func failoverJob(t *testing.T, s *server, db, dir string, sink *connectortest.MemorySink[connector.TableRecord],
	hook func(connector.TableRecord) connector.TableRecord) *cdctest.Running {
	t.Helper()
	src := openSource(t, s.options(db, "accounts"), accountsTable)
	// Small batches to a hook of its own: the source's reads, between
	// which checkpoints are taken, end within a transaction when the hook
	// is slow.
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond),
		eddy.WithCheckpointDir(dir), eddy.WithBatchSize(4), eddy.WithChannelCapacity(1), eddy.WithoutChaining(),
		eddy.WithRestartStrategy(eddy.NoRestart()))
	st := eddy.FromSource(env, "mysql-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{})
	st = eddy.Map(st, hook).Name("failure hook")
	eddy.WriteTo(st, "memory sink", sink.Sink())
	r := cdctest.Execute(t, env, "mysql-cdc", 2*time.Minute)
	r.Sink = sink
	return r
}

// TestFailoverToReplica: a job reads a MariaDB server, and after a
// checkpoint taken in the middle of a transaction of many rows it fails; it
// is restored from that checkpoint against a replica of the server, whose
// binary log has the same transactions in other files at other offsets. It
// resumes by the checkpoint's GTID set, skips the rows of the transaction it
// had already emitted, and reads on as changes to the server reach the
// replica: the whole output is each change once, as a run without the
// failover gives it.
func TestFailoverToReplica(t *testing.T) {
	primary := startServer(t)
	pc := primary.conn()
	replica := startServer(t, "--server-id=2", "--log-slave-updates")
	rc := replica.conn()
	// The replica's binary log differs from the server's: a transaction
	// of its own (in a replication domain of its own) and another file.
	rc.Exec(t, "SET SESSION gtid_domain_id = 2",
		"CREATE DATABASE replica_local", "CREATE TABLE replica_local.t (id INT PRIMARY KEY, v VARCHAR(200))",
		"INSERT INTO replica_local.t VALUES (1, REPEAT('x', 200))", "FLUSH BINARY LOGS")
	rc.Exec(t, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", primary.Port),
		"START SLAVE")

	db := primary.newDatabase(pc)
	createAccounts(t, pc, db, 10)
	want := []string{}
	for i := 1; i <= 10; i++ {
		want = append(want, fmt.Sprintf("+I|%d|%d|n%d", i, 10*i, i))
	}

	dir := filepath.Join(t.TempDir(), "checkpoints")
	sink := connectortest.NewMemorySink[connector.TableRecord]()
	const big = 300 // rows of the transaction the job fails in
	bigStart := 10 + 2 + 2
	failAt := int64(bigStart + 200)
	var seen atomic.Int64
	release, testDone := make(chan struct{}), make(chan struct{})
	first := failoverJob(t, primary, db, dir, sink, func(r connector.TableRecord) connector.TableRecord {
		n := seen.Add(1)
		if n > int64(bigStart) && n < failAt {
			time.Sleep(time.Millisecond) // checkpoints come within the transaction
		}
		if n == failAt {
			select {
			case <-release:
			case <-testDone:
			}
			panic(fmt.Sprintf("failure injected at record %d, row %d of a transaction of %d", n, n-int64(bigStart), big))
		}
		return r
	})
	t.Cleanup(func() { close(testDone) }) // before the job stops
	first.WaitFor(t, 10)                  // the snapshot
	pc.Exec(t, "UPDATE "+db+".accounts SET balance = 11 WHERE id = 1")
	want = append(want, "-U|1|10|n1", "+U|1|11|n1")
	first.WaitFor(t, 12) // a checkpoint past the snapshot's chunks
	pc.Exec(t, "DELETE FROM "+db+".accounts WHERE id = 2", "INSERT INTO "+db+".accounts VALUES (11, 110, 'n11')")
	want = append(want, "-D|2|20|n2", "+I|11|110|n11")
	// One transaction of many statements, each a rows event.
	var stmts []string
	for i := 1000; i < 1000+big; i += 10 {
		var rows []string
		for j := i; j < i+10; j++ {
			rows = append(rows, fmt.Sprintf("(%d, %d, 'n%d')", j, 10*j, j))
			want = append(want, fmt.Sprintf("+I|%d|%d|n%d", j, 10*j, j))
		}
		stmts = append(stmts, "INSERT INTO "+db+".accounts VALUES "+strings.Join(rows, ", "))
	}
	pc.Tx(t, stmts...)
	first.WaitFor(t, bigStart+1) // a checkpoint within the transaction
	close(release)
	if err := first.Wait(); err == nil || !strings.Contains(err.Error(), "failure injected") {
		t.Fatalf("the first job ended with %v, want the injected failure", err)
	}
	if n := len(sink.Committed()); n <= bigStart || n >= int(failAt) {
		t.Fatalf("the first job committed %d records, want a checkpoint within the transaction of records %d to %d", n, bigStart+1, bigStart+big)
	}

	// The replica has every transaction, in other files or at other
	// offsets.
	waitReplica(t, pc, rc)
	if p, r := pc.Query(t, "SHOW MASTER STATUS")[0], rc.Query(t, "SHOW MASTER STATUS")[0]; p == r {
		t.Fatalf("the replica's binary log ends where the server's does (%s): the test needs them to differ", p)
	}

	second := failoverJob(t, replica, db, dir, sink, func(r connector.TableRecord) connector.TableRecord { return r })
	pc.Tx(t, "UPDATE "+db+".accounts SET note = 'x' WHERE id = 3", "DELETE FROM "+db+".accounts WHERE id = 1000",
		"INSERT INTO "+db+".accounts VALUES (12, 120, 'n12')")
	want = append(want, "-U|3|30|n3", "+U|3|30|x", "-D|1000|10000|n1000", "+I|12|120|n12")
	// A last change, after which nothing more comes: any record emitted
	// twice before it is in the output then.
	pc.Exec(t, "INSERT INTO "+db+".accounts VALUES (13, 130, 'last')")
	want = append(want, "+I|13|130|last")
	second.WaitFor(t, len(want))
	if err := second.Stop(); err != nil && second.Ctx.Err() == nil {
		t.Fatal(err)
	}
	got := cdctest.Keys(accountsTable.Schema, sink.Committed())
	cdctest.WantKeys(t, got, sortedCopy(want)...)
	if p := sink.Problems(); len(p) > 0 {
		t.Errorf("the sink saw %v", p)
	}
}

// waitReplica waits for the replica to have applied every transaction of the
// server.
func waitReplica(t *testing.T, primary, replica *conn) {
	t.Helper()
	pos := primary.Query(t, "SELECT @@gtid_binlog_pos")[0]
	if r := replica.Query(t, "SELECT MASTER_GTID_WAIT('"+pos+"', 60)")[0]; r != "0" {
		st := replica.Query(t, "SHOW SLAVE STATUS")
		t.Fatalf("the replica did not reach %s within 60 s (%s): %v", pos, r, st)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}

package mysqlcdc

import (
	"fmt"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// startupRun runs a source of db.accounts, calls during once the job runs,
// and returns what it read once it has read n records (or, with n < 0, once
// the job ends by itself).
func startupRun(t *testing.T, options map[string]string, during func(), n int) []string {
	t.Helper()
	j := job(openSource(t, options, accountsTable))
	j.Parallelism, j.Checkpoints, j.Timeout = 2, 20*time.Millisecond, 20*time.Second
	// The job reads its start position before anything changes.
	return cdctest.Read(t, j, cdctest.Reading{Schema: accountsTable.Schema, Settle: 500 * time.Millisecond, During: during, N: n})
}

// TestStartupModes checks where each 'scan.startup.mode' starts reading.
func TestStartupModes(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "CREATE TABLE "+db+".accounts "+cdctest.AccountsColumns, "INSERT INTO "+db+".accounts VALUES (1, 10, 'a'), (2, 20, 'b')")
	time.Sleep(1100 * time.Millisecond) // binlog timestamps are in seconds
	mid := time.Now().UnixMilli()
	midPos := position{}
	if r, err := c.Execute("SHOW MASTER STATUS"); err == nil {
		midPos = position{File: text(r, 0, 0)}
		p, _ := r.GetUint(0, 1)
		midPos.Pos = uint32(p)
		r.Close()
	}
	midGTIDs := c.Query(t, "SELECT @@gtid_binlog_pos")[0]
	c.Exec(t, "UPDATE "+db+".accounts SET balance = 11 WHERE id = 1", "DELETE FROM "+db+".accounts WHERE id = 2")

	t.Run("snapshot", func(t *testing.T) {
		got := startupRun(t, s.options(db, "accounts", "scan.startup.mode", "snapshot"), nil, -1)
		cdctest.WantKeys(t, got, "+I|1|11|a")
	})
	t.Run("earliest-offset", func(t *testing.T) {
		got := startupRun(t, s.options(db, "accounts", "scan.startup.mode", "earliest-offset"), nil, 5)
		cdctest.WantKeys(t, got, "+I|1|10|a", "+I|2|20|b", "+U|1|11|a", "-D|2|20|b", "-U|1|10|a")
	})
	t.Run("timestamp", func(t *testing.T) {
		got := startupRun(t, s.options(db, "accounts", "scan.startup.mode", "timestamp", "scan.startup.timestamp-millis", fmt.Sprint(mid)), nil, 3)
		cdctest.WantKeys(t, got, "+U|1|11|a", "-D|2|20|b", "-U|1|10|a")
	})
	t.Run("specific-offset", func(t *testing.T) {
		got := startupRun(t, s.options(db, "accounts", "scan.startup.mode", "specific-offset",
			"scan.startup.specific-offset.file", midPos.File, "scan.startup.specific-offset.pos", fmt.Sprint(midPos.Pos)), nil, 3)
		cdctest.WantKeys(t, got, "+U|1|11|a", "-D|2|20|b", "-U|1|10|a")
	})
	t.Run("specific-offset by GTID set", func(t *testing.T) {
		// The set wins over a file and position, as in Flink CDC.
		got := startupRun(t, s.options(db, "accounts", "scan.startup.mode", "specific-offset",
			"scan.startup.specific-offset.gtid-set", midGTIDs,
			"scan.startup.specific-offset.file", "nosuch.000009", "scan.startup.specific-offset.pos", "4"), nil, 3)
		cdctest.WantKeys(t, got, "+U|1|11|a", "-D|2|20|b", "-U|1|10|a")
	})
	t.Run("specific-offset by a GTID set of MySQL", func(t *testing.T) {
		err := runFails(t, s.options(db, "accounts", "scan.startup.mode", "specific-offset",
			"scan.startup.specific-offset.gtid-set", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"), accountsTable)
		cdctest.WantError(t, err, "'scan.startup.specific-offset.gtid-set'", "mysql GTID set", "server is mariadb")
	})
	t.Run("latest-offset", func(t *testing.T) {
		load := s.conn()
		got := startupRun(t, s.options(db, "accounts", "scan.startup.mode", "latest-offset"), func() {
			load.Exec(t, "INSERT INTO "+db+".accounts VALUES (3, 30, 'c')")
		}, 1)
		cdctest.WantKeys(t, got, "+I|3|30|c")
	})
	t.Run("specific-offset of a file the server does not have", func(t *testing.T) {
		err := runFails(t, s.options(db, "accounts", "scan.startup.mode", "specific-offset",
			"scan.startup.specific-offset.file", "nosuch.000009", "scan.startup.specific-offset.pos", "4"), accountsTable)
		cdctest.WantError(t, err, "nosuch.000009", "not a binary log")
	})
}

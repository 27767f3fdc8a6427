package mysqlcdc

import (
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/sql/types"
)

// TestBadServerSetups checks that a server whose binary log a CDC source
// cannot read stops the job with an error naming the setting and the fix.
func TestBadServerSetups(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
		want  []string
	}{
		{"binlog off", []string{"--skip-log-bin"}, []string{"log_bin", "--log-bin"}},
		{"statement format", []string{"--binlog-format=STATEMENT"}, []string{"binlog_format", "STATEMENT", "ROW"}},
		{"minimal row image", []string{"--binlog-row-image=MINIMAL"}, []string{"binlog_row_image", "MINIMAL", "FULL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, tc.extra...)
			c := s.conn()
			db := s.newDatabase(c)
			createAccounts(t, c, db, 0)
			cdctest.WantError(t, runFails(t, s.options(db, "accounts"), accountsTable), tc.want...)
		})
	}
}

// TestBadSetups checks the errors of wrong credentials, tables and
// columns: each names what is wrong and where.
func TestBadSetups(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	createAccounts(t, c, db, 0)
	c.Exec(t,
		"CREATE TABLE "+db+".nokey (id INT, balance BIGINT, note VARCHAR(32))",
		"CREATE TABLE "+db+".shapes (id INT PRIMARY KEY, balance BIGINT, note POINT)",
		"CREATE USER 'eddy'@'%' IDENTIFIED BY 'right'",
		"GRANT SELECT ON *.* TO 'eddy'@'%'")
	t.Run("wrong password", func(t *testing.T) {
		o := s.options(db, "accounts", "username", "eddy", "password", "wrong")
		err := runFails(t, o, accountsTable)
		cdctest.WantError(t, err, "refused user 'eddy'", "'password'")
		if strings.Contains(err.Error(), "wrong") {
			t.Errorf("the error shows the password: %v", err)
		}
	})
	t.Run("missing replication privileges", func(t *testing.T) {
		err := runFails(t, s.options(db, "accounts", "username", "eddy", "password", "right"), accountsTable)
		cdctest.WantError(t, err, "REPLICATION")
	})
	t.Run("no such table", func(t *testing.T) {
		cdctest.WantError(t, runFails(t, s.options(db, "nosuch"), accountsTable), "no table matches", "'table-name' = 'nosuch'")
	})
	t.Run("no primary key", func(t *testing.T) {
		cdctest.WantError(t, runFails(t, s.options(db, "nokey"), accountsTable), "nokey has no primary key", "scan.incremental.snapshot.chunk.key-column")
	})
	t.Run("missing column", func(t *testing.T) {
		tab := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int()), types.F("missing", types.Int()))}
		cdctest.WantError(t, runFails(t, s.options(db, "accounts"), tab), `has no column "missing"`, "id, balance, note")
	})
	t.Run("unmapped type", func(t *testing.T) {
		cdctest.WantError(t, runFails(t, s.options(db, "shapes"), accountsTable), `column "note"`, "point")
	})
	t.Run("wrong type", func(t *testing.T) {
		tab := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int()), types.F("note", types.Int()))}
		cdctest.WantError(t, runFails(t, s.options(db, "accounts"), tab), `column "note"`, "varchar", "INT")
	})
	t.Run("server id range too small", func(t *testing.T) {
		j := job(openSource(t, s.options(db, "accounts", "server-id", "5400-5400"), accountsTable))
		j.Parallelism = 2
		cdctest.WantError(t, j.Start(t).Wait(), "'server-id' = '5400-5400'", "at least 2")
	})
}

// TestBadOptions checks option errors, before any connection.
func TestBadOptions(t *testing.T) {
	mysqlCDC.BadOptions(t, map[string]string{"hostname": "localhost", "username": "u", "database-name": "d", "table-name": "t"}, accountsTable, []cdctest.BadOption{
		{Set: map[string]string{"server-id": "10-5"}, Want: []string{"server-id", "range"}},
		{Set: map[string]string{"scan.startup.mode": "specific-offset"}, Want: []string{"scan.startup.specific-offset.file"}},
		{Set: map[string]string{"scan.startup.mode": "specific-offset", "scan.startup.specific-offset.gtid-set": "0-1"}, Want: []string{"scan.startup.specific-offset.gtid-set", "not a GTID set"}},
		{Set: map[string]string{"scan.startup.mode": "specific-offset", "scan.startup.specific-offset.gtid-set": "nouuid:1-5"}, Want: []string{"scan.startup.specific-offset.gtid-set", "not a MySQL GTID set"}},
		{Set: map[string]string{"scan.startup.mode": "timestamp"}, Want: []string{"scan.startup.timestamp-millis"}},
		{Set: map[string]string{"table-name": "("}, Want: []string{"'table-name'", "regular expression"}},
		{Set: map[string]string{"server-time-zone": "Mars/Base"}, Want: []string{"server-time-zone"}},
		{Set: map[string]string{"hostnmae": "x"}, Want: []string{"hostnmae", "hostname"}},
	})
}

package mysqlcdc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql/types"
)

// runFails runs a job of a mysql-cdc source and returns its error.
func runFails(t *testing.T, options map[string]string, tab *connector.Table) error {
	t.Helper()
	src, err := connector.OpenTableSource(connector.Default, "mysql-cdc", options, tab)
	if err != nil {
		return err
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	eddy.WriteTo(eddy.FromSource(env, "mysql-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{}),
		"memory sink", connectortest.NewMemorySink[connector.TableRecord]().Sink())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = env.Execute(ctx, "bad setup")
	if err == nil {
		t.Fatal("the job did not fail")
	}
	if ctx.Err() != nil {
		t.Fatalf("the job did not fail within a minute: %v", err)
	}
	return err
}

func wantError(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not say %q", err, p)
		}
	}
}

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
			exec(t, c, "CREATE TABLE "+db+".accounts (id INT PRIMARY KEY, balance BIGINT, note VARCHAR(32))")
			wantError(t, runFails(t, s.options(db, "accounts"), accountsTable), tc.want...)
		})
	}
}

// TestBadSetups checks the errors of wrong credentials, tables and
// columns: each names what is wrong and where.
func TestBadSetups(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	exec(t, c,
		"CREATE TABLE "+db+".accounts (id INT PRIMARY KEY, balance BIGINT, note VARCHAR(32))",
		"CREATE TABLE "+db+".nokey (id INT, balance BIGINT, note VARCHAR(32))",
		"CREATE TABLE "+db+".shapes (id INT PRIMARY KEY, balance BIGINT, note POINT)",
		"CREATE USER 'eddy'@'%' IDENTIFIED BY 'right'",
		"GRANT SELECT ON *.* TO 'eddy'@'%'")
	t.Run("wrong password", func(t *testing.T) {
		o := s.options(db, "accounts", "username", "eddy", "password", "wrong")
		err := runFails(t, o, accountsTable)
		wantError(t, err, "refused user 'eddy'", "'password'")
		if strings.Contains(err.Error(), "wrong") {
			t.Errorf("the error shows the password: %v", err)
		}
	})
	t.Run("missing replication privileges", func(t *testing.T) {
		err := runFails(t, s.options(db, "accounts", "username", "eddy", "password", "right"), accountsTable)
		wantError(t, err, "REPLICATION")
	})
	t.Run("no such table", func(t *testing.T) {
		wantError(t, runFails(t, s.options(db, "nosuch"), accountsTable), "no table matches", "'table-name' = 'nosuch'")
	})
	t.Run("no primary key", func(t *testing.T) {
		wantError(t, runFails(t, s.options(db, "nokey"), accountsTable), "nokey has no primary key", "scan.incremental.snapshot.chunk.key-column")
	})
	t.Run("missing column", func(t *testing.T) {
		tab := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int()), types.F("missing", types.Int()))}
		wantError(t, runFails(t, s.options(db, "accounts"), tab), `has no column "missing"`, "id, balance, note")
	})
	t.Run("unmapped type", func(t *testing.T) {
		wantError(t, runFails(t, s.options(db, "shapes"), accountsTable), `column "note"`, "point")
	})
	t.Run("wrong type", func(t *testing.T) {
		tab := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int()), types.F("note", types.Int()))}
		wantError(t, runFails(t, s.options(db, "accounts"), tab), `column "note"`, "varchar", "INT")
	})
	t.Run("server id range too small", func(t *testing.T) {
		src := openSource(t, s.options(db, "accounts", "server-id", "5400-5400"), accountsTable)
		env := eddy.NewEnvironment(eddy.WithParallelism(2))
		eddy.WriteTo(eddy.FromSource(env, "mysql-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{}),
			"memory sink", connectortest.NewMemorySink[connector.TableRecord]().Sink())
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		wantError(t, env.Execute(ctx, "bad setup"), "'server-id' = '5400-5400'", "at least 2")
	})
}

// TestBadOptions checks option errors, before any connection.
func TestBadOptions(t *testing.T) {
	base := map[string]string{"hostname": "localhost", "username": "u", "database-name": "d", "table-name": "t"}
	for _, tc := range []struct {
		set  map[string]string
		want []string
	}{
		{map[string]string{"server-id": "10-5"}, []string{"server-id", "range"}},
		{map[string]string{"scan.startup.mode": "specific-offset"}, []string{"scan.startup.specific-offset.file"}},
		{map[string]string{"scan.startup.mode": "timestamp"}, []string{"scan.startup.timestamp-millis"}},
		{map[string]string{"table-name": "("}, []string{"'table-name'", "regular expression"}},
		{map[string]string{"server-time-zone": "Mars/Base"}, []string{"server-time-zone"}},
		{map[string]string{"hostnmae": "x"}, []string{"hostnmae", "hostname"}},
	} {
		o := map[string]string{}
		for k, v := range base {
			o[k] = v
		}
		for k, v := range tc.set {
			o[k] = v
		}
		_, err := connector.OpenTableSource(connector.Default, "mysql-cdc", o, accountsTable)
		wantError(t, err, tc.want...)
	}
}

package postgrescdc

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/sql/types"
)

// TestBadServerSetups checks the errors of a server whose settings a CDC
// source cannot work with: each names the setting and the fix.
func TestBadServerSetups(t *testing.T) {
	t.Run("wal_level replica", func(t *testing.T) {
		s := startServer(t, "wal_level=replica")
		c := s.conn()
		schema, slot := s.newSchema(c)
		createAccounts(t, c, schema, 1)
		cdctest.WantError(t, runFails(t, s.options(schema, "accounts", slot), accountsTable), "wal_level", "'replica'", "wal_level = logical")
	})
	t.Run("no free replication slot", func(t *testing.T) {
		s := startServer(t, "max_replication_slots=1")
		c := s.conn()
		schema, slot := s.newSchema(c)
		createAccounts(t, c, schema, 1)
		run(t, c, "SELECT pg_create_logical_replication_slot('other', 'pgoutput')")
		cdctest.WantError(t, runFails(t, s.options(schema, "accounts", slot), accountsTable), "max_replication_slots", "pg_drop_replication_slot")
	})
}

// TestBadSetups checks the errors of wrong credentials, privileges,
// tables, columns and slots: each names what is wrong, where, and the fix.
func TestBadSetups(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	createAccounts(t, c, schema, 3)
	run(t, c,
		"CREATE TABLE "+schema+".nokey (id INT, balance BIGINT, note VARCHAR(32))",
		"CREATE TABLE "+schema+".shapes (id INT PRIMARY KEY, balance BIGINT, note POINT)",
		"ALTER TABLE "+schema+".shapes REPLICA IDENTITY FULL",
		"CREATE TABLE "+schema+".plain (id INT PRIMARY KEY, balance BIGINT, note VARCHAR(32))",
		"CREATE USER eddy PASSWORD 'right'",
		"GRANT USAGE ON SCHEMA "+schema+" TO eddy",
		"GRANT SELECT ON ALL TABLES IN SCHEMA "+schema+" TO eddy")
	t.Run("wrong password", func(t *testing.T) {
		err := runFails(t, s.options(schema, "accounts", slot, "username", "eddy", "password", "wr0ng-secret"), accountsTable)
		cdctest.WantError(t, err, "refused user 'eddy'", "'password'")
		if strings.Contains(err.Error(), "wr0ng-secret") {
			t.Errorf("the error shows the password: %v", err)
		}
	})
	t.Run("missing replication attribute", func(t *testing.T) {
		err := runFails(t, s.options(schema, "accounts", slot, "username", "eddy", "password", "right"), accountsTable)
		cdctest.WantError(t, err, "REPLICATION", "ALTER ROLE")
		if strings.Contains(err.Error(), "right") {
			t.Errorf("the error shows the password: %v", err)
		}
	})
	t.Run("no right to create the publication", func(t *testing.T) {
		run(t, c, "ALTER ROLE eddy REPLICATION")
		defer run(t, c, "ALTER ROLE eddy NOREPLICATION")
		err := runFails(t, s.options(schema, "accounts", slot, "username", "eddy", "password", "right"), accountsTable)
		cdctest.WantError(t, err, "CREATE PUBLICATION", "superuser", "debezium.publication.autocreate.mode")
	})
	t.Run("no such table", func(t *testing.T) {
		cdctest.WantError(t, runFails(t, s.options(schema, "nosuch", slot), accountsTable), "no table", "'table-name' = 'nosuch'", "'schema-name' = '"+schema+"'")
	})
	t.Run("no primary key", func(t *testing.T) {
		cdctest.WantError(t, runFails(t, s.options(schema, "nokey", slot, "changelog-mode", "upsert"), accountsTable),
			"nokey has no primary key", "scan.incremental.snapshot.chunk.key-column")
	})
	t.Run("no REPLICA IDENTITY FULL", func(t *testing.T) {
		cdctest.WantError(t, runFails(t, s.options(schema, "plain", slot), accountsTable),
			schema+".plain", "REPLICA IDENTITY FULL", "ALTER TABLE", "'changelog-mode' = 'upsert'")
	})
	t.Run("missing column", func(t *testing.T) {
		tab := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int()), types.F("missing", types.Int()))}
		cdctest.WantError(t, runFails(t, s.options(schema, "accounts", slot), tab), `has no column "missing"`, "id, balance, note")
	})
	t.Run("unmapped type", func(t *testing.T) {
		cdctest.WantError(t, runFails(t, s.options(schema, "shapes", slot), accountsTable), `column "note"`, schema+".shapes", "point", "STRING")
	})
	t.Run("wrong type", func(t *testing.T) {
		tab := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int()), types.F("note", types.Int()))}
		cdctest.WantError(t, runFails(t, s.options(schema, "accounts", slot), tab), `column "note"`, schema+".accounts", "character varying(32)", "INT")
	})
	t.Run("publication without the table", func(t *testing.T) {
		run(t, c, "CREATE PUBLICATION partial FOR TABLE "+schema+".plain")
		cdctest.WantError(t, runFails(t, s.options(schema, "accounts", slot, "debezium.publication.name", "partial"), accountsTable),
			"publication 'partial'", schema+".accounts", "ALTER PUBLICATION")
	})
	t.Run("slot in use", func(t *testing.T) {
		run(t, c, "SELECT pg_create_logical_replication_slot('busy', 'pgoutput')")
		rep, err := pgconn.Connect(context.Background(), s.DSN("postgres")+"&replication=database")
		if err != nil {
			t.Fatal(err)
		}
		defer rep.Close(context.Background())
		if err := pglogrepl.StartReplication(context.Background(), rep, "busy", 0, pglogrepl.StartReplicationOptions{
			PluginArgs: []string{"proto_version '1'", "publication_names 'partial'"}}); err != nil {
			t.Fatal(err)
		}
		cdctest.WantError(t, runFails(t, s.options(schema, "accounts", "busy", "connect.timeout", "1s"), accountsTable), "slot 'busy'", "in use", "'slot.name' of its own")
	})
}

// TestBadOptions checks option errors, before any connection.
func TestBadOptions(t *testing.T) {
	base := map[string]string{"hostname": "localhost", "username": "u", "database-name": "d", "schema-name": "s", "table-name": "t", "slot.name": "x"}
	postgresCDC.BadOptions(t, base, accountsTable, []cdctest.BadOption{
		{Set: map[string]string{"decoding.plugin.name": "wal2json"}, Want: []string{"'decoding.plugin.name' = 'wal2json'", "pgoutput"}},
		{Set: map[string]string{"slot.name": "Bad-Name"}, Want: []string{"slot.name", "lower-case"}},
		{Set: map[string]string{"table-name": "("}, Want: []string{"'table-name'", "regular expression"}},
		{Set: map[string]string{"changelog-mode": "retract"}, Want: []string{"changelog-mode", "upsert"}},
		{Set: map[string]string{"scan.startup.mode": "earliest-offset"}, Want: []string{"scan.startup.mode", "committed-offset"}},
		{Set: map[string]string{"debezium.publication.autocreate.mode": "some"}, Want: []string{"debezium.publication.autocreate.mode", "filtered"}},
		{Set: map[string]string{"hostnmae": "x"}, Want: []string{"hostnmae", "hostname"}},
	})
	postgresCDC.BadOptions(t, base, &connector.Table{Schema: accountsTable.Schema}, []cdctest.BadOption{
		{Set: map[string]string{"changelog-mode": "upsert"}, Want: []string{"'changelog-mode' = 'upsert'", "PRIMARY KEY"}},
	})
}

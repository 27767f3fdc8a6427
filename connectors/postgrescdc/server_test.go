package postgrescdc

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/internal/testservers"
)

func TestMain(m *testing.M) { testservers.Main(m) }

// server is a private PostgreSQL for the tests of this package.
type server struct {
	*testservers.Postgres
	t testing.TB
}

func startServer(t testing.TB, extra ...string) *server {
	return &server{Postgres: testservers.StartPostgres(t, extra...), t: t}
}

// conn is a connection to the server, as cdctest uses it.
type conn struct{ *pgconn.PgConn }

// conn opens a connection to database postgres as user postgres.
func (s *server) conn() *conn {
	s.t.Helper()
	c, err := pgconn.Connect(context.Background(), s.DSN("postgres"))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close(context.Background()) })
	return &conn{c}
}

// Exec runs statements, failing the test on an error.
func (c *conn) Exec(t testing.TB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.PgConn.Exec(context.Background(), q).ReadAll(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Tx runs statements in one transaction, sent at once.
func (c *conn) Tx(t testing.TB, stmts ...string) {
	t.Helper()
	c.Exec(t, "BEGIN; "+strings.Join(stmts, "; ")+"; COMMIT")
}

// Query returns the rows of a query as text, one string a row with fields
// separated by '|'.
func (c *conn) Query(t testing.TB, q string) []string {
	t.Helper()
	res, err := c.PgConn.Exec(context.Background(), q).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for _, r := range res {
		for _, row := range r.Rows {
			f := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					f[i] = "NULL"
				} else {
					f[i] = string(v)
				}
			}
			out = append(out, strings.Join(f, "|"))
		}
	}
	return out
}

// run runs statements, failing the test on an error.
func run(t testing.TB, c *conn, stmts ...string) {
	t.Helper()
	c.Exec(t, stmts...)
}

// rows returns the rows of a query as text (conn.Query).
func rows(t testing.TB, c *conn, q string) []string {
	t.Helper()
	return c.Query(t, q)
}

var seq atomic.Int64

// newSchema creates a schema of its own for a test, and returns it with a
// slot name of its own; the slot is dropped when the test ends.
func (s *server) newSchema(c *conn) (schema, slot string) {
	n := seq.Add(1)
	schema, slot = fmt.Sprintf("s%d", n), fmt.Sprintf("eddy_slot_%d", n)
	c.Exec(s.t, "CREATE SCHEMA "+schema)
	s.t.Cleanup(func() {
		_, _ = c.PgConn.Exec(context.Background(), "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '"+slot+"' AND NOT active").ReadAll()
	})
	return schema, slot
}

// options returns the connector's options for tables of schema.
func (s *server) options(schema, table, slot string, extra ...string) map[string]string {
	return cdctest.Options(map[string]string{
		"hostname": s.Host, "port": fmt.Sprint(s.Port), "username": "postgres", "password": "",
		"database-name": "postgres", "schema-name": schema, "table-name": table, "slot.name": slot,
		"debezium.publication.name": "pub_" + slot, "heartbeat.interval.ms": "100ms",
	}, extra...)
}

// accountsTable is the SQL table of schema.accounts.
var accountsTable = cdctest.AccountsTable

// createAccounts creates schema.accounts with REPLICA IDENTITY FULL and
// rows 1..n (cdctest.FillAccounts).
func createAccounts(t testing.TB, c *conn, schema string, n int) {
	t.Helper()
	c.Exec(t, "CREATE TABLE "+schema+".accounts "+cdctest.AccountsColumns, "ALTER TABLE "+schema+".accounts REPLICA IDENTITY FULL")
	cdctest.FillAccounts(t, c, schema+".accounts", 1, n)
}

// postgresCDC is the connector under test.
const postgresCDC = cdctest.Connector("postgres-cdc")

// openSource opens a source of postgresCDC, job makes a job of one, and runFails
// runs one and returns its error.
var (
	openSource = postgresCDC.OpenSource
	job        = postgresCDC.Job
	runFails   = postgresCDC.RunFails
)

package postgrescdc

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql/types"
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

// conn opens a connection to database postgres as user postgres.
func (s *server) conn() *pgconn.PgConn {
	s.t.Helper()
	c, err := pgconn.Connect(context.Background(), s.DSN("postgres"))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// run runs statements, failing the test on an error.
func run(t testing.TB, c *pgconn.PgConn, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.Exec(context.Background(), q).ReadAll(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// rows returns the rows of a query as text, one string a row with fields
// separated by '|'.
func rows(t testing.TB, c *pgconn.PgConn, q string) []string {
	t.Helper()
	res, err := c.Exec(context.Background(), q).ReadAll()
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

var seq atomic.Int64

// newSchema creates a schema of its own for a test, and returns it with a
// slot name of its own; the slot is dropped when the test ends.
func (s *server) newSchema(c *pgconn.PgConn) (schema, slot string) {
	n := seq.Add(1)
	schema, slot = fmt.Sprintf("s%d", n), fmt.Sprintf("eddy_slot_%d", n)
	run(s.t, c, "CREATE SCHEMA "+schema)
	s.t.Cleanup(func() {
		_, _ = c.Exec(context.Background(), "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '"+slot+"' AND NOT active").ReadAll()
	})
	return schema, slot
}

// options returns the connector's options for tables of schema.
func (s *server) options(schema, table, slot string, extra ...string) map[string]string {
	o := map[string]string{
		"hostname": s.Host, "port": fmt.Sprint(s.Port), "username": "postgres", "password": "",
		"database-name": "postgres", "schema-name": schema, "table-name": table, "slot.name": slot,
		"debezium.publication.name": "pub_" + slot, "heartbeat.interval.ms": "100ms",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		o[extra[i]] = extra[i+1]
	}
	return o
}

// openSource opens a postgres-cdc source of a table with the given schema.
func openSource(t testing.TB, options map[string]string, tab *connector.Table) connector.Source[connector.TableRecord] {
	t.Helper()
	src, err := connector.OpenTableSource(connector.Default, "postgres-cdc", options, tab)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// recordKey renders a record for multiset comparisons: its kind and the
// text of its fields.
func recordKey(rt *types.RowType) func(connector.TableRecord) string {
	return func(r connector.TableRecord) string {
		var b []byte
		b = append(b, r.Kind.String()...)
		for i := 0; i < rt.Len(); i++ {
			b = append(b, '|')
			b = types.AppendText(b, rt, r.Row, i, nil)
		}
		return string(b)
	}
}

// record builds a record from the text of its fields.
func record(t testing.TB, rt *types.RowType, kind changelog.Kind, fields ...string) connector.TableRecord {
	t.Helper()
	w := types.NewRowWriter(rt, types.NewArena(256))
	for i, f := range fields {
		if f == "NULL" {
			w.SetNull(i)
			continue
		}
		if err := w.ParseText(i, f, nil); err != nil {
			t.Fatal(err)
		}
	}
	return connector.TableRecord{Kind: kind, Row: w.Finish().Clone()}
}

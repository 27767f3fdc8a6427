package mysqlcdc

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql/types"
)

func TestMain(m *testing.M) { testservers.Main(m) }

// server is a private MariaDB for the tests of this package.
type server struct {
	*testservers.MariaDB
	t testing.TB
}

func startServer(t testing.TB, extra ...string) *server {
	return &server{MariaDB: testservers.StartMariaDB(t, extra...), t: t}
}

// conn opens a connection as root.
func (s *server) conn() *client.Conn {
	s.t.Helper()
	c, err := client.Connect(s.Addr(), "root", "", "")
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	return c
}

// exec runs statements, failing the test on an error.
func exec(t testing.TB, c *client.Conn, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

var dbSeq atomic.Int64

// newDatabase creates a database of its own for a test.
func (s *server) newDatabase(c *client.Conn) string {
	db := fmt.Sprintf("db%d", dbSeq.Add(1))
	exec(s.t, c, "CREATE DATABASE "+db)
	return db
}

// options returns the connector's options for tables of db.
func (s *server) options(db, table string, extra ...string) map[string]string {
	o := map[string]string{
		"hostname": s.Host, "port": fmt.Sprint(s.Port), "username": "root", "password": "",
		"database-name": db, "table-name": table, "server-id": "5400-5420",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		o[extra[i]] = extra[i+1]
	}
	return o
}

// openSource opens a mysql-cdc source of a table with the given schema.
func openSource(t testing.TB, options map[string]string, tab *connector.Table) connector.Source[connector.TableRecord] {
	t.Helper()
	src, err := connector.OpenTableSource(connector.Default, "mysql-cdc", options, tab)
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

// query returns the rows of a query as text, one string a row with fields
// separated by '|'.
func query(t testing.TB, c *client.Conn, q string) []string {
	t.Helper()
	r, err := c.Execute(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer r.Close()
	var out []string
	for i := range r.Values {
		var f []string
		for j := range r.Values[i] {
			v := r.Values[i][j]
			switch x := v.Value().(type) {
			case nil:
				f = append(f, "NULL")
			case []byte:
				f = append(f, string(x))
			default:
				f = append(f, fmt.Sprint(x))
			}
		}
		out = append(out, strings.Join(f, "|"))
	}
	return out
}

var _ = context.Background

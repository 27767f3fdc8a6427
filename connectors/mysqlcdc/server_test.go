package mysqlcdc

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/internal/testservers"
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

// conn is a connection to the server, as cdctest uses it.
type conn struct{ *client.Conn }

// conn opens a connection as root, whose statements and results are
// utf8mb4 text.
func (s *server) conn() *conn {
	s.t.Helper()
	c, err := client.Connect(s.Addr(), "root", "", "")
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := c.Execute("SET NAMES utf8mb4"); err != nil {
		c.Close()
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	return &conn{c}
}

// Exec runs statements, failing the test on an error.
func (c *conn) Exec(t testing.TB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Tx runs statements in one transaction.
func (c *conn) Tx(t testing.TB, stmts ...string) {
	t.Helper()
	c.Exec(t, "BEGIN")
	c.Exec(t, stmts...)
	c.Exec(t, "COMMIT")
}

// Query returns the rows of a query as text, one string a row with fields
// separated by '|'.
func (c *conn) Query(t testing.TB, q string) []string {
	t.Helper()
	r, err := c.Execute(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer r.Close()
	var out []string
	for i := range r.Values {
		var row []byte
		for j := range r.Values[i] {
			if j > 0 {
				row = append(row, '|')
			}
			switch x := r.Values[i][j].Value().(type) {
			case nil:
				row = append(row, "NULL"...)
			case []byte:
				row = append(row, x...)
			default:
				row = fmt.Append(row, x)
			}
		}
		out = append(out, string(row))
	}
	return out
}

var dbSeq atomic.Int64

// newDatabase creates a database of its own for a test.
func (s *server) newDatabase(c *conn) string {
	db := fmt.Sprintf("db%d", dbSeq.Add(1))
	c.Exec(s.t, "CREATE DATABASE "+db)
	return db
}

// createAccounts creates db.accounts with rows 1..n (cdctest.FillAccounts).
func createAccounts(t testing.TB, c *conn, db string, n int) {
	t.Helper()
	c.Exec(t, "CREATE TABLE "+db+".accounts "+cdctest.AccountsColumns)
	cdctest.FillAccounts(t, c, db+".accounts", 1, n)
}

// options returns the connector's options for tables of db.
func (s *server) options(db, table string, extra ...string) map[string]string {
	return cdctest.Options(map[string]string{
		"hostname": s.Host, "port": fmt.Sprint(s.Port), "username": "root", "password": "",
		"database-name": db, "table-name": table, "server-id": "5400-5420",
	}, extra...)
}

// accountsTable is the SQL table of db.accounts.
var accountsTable = cdctest.AccountsTable

// mysqlCDC is the connector under test.
const mysqlCDC = cdctest.Connector("mysql-cdc")

// openSource opens a source of mysqlCDC, job makes a job of one, and runFails
// runs one and returns its error.
var (
	openSource = mysqlCDC.OpenSource
	job        = mysqlCDC.Job
	runFails   = mysqlCDC.RunFails
)

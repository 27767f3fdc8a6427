package mysqlcdc

import (
	"flag"
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

var benchRows = flag.Int("rows", 1_000_000, "rows of the benchmarks' table")

// fill inserts rows 1..n into db.accounts in statements of 2000 rows.
func fill(b testing.TB, s *server, db string, n int) {
	c := s.conn()
	c.Exec(b, "CREATE TABLE "+db+".accounts "+cdctest.AccountsColumns)
	cdctest.InsertRows(b, c, db+".accounts", 1, n, 2000, func(i int) string { return fmt.Sprintf("(%d,%d,'note %d')", i, i*7, i) })
}

// BenchmarkSnapshot reads a table of -rows rows (1 M by default) as a
// snapshot, beside a plain SELECT * of it through the same driver:
//
//	go test -run XXX -bench Snapshot -benchtime 1x ./connectors/mysqlcdc -args -rows=1000000
func BenchmarkSnapshot(b *testing.B) {
	s := startServer(b)
	db := s.newDatabase(s.conn())
	fill(b, s, db, *benchRows)
	b.Run("select", func(b *testing.B) {
		for range b.N {
			c := s.conn()
			cdctest.Measure(b, int64(*benchRows), func() (int64, error) {
				var res mysql.Result
				var n int64
				err := c.ExecuteSelectStreaming("SELECT * FROM "+db+".accounts", &res, func(row []mysql.FieldValue) error { n++; return nil }, nil)
				return n, err
			})
		}
	})
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("snapshot/p%d", p), func(b *testing.B) {
			for range b.N {
				src := openSource(b, s.options(db, "accounts", "scan.startup.mode", "snapshot"), accountsTable)
				cdctest.RunCounting(b, mysqlCDC, src, p, int64(*benchRows))
			}
		})
	}
}

// BenchmarkBinlog reads -rows changes (inserts and updates of rows of
// 1 M) from the binary log, written before the job starts:
//
//	go test -run XXX -bench Binlog -benchtime 1x ./connectors/mysqlcdc -args -rows=1000000
func BenchmarkBinlog(b *testing.B) {
	s := startServer(b)
	c := s.conn()
	db := s.newDatabase(c)
	half := *benchRows / 2
	fill(b, s, db, half)
	// Updates of the first half/2 rows, 2000 a statement, each a -U and
	// a +U.
	for i := 1; i <= half/2; i += 2000 {
		c.Exec(b, fmt.Sprintf("UPDATE %s.accounts SET balance = balance + 1 WHERE id >= %d AND id < %d", db, i, min(i+2000, half/2+1)))
	}
	n := int64(half + 2*(half/2))
	for range b.N {
		src := openSource(b, s.options(db, "accounts", "scan.startup.mode", "earliest-offset"), accountsTable)
		cdctest.RunCounting(b, mysqlCDC, src, 1, n)
	}
}

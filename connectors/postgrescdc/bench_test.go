package postgrescdc

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

var benchRows = flag.Int("rows", 1_000_000, "rows of the benchmarks' table")

// fill creates schema.accounts with rows 1..n.
func fill(b testing.TB, s *server, schema string, n int) {
	s.conn().Exec(b, "CREATE TABLE "+schema+".accounts "+cdctest.AccountsColumns,
		"ALTER TABLE "+schema+".accounts REPLICA IDENTITY FULL",
		fmt.Sprintf("INSERT INTO %s.accounts SELECT g, g * 7, 'note ' || g FROM generate_series(1, %d) g", schema, n),
		"VACUUM ANALYZE "+schema+".accounts")
}

// BenchmarkSnapshot reads a table of -rows rows (1 M by default) as a
// snapshot at parallelism 1 and 2, beside a plain SELECT * of it through
// pgx in text format (the CPU figures are this process's, not the
// server's):
//
//	go test -run XXX -bench Snapshot -benchtime 1x ./connectors/postgrescdc -args -rows=1000000
func BenchmarkSnapshot(b *testing.B) {
	s := startServer(b)
	schema, _ := s.newSchema(s.conn())
	fill(b, s, schema, *benchRows)
	b.Run("select", func(b *testing.B) {
		for range b.N {
			c := s.conn()
			cdctest.Measure(b, int64(*benchRows), func() (int64, error) {
				var n int64
				rr := c.PgConn.Exec(context.Background(), "SELECT * FROM "+schema+".accounts")
				for rr.NextResult() {
					r := rr.ResultReader()
					for r.NextRow() {
						n++
					}
					if _, err := r.Close(); err != nil {
						return n, err
					}
				}
				return n, rr.Close()
			})
		}
	})
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("snapshot/p%d", p), func(b *testing.B) {
			for range b.N {
				src := openSource(b, s.options(schema, "accounts", "unused", "scan.startup.mode", "snapshot"), accountsTable)
				cdctest.RunCounting(b, postgresCDC, src, p, int64(*benchRows))
			}
		})
	}
}

// BenchmarkStream reads -rows changes (inserts of half of them, then
// updates of a quarter, each a -U and a +U) from a slot they were written
// to before the job starts:
//
//	go test -run XXX -bench Stream -benchtime 1x ./connectors/postgrescdc -args -rows=1000000
func BenchmarkStream(b *testing.B) {
	s := startServer(b)
	c := s.conn()
	schema, slot := s.newSchema(c)
	c.Exec(b, "CREATE TABLE "+schema+".accounts "+cdctest.AccountsColumns,
		"ALTER TABLE "+schema+".accounts REPLICA IDENTITY FULL",
		"CREATE PUBLICATION pub_"+slot+" FOR TABLE "+schema+".accounts",
		"SELECT pg_create_logical_replication_slot('"+slot+"', 'pgoutput')")
	half := *benchRows / 2
	for i := 1; i <= half; i += 10000 {
		c.Exec(b, fmt.Sprintf("INSERT INTO %s.accounts SELECT g, g * 7, 'note ' || g FROM generate_series(%d, %d) g", schema, i, min(i+9999, half)))
	}
	for i := 1; i <= half/2; i += 10000 {
		c.Exec(b, fmt.Sprintf("UPDATE %s.accounts SET balance = balance + 1 WHERE id >= %d AND id < %d", schema, i, min(i+10000, half/2+1)))
	}
	n := int64(half + 2*(half/2))
	for range b.N {
		src := openSource(b, s.options(schema, "accounts", slot, "scan.startup.mode", "committed-offset"), accountsTable)
		cdctest.RunCounting(b, postgresCDC, src, 1, n)
	}
}

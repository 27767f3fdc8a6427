package mysqlcdc

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

var benchRows = flag.Int("rows", 1_000_000, "rows of the benchmarks' table")

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fill inserts rows 1..n into db.accounts in statements of 2000 rows.
func fill(b testing.TB, s *server, db string, n int) {
	c := s.conn()
	exec(b, c, "CREATE TABLE "+db+".accounts (id INT PRIMARY KEY, balance BIGINT, note VARCHAR(32))")
	for i := 1; i <= n; i += 2000 {
		var vals []string
		for j := i; j < i+2000 && j <= n; j++ {
			vals = append(vals, fmt.Sprintf("(%d,%d,'note %d')", j, j*7, j))
		}
		exec(b, c, "INSERT INTO "+db+".accounts VALUES "+strings.Join(vals, ","))
	}
}

// runCounting runs a job of src until it has read n records (or ends by
// itself) and reports records/s and records per CPU-second of the process.
func runCounting(b *testing.B, src connector.Source[connector.TableRecord], p int, n int64) {
	env := eddy.NewEnvironment(eddy.WithParallelism(p))
	var seen atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st := eddy.FromSource(env, "mysql-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{})
	eddy.Discard(eddy.Map(st, func(r connector.TableRecord) connector.TableRecord {
		if seen.Add(1) == n {
			cancel()
		}
		return r
	}))
	cpu0, wall0 := processCPU(), time.Now()
	err := env.Execute(ctx, "bench")
	wall, cpu := time.Since(wall0), processCPU()-cpu0
	if err != nil && seen.Load() < n {
		b.Fatal(err)
	}
	if seen.Load() != n {
		b.Fatalf("read %d records, want %d", seen.Load(), n)
	}
	b.ReportMetric(float64(n)/wall.Seconds(), "records/s")
	b.ReportMetric(float64(n)/cpu.Seconds(), "records/CPU-s")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
}

// BenchmarkSnapshot reads a table of -rows rows (1 M by default) as a
// snapshot, beside a plain SELECT * of it through the same driver:
//
//	go test -run XXX -bench Snapshot -benchtime 1x ./connectors/mysqlcdc
func BenchmarkSnapshot(b *testing.B) {
	s := startServer(b)
	db := s.newDatabase(s.conn())
	fill(b, s, db, *benchRows)
	b.Run("select", func(b *testing.B) {
		for range b.N {
			c := s.conn()
			var res mysql.Result
			n := 0
			cpu0, wall0 := processCPU(), time.Now()
			err := c.ExecuteSelectStreaming("SELECT * FROM "+db+".accounts", &res, func(row []mysql.FieldValue) error { n++; return nil }, nil)
			wall, cpu := time.Since(wall0), processCPU()-cpu0
			if err != nil || n != *benchRows {
				b.Fatalf("read %d rows: %v", n, err)
			}
			b.ReportMetric(float64(n)/wall.Seconds(), "records/s")
			b.ReportMetric(float64(n)/cpu.Seconds(), "records/CPU-s")
			b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
		}
	})
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("snapshot/p%d", p), func(b *testing.B) {
			for range b.N {
				src := openSource(b, s.options(db, "accounts", "scan.startup.mode", "snapshot"), accountsTable)
				runCounting(b, src, p, int64(*benchRows))
			}
		})
	}
}

// BenchmarkBinlog reads -rows changes (inserts and updates of rows of
// 1 M) from the binary log, written before the job starts:
//
//	go test -run XXX -bench Binlog -benchtime 1x ./connectors/mysqlcdc
func BenchmarkBinlog(b *testing.B) {
	s := startServer(b)
	c := s.conn()
	db := s.newDatabase(c)
	half := *benchRows / 2
	fill(b, s, db, half)
	// Updates of 2000 rows a statement, each a -U and a +U.
	for i := 1; i <= half/2; i += 2000 {
		exec(b, c, fmt.Sprintf("UPDATE %s.accounts SET balance = balance + 1 WHERE id >= %d AND id < %d", db, i, i+2000))
	}
	n := int64(half + 2*(half/2))
	for range b.N {
		src := openSource(b, s.options(db, "accounts", "scan.startup.mode", "earliest-offset"), accountsTable)
		runCounting(b, src, 1, n)
	}
}

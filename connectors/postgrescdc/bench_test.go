package postgrescdc

import (
	"context"
	"flag"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

var benchRows = flag.Int("rows", 1_000_000, "rows of the benchmarks' table")

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fill creates schema.accounts with rows 1..n.
func fill(b testing.TB, s *server, schema string, n int) {
	c := s.conn()
	run(b, c, "CREATE TABLE "+schema+".accounts (id INT PRIMARY KEY, balance BIGINT, note VARCHAR(32))",
		"ALTER TABLE "+schema+".accounts REPLICA IDENTITY FULL",
		fmt.Sprintf("INSERT INTO %s.accounts SELECT g, g * 7, 'note ' || g FROM generate_series(1, %d) g", schema, n),
		"VACUUM ANALYZE "+schema+".accounts")
}

// runCounting runs a job of src until it has read n records (or ends by
// itself) and reports records/s and records per CPU-second of the process.
func runCounting(b *testing.B, src connector.Source[connector.TableRecord], p int, n int64) {
	env := eddy.NewEnvironment(eddy.WithParallelism(p))
	var seen atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st := eddy.FromSource(env, "postgres-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{})
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
// snapshot at parallelism 1 and 2, beside a plain SELECT * of it through
// pgx in text format (the CPU figures are this process's, not the
// server's):
//
//	go test -run XXX -bench Snapshot -benchtime 1x ./connectors/postgrescdc
func BenchmarkSnapshot(b *testing.B) {
	s := startServer(b)
	schema, _ := s.newSchema(s.conn())
	fill(b, s, schema, *benchRows)
	b.Run("select", func(b *testing.B) {
		for range b.N {
			c := s.conn()
			n := 0
			cpu0, wall0 := processCPU(), time.Now()
			rr := c.Exec(context.Background(), "SELECT * FROM "+schema+".accounts")
			for rr.NextResult() {
				r := rr.ResultReader()
				for r.NextRow() {
					n++
				}
				if _, err := r.Close(); err != nil {
					b.Fatal(err)
				}
			}
			err := rr.Close()
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
				src := openSource(b, s.options(schema, "accounts", "unused", "scan.startup.mode", "snapshot"), accountsTable)
				runCounting(b, src, p, int64(*benchRows))
			}
		})
	}
}

// BenchmarkStream reads -rows changes (inserts of half of them, then
// updates of a quarter, each a -U and a +U) from a slot they were written
// to before the job starts:
//
//	go test -run XXX -bench Stream -benchtime 1x ./connectors/postgrescdc
func BenchmarkStream(b *testing.B) {
	s := startServer(b)
	c := s.conn()
	schema, slot := s.newSchema(c)
	run(b, c, "CREATE TABLE "+schema+".accounts (id INT PRIMARY KEY, balance BIGINT, note VARCHAR(32))",
		"ALTER TABLE "+schema+".accounts REPLICA IDENTITY FULL",
		"CREATE PUBLICATION pub_"+slot+" FOR TABLE "+schema+".accounts",
		"SELECT pg_create_logical_replication_slot('"+slot+"', 'pgoutput')")
	half := *benchRows / 2
	for i := 1; i <= half; i += 10000 {
		run(b, c, fmt.Sprintf("INSERT INTO %s.accounts SELECT g, g * 7, 'note ' || g FROM generate_series(%d, %d) g", schema, i, min(i+9999, half)))
	}
	for i := 1; i <= half/2; i += 10000 {
		run(b, c, fmt.Sprintf("UPDATE %s.accounts SET balance = balance + 1 WHERE id >= %d AND id < %d", schema, i, min(i+10000, half/2+1)))
	}
	n := int64(half + 2*(half/2))
	for range b.N {
		src := openSource(b, s.options(schema, "accounts", slot, "scan.startup.mode", "committed-offset"), accountsTable)
		runCounting(b, src, 1, n)
	}
}

package mysqlcdc

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/sql/types"
)

var (
	benchRows = flag.Int("rows", 1_000_000, "rows of the benchmarks' table")
	benchKey  = flag.String("key", "int", "the snapshot benchmark's key: int, varchar_bin (VARCHAR utf8mb4_bin), char_ci (CHAR utf8mb4_general_ci, InnoDB) or char_ci_myisam")
)

// benchKeys are the declarations of the snapshot benchmark's keys.
var benchKeys = map[string]string{
	"varchar_bin":    "VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
	"char_ci":        "CHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
	"char_ci_myisam": "CHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
}

// fill inserts rows 1..n into db.accounts in statements of 2000 rows.
func fill(b testing.TB, s *server, db string, n int) {
	c := s.conn()
	c.Exec(b, "CREATE TABLE "+db+".accounts "+cdctest.AccountsColumns)
	cdctest.InsertRows(b, c, db+".accounts", 1, n, 2000, func(i int) string { return fmt.Sprintf("(%d,%d,'note %d')", i, i*7, i) })
}

// fillKeyed inserts rows 1..n into db.accounts keyed by strings ('k' or
// 'K' and the row's number) of declaration decl.
func fillKeyed(b testing.TB, s *server, db, decl, engine string, n int) {
	c := s.conn()
	c.Exec(b, "CREATE TABLE "+db+".accounts (id "+decl+" PRIMARY KEY, balance BIGINT, note VARCHAR(32)) ENGINE = "+engine)
	cdctest.InsertRows(b, c, db+".accounts", 1, n, 2000, func(i int) string {
		return fmt.Sprintf("('%c%09d',%d,'note %d')", "kK"[i%2], i, i*7, i)
	})
}

// peakHeap runs f and reports the most heap memory in use while it ran,
// sampled every 10 ms.
func peakHeap(b *testing.B, f func()) {
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var ms runtime.MemStats
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}

// BenchmarkSnapshot reads a table of -rows rows (1 M by default) as a
// snapshot, beside a plain SELECT * of it through the same driver, keyed
// by -key, and reports the most heap memory in use while the snapshot ran:
//
//	go test -run XXX -bench Snapshot -benchtime 1x ./connectors/mysqlcdc -args -rows=1000000 -key=varchar_bin
func BenchmarkSnapshot(b *testing.B) {
	s := startServer(b)
	db := s.newDatabase(s.conn())
	table := accountsTable
	if decl, ok := benchKeys[*benchKey]; ok {
		engine := "InnoDB"
		if strings.HasSuffix(*benchKey, "_myisam") {
			engine = "MyISAM"
		}
		fillKeyed(b, s, db, decl, engine, *benchRows)
		table = keyedAccounts
	} else {
		fill(b, s, db, *benchRows)
	}
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
				src := openSource(b, s.options(db, "accounts", "scan.startup.mode", "snapshot"), table)
				peakHeap(b, func() { cdctest.RunCounting(b, mysqlCDC, src, p, int64(*benchRows)) })
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

// keyedAccounts is the SQL table of the accounts table keyed by strings.
var keyedAccounts = &connector.Table{
	Schema: types.MustRowType(
		types.F("id", types.String().NotNull()),
		types.F("balance", types.BigInt()),
		types.F("note", types.String()),
	),
	PrimaryKey: []int{0},
}

package jdbc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql/types"
)

// benchRows is the size of the scan benchmark's table.
const benchRows = 1_000_000

var benchSchema = types.MustRowType(
	types.F("id", types.BigInt().NotNull()), types.F("name", types.String()),
	types.F("amount", types.DecimalType(12, 2)), types.F("at", types.TimestampType(3)), types.F("grp", types.Int()),
)

// benchDB is a server with the benchmark's table bench of benchRows rows.
type benchDB struct {
	url, user string
	// plain reads the table with a plain SELECT through the same driver
	// and returns the number of rows.
	plain func(b *testing.B) int
}

func benchPostgres(b *testing.B) benchDB {
	p := testservers.StartPostgres(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(ctx) })
	for _, q := range []string{
		"CREATE TABLE bench (id BIGINT PRIMARY KEY, name TEXT, amount NUMERIC(12, 2), at TIMESTAMP(3), grp INT)",
		fmt.Sprintf("INSERT INTO bench SELECT i, 'name ' || i, (i %% 100000) / 100.0, TIMESTAMP '2024-01-01' + i * INTERVAL '1 second', i %% 97 FROM generate_series(1, %d) i", benchRows),
		"VACUUM ANALYZE bench",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	return benchDB{
		url: fmt.Sprintf("jdbc:postgresql://%s:%d/postgres?sslmode=disable", p.Host, p.Port), user: "postgres",
		plain: func(b *testing.B) int {
			rows, err := conn.Query(ctx, "SELECT id, name, amount, at, grp FROM bench")
			if err != nil {
				b.Fatal(err)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				if _, err := rows.Values(); err != nil {
					b.Fatal(err)
				}
				n++
			}
			return n
		},
	}
}

func benchMariaDB(b *testing.B) benchDB {
	m := testservers.StartMariaDB(b)
	conn, err := client.Connect(m.Addr(), "root", "", "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	for _, q := range []string{
		"CREATE DATABASE bench", "USE bench",
		"CREATE TABLE bench (id BIGINT PRIMARY KEY, name VARCHAR(40), amount DECIMAL(12, 2), at DATETIME(3), grp INT)",
		fmt.Sprintf("INSERT INTO bench SELECT seq, CONCAT('name ', seq), (seq %% 100000) / 100.0, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND, seq %% 97 FROM seq_1_to_%d", benchRows),
	} {
		if _, err := conn.Execute(q); err != nil {
			b.Fatal(err)
		}
	}
	return benchDB{
		url: fmt.Sprintf("jdbc:mysql://%s:%d/bench", m.Host, m.Port), user: "root",
		plain: func(b *testing.B) int {
			n := 0
			var res gomysql.Result
			err := conn.ExecuteSelectStreaming("SELECT id, name, amount, at, grp FROM bench", &res, func(row []gomysql.FieldValue) error {
				for i := range row {
					_ = row[i].Value()
				}
				n++
				return nil
			}, nil)
			if err != nil {
				b.Fatal(err)
			}
			return n
		},
	}
}

// BenchmarkScan reads the 1M-row table through the scan source at
// parallelism 1 and 2 (two splits of the primary key), beside a plain
// SELECT of the same columns through the same driver, and reports rows/s.
//
//	go test ./connectors/jdbc/ -run '^$' -bench BenchmarkScan -benchtime 3x
func BenchmarkScan(b *testing.B) {
	for _, db := range []struct {
		name  string
		start func(*testing.B) benchDB
	}{{"postgres", benchPostgres}, {"mariadb", benchMariaDB}} {
		b.Run(db.name, func(b *testing.B) {
			d := db.start(b)
			b.Run("plain SELECT", func(b *testing.B) {
				start := time.Now()
				for i := 0; i < b.N; i++ {
					if n := d.plain(b); n != benchRows {
						b.Fatalf("read %d rows", n)
					}
				}
				b.ReportMetric(float64(benchRows*b.N)/time.Since(start).Seconds(), "rows/s")
			})
			for _, p := range []int{1, 2} {
				b.Run(fmt.Sprintf("jdbc scan p%d", p), func(b *testing.B) {
					opts := map[string]string{"url": d.url, "table-name": "bench", "username": d.user, "password": "",
						"scan.partition.column": "id", "scan.partition.num": fmt.Sprint(p),
						"scan.partition.lower-bound": "1", "scan.partition.upper-bound": fmt.Sprint(benchRows)}
					src, err := connector.OpenTableSource(connector.Default, "jdbc", opts, &connector.Table{Schema: benchSchema, PrimaryKey: []int{0}})
					if err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					for i := 0; i < b.N; i++ {
						var n atomic.Int64
						env := eddy.NewEnvironment(eddy.WithParallelism(p))
						st := eddy.FromSource(env, "jdbc", src, eddy.NoWatermarks[connector.TableRecord]())
						eddy.SinkTo(st, func(connector.TableRecord) error { n.Add(1); return nil })
						if err := env.Execute(context.Background(), "scan"); err != nil {
							b.Fatal(err)
						}
						if n.Load() != benchRows {
							b.Fatalf("read %d rows", n.Load())
						}
					}
					b.ReportMetric(float64(benchRows*b.N)/time.Since(start).Seconds(), "rows/s")
				})
			}
		})
	}
}

// BenchmarkLookup looks up 200k keys drawn uniformly from 20k, 16 at a
// time (a lookup join's concurrency per subtask), in the 1M-row table,
// without a cache and with a PARTIAL cache of 10k rows (half of the keys
// drawn); it reports lookups/s and the cache's hit rate.
//
//	go test ./connectors/jdbc/ -run '^$' -bench BenchmarkLookup -benchtime 1x
func BenchmarkLookup(b *testing.B) {
	const lookups, distinct, workers = 200_000, 20_000, 16
	for _, db := range []struct {
		name  string
		start func(*testing.B) benchDB
	}{{"postgres", benchPostgres}, {"mariadb", benchMariaDB}} {
		b.Run(db.name, func(b *testing.B) {
			d := db.start(b)
			for _, c := range []struct {
				name string
				opts []string
			}{{"NONE", nil}, {"PARTIAL", []string{"lookup.cache", "PARTIAL", "lookup.partial-cache.max-rows", "10000"}}} {
				b.Run(c.name, func(b *testing.B) {
					opts := map[string]string{"url": d.url, "table-name": "bench", "username": d.user, "password": ""}
					for i := 0; i+1 < len(c.opts); i += 2 {
						opts[c.opts[i]] = c.opts[i+1]
					}
					src, err := connector.OpenTableSource(connector.Default, "jdbc", opts, &connector.Table{Schema: benchSchema, PrimaryKey: []int{0}})
					if err != nil {
						b.Fatal(err)
					}
					kt := types.MustRowType(types.F("id", types.BigInt()))
					var hits, misses int64
					start := time.Now()
					for i := 0; i < b.N; i++ {
						l, err := src.(*Source).newLookup([]int{0})
						if err != nil {
							b.Fatal(err)
						}
						var next atomic.Int64
						var wg sync.WaitGroup
						for w := 0; w < workers; w++ {
							wg.Add(1)
							go func() {
								defer wg.Done()
								arena := types.NewArena(1 << 12)
								for {
									j := next.Add(1)
									if j > lookups {
										return
									}
									// Keys drawn uniformly from 20k, by a hash of j.
									h := uint64(j) * 0x9E3779B97F4A7C15
									h ^= h >> 31
									k := int64(h%distinct)*(benchRows/distinct) + 1
									key, _ := types.BuildRow(kt, arena, k)
									rows, err := l.lookup(context.Background(), key)
									if err != nil || len(rows) != 1 {
										b.Errorf("key %d: %d rows, %v", k, len(rows), err)
										return
									}
								}
							}()
						}
						wg.Wait()
						hits, misses = hits+l.hits.Load(), misses+l.misses.Load()
					}
					b.ReportMetric(float64(lookups*b.N)/time.Since(start).Seconds(), "lookups/s")
					b.ReportMetric(100*float64(hits)/float64(hits+misses), "hit%")
				})
			}
		})
	}
}

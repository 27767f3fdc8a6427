package jdbc_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector/connectortest"
	_ "github.com/eddystream/eddy/connectors/all"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

var (
	latencyRate    = flag.Int("rate", 10_000, "changes per second of the latency benchmark's load")
	latencySeconds = flag.Int("seconds", 10, "seconds of load of the latency benchmark")
	latencyCkpt    = flag.Duration("checkpoint", 100*time.Millisecond, "checkpoint interval of the latency benchmark")
	latencyMode    = flag.String("guarantee", "exactly-once", "'sink.delivery-guarantee' of the latency benchmark's jdbc sink")
)

// BenchmarkChangeLatency drives -rate inserts per second (in transactions
// of 100 rows) into MariaDB for -seconds, each row carrying the time it was
// sent, through a mysql-cdc table into a PostgreSQL table (the jdbc sink,
// whose rows get the time they arrived from PostgreSQL's clock) and into a
// query whose sink notes when each row arrived. It reports the median and
// 99th percentile of the latency from the client's commit to the row's
// arrival, the changes per second, and the eddy process's CPU per change:
//
//	go test -run XXX -bench ChangeLatency -benchtime 1x ./connectors/jdbc -args -rate=10000 -seconds=10 -checkpoint=100ms -guarantee=exactly-once
//
// With the exactly-once sink, a change reaches PostgreSQL when the
// checkpoint after it completes: the checkpoint interval bounds the
// latency.
func BenchmarkChangeLatency(b *testing.B) {
	m := testservers.StartMariaDB(b)
	p := testservers.StartPostgres(b)
	my, err := client.Connect(m.Addr(), "root", "", "")
	if err != nil {
		b.Fatal(err)
	}
	defer my.Close()
	for _, q := range []string{"CREATE DATABASE loaddb", "CREATE TABLE loaddb.events (id BIGINT PRIMARY KEY, sent_us BIGINT, payload VARCHAR(64))"} {
		if _, err := my.Execute(q); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	pg, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Close(ctx)
	if _, err := pg.Exec(ctx, "CREATE TABLE events (id BIGINT PRIMARY KEY, sent_us BIGINT, payload TEXT, arrived TIMESTAMPTZ DEFAULT clock_timestamp())"); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var blackhole []time.Duration
	s := sql.NewSession(sql.WithParallelism(1), sql.WithQueryOutput(func(_ int, rt *types.RowType) sql.QuerySink {
		return func(kind changelog.Kind, row types.Row) error {
			d := time.Since(time.UnixMicro(row.Int64(1)))
			mu.Lock()
			blackhole = append(blackhole, d)
			mu.Unlock()
			return nil
		}
	}))
	script := fmt.Sprintf(`
CREATE TABLE events (id BIGINT, sent_us BIGINT, payload STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'mysql-cdc', 'hostname' = '%s', 'port' = '%d', 'username' = 'root', 'password' = '',
  'database-name' = 'loaddb', 'table-name' = 'events', 'server-id' = '5800-5810', 'scan.startup.mode' = 'latest-offset');
CREATE TABLE mirror (id BIGINT, sent_us BIGINT, payload STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'jdbc', 'url' = 'jdbc:postgresql://%s:%d/postgres?sslmode=disable', 'table-name' = 'events',
  'username' = 'postgres', 'sink.buffer-flush.max-rows' = '500', 'sink.buffer-flush.interval' = '50 ms',
  'sink.delivery-guarantee' = '%s');
INSERT INTO mirror SELECT * FROM events;
SELECT id, sent_us FROM events;
`, m.Host, m.Port, p.Host, p.Port, *latencyMode)
	if _, err := s.Execute(script); err != nil {
		b.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(*latencyCkpt), eddy.WithCheckpointDir(b.TempDir()))
	if err := s.Build(env); err != nil {
		b.Fatal(err)
	}
	jctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- env.Execute(jctx, "latency") }()
	time.Sleep(2 * time.Second) // the source reads its start position

	total := *latencyRate * *latencySeconds
	per := 100
	interval := time.Duration(float64(time.Second) * float64(per) / float64(*latencyRate))
	cpu0, wall0 := connectortest.CPUTime(), time.Now()
	next := time.Now()
	for id := 0; id < total; id += per {
		var vals []string
		now := time.Now().UnixMicro()
		for j := id; j < id+per; j++ {
			vals = append(vals, fmt.Sprintf("(%d, %d, 'payload of change %d')", j, now, j))
		}
		if _, err := my.Execute("INSERT INTO loaddb.events VALUES " + strings.Join(vals, ",")); err != nil {
			b.Fatal(err)
		}
		next = next.Add(interval)
		time.Sleep(time.Until(next))
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(blackhole)
		mu.Unlock()
		var inPG int
		if err := pg.QueryRow(ctx, "SELECT count(*) FROM events").Scan(&inPG); err != nil {
			b.Fatal(err)
		}
		if n >= total && inPG >= total {
			break
		}
	}
	wall, cpu := time.Since(wall0), connectortest.CPUTime()-cpu0
	cancel()
	<-done
	var pgLat []time.Duration
	rows, err := pg.Query(ctx, "SELECT (extract(epoch FROM arrived) * 1000000)::bigint - sent_us FROM events")
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var us int64
		if err := rows.Scan(&us); err != nil {
			b.Fatal(err)
		}
		pgLat = append(pgLat, time.Duration(us)*time.Microsecond)
	}
	rows.Close()
	if len(pgLat) != total || len(blackhole) < total {
		b.Fatalf("PostgreSQL holds %d rows and the query saw %d, of %d", len(pgLat), len(blackhole), total)
	}
	report := func(name string, l []time.Duration) {
		slices.Sort(l)
		b.ReportMetric(float64(l[len(l)/2].Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(l[len(l)*99/100].Microseconds())/1000, name+"-p99-ms")
	}
	report("postgres", pgLat)
	report("query", blackhole)
	var ckpt []time.Duration
	for _, c := range env.CheckpointStats() {
		ckpt = append(ckpt, c.Duration)
	}
	if len(ckpt) > 0 {
		report("checkpoint", ckpt)
	}
	b.ReportMetric(float64(total)/wall.Seconds(), "changes/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(total), "CPU-µs/change")
}

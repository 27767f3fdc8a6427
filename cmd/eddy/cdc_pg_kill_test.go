package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPostgresCDCMirrorKill9 mirrors a PostgreSQL table into MariaDB with
// `eddy run job.sql` (a postgres-cdc table inserted into a jdbc table)
// while a load of inserts, updates, primary key changes and deletes runs on
// PostgreSQL, and kills the eddy process with SIGKILL three times,
// restarting it on the same checkpoint directory: at the end the MariaDB
// table equals the PostgreSQL table row for row.
func TestPostgresCDCMirrorKill9(t *testing.T) {
	s := startMirrorServers(t)
	bin, m, p, my, pg := s.bin, s.m, s.p, s.my, s.pg
	ctx := context.Background()
	pgRun := func(q string) {
		t.Helper()
		if _, err := pg.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pgRun("CREATE TABLE orders (id INT PRIMARY KEY, customer TEXT, amount NUMERIC(10, 2), placed TIMESTAMP(3))")
	pgRun("ALTER TABLE orders REPLICA IDENTITY FULL")
	pgRun("INSERT INTO orders SELECT g, 'c' || (g % 97), g + (g % 100) / 100.0, '2024-01-01'::timestamp + g * interval '1 millisecond' FROM generate_series(1, 5000) g")
	for _, q := range []string{"CREATE DATABASE shop",
		"CREATE TABLE shop.orders (id INT PRIMARY KEY, customer VARCHAR(32), amount DECIMAL(10, 2), placed DATETIME(3))"} {
		if _, err := my.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	dir := t.TempDir()
	job := filepath.Join(dir, "mirror.sql")
	script := fmt.Sprintf(`
CREATE TABLE orders_src (
  id INT, customer STRING, amount DECIMAL(10, 2), placed TIMESTAMP(3),
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'postgres-cdc', 'hostname' = '%s', 'port' = '%d', 'username' = 'postgres', 'password' = '',
  'database-name' = 'postgres', 'schema-name' = 'public', 'table-name' = 'orders', 'slot.name' = 'mirror',
  'scan.incremental.snapshot.chunk.size' = '400'
);
CREATE TABLE orders_dst (
  id INT, customer STRING, amount DECIMAL(10, 2), placed TIMESTAMP(3),
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'jdbc', 'url' = 'jdbc:mysql://%s:%d/shop',
  'table-name' = 'orders', 'username' = 'root', 'password' = ''
);
INSERT INTO orders_dst SELECT * FROM orders_src;
`, p.Host, p.Port, m.Host, m.Port)
	if err := os.WriteFile(job, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	chk := filepath.Join(dir, "checkpoints")
	runs := newKillRuns(t, bin, dir, "run", job, "--parallelism", "2", "--checkpoint-dir", chk, "--checkpoint-interval", "200ms")

	// The load runs while the process is killed and restarted.
	loadDone := make(chan error, 1)
	go func() {
		c, err := pgx.Connect(ctx, p.DSN("postgres"))
		if err != nil {
			loadDone <- err
			return
		}
		defer c.Close(ctx)
		rng := rand.New(rand.NewPCG(7, 8))
		next := 5001
		for tx := 0; tx < 2000; tx++ {
			var stmts []string
			for k := 0; k <= rng.IntN(3); k++ {
				id := 1 + rng.IntN(next)
				switch op := rng.IntN(10); {
				case op < 5:
					stmts = append(stmts, fmt.Sprintf("UPDATE orders SET amount = amount + 1, customer = 'u%d' WHERE id = %d", tx, id))
				case op < 7:
					stmts = append(stmts, fmt.Sprintf("DELETE FROM orders WHERE id = %d", id))
				case op < 9:
					stmts = append(stmts, fmt.Sprintf("INSERT INTO orders VALUES (%d, 'n%d', %d.50, date_trunc('milliseconds', localtimestamp))", next, tx, tx))
					next++
				default:
					stmts = append(stmts, fmt.Sprintf("UPDATE orders SET id = %d WHERE id = %d", next, id))
					next++
				}
			}
			if _, err := c.Exec(ctx, "BEGIN; "+strings.Join(stmts, "; ")+"; COMMIT"); err != nil {
				loadDone <- fmt.Errorf("%v: %w", stmts, err)
				return
			}
			time.Sleep(time.Millisecond)
		}
		loadDone <- nil
	}()
	runs.killTimes(3, 9, 10, 800*time.Millisecond, 1200*time.Millisecond)
	if err := <-loadDone; err != nil {
		t.Fatal(err)
	}
	runs.startLast()

	source := func() []string {
		rows, err := pg.Query(ctx, "SELECT id, customer, amount::text, to_char(placed, 'YYYY-MM-DD HH24:MI:SS.MS') FROM orders ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id int
			var c, a, ts string
			if err := rows.Scan(&id, &c, &a, &ts); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%d|%s|%s|%s", id, c, a, ts))
		}
		return out
	}
	mirror := func() []string {
		r, err := my.Execute("SELECT id, customer, CAST(amount AS CHAR), DATE_FORMAT(placed, '%Y-%m-%d %H:%i:%s.%f') FROM shop.orders ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []string
		for i := range r.Values {
			ts := string(r.Values[i][3].AsString())
			out = append(out, fmt.Sprintf("%d|%s|%s|%s", r.Values[i][0].AsInt64(), r.Values[i][1].AsString(), r.Values[i][2].AsString(), ts[:len(ts)-3]))
		}
		return out
	}
	want := source()
	var got []string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got = mirror(); slices.Equal(got, want) {
			break
		}
	}
	if !slices.Equal(got, want) {
		runs.dump()
		t.Fatalf("MariaDB holds %d rows, PostgreSQL %d; first differences:\n%s", len(got), len(want), firstDiffs(got, want))
	}
	t.Logf("%d rows mirrored through 3 kills", len(want))
}

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

	"github.com/go-mysql-org/go-mysql/client"
)

// TestCDCMirrorKill9 mirrors a MariaDB table into PostgreSQL with `eddy run
// job.sql` (a mysql-cdc table inserted into a jdbc table) while a load of
// inserts, updates, primary key changes and deletes runs on MariaDB, and
// kills the eddy process with SIGKILL three times, restarting it on the same
// checkpoint directory: at the end the PostgreSQL table equals the MariaDB
// table row for row.
func TestCDCMirrorKill9(t *testing.T) {
	s := startMirrorServers(t)
	bin, m, p, my, pg := s.bin, s.m, s.p, s.my, s.pg
	execMy(t, my, "CREATE DATABASE shop")
	execMy(t, my, "CREATE TABLE shop.orders (id INT PRIMARY KEY, customer VARCHAR(32), amount DECIMAL(10, 2), placed DATETIME(3))")
	for i := 1; i <= 5000; i += 500 {
		var vals []string
		for j := i; j < i+500; j++ {
			vals = append(vals, fmt.Sprintf("(%d, 'c%d', %d.%02d, '2024-01-01 00:00:00.%03d')", j, j%97, j, j%100, j%1000))
		}
		execMy(t, my, "INSERT INTO shop.orders VALUES "+strings.Join(vals, ","))
	}
	ctx := context.Background()
	if _, err := pg.Exec(ctx, "CREATE TABLE orders (id INT PRIMARY KEY, customer TEXT, amount NUMERIC(10, 2), placed TIMESTAMP(3))"); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	job := filepath.Join(dir, "mirror.sql")
	script := fmt.Sprintf(`
CREATE TABLE orders_src (
  id INT, customer STRING, amount DECIMAL(10, 2), placed TIMESTAMP(3),
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'mysql-cdc', 'hostname' = '%s', 'port' = '%d', 'username' = 'root', 'password' = '',
  'database-name' = 'shop', 'table-name' = 'orders', 'server-id' = '5700-5710',
  'scan.incremental.snapshot.chunk.size' = '400'
);
CREATE TABLE orders_dst (
  id INT, customer STRING, amount DECIMAL(10, 2), placed TIMESTAMP(3),
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'jdbc', 'url' = 'jdbc:postgresql://%s:%d/postgres?sslmode=disable',
  'table-name' = 'orders', 'username' = 'postgres'
);
INSERT INTO orders_dst SELECT * FROM orders_src;
`, m.Host, m.Port, p.Host, p.Port)
	if err := os.WriteFile(job, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	chk := filepath.Join(dir, "checkpoints")
	runs := newKillRuns(t, bin, dir, "run", job, "--parallelism", "2", "--checkpoint-dir", chk, "--checkpoint-interval", "200ms")

	// The load runs while the process is killed and restarted.
	loadDone := make(chan error, 1)
	go func() {
		c, err := client.Connect(m.Addr(), "root", "", "")
		if err != nil {
			loadDone <- err
			return
		}
		defer c.Close()
		rng := rand.New(rand.NewPCG(3, 4))
		next := 5001
		for tx := 0; tx < 2000; tx++ {
			stmts := []string{"BEGIN"}
			for k := 0; k <= rng.IntN(3); k++ {
				id := 1 + rng.IntN(next)
				switch op := rng.IntN(10); {
				case op < 5:
					stmts = append(stmts, fmt.Sprintf("UPDATE shop.orders SET amount = amount + 1, customer = 'u%d' WHERE id = %d", tx, id))
				case op < 7:
					stmts = append(stmts, fmt.Sprintf("DELETE FROM shop.orders WHERE id = %d", id))
				case op < 9:
					stmts = append(stmts, fmt.Sprintf("INSERT INTO shop.orders VALUES (%d, 'n%d', %d.50, NOW(3))", next, tx, tx))
					next++
				default:
					stmts = append(stmts, fmt.Sprintf("UPDATE IGNORE shop.orders SET id = %d WHERE id = %d", next, id))
					next++
				}
			}
			stmts = append(stmts, "COMMIT")
			for _, q := range stmts {
				if _, err := c.Execute(q); err != nil {
					loadDone <- fmt.Errorf("%s: %w", q, err)
					return
				}
			}
			time.Sleep(time.Millisecond)
		}
		loadDone <- nil
	}()
	runs.killTimes(3, 5, 6, 800*time.Millisecond, 1200*time.Millisecond)
	if err := <-loadDone; err != nil {
		t.Fatal(err)
	}
	runs.startLast()

	source := func() []string {
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
	mirror := func() []string {
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
	want := source()
	var got []string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got = mirror(); slices.Equal(got, want) {
			break
		}
	}
	if !slices.Equal(got, want) {
		runs.dump()
		t.Fatalf("PostgreSQL holds %d rows, MariaDB %d; first differences:\n%s", len(got), len(want), firstDiffs(got, want))
	}
	t.Logf("%d rows mirrored through 3 kills", len(want))
}

// firstDiffs lists rows in one list and not the other.
func firstDiffs(got, want []string) string {
	in := map[string]int{}
	for _, r := range want {
		in[r]++
	}
	for _, r := range got {
		in[r]--
	}
	var lines []string
	for r, n := range in {
		switch {
		case n > 0:
			lines = append(lines, "missing: "+r)
		case n < 0:
			lines = append(lines, "extra:   "+r)
		}
	}
	slices.Sort(lines)
	if len(lines) > 20 {
		lines = lines[:20]
	}
	return strings.Join(lines, "\n")
}

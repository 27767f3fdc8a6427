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

	"github.com/eddystream/eddy/internal/testservers"
)

// TestPostgresPipelineKill9 runs a YAML pipeline, `eddy pipeline`, that
// syncs every table of a PostgreSQL schema into MariaDB — one table with
// REPLICA IDENTITY FULL, one without (its updates come without old rows),
// one without rows — while a load of inserts, updates and deletes runs, a
// column is added in the middle, and the eddy process is killed with
// SIGKILL three times and restarted on the same checkpoint directory. At
// the end every MariaDB table, created by the pipeline, equals its
// PostgreSQL table row for row, the added column included.
func TestPostgresPipelineKill9(t *testing.T) {
	s := startMirrorServers(t)
	bin, m, p, my, pg := s.bin, s.m, s.p, s.my, s.pg
	ctx := context.Background()
	pgRun := func(q string) {
		t.Helper()
		if _, err := pg.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pgRun("CREATE SCHEMA shop")
	pgRun("CREATE TABLE shop.orders (id INT PRIMARY KEY, customer VARCHAR(32) NOT NULL, amount NUMERIC(10, 2))")
	pgRun("ALTER TABLE shop.orders REPLICA IDENTITY FULL")
	pgRun("CREATE TABLE shop.customers (id BIGINT PRIMARY KEY, name VARCHAR(40), vip BOOLEAN NOT NULL)")
	pgRun("CREATE TABLE shop.empty_t (id BIGINT PRIMARY KEY, note TEXT)")
	pgRun("CREATE TABLE public.ignored (id INT PRIMARY KEY)")
	pgRun("INSERT INTO public.ignored VALUES (1)")
	pgRun("INSERT INTO shop.orders SELECT g, 'c' || (g % 97), g + (g % 100) / 100.0 FROM generate_series(1, 3000) g")
	pgRun("INSERT INTO shop.customers SELECT g, 'name ' || g, g % 2 = 1 FROM generate_series(1, 3000) g")

	dir := t.TempDir()
	file := filepath.Join(dir, "shop.yaml")
	def := fmt.Sprintf(`# every table of the PostgreSQL schema shop, into MariaDB
source:
  type: postgres
  hostname: %s
  port: %d
  username: postgres
  password: ""
  tables: postgres.shop.\.*
  slot.name: shop_pipeline
  scan.incremental.snapshot.chunk.size: 400

sink:
  type: mysql
  url: jdbc:mysql://%s:%d/mysql
  username: root

pipeline:
  name: shop-to-mariadb
  parallelism: 2
  schema.change.behavior: evolve
`, p.Host, p.Port, m.Host, m.Port)
	if err := os.WriteFile(file, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	chk := filepath.Join(dir, "checkpoints")
	runs := newKillRuns(t, bin, dir, "pipeline", file, "--checkpoint-dir", chk, "--checkpoint-interval", "200ms")

	loadDone := make(chan error, 1)
	go func() {
		c, err := pgx.Connect(ctx, p.DSN("postgres"))
		if err != nil {
			loadDone <- err
			return
		}
		defer c.Close(ctx)
		rng := rand.New(rand.NewPCG(7, 8))
		next := 3001
		altered := false
		for tx := 0; tx < 1500; tx++ {
			var stmts []string
			if tx == 600 {
				stmts = append(stmts, "ALTER TABLE shop.orders ADD COLUMN note VARCHAR(20)")
				altered = true
			}
			for k := 0; k <= rng.IntN(3); k++ {
				id := 1 + rng.IntN(next)
				switch op := rng.IntN(10); {
				case op < 4:
					set := fmt.Sprintf("amount = amount + 1, customer = 'u%d'", tx)
					if altered {
						set += fmt.Sprintf(", note = 'n%d'", tx)
					}
					stmts = append(stmts, fmt.Sprintf("UPDATE shop.orders SET %s WHERE id = %d", set, id))
				case op < 6:
					stmts = append(stmts, fmt.Sprintf("UPDATE shop.customers SET name = 'v%d', vip = NOT vip WHERE id = %d", tx, id))
				case op < 7:
					stmts = append(stmts, fmt.Sprintf("DELETE FROM shop.orders WHERE id = %d", id))
				case op < 8:
					stmts = append(stmts, fmt.Sprintf("DELETE FROM shop.customers WHERE id = %d", id))
				default:
					stmts = append(stmts, fmt.Sprintf("INSERT INTO shop.orders (id, customer, amount) VALUES (%d, 'n%d', %d.50)", next, tx, tx),
						fmt.Sprintf("INSERT INTO shop.customers VALUES (%d, 'new %d', false)", next, tx))
					next++
				}
			}
			// One transaction (the simple protocol runs the statements of
			// one query string in an implicit transaction).
			if _, err := c.Exec(ctx, strings.Join(stmts, "; ")); err != nil {
				loadDone <- fmt.Errorf("transaction %d: %w", tx, err)
				return
			}
			time.Sleep(time.Millisecond)
		}
		loadDone <- nil
	}()
	runs.killTimes(3, 9, 10, 1200*time.Millisecond, 1200*time.Millisecond)
	if err := <-loadDone; err != nil {
		t.Fatal(err)
	}
	runs.startLast()

	mariadb := func(q string) []string {
		out, err := testservers.MariaDBRows(my, q)
		if err != nil {
			return []string{err.Error()}
		}
		return out
	}
	postgres := func(q string) []string {
		out, err := testservers.PostgresRows(ctx, pg, q)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	checks := []struct{ name, postgres, mariadb string }{
		{"shop.orders",
			"SELECT id, customer, amount::text, note FROM shop.orders ORDER BY id",
			"SELECT id, customer, CAST(amount AS CHAR), note FROM shop.orders ORDER BY id"},
		{"shop.customers",
			"SELECT id, name, vip::text FROM shop.customers ORDER BY id",
			"SELECT id, name, IF(vip, 'true', 'false') FROM shop.customers ORDER BY id"},
		{"shop.empty_t",
			"SELECT COUNT(*) FROM shop.empty_t",
			"SELECT COUNT(*) FROM shop.empty_t"},
	}
	for _, c := range checks {
		want := postgres(c.postgres)
		var got []string
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			if got = mariadb(c.mariadb); slices.Equal(got, want) {
				break
			}
		}
		if !slices.Equal(got, want) {
			runs.dump()
			t.Fatalf("%s: MariaDB holds %d rows, PostgreSQL %d; first differences:\n%s", c.name, len(got), len(want), firstDiffs(got, want))
		}
		t.Logf("%s: %d rows in step through 3 kills", c.name, len(want))
	}
	if got := mariadb("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'ignored'"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("a table outside 'tables' reached MariaDB: %v", got)
	}
}

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

	"github.com/eddystream/eddy/internal/testservers"
)

// TestPipelineKill9 runs a YAML pipeline, `eddy pipeline`, that syncs every
// table of a MariaDB database into PostgreSQL — a route renaming one table,
// a transform adding a computed column to another, a table without rows —
// while a load of inserts, updates and deletes runs, a column is added in
// the middle, and the eddy process is killed with SIGKILL three times and
// restarted on the same checkpoint directory. At the end every PostgreSQL
// table, created by the pipeline, equals its MariaDB table row for row,
// the added column included.
func TestPipelineKill9(t *testing.T) {
	s := startMirrorServers(t)
	bin, m, p, my, pg := s.bin, s.m, s.p, s.my, s.pg
	execMy(t, my, "CREATE DATABASE shop")
	execMy(t, my, "CREATE DATABASE other")
	execMy(t, my, "CREATE TABLE shop.orders (id INT PRIMARY KEY, customer VARCHAR(32) NOT NULL, amount DECIMAL(10, 2))")
	execMy(t, my, "CREATE TABLE shop.customers (id BIGINT PRIMARY KEY, name VARCHAR(40), vip TINYINT(1))")
	execMy(t, my, "CREATE TABLE shop.empty_t (id BIGINT PRIMARY KEY, note TEXT)")
	execMy(t, my, "CREATE TABLE other.ignored (id INT PRIMARY KEY)")
	execMy(t, my, "INSERT INTO other.ignored VALUES (1)")
	for i := 1; i <= 3000; i += 500 {
		var orders, customers []string
		for j := i; j < i+500; j++ {
			orders = append(orders, fmt.Sprintf("(%d, 'c%d', %d.%02d)", j, j%97, j, j%100))
			customers = append(customers, fmt.Sprintf("(%d, 'name %d', %d)", j, j, j%2))
		}
		execMy(t, my, "INSERT INTO shop.orders VALUES "+strings.Join(orders, ","))
		execMy(t, my, "INSERT INTO shop.customers VALUES "+strings.Join(customers, ","))
	}
	ctx := context.Background()

	dir := t.TempDir()
	file := filepath.Join(dir, "shop.yaml")
	def := fmt.Sprintf(`# every table of shop, into PostgreSQL
source:
  type: mysql
  hostname: %s
  port: %d
  username: root
  password: ""
  tables: shop.\.*
  server-id: 5800-5810
  scan.incremental.snapshot.chunk.size: 400

sink:
  type: postgres
  url: jdbc:postgresql://%s:%d/postgres?sslmode=disable
  username: postgres

route:
  - source-table: shop.customers
    sink-table: mirror.clients

transform:
  - source-table: shop.orders
    projection: \*, UPPER(customer) AS customer_upper

pipeline:
  name: shop-sync
  parallelism: 2
  schema.change.behavior: evolve
`, m.Host, m.Port, p.Host, p.Port)
	if err := os.WriteFile(file, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	chk := filepath.Join(dir, "checkpoints")
	runs := newKillRuns(t, bin, dir, "pipeline", file, "--checkpoint-dir", chk, "--checkpoint-interval", "200ms")

	loadDone := make(chan error, 1)
	go func() {
		c, err := client.Connect(m.Addr(), "root", "", "")
		if err != nil {
			loadDone <- err
			return
		}
		defer c.Close()
		rng := rand.New(rand.NewPCG(7, 8))
		next := 3001
		altered := false
		for tx := 0; tx < 1500; tx++ {
			var stmts []string
			if tx == 600 {
				stmts = append(stmts, "ALTER TABLE shop.orders ADD COLUMN note VARCHAR(20)")
				altered = true
			}
			stmts = append(stmts, "BEGIN")
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
					stmts = append(stmts, fmt.Sprintf("UPDATE shop.customers SET name = 'v%d', vip = 1 - vip WHERE id = %d", tx, id))
				case op < 7:
					stmts = append(stmts, fmt.Sprintf("DELETE FROM shop.orders WHERE id = %d", id))
				case op < 8:
					stmts = append(stmts, fmt.Sprintf("DELETE FROM shop.customers WHERE id = %d", id))
				default:
					stmts = append(stmts, fmt.Sprintf("INSERT INTO shop.orders (id, customer, amount) VALUES (%d, 'n%d', %d.50)", next, tx, tx),
						fmt.Sprintf("INSERT INTO shop.customers VALUES (%d, 'new %d', 0)", next, tx))
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
	runs.killTimes(3, 9, 10, 1200*time.Millisecond, 1200*time.Millisecond)
	if err := <-loadDone; err != nil {
		t.Fatal(err)
	}
	runs.startLast()

	mariadb := func(q string) []string {
		out, err := testservers.MariaDBRows(my, q)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	postgres := func(q string) []string {
		out, err := testservers.PostgresRows(ctx, pg, q)
		if err != nil {
			return []string{err.Error()}
		}
		return out
	}
	checks := []struct{ name, mariadb, postgres string }{
		{"shop.orders",
			"SELECT id, customer, CAST(amount AS CHAR), UPPER(customer), note FROM shop.orders ORDER BY id",
			"SELECT id, customer, amount::text, customer_upper, note FROM shop.orders ORDER BY id"},
		{"mirror.clients",
			"SELECT id, name, IF(vip = 1, 'true', 'false') FROM shop.customers ORDER BY id",
			"SELECT id, name, vip::text FROM mirror.clients ORDER BY id"},
		{"shop.empty_t",
			"SELECT COUNT(*) FROM shop.empty_t",
			"SELECT COUNT(*) FROM shop.empty_t"},
	}
	for _, c := range checks {
		want := mariadb(c.mariadb)
		var got []string
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			if got = postgres(c.postgres); slices.Equal(got, want) {
				break
			}
		}
		if !slices.Equal(got, want) {
			runs.dump()
			t.Fatalf("%s: PostgreSQL holds %d rows, MariaDB %d; first differences:\n%s", c.name, len(got), len(want), firstDiffs(got, want))
		}
		t.Logf("%s: %d rows in step through 3 kills", c.name, len(want))
	}
	if got := postgres("SELECT count(*) FROM information_schema.tables WHERE table_name = 'ignored'"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("a table outside 'tables' reached PostgreSQL: %v", got)
	}
}

package postgrescdc_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// collected gathers the changes of a bare query.
type collected struct {
	mu      sync.Mutex
	rt      *types.RowType
	changes map[string]int // row text -> additions minus retractions
	rows    []string       // every change, in arrival order
}

func (c *collected) sink(kind changelog.Kind, row types.Row) error {
	var b []byte
	for i := 0; i < c.rt.Len(); i++ {
		if i > 0 {
			b = append(b, '|')
		}
		b = types.AppendText(b, c.rt, row, i, nil)
	}
	k := string(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if kind.IsAddition() {
		c.changes[k]++
	} else {
		c.changes[k]--
	}
	if c.changes[k] == 0 {
		delete(c.changes, k)
	}
	c.rows = append(c.rows, kind.String()+"|"+k)
	return nil
}

func (c *collected) table() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, n := range c.changes {
		for ; n > 0; n-- {
			out = append(out, k)
		}
		if n < 0 {
			out = append(out, fmt.Sprintf("%s (retracted %d times more than added)", k, -n))
		}
	}
	slices.Sort(out)
	return out
}

// TestSQLChangelogAggregate declares a postgres-cdc table in SQL, with
// metadata columns, and aggregates it: the result follows inserts, updates
// that move rows between groups, and deletes, with retractions, and ends
// equal to the same aggregate computed by the server.
func TestSQLChangelogAggregate(t *testing.T) {
	p := testservers.StartPostgres(t)
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	run := func(q string) [][][]byte {
		t.Helper()
		res, err := c.Exec(ctx, q).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(res) == 0 {
			return nil
		}
		return res[len(res)-1].Rows
	}
	run("CREATE SCHEMA shop")
	run("CREATE TABLE shop.orders (order_id INT PRIMARY KEY, customer VARCHAR(32), price NUMERIC(10,2), paid BOOLEAN)")
	run("ALTER TABLE shop.orders REPLICA IDENTITY FULL")
	for i := 1; i <= 200; i++ {
		run(fmt.Sprintf("INSERT INTO shop.orders VALUES (%d, 'c%d', %d.25, %v)", i, i%7, i, i%2 == 1))
	}
	script := fmt.Sprintf(`
CREATE TABLE orders (
  order_id INT,
  customer STRING,
  price DECIMAL(10, 2),
  paid BOOLEAN,
  db STRING METADATA FROM 'database_name' VIRTUAL,
  sch STRING METADATA FROM 'schema_name' VIRTUAL,
  tbl STRING METADATA FROM 'table_name' VIRTUAL,
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH (
  'connector' = 'postgres-cdc',
  'hostname' = '%s', 'port' = '%d', 'username' = 'postgres', 'password' = '',
  'database-name' = 'postgres', 'schema-name' = 'shop', 'table-name' = 'orders', 'slot.name' = 'orders_slot',
  'scan.incremental.snapshot.chunk.size' = '50'
);
SELECT customer, COUNT(*) AS n, SUM(price) AS total, MAX(db) AS db, MAX(sch) AS sch, MAX(tbl) AS tbl FROM orders GROUP BY customer;
`, p.Host, p.Port)
	out := &collected{changes: map[string]int{}}
	s := sql.NewSession(sql.WithParallelism(2), sql.WithQueryOutput(func(_ int, rt *types.RowType) sql.QuerySink {
		out.rt = rt
		return out.sink
	}))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	jctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(jctx, "sql") }()

	for i := 201; i <= 260; i++ {
		run(fmt.Sprintf("INSERT INTO shop.orders VALUES (%d, 'c%d', %d.50, false)", i, i%5, i))
	}
	run("UPDATE shop.orders SET customer = 'moved', price = price * 2 WHERE order_id % 9 = 0")
	run("DELETE FROM shop.orders WHERE order_id % 11 = 0")
	run("UPDATE shop.orders SET order_id = order_id + 1000 WHERE order_id % 13 = 0")

	var want []string
	for _, r := range run("SELECT customer, COUNT(*), SUM(price) FROM shop.orders GROUP BY customer") {
		want = append(want, fmt.Sprintf("%s|%s|%s|postgres|shop|orders", r[0], r[1], r[2]))
	}
	slices.Sort(want)
	var got []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = out.table(); slices.Equal(got, want) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the job ended: %v", err)
		default:
		}
	}
	cancel()
	<-done
	if !slices.Equal(got, want) {
		t.Fatalf("the aggregate of the changelog is\n%s\nand the server's is\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	retractions := 0
	out.mu.Lock()
	for _, r := range out.rows {
		if strings.HasPrefix(r, "-U") {
			retractions++
		}
	}
	out.mu.Unlock()
	if retractions == 0 {
		t.Error("the aggregate retracted nothing, though rows moved between groups")
	}
}

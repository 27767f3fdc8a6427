package cdctest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// RunSQL executes a SQL script whose queries write to output, and starts
// its job, named "sql", at the given parallelism and with a timeout.
func RunSQL(t testing.TB, script string, parallelism int, timeout time.Duration, output func(int, *types.RowType) sql.QuerySink) *Running {
	t.Helper()
	s := sql.NewSession(sql.WithParallelism(parallelism), sql.WithQueryOutput(output))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(parallelism))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	return Execute(t, env, "sql", timeout)
}

// Changes gathers the changes of a bare query in SQL: the table they add
// up to, and every change. It is safe for concurrent use.
type Changes struct {
	mu     sync.Mutex
	rt     *types.RowType
	counts map[string]int // row text -> additions minus retractions
	kinds  map[changelog.Kind]int
}

// Output is the query output of RunSQL that writes into c.
func (c *Changes) Output(_ int, rt *types.RowType) sql.QuerySink {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rt = rt
	if c.counts == nil {
		c.counts, c.kinds = map[string]int{}, map[changelog.Kind]int{}
	}
	return c.sink
}

func (c *Changes) sink(kind changelog.Kind, row types.Row) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b []byte
	for i := 0; i < c.rt.Len(); i++ {
		if i > 0 {
			b = append(b, '|')
		}
		b = types.AppendText(b, c.rt, row, i, nil)
	}
	k := string(b)
	if kind.IsAddition() {
		c.counts[k]++
	} else {
		c.counts[k]--
	}
	if c.counts[k] == 0 {
		delete(c.counts, k)
	}
	c.kinds[kind]++
	return nil
}

// Table returns the rows the changes add up to, sorted, each as the text
// of its fields separated by '|'; a row retracted more often than added
// says so.
func (c *Changes) Table() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, n := range c.counts {
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

// Count returns how many changes of kind came.
func (c *Changes) Count(kind changelog.Kind) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kinds[kind]
}

// OrdersColumns are the columns of the SQL table of shop.orders, which
// AggregateCase.Create makes.
const OrdersColumns = "order_id INT, customer STRING, price DECIMAL(10, 2), paid BOOLEAN"

// AggregateCase is a CDC source declared in SQL, for SQLChangelogAggregate.
type AggregateCase struct {
	// Conn writes the server's tables.
	Conn Conn
	// Create makes an empty table shop.orders (order_id INT PRIMARY KEY,
	// customer VARCHAR(32), price of DECIMAL(10,2), paid of booleans).
	Create []string
	// Connector is the source's connector.
	Connector Connector
	// Options are the source's options for shop.orders.
	Options map[string]string
	// Metadata are the SQL table's metadata columns: pairs of a column's
	// name and its metadata key.
	Metadata [][2]string
	// Values are what the metadata columns hold for shop.orders, in the
	// same order.
	Values []string
}

// SQLChangelogAggregate declares the table of c in SQL, with its metadata
// columns, and aggregates it at parallelism 2: the result follows inserts,
// updates that move rows between groups, and deletes, with retractions,
// and ends equal to the same aggregate computed by the server.
func SQLChangelogAggregate(t *testing.T, c AggregateCase) {
	c.Conn.Exec(t, c.Create...)
	var inserts []string
	for i := 1; i <= 200; i++ {
		inserts = append(inserts, fmt.Sprintf("INSERT INTO shop.orders VALUES (%d, 'c%d', %d.25, %v)", i, i%7, i, i%2 == 1))
	}
	c.Conn.Exec(t, inserts...)

	var columns, selected []string
	for _, m := range c.Metadata {
		columns = append(columns, fmt.Sprintf("%s STRING METADATA FROM '%s' VIRTUAL", m[0], m[1]))
		selected = append(selected, fmt.Sprintf("MAX(%s) AS %s", m[0], m[0]))
	}
	script := fmt.Sprintf(`CREATE TABLE orders (%s, %s, PRIMARY KEY (order_id) NOT ENFORCED) WITH (%s);
SELECT customer, COUNT(*) AS n, SUM(price) AS total, %s FROM orders GROUP BY customer;`,
		OrdersColumns, strings.Join(columns, ", "), c.Connector.With(c.Options), strings.Join(selected, ", "))
	out := &Changes{}
	r := RunSQL(t, script, 2, 2*time.Minute, out.Output)

	inserts = inserts[:0]
	for i := 201; i <= 260; i++ {
		inserts = append(inserts, fmt.Sprintf("INSERT INTO shop.orders VALUES (%d, 'c%d', %d.50, false)", i, i%5, i))
	}
	c.Conn.Exec(t, inserts...)
	c.Conn.Exec(t, "UPDATE shop.orders SET customer = 'moved', price = price * 2 WHERE order_id % 9 = 0",
		"DELETE FROM shop.orders WHERE order_id % 11 = 0",
		"UPDATE shop.orders SET order_id = order_id + 1000 WHERE order_id % 13 = 0")

	var want []string
	for _, row := range c.Conn.Query(t, "SELECT customer, COUNT(*), SUM(price) FROM shop.orders GROUP BY customer") {
		want = append(want, row+"|"+strings.Join(c.Values, "|"))
	}
	slices.Sort(want)
	var got []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = out.Table(); slices.Equal(got, want) {
			break
		}
		r.Ended(t)
	}
	r.Stop()
	if !slices.Equal(got, want) {
		t.Fatalf("the aggregate of the changelog is\n%s\nand the server's is\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if out.Count(changelog.UpdateBefore) == 0 {
		t.Error("the aggregate retracted nothing, though rows moved between groups")
	}
}

// With renders the WITH clause of a SQL table of c with options, in the
// order of their names.
func (c Connector) With(options map[string]string) string {
	w := []string{fmt.Sprintf("'connector' = '%s'", c)}
	for _, k := range slices.Sorted(maps.Keys(options)) {
		w = append(w, fmt.Sprintf("'%s' = '%s'", k, options[k]))
	}
	return strings.Join(w, ", ")
}

// TypesCase is a table with a column of every type a CDC source maps, for
// Types.
type TypesCase struct {
	// Conn writes the table.
	Conn Conn
	// Table is the server's table, empty, with a first column id.
	Table string
	// Values are SQL literals of the columns after id.
	Values string
	// Script declares the table in SQL as t, and selects * from it.
	Script string
	// Want is the text of the row of Values with id 1, as "+I 1 | ..." with
	// its fields separated by " | ".
	Want string
	// Columns is the count of columns after id.
	Columns int
	// Stream names where changes come from, in messages: "binlog", ...
	Stream string
}

// Types reads a row of c.Values and one of NULLs, once from the snapshot
// and once from the stream: the two must give the same values, and those
// values must be the server's.
func Types(t *testing.T, c TypesCase) {
	c.Conn.Exec(t, "INSERT INTO "+c.Table+" VALUES (1, "+c.Values+")", "INSERT INTO "+c.Table+" (id) VALUES (2)")
	rows := make(chan string, 16)
	r := RunSQL(t, c.Script, 1, time.Minute, func(_ int, rt *types.RowType) sql.QuerySink {
		return func(kind changelog.Kind, row types.Row) error {
			var b []string
			for i := 0; i < rt.Len(); i++ {
				b = append(b, string(types.AppendText(nil, rt, row, i, nil)))
			}
			rows <- kind.String() + " " + strings.Join(b, " | ")
			return nil
		}
	})
	read := func() map[string]string {
		t.Helper()
		got := map[string]string{}
		for len(got) < 2 {
			select {
			case row := <-rows:
				got[strings.SplitN(row, " | ", 2)[0]] = row
			case <-r.Finished():
				t.Fatalf("the job ended: %v", r.Wait())
			case <-r.Ctx.Done():
				t.Fatal("no row within a minute")
			}
		}
		return got
	}
	snap := read()
	c.Conn.Exec(t, "INSERT INTO "+c.Table+" VALUES (11, "+c.Values+")", "INSERT INTO "+c.Table+" (id) VALUES (12)")
	stream := read()
	r.Stop()
	if got := snap["+I 1"]; got != c.Want {
		t.Errorf("snapshot row:\n got %q\nwant %q", got, c.Want)
	}
	if got := strings.Replace(stream["+I 11"], "+I 11 ", "+I 1 ", 1); got != c.Want {
		t.Errorf("%s row:\n got %q\nwant %q", c.Stream, got, c.Want)
	}
	nulls := strings.Repeat(" | NULL", c.Columns)
	if got := snap["+I 2"]; got != "+I 2"+nulls {
		t.Errorf("snapshot row of NULLs: %q", got)
	}
	if got := stream["+I 12"]; got != "+I 12"+nulls {
		t.Errorf("%s row of NULLs: %q", c.Stream, got)
	}
}

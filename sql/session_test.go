package sql_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/connectors/all"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// collectSink gathers the changes written to a table, in Flink's print
// form, for tests.
type collectSink struct {
	mu    sync.Mutex
	lines []string
}

type collectFactory struct{ c *collectSink }

func (f collectFactory) Spec() connector.Spec {
	return connector.Spec{Name: "collect", Kind: connector.SinkKind, Description: "test sink"}
}

func (f collectFactory) NewSink(ctx connector.Context) (any, error) {
	rt := ctx.Table.Schema
	return eddySink{c: f.c, rt: rt}, nil
}

type eddySink struct {
	c  *collectSink
	rt *types.RowType
}

func (s eddySink) ChangelogMode() changelog.Mode { return changelog.Retract }

func (s eddySink) NewWriter(connector.WriterContext) (connector.Writer[connector.TableRecord], error) {
	return &collectWriter{s}, nil
}

type collectWriter struct{ s eddySink }

func (w *collectWriter) Write(rs []connector.TableRecord, _ []int64) error {
	w.s.c.mu.Lock()
	defer w.s.c.mu.Unlock()
	for _, r := range rs {
		w.s.c.lines = append(w.s.c.lines, types.FormatChange(r.Kind, w.s.rt, r.Row))
	}
	return nil
}
func (w *collectWriter) Flush() error { return nil }
func (w *collectWriter) Close() error { return nil }

// RetainsNoRecords implements connector.NonRetainingWriter: Write renders
// each row at once, so the queries of these tests run with the sources
// and projections chained to the sink reusing their rows' memory.
func (w *collectWriter) RetainsNoRecords() bool { return true }

// registry returns the built-in connectors plus "collect".
func registry(c *collectSink) *connector.Registry {
	r := connector.NewRegistry()
	for _, s := range connector.Default.Specs() {
		if s.Kind == connector.FormatKind {
			f, _ := connector.Default.Format(s.Name)
			r.Register(f)
		} else {
			f, _ := connector.Default.Connector(s.Name)
			r.Register(f)
		}
	}
	r.Register(collectFactory{c})
	return r
}

const nexmarkDDL = `
CREATE TABLE nexmark (
    event_type int,
    person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
    auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
    dateTime AS
        CASE
            WHEN event_type = 0 THEN person.dateTime
            WHEN event_type = 1 THEN auction.dateTime
            ELSE bid.dateTime
        END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '10000',
    'next-event.rate' = '10000',
    'events.num' = '1000'
);
CREATE VIEW bid AS
SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, dateTime, bid.extra
FROM nexmark WHERE event_type = 2;
`

func run(t *testing.T, script string, p int) []string {
	t.Helper()
	lines, err := runErr(t, script, p)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// runErr runs script as one job at parallelism p and returns what its
// "collect" tables received and the job's error.
func runErr(t *testing.T, script string, p int) ([]string, error) {
	t.Helper()
	c := &collectSink{}
	s := sql.NewSession(sql.WithConnectors(registry(c)))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(p))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	err := env.Execute(context.Background(), "sql")
	return c.lines, err
}

func TestProjectionAndFilterOverNexmark(t *testing.T) {
	lines := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, price DECIMAL(23, 3), dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, 0.908 * price AS price, dateTime FROM bid WHERE auction % 2 = 0;
`, 2)
	if len(lines) == 0 {
		t.Fatal("no rows")
	}
	for _, l := range lines[:3] {
		t.Log(l)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "+I[") {
			t.Fatalf("line %q", l)
		}
	}
}

// TestExamplesPlan plans every script in examples/sql, so that they keep
// working.
func TestExamplesPlan(t *testing.T) {
	files, err := filepath.Glob("../examples/sql/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := sql.NewSession()
		if _, err := s.Execute(string(src)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := s.Build(eddy.NewEnvironment()); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

// TestProjectionPushdownKeepsValues reads nested fields and a whole ROW
// column of the Nexmark table in one query, so that the source projects a
// column whole and reads its fields from it.
func TestProjectionPushdownKeepsValues(t *testing.T) {
	whole := run(t, nexmarkDDL+`
CREATE TABLE out (a BIGINT, p BIGINT, b ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>, t TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT bid.auction, bid.price, bid, dateTime FROM nexmark WHERE event_type = 2 AND bid.price > 1000;
`, 1)
	fields := run(t, nexmarkDDL+`
CREATE TABLE out (a BIGINT, p BIGINT, t TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, price, dateTime FROM bid WHERE price > 1000;
`, 1)
	if len(whole) == 0 || len(whole) != len(fields) {
		t.Fatalf("%d rows with the whole column, %d without", len(whole), len(fields))
	}
	for i := range whole {
		// +I[a, p, +I[a, ...], t] against +I[a, p, t].
		w, f := whole[i], fields[i]
		head := f[:strings.LastIndex(f, ", ")]
		if !strings.HasPrefix(w, head+", +I[") || !strings.HasSuffix(w, f[strings.LastIndex(f, ", "):]) {
			t.Fatalf("row %d: %s against %s", i, w, f)
		}
	}
}

// TestSessionExplain checks that Explain gives EXPLAIN's plan of an INSERT
// and leaves it out of what Build runs, and that a mistake in the
// statement is an error.
func TestSessionExplain(t *testing.T) {
	s := sql.NewSession()
	if _, err := s.Execute(`CREATE TABLE src (id BIGINT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE dst (id BIGINT, name STRING) WITH ('connector' = 'blackhole');`); err != nil {
		t.Fatal(err)
	}
	plan, err := s.Explain("INSERT INTO dst SELECT id, UPPER(name) FROM src WHERE id > 3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== Physical Plan ==", "Sink(table=[dst]", "TableSourceScan(table=[src]", "UPPER(", "changelogMode=[I]", "parallelism=1"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan lacks %q:\n%s", want, plan)
		}
	}
	if inserts, queries := s.Pending(); inserts != 0 || queries != 0 {
		t.Errorf("after Explain the session has %d inserts and %d queries pending; want none", inserts, queries)
	}
	if _, err := s.Explain("INSERT INTO nowhere SELECT id FROM src"); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("explaining an insert into an unknown table: %v; want an error naming it", err)
	}
}

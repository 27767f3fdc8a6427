package sql_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// reuseDDL is a nexmark table of 3000 events over 30 seconds of event time
// (enough for several hopping windows), with the views the cases read.
const reuseDDL = `
CREATE TABLE datagen (
    event_type int,
    person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
    auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
    dateTime AS CASE WHEN event_type = 0 THEN person.dateTime WHEN event_type = 1 THEN auction.dateTime ELSE bid.dateTime END,
    %s
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'first-event.rate' = '100', 'next-event.rate' = '100', 'events.num' = '3000');
CREATE VIEW bid AS
SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, dateTime, bid.extra FROM datagen WHERE event_type = 2;
CREATE VIEW counts AS
SELECT auction, COUNT(*) AS num, window_start AS starttime, window_end AS endtime
FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;
`

// reuseQ5 is Nexmark's q5, whose two branches count the bids per auction
// in the same hopping windows.
const reuseQ5 = `
CREATE TABLE t1 (auction BIGINT, num BIGINT) WITH ('connector' = 'tables', 'name' = 't1');
INSERT INTO t1
SELECT AuctionBids.auction, AuctionBids.num
FROM (
  SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
  FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
  GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
  SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
  FROM (
    SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
    FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
    GROUP BY auction, window_start, window_end
  ) AS CountBids
  GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime AND AuctionBids.num >= MaxBids.maxn;
`

// reuseCases are the jobs whose results must not depend on reuse: each a
// script of sink tables and the INSERT or statement set that fills them.
var reuseCases = []struct {
	name, ddlColumn, script string
}{
	{"q5", "", reuseQ5},
	{"q5 over a table with a processing-time column", "pt AS PROCTIME(),", reuseQ5},
	{"a statement set reading one view", "", `
CREATE TABLE t1 (auction BIGINT, num BIGINT, starttime TIMESTAMP(3)) WITH ('connector' = 'tables', 'name' = 't1');
CREATE TABLE t2 (auction BIGINT, num BIGINT) WITH ('connector' = 'tables', 'name' = 't2');
EXECUTE STATEMENT SET BEGIN
INSERT INTO t1 SELECT auction, num, starttime FROM counts WHERE num > 1;
INSERT INTO t2 SELECT auction, num FROM counts;
END;
`},
	{"a statement set reading different fields of one table", "", `
CREATE TABLE t1 (auction BIGINT, price BIGINT) WITH ('connector' = 'tables', 'name' = 't1');
CREATE TABLE t2 (auction BIGINT, bidder BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'tables', 'name' = 't2');
EXECUTE STATEMENT SET BEGIN
INSERT INTO t1 SELECT auction, price FROM bid WHERE price > 1000;
INSERT INTO t2 SELECT auction, bidder, dateTime FROM bid;
END;
`},
	// Patterns taken from a row are compiled and cached: the cache must not
	// keep the row's memory, which the source reuses.
	{"a statement set with patterns from a column", "", `
CREATE TABLE t1 (auction BIGINT, f STRING, g STRING) WITH ('connector' = 'tables', 'name' = 't1');
CREATE TABLE t2 (auction BIGINT, price BIGINT) WITH ('connector' = 'tables', 'name' = 't2');
EXECUTE STATEMENT SET BEGIN
INSERT INTO t1 SELECT auction, DATE_FORMAT(dateTime, SUBSTRING(channel, 8, 1)),
  DATE_FORMAT(dateTime, CONCAT('yyyy', SUBSTRING(channel, 8, 1), 'MM')) FROM bid;
INSERT INTO t2 SELECT auction, price FROM bid;
END;
`},
}

// reuseOff turns sub-plan and source reuse off.
const reuseOff = `SET 'table.optimizer.reuse-sub-plan-enabled' = 'false';
SET 'table.optimizer.reuse-source-enabled' = 'false';
`

// TestReuseKeepsResults runs jobs with equal sub-plans (q5's two window
// aggregations, a statement set reading one view, one reading different
// fields of one table) with sub-plan and source reuse on and off, at
// parallelism 1 and 2: the tables they fill must be the same, and the plan
// must show reuse only when on. At parallelism 2 the job with reuse is also
// stopped with a savepoint in the middle of its input and restored from
// it, and must fill the same tables.
func TestReuseKeepsResults(t *testing.T) {
	for _, c := range reuseCases {
		ddl := fmt.Sprintf(reuseDDL, c.ddlColumn)
		on, off := ddl+c.script, reuseOff+ddl+c.script
		if plan := reuseExplain(t, on); !strings.Contains(plan, "Reused(reference_id=[1])") {
			t.Errorf("%s: the plan reuses nothing:\n%s", c.name, plan)
		}
		if plan := reuseExplain(t, off); strings.Contains(plan, "Reused") {
			t.Errorf("%s: with reuse off, the plan still reuses:\n%s", c.name, plan)
		}
		for _, p := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s p=%d", c.name, p), func(t *testing.T) {
				shared, apart := tablesRun(t, on, p, 0), tablesRun(t, off, p, 0)
				if len(shared) == 0 {
					t.Fatal("the job fills no table")
				}
				for name, rows := range apart {
					if len(rows) == 0 {
						t.Fatalf("table %s gets no rows; the test compares nothing", name)
					}
					if d := diffLines(shared[name], rows); d != "" {
						t.Errorf("table %s with reuse (got) differs from without (want):\n%s", name, d)
					}
					t.Logf("table %s: %d rows", name, len(rows))
				}
				if p != 2 {
					return
				}
				restored := tablesRun(t, on, p, 40)
				for name, rows := range shared {
					if d := diffLines(restored[name], rows); d != "" {
						t.Errorf("table %s of the job stopped with a savepoint and restored (got) differs from the uninterrupted one (want):\n%s", name, d)
					}
				}
			})
		}
	}
}

// reuseExplain returns the plan of the INSERT or statement set at the end
// of script.
func reuseExplain(t *testing.T, script string) string {
	t.Helper()
	i := strings.LastIndex(script, "EXECUTE STATEMENT SET")
	if i < 0 {
		i = strings.LastIndex(script, "INSERT INTO")
	}
	s := sql.NewSession(sql.WithConnectors((&tablesEnv{base: t.TempDir()}).registry()))
	return explainIn(t, s, script[:i], strings.TrimSuffix(strings.TrimSpace(script[i:]), ";"))
}

// tablesRun runs script at parallelism p and returns the final table of
// every 'tables' sink it writes, by name. With stopAfter > 0 it stops the
// job with a savepoint once every reader of its sources has emitted
// stopAfter records, and restores a job built from the script again from
// it, as TestGolden does.
func tablesRun(t *testing.T, script string, p int, stopAfter int64) map[string][]string {
	t.Helper()
	g := &tablesEnv{base: t.TempDir()}
	build := func(opts ...eddy.Option) *eddy.Environment {
		s := sql.NewSession(sql.WithConnectors(g.registry()))
		if _, err := s.Execute(script); err != nil {
			t.Fatal(err)
		}
		env := eddy.NewEnvironment(append([]eddy.Option{eddy.WithParallelism(p)}, opts...)...)
		if err := s.Build(env); err != nil {
			t.Fatal(err)
		}
		return env
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if stopAfter == 0 {
		if err := build().Execute(ctx, "reuse"); err != nil {
			t.Fatal(err)
		}
		return g.finalTables(t)
	}
	g.gate.pauseAfter = stopAfter
	env := build(eddy.WithCheckpointDir(t.TempDir()))
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "reuse") }()
	if err := g.gate.waitPaused(ctx, done); err != nil {
		t.Fatal(err)
	}
	sp, err := env.TriggerSavepoint(ctx, t.TempDir(), true)
	if err != nil {
		t.Fatalf("savepoint: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the job stopped with a savepoint: %v", err)
	}
	before := g.gate.emitted.Load()
	g.gate.open()
	if err := build(eddy.WithRestoreFrom(sp), eddy.WithCheckpointDir(t.TempDir())).Execute(ctx, "reuse restored"); err != nil {
		t.Fatalf("the job restored from %s: %v", sp, err)
	}
	if g.gate.emitted.Load() == before {
		t.Fatalf("the restored job read nothing more (%d records before the savepoint): the savepoint was not in the middle of the input", before)
	}
	return g.finalTables(t)
}

// tablesEnv is the connectors of tablesRun: the built-in ones, with the
// readers of nexmark and datagen tables behind a gate, and 'tables', whose
// tables ('name' = '...') each write their changes into a directory of
// their own under base (as the golden table does).
type tablesEnv struct {
	base    string
	gate    gate
	mu      sync.Mutex
	schemas map[string]*types.RowType
}

func (g *tablesEnv) registry() *connector.Registry {
	return gatedRegistry(&g.gate, tablesSinkFactory{g})
}

// finalTables reads the table of every sink, as TestGolden does.
func (g *tablesEnv) finalTables(t *testing.T) map[string][]string {
	t.Helper()
	g.mu.Lock()
	names := make([]string, 0, len(g.schemas))
	for n := range g.schemas {
		names = append(names, n)
	}
	g.mu.Unlock()
	sort.Strings(names)
	out := map[string][]string{}
	for _, n := range names {
		rows, err := (&goldenEnv{out: filepath.Join(g.base, n), schema: g.schemas[n]}).finalTable(t)
		if err != nil {
			t.Fatalf("table %s: %v", n, err)
		}
		out[n] = rows
	}
	return out
}

// tablesSinkFactory makes the 'tables' tables: filesystem tables in
// debezium-json, one directory each.
type tablesSinkFactory struct{ g *tablesEnv }

func (f tablesSinkFactory) Spec() connector.Spec {
	return connector.Spec{Name: "tables", Kind: connector.SinkKind, Description: "test sink: the changes of each named table, exactly once",
		Options: []connector.Option{{Key: "name", Type: connector.String, Required: true, Description: "the table's directory"}}}
}

func (f tablesSinkFactory) NewSink(ctx connector.Context) (any, error) {
	name := ctx.Options.String("name")
	f.g.mu.Lock()
	if f.g.schemas == nil {
		f.g.schemas = map[string]*types.RowType{}
	}
	f.g.schemas[name] = ctx.Table.Schema
	f.g.mu.Unlock()
	return connector.OpenTableSink(connector.Default, "filesystem", map[string]string{"path": filepath.Join(f.g.base, name), "format": "debezium-json"}, ctx.Table)
}

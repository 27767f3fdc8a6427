package nats_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql"
)

// subjectEq is the predicate subject = v on a table whose 'subject'
// metadata column is column col of its rows.
func subjectEq(col int, v string) connector.Predicate {
	return connector.Predicate{Path: []int{col}, Op: connector.OpEqual, Value: v}
}

// TestSubjectFilterConformance reads a stream of three subjects through
// sources narrowed by conditions on the subject: the equalities with a
// literal subject are accepted (and read that subject alone, or nothing),
// the rest are left to the planner.
func TestSubjectFilterConformance(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	for _, c := range []struct {
		name     string
		subjects string // the source's 'subject' option
	}{{"whole stream", ""}, {"filters", "F.a.*,F.b.1"}} {
		t.Run(c.name, func(t *testing.T) {
			name, prefix := freshStream(t, js)
			sub := strings.ReplaceAll(c.subjects, "F", prefix)
			publishLines(t, js, prefix+".a", 0, 300, 1)
			publishLines(t, js, prefix+".b", 300, 600, 2) // prefix.b.0, prefix.b.1
			publishLines(t, js, prefix+".c", 600, 700, 1)
			tb := lineTable(t, "subject STRING", "stream-sequence BIGINT")
			opts := map[string]string{"url": url, "stream": name, "format": "json", "scan.bounded.mode": "latest-offset"}
			if sub != "" {
				opts["subject"] = sub
			}
			col := 2
			n := connector.Predicate{Path: []int{1}, Op: connector.OpGreater, Value: int64(450)}
			connectortest.RunFilter(t, connectortest.FilterCase{
				Open:    func(t testing.TB) connector.Source[connector.TableRecord] { return openTable(t, opts, tb) },
				RowType: tb.RowType(),
				Filters: [][]connector.Predicate{
					{subjectEq(col, prefix+".a.0")},
					{subjectEq(col, prefix+".b.1"), n},
					{subjectEq(col, prefix+".b.1"), subjectEq(col, prefix+".b.1")},
					{subjectEq(col, prefix+".b.1"), subjectEq(col, prefix+".b.0")},
					{subjectEq(col, prefix+".c.0")},
					{subjectEq(col, "elsewhere")},
					{subjectEq(col, prefix+".b.*")},
					{{Path: []int{col}, Op: connector.OpNotEqual, Value: prefix + ".a.0"}},
					{n},
				},
				Accept:      [][]int{{0}, {0}, {0, 1}, {0, 1}, {0}, {0}, nil, nil, nil},
				Checkpoints: true,
			})
		})
	}
}

// TestCoreSubjectFilter narrows a core NATS wildcard subscription to one
// subject: only that subject's messages arrive.
func TestCoreSubjectFilter(t *testing.T) {
	url := startServer(t)
	nc, _ := connect(t, url)
	tb := lineTable(t, "subject STRING")
	src := openTable(t, map[string]string{"url": url, "subject": "sensors.*", "format": "json"}, tb)
	narrow, acc := src.(connector.FilterableSource).ApplyFilters([]connector.Predicate{subjectEq(2, "sensors.b")})
	if len(acc) != 1 {
		t.Fatalf("the core source accepted %v of subject = 'sensors.b'", acc)
	}
	mem := connectortest.NewMemorySink[connector.TableRecord]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(10*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "core", narrow, eddy.NoWatermarks[connector.TableRecord]()), "memory", mem.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "core filter") }()
	sent := 0
	for len(mem.Committed()) < 50 {
		select {
		case err := <-done:
			t.Fatalf("the job ended: %v", err)
		default:
		}
		for _, s := range []string{"sensors.a", "sensors.b", "sensors.c"} {
			b, _ := json.Marshal(line{N: int64(sent)})
			if err := nc.Publish(s, b); err != nil {
				t.Fatal(err)
			}
		}
		sent++
		time.Sleep(2 * time.Millisecond)
	}
	cancel()
	<-done
	for _, r := range mem.Committed() {
		if s := r.Row.String(2); s != "sensors.b" {
			t.Fatalf("a message of %s arrived through the subscription narrowed to sensors.b", s)
		}
	}
	// A subject the source's subjects do not take reads nothing, and ends.
	none, acc := src.(connector.FilterableSource).ApplyFilters([]connector.Predicate{subjectEq(2, "other.b")})
	if len(acc) != 1 {
		t.Fatalf("the core source accepted %v of subject = 'other.b'", acc)
	}
	env = eddy.NewEnvironment(eddy.WithParallelism(1))
	mem = connectortest.NewMemorySink[connector.TableRecord]()
	eddy.WriteTo(eddy.FromSource(env, "core", none, eddy.NoWatermarks[connector.TableRecord]()), "memory", mem.Sink())
	ctx2, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel2()
	if err := env.Execute(ctx2, "core nothing"); err != nil {
		t.Fatal(err)
	}
	if n := len(mem.Committed()); n != 0 {
		t.Fatalf("the source narrowed to a subject outside 'subject' read %d messages", n)
	}
}

const explainDDL = `
CREATE TABLE orders (
  id BIGINT, amount BIGINT,
  subject STRING METADATA VIRTUAL,
  seq BIGINT METADATA FROM 'stream-sequence' VIRTUAL
) WITH ('connector' = 'nats', 'url' = 'nats://127.0.0.1:1', 'stream' = 'ORDERS', 'subject' = 'orders.>', 'format' = 'json');
CREATE TABLE big (id BIGINT, amount BIGINT, seq BIGINT) WITH (
  'connector' = 'nats', 'url' = 'nats://127.0.0.1:1', 'subject' = 'big', 'format' = 'json');
`

// explain returns the plan of stmt after the DDL.
func explain(t *testing.T, ddl, stmt string) string {
	t.Helper()
	s := sql.NewSession()
	if _, err := s.Execute(ddl); err != nil {
		t.Fatal(err)
	}
	plan, err := s.Explain(stmt)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestExplainSubjectPushdown plans a query with a condition on the subject
// and one on a column of the message: the scan reads the one subject, the
// Calc keeps the other condition. Planning connects to no server.
func TestExplainSubjectPushdown(t *testing.T) {
	const query = "INSERT INTO big SELECT id, amount, seq FROM orders WHERE subject = 'orders.eu' AND amount > 10"
	want := `== Physical Plan ==
+- Sink(table=[big], fields=[` + "`id`, `amount`, `seq`" + `]), changelogMode=[I], parallelism=1
   +- Calc(select=[` + "`id`, `amount`, `seq`" + `], where=[(` + "`amount`" + ` > 10)]), changelogMode=[I], parallelism=1
      +- TableSourceScan(table=[orders, filter=[(` + "`subject`" + ` = 'orders.eu')]], fields=[` + "`id`, `amount`, `subject`, `stream-sequence`" + `]), changelogMode=[I], parallelism=1
`
	if got := explain(t, explainDDL, query); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
	}
	// Without pushdown the Calc tests both.
	off := explain(t, "SET 'table.optimizer.source.predicate-pushdown-enabled' = 'false';\n"+explainDDL, query)
	if strings.Contains(off, "filter=[") || !strings.Contains(off, "'orders.eu'") {
		t.Fatalf("with pushdown off, the plan is\n%s", off)
	}
	// A wildcard is a literal to SQL, not to NATS: the Calc keeps it.
	wild := explain(t, explainDDL, "INSERT INTO big SELECT id, amount, seq FROM orders WHERE subject = 'orders.*'")
	if strings.Contains(wild, "filter=[") {
		t.Fatalf("a subject with a wildcard was pushed into the scan:\n%s", wild)
	}
}

// TestSQLSubjectPushdown runs a SQL job whose condition on the subject
// metadata column narrows the consumer, writing the subject and stream
// sequence of each message it keeps.
func TestSQLSubjectPushdown(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	createStream(t, js, "SQLORDERS", "sqlorders.>")
	createStream(t, js, "SQLBIG", "sqlbig")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 200; i++ {
		b := fmt.Sprintf(`{"id": %d, "amount": %d}`, i, i)
		if _, err := js.Publish(ctx, fmt.Sprintf("sqlorders.%d", i%4), []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
CREATE TABLE orders (
  id BIGINT, amount BIGINT,
  subject STRING METADATA VIRTUAL,
  seq BIGINT METADATA FROM 'stream-sequence' VIRTUAL
) WITH ('connector' = 'nats', 'url' = '%[1]s', 'stream' = 'SQLORDERS', 'format' = 'json', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE big (id BIGINT, subject STRING, seq BIGINT) WITH (
  'connector' = 'nats', 'url' = '%[1]s', 'stream' = 'SQLBIG', 'subject' = 'sqlbig', 'format' = 'json');
INSERT INTO big SELECT id, subject, seq FROM orders WHERE subject = 'sqlorders.1' AND amount > 100;
`, url)
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(ctx, "pushdown"); err != nil {
		t.Fatal(err)
	}
	type out struct {
		ID      int64  `json:"id"`
		Subject string `json:"subject"`
		Seq     int64  `json:"seq"`
	}
	n := 0
	for _, b := range readStream(t, js, "SQLBIG") {
		var o out
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		if o.ID%4 != 1 || o.ID <= 100 || o.Subject != "sqlorders.1" || o.Seq != o.ID+1 {
			t.Fatalf("the job wrote %+v", o)
		}
		n++
	}
	if n != 25 {
		t.Fatalf("the job wrote %d records, want the 25 of sqlorders.1 above 100", n)
	}
}

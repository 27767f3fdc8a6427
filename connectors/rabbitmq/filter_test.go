package rabbitmq_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// keyTable is a table of lines with the metadata columns meta
// ("routing-key STRING"), after the physical columns part and n.
func keyTable(t testing.TB, meta ...string) *connector.Table {
	t.Helper()
	tb := &connector.Table{Name: "lines", Schema: types.MustRowType(types.F("part", types.Int()), types.F("n", types.BigInt()))}
	for _, m := range meta {
		k, ty, _ := strings.Cut(m, " ")
		mt, err := types.ParseType(ty)
		if err != nil {
			t.Fatal(err)
		}
		tb.Metadata = append(tb.Metadata, k)
		tb.MetadataTypes = append(tb.MetadataTypes, mt)
	}
	return tb
}

// keyEq is the predicate routing-key = v on column col of the rows.
func keyEq(col int, v string) connector.Predicate {
	return connector.Predicate{Path: []int{col}, Op: connector.OpEqual, Value: v}
}

// TestRoutingKeyFilterAccepts offers conditions to table sources and
// checks which the source takes: equalities of the 'routing-key' column
// (VARCHAR) with a constant, nothing else. It also checks the metadata
// columns a table may declare.
func TestRoutingKeyFilterAccepts(t *testing.T) {
	opts := map[string]string{"url": brokerURL, "queue": "q", "exchange": "x", "routing-key": "orders.#", "format": "json"}
	src, err := connector.OpenTableSource(connector.Default, "rabbitmq", opts, keyTable(t, "routing-key STRING"))
	if err != nil {
		t.Fatal(err)
	}
	fs, ok := src.(connector.FilterableSource)
	if !ok {
		t.Fatalf("the table source is a %T, which takes no filters", src)
	}
	n := connector.Predicate{Path: []int{1}, Op: connector.OpGreater, Value: int64(4)}
	for _, c := range []struct {
		preds []connector.Predicate
		want  []int
	}{
		{[]connector.Predicate{keyEq(2, "orders.eu")}, []int{0}},
		{[]connector.Predicate{n, keyEq(2, "")}, []int{1}},
		{[]connector.Predicate{keyEq(2, "a"), keyEq(2, "b")}, []int{0, 1}},
		{[]connector.Predicate{{Path: []int{2}, Op: connector.OpNotEqual, Value: "a"}}, nil},
		{[]connector.Predicate{{Path: []int{2}, Op: connector.OpIsNull}}, nil},
		{[]connector.Predicate{n}, nil},
	} {
		got, acc := fs.ApplyFilters(c.preds)
		if !slices.Equal(acc, c.want) || (got == nil) != (len(c.want) == 0) {
			t.Errorf("ApplyFilters(%v) accepted %v (source %v); want %v", c.preds, acc, got != nil, c.want)
		}
	}
	ch, err := connector.OpenTableSource(connector.Default, "rabbitmq", opts, keyTable(t, "routing-key CHAR(9)"))
	if err != nil {
		t.Fatal(err)
	}
	if _, acc := ch.(connector.FilterableSource).ApplyFilters([]connector.Predicate{keyEq(2, "orders.eu")}); len(acc) != 0 {
		t.Errorf("a CHAR routing-key column took %v", acc)
	}
	for meta, want := range map[string]string{
		"exchange STRING":  "routing-key",
		"routing-key INT":  "declare it as VARCHAR",
		"routing-key BOOL": "declare it as VARCHAR",
	} {
		_, err := connector.OpenTableSource(connector.Default, "rabbitmq", opts, keyTable(t, meta))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a table with the metadata column %s: %v; want an error saying %q", meta, err, want)
		}
	}
}

// orderKeys are the routing keys the tests publish orders with, in turn.
var orderKeys = []string{"orders.eu", "orders.us", "other.eu", "orders.eu.paris"}

// publishOrders publishes orders from..to-1 to the exchange, order i with
// amount i and the routing key orderKeys[i%4].
func publishOrders(t testing.TB, conn *amqp.Connection, exchange string, from, to int) {
	t.Helper()
	var keys []string
	var msgs []amqp.Publishing
	for i := from; i < to; i++ {
		keys = append(keys, orderKeys[i%4])
		msgs = append(msgs, amqp.Publishing{Body: []byte(fmt.Sprintf(`{"id": %d, "amount": %d}`, i, i))})
	}
	publishConfirmed(t, conn, exchange, false, keys, msgs)
}

// pushdownJob runs, in the background, a SQL job reading the queue bound
// to the exchange with the binding key and writing to the queue out the
// orders of the WHERE clause, with their routing keys. It returns once the
// source consumes its queue, so bound.
func pushdownJob(t *testing.T, conn *amqp.Connection, queue, exchange, binding, out, where string) *running {
	t.Helper()
	return pickingJob(t, conn, queue, exchange, binding, out, "rk", where)
}

// pickingJob is pushdownJob writing pick, an expression over the columns
// of the orders (among them rk, the routing key, and region, prio and vip,
// the headers of those names), instead of the routing key.
func pickingJob(t *testing.T, conn *amqp.Connection, queue, exchange, binding, out, pick, where string) *running {
	t.Helper()
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
CREATE TABLE orders (
  id BIGINT, amount BIGINT, rk STRING METADATA FROM 'routing-key' VIRTUAL,
  region STRING METADATA FROM 'header.region' VIRTUAL,
  prio BIGINT METADATA FROM 'header.prio' VIRTUAL,
  vip BOOLEAN METADATA FROM 'header.vip' VIRTUAL
) WITH (
  'connector' = 'rabbitmq', 'url' = '%[1]s', 'queue' = '%[2]s', 'exchange' = '%[3]s', 'routing-key' = '%[4]s', 'format' = 'json');
CREATE TABLE picked (id BIGINT, rk STRING) WITH (
  'connector' = 'rabbitmq', 'url' = '%[1]s', 'queue' = '%[5]s', 'format' = 'json');
INSERT INTO picked SELECT id, %[7]s FROM orders WHERE %[6]s;
`, brokerURL, queue, exchange, binding, out, where, pick)
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	j := startEnv(t, env)
	eventually(t, "the source to consume queue "+queue, func() bool {
		select {
		case err := <-j.done:
			t.Fatalf("the job ended: %v", err)
		default:
		}
		ch := channel(t, conn)
		defer ch.Close()
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		return err == nil && q.Consumers > 0
	})
	return j
}

// picked is a record the jobs write.
type picked struct {
	ID int64  `json:"id"`
	RK string `json:"rk"`
}

// readPicked waits until the queue holds n records, and returns them
// rendered "id rk", sorted.
func readPicked(t *testing.T, conn *amqp.Connection, j *running, queue string, n int) []string {
	t.Helper()
	eventually(t, fmt.Sprintf("%d records in queue %s", n, queue), func() bool {
		select {
		case err := <-j.done:
			t.Fatalf("the job ended: %v", err)
		default:
		}
		ch := channel(t, conn)
		defer ch.Close()
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		return err == nil && q.Messages >= n
	})
	var got []string
	for _, d := range readQueue(t, conn, queue) {
		var p picked
		if err := json.Unmarshal(d.Body, &p); err != nil {
			t.Fatalf("%q: %v", d.Body, err)
		}
		got = append(got, fmt.Sprintf("%d %s", p.ID, p.RK))
	}
	slices.Sort(got)
	return got
}

// routingKeys returns the routing keys of the messages the queue holds.
func routingKeys(t *testing.T, conn *amqp.Connection, queue string) []string {
	t.Helper()
	var out []string
	for _, d := range readQueue(t, conn, queue) {
		out = append(out, d.RoutingKey)
	}
	return out
}

// TestSQLRoutingKeyPushdown runs a SQL job whose condition on the routing
// key narrows the binding of the queue it declares to a topic exchange:
// only the orders of that key pass, and, once the job has stopped, the
// broker routes to the queue the messages of that key and of no other.
func TestSQLRoutingKeyPushdown(t *testing.T) {
	conn := connect(t)
	ex := freshExchange(t, conn, "topic")
	q, out := "eddy-test-narrowed-"+randomSuffix(), "eddy-test-picked-"+randomSuffix()
	deleteAfter(t, conn, q)
	deleteAfter(t, conn, out)
	j := pushdownJob(t, conn, q, ex, "orders.#", out, "rk = 'orders.eu' AND amount > 10")
	publishOrders(t, conn, ex, 0, 100)
	var want []string
	for i := 12; i < 100; i += 4 {
		want = append(want, fmt.Sprintf("%d orders.eu", i))
	}
	slices.Sort(want)
	got := readPicked(t, conn, j, out, len(want))
	j.stop()
	if !slices.Equal(got, want) {
		t.Fatalf("queue %s holds %v; want %v", out, got, want)
	}
	// The queue is bound with orders.eu alone: of 40 more orders, the
	// broker routes to it the 10 of orders.eu (and it holds those the
	// job read but no completed checkpoint acknowledged).
	publishOrders(t, conn, ex, 100, 140)
	keys := routingKeys(t, conn, q)
	if slices.ContainsFunc(keys, func(k string) bool { return k != "orders.eu" }) || len(keys) < 10 {
		t.Fatalf("queue %s holds messages of the routing keys %v; want 10 or more of orders.eu alone", q, keys)
	}
}

// TestRoutingKeyPushdownUnbound runs jobs whose condition names a routing
// key the binding cannot take: the queue they declare is left unbound, and
// the broker routes nothing to it.
func TestRoutingKeyPushdownUnbound(t *testing.T) {
	conn := connect(t)
	for _, c := range []struct{ kind, binding, where string }{
		{"topic", "orders.*", "rk = 'orders.eu.paris'"},
		{"direct", "orders.eu", "rk = 'orders.us'"},
		{"topic", "orders.#", "rk = 'orders.eu' AND rk = 'orders.us'"},
	} {
		t.Run(c.kind+" "+c.where, func(t *testing.T) {
			ex := freshExchange(t, conn, c.kind)
			q, out := "eddy-test-unbound-"+randomSuffix(), "eddy-test-picked-"+randomSuffix()
			deleteAfter(t, conn, q)
			deleteAfter(t, conn, out)
			j := pushdownJob(t, conn, q, ex, c.binding, out, c.where)
			j.stop()
			publishOrders(t, conn, ex, 0, 40)
			if ready, _ := inspect(t, conn, q); ready != 0 {
				t.Fatalf("the broker routed %d messages to queue %s, bound to nothing", ready, q)
			}
		})
	}
}

// TestRoutingKeyPushdownExistingQueue reads a queue that exists before
// the job, which another may share: the job binds it as configured, not
// narrowed, and leaves out the other routing keys itself.
func TestRoutingKeyPushdownExistingQueue(t *testing.T) {
	conn := connect(t)
	ex := freshExchange(t, conn, "topic")
	q := freshQueue(t, conn, "classic")
	out := "eddy-test-picked-" + randomSuffix()
	deleteAfter(t, conn, out)
	j := pushdownJob(t, conn, q, ex, "orders.#", out, "rk = 'orders.eu' AND amount > 10")
	publishOrders(t, conn, ex, 0, 100)
	var want []string
	for i := 12; i < 100; i += 4 {
		want = append(want, fmt.Sprintf("%d orders.eu", i))
	}
	got := readPicked(t, conn, j, out, len(want))
	// Every other order of orders.# reached the queue and was read: the
	// queue drains.
	eventually(t, "queue "+q+" to drain", func() bool {
		ready, _ := inspect(t, conn, q)
		return ready == 0
	})
	j.stop()
	if !slices.Equal(got, want) {
		t.Fatalf("queue %s holds %v; want %v", out, got, want)
	}
	// What the job read after its last completed checkpoint is back in
	// the queue; of what comes now, the binding takes orders.#.
	ch := channel(t, conn)
	if _, err := ch.QueuePurge(q, false); err != nil {
		t.Fatal(err)
	}
	ch.Close()
	publishOrders(t, conn, ex, 100, 104)
	keys := routingKeys(t, conn, q)
	slices.Sort(keys)
	if w := []string{"orders.eu", "orders.eu.paris", "orders.us"}; !slices.Equal(keys, w) {
		t.Fatalf("the existing queue %s holds messages of the routing keys %v; want its binding of orders.# unchanged (%v)", q, keys, w)
	}
}

// TestSQLRoutingKeyColumn reads the routing key of each message as a
// metadata column, with a condition on it that eddy evaluates.
func TestSQLRoutingKeyColumn(t *testing.T) {
	conn := connect(t)
	ex := freshExchange(t, conn, "topic")
	q, out := "eddy-test-keys-"+randomSuffix(), "eddy-test-picked-"+randomSuffix()
	deleteAfter(t, conn, q)
	deleteAfter(t, conn, out)
	j := pushdownJob(t, conn, q, ex, "orders.#", out, "rk LIKE 'orders.eu%' AND amount > 10")
	publishOrders(t, conn, ex, 0, 100)
	var want []string
	for i := 11; i < 100; i++ {
		if k := orderKeys[i%4]; strings.HasPrefix(k, "orders.eu") {
			want = append(want, fmt.Sprintf("%d %s", i, k))
		}
	}
	slices.Sort(want)
	got := readPicked(t, conn, j, out, len(want))
	j.stop()
	if !slices.Equal(got, want) {
		t.Fatalf("queue %s holds %v; want %v", out, got, want)
	}
}

const explainDDL = `
CREATE TABLE orders (
  id BIGINT, amount BIGINT,
  rk STRING METADATA FROM 'routing-key' VIRTUAL
) WITH ('connector' = 'rabbitmq', 'url' = 'amqp://guest:guest@127.0.0.1:1/', 'queue' = 'orders',
  'exchange' = 'shop', 'routing-key' = 'orders.#', 'format' = 'json');
CREATE TABLE big (id BIGINT, amount BIGINT) WITH (
  'connector' = 'rabbitmq', 'url' = 'amqp://guest:guest@127.0.0.1:1/', 'queue' = 'big', 'format' = 'json');
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

// TestExplainRoutingKeyPushdown plans a query with a condition on the
// routing key and one on a column of the message: the scan takes the
// first, the Calc keeps the other. Planning connects to no broker.
func TestExplainRoutingKeyPushdown(t *testing.T) {
	const query = "INSERT INTO big SELECT id, amount FROM orders WHERE rk = 'orders.eu' AND amount > 10"
	want := `== Physical Plan ==
+- Sink(table=[big], fields=[` + "`id`, `amount`" + `]), changelogMode=[I], parallelism=1
   +- Calc(select=[` + "`id`, `amount`" + `], where=[(` + "`amount`" + ` > 10)]), changelogMode=[I], parallelism=1
      +- TableSourceScan(table=[orders, filter=[(` + "`rk`" + ` = 'orders.eu')]], fields=[` + "`id`, `amount`, `routing-key`" + `]), changelogMode=[I], parallelism=1
`
	if got := explain(t, explainDDL, query); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
	}
	off := explain(t, "SET 'table.optimizer.source.predicate-pushdown-enabled' = 'false';\n"+explainDDL, query)
	if strings.Contains(off, "filter=[") || !strings.Contains(off, "'orders.eu'") {
		t.Fatalf("with pushdown off, the plan is\n%s", off)
	}
	for _, cond := range []string{"rk <> 'orders.eu'", "rk LIKE 'orders.%'", "rk IS NULL"} {
		plan := explain(t, explainDDL, "INSERT INTO big SELECT id, amount FROM orders WHERE "+cond)
		if strings.Contains(plan, "filter=[") {
			t.Fatalf("%s was pushed into the scan:\n%s", cond, plan)
		}
	}
}

// headerEq is the predicate column col = v.
func headerEq(col int, v string) connector.Predicate {
	return connector.Predicate{Path: []int{col}, Op: connector.OpEqual, Value: v}
}

// TestHeaderFilterAccepts offers conditions on header columns to table
// sources: equalities of STRING header columns with a constant are taken,
// with those of the routing key, and nothing else.
func TestHeaderFilterAccepts(t *testing.T) {
	opts := map[string]string{"url": brokerURL, "queue": "q", "exchange": "x", "format": "json"}
	// Columns: part 0, n 1, routing-key 2, header.region 3, header.prio 4.
	src, err := connector.OpenTableSource(connector.Default, "rabbitmq", opts,
		keyTable(t, "routing-key STRING", "header.region STRING", "header.prio BIGINT"))
	if err != nil {
		t.Fatal(err)
	}
	fs := src.(connector.FilterableSource)
	prio := connector.Predicate{Path: []int{4}, Op: connector.OpEqual, Value: int64(3)}
	for _, c := range []struct {
		preds []connector.Predicate
		want  []int
	}{
		{[]connector.Predicate{headerEq(3, "eu")}, []int{0}},
		{[]connector.Predicate{prio, headerEq(3, "eu"), keyEq(2, "k")}, []int{1, 2}},
		{[]connector.Predicate{headerEq(3, "eu"), headerEq(3, "us")}, []int{0, 1}},
		{[]connector.Predicate{{Path: []int{3}, Op: connector.OpNotEqual, Value: "eu"}}, nil},
		{[]connector.Predicate{prio}, nil},
	} {
		got, acc := fs.ApplyFilters(c.preds)
		if !slices.Equal(acc, c.want) || (got == nil) != (len(c.want) == 0) {
			t.Errorf("ApplyFilters(%v) accepted %v (source %v); want %v", c.preds, acc, got != nil, c.want)
		}
	}
	for meta, want := range map[string]string{
		"header.region DOUBLE": "declare it as STRING for a string header",
		"header. STRING":       "header.<name>",
	} {
		_, err := connector.OpenTableSource(connector.Default, "rabbitmq", opts, keyTable(t, meta))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a table with the metadata column %s: %v; want an error saying %q", meta, err, want)
		}
	}
}

// orderHeaders are the headers the tests publish orders with, in turn: a
// string region, a region of another type, no region, another region.
var orderHeaders = []amqp.Table{
	{"region": "eu", "prio": int32(3), "vip": true},
	{"region": int32(5), "prio": int64(7)},
	{"prio": "high"},
	{"region": "us", "vip": false},
}

// publishWithHeaders publishes orders from..to-1 to the exchange, order i
// with amount i and the headers orderHeaders[i%4].
func publishWithHeaders(t testing.TB, conn *amqp.Connection, exchange string, from, to int) {
	t.Helper()
	var msgs []amqp.Publishing
	for i := from; i < to; i++ {
		body := []byte(fmt.Sprintf(`{"id": %d, "amount": %d}`, i, i))
		msgs = append(msgs, amqp.Publishing{Body: body, Headers: orderHeaders[i%4]})
	}
	publishConfirmed(t, conn, exchange, false, make([]string, len(msgs)), msgs)
}

// headerPick renders the header columns of an order: "region/prio/vip",
// "-" for a NULL.
const headerPick = "CONCAT(COALESCE(region, '-'), '/', COALESCE(CAST(prio AS STRING), '-'), '/', COALESCE(CAST(vip AS STRING), '-'))"

// TestSQLHeaderColumns reads the headers of each message as metadata
// columns, NULL where a message has no such header or one of another
// type, through a fanout exchange.
func TestSQLHeaderColumns(t *testing.T) {
	conn := connect(t)
	ex := freshExchange(t, conn, "fanout")
	q, out := "eddy-test-headers-"+randomSuffix(), "eddy-test-picked-"+randomSuffix()
	deleteAfter(t, conn, q)
	deleteAfter(t, conn, out)
	j := pickingJob(t, conn, q, ex, "", out, headerPick, "amount < 8")
	publishWithHeaders(t, conn, ex, 0, 20)
	want := []string{"0 eu/3/TRUE", "1 -/7/-", "2 -/-/-", "3 us/-/FALSE", "4 eu/3/TRUE", "5 -/7/-", "6 -/-/-", "7 us/-/FALSE"}
	got := readPicked(t, conn, j, out, len(want))
	j.stop()
	if !slices.Equal(got, want) {
		t.Fatalf("queue %s holds %v; want %v", out, got, want)
	}
}

// TestSQLHeaderPushdown runs a SQL job whose condition on a string header
// narrows the binding of the queue it declares to a headers exchange: only
// the orders with that header value pass (not those whose header has
// another type), and, once the job has stopped, the broker routes to the
// queue the messages with that header value and no other.
func TestSQLHeaderPushdown(t *testing.T) {
	conn := connect(t)
	ex := freshExchange(t, conn, "headers")
	q, out := "eddy-test-narrowed-"+randomSuffix(), "eddy-test-picked-"+randomSuffix()
	deleteAfter(t, conn, q)
	deleteAfter(t, conn, out)
	j := pickingJob(t, conn, q, ex, "", out, headerPick, "region = 'eu' AND amount > 10")
	publishWithHeaders(t, conn, ex, 0, 100)
	var want []string
	for i := 12; i < 100; i += 4 {
		want = append(want, fmt.Sprintf("%d eu/3/TRUE", i))
	}
	slices.Sort(want)
	got := readPicked(t, conn, j, out, len(want))
	j.stop()
	if !slices.Equal(got, want) {
		t.Fatalf("queue %s holds %v; want %v", out, got, want)
	}
	// The queue is bound with x-match all, region eu: of 40 more orders,
	// the broker routes to it the 10 with the string header region = eu
	// (and it holds those the job read but no completed checkpoint
	// acknowledged).
	publishWithHeaders(t, conn, ex, 100, 140)
	msgs := readQueue(t, conn, q)
	for _, m := range msgs {
		if r, ok := m.Headers["region"].(string); !ok || r != "eu" {
			t.Fatalf("queue %s holds a message with the headers %v; want region = eu alone", q, m.Headers)
		}
	}
	if len(msgs) < 10 {
		t.Fatalf("queue %s holds %d messages; want the 10 or more of region eu", q, len(msgs))
	}
}

// TestHeaderPushdownUnbound runs a job whose conditions on a header
// contradict each other: the queue it declares is left unbound, and the
// broker routes nothing to it.
func TestHeaderPushdownUnbound(t *testing.T) {
	conn := connect(t)
	ex := freshExchange(t, conn, "headers")
	q, out := "eddy-test-unbound-"+randomSuffix(), "eddy-test-picked-"+randomSuffix()
	deleteAfter(t, conn, q)
	deleteAfter(t, conn, out)
	j := pickingJob(t, conn, q, ex, "", out, "rk", "region = 'eu' AND region = 'us'")
	j.stop()
	publishWithHeaders(t, conn, ex, 0, 40)
	if ready, _ := inspect(t, conn, q); ready != 0 {
		t.Fatalf("the broker routed %d messages to queue %s, bound to nothing", ready, q)
	}
}

// TestExplainHeaderPushdown plans a query with a condition on a header
// and one on a column of the message: the scan takes the first.
func TestExplainHeaderPushdown(t *testing.T) {
	const ddl = `
CREATE TABLE orders (
  id BIGINT, amount BIGINT,
  region STRING METADATA FROM 'header.region' VIRTUAL
) WITH ('connector' = 'rabbitmq', 'url' = 'amqp://guest:guest@127.0.0.1:1/', 'queue' = 'orders',
  'exchange' = 'by-header', 'format' = 'json');
CREATE TABLE big (id BIGINT, amount BIGINT) WITH (
  'connector' = 'rabbitmq', 'url' = 'amqp://guest:guest@127.0.0.1:1/', 'queue' = 'big', 'format' = 'json');
`
	plan := explain(t, ddl, "INSERT INTO big SELECT id, amount FROM orders WHERE region = 'eu' AND amount > 10")
	for _, want := range []string{"filter=[(`region` = 'eu')]", "where=[(`amount` > 10)]"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan lacks %s:\n%s", want, plan)
		}
	}
}

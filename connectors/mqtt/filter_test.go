package mqtt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// topicTable is a table of lines with the metadata columns meta ("topic
// STRING"), after the physical columns part and n.
func topicTable(t testing.TB, meta ...string) *connector.Table {
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

// topicEq is the predicate topic = v on a table whose 'topic' metadata
// column is column col of its rows.
func topicEq(col int, v string) connector.Predicate {
	return connector.Predicate{Path: []int{col}, Op: connector.OpEqual, Value: v}
}

// TestTopicFilterAccepts offers conditions to table sources and checks
// which the source takes: equalities of the 'topic' column (VARCHAR) with
// a topic name, whatever the filters; nothing else.
func TestTopicFilterAccepts(t *testing.T) {
	opts := map[string]string{"url": brokerURL, "topic": "sensors/+/temperature,alarms/#", "format": "json"}
	tb := topicTable(t, "topic STRING", "qos INT")
	src, err := connector.OpenTableSource(connector.Default, "mqtt", opts, tb)
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
		{[]connector.Predicate{topicEq(2, "sensors/a/temperature")}, []int{0}},
		{[]connector.Predicate{n, topicEq(2, "alarms")}, []int{1}},
		{[]connector.Predicate{topicEq(2, "elsewhere"), topicEq(2, "alarms/x")}, []int{0, 1}},
		{[]connector.Predicate{topicEq(2, "sensors/+/temperature")}, nil},
		{[]connector.Predicate{topicEq(2, "alarms/#")}, nil},
		{[]connector.Predicate{topicEq(2, "")}, nil},
		{[]connector.Predicate{{Path: []int{2}, Op: connector.OpNotEqual, Value: "alarms"}}, nil},
		{[]connector.Predicate{{Path: []int{3}, Op: connector.OpEqual, Value: int32(1)}}, nil},
		{[]connector.Predicate{n}, nil},
	} {
		got, acc := fs.ApplyFilters(c.preds)
		if !slices.Equal(acc, c.want) || (got == nil) != (len(c.want) == 0) {
			t.Errorf("ApplyFilters(%v) accepted %v (source %v); want %v", c.preds, acc, got != nil, c.want)
		}
	}
	// A CHAR(n) column compares padded values, which no topic is.
	ch, err := connector.OpenTableSource(connector.Default, "mqtt", opts, topicTable(t, "topic CHAR(9)"))
	if err != nil {
		t.Fatal(err)
	}
	if _, acc := ch.(connector.FilterableSource).ApplyFilters([]connector.Predicate{topicEq(2, "alarms/ab")}); len(acc) != 0 {
		t.Errorf("a CHAR topic column took %v", acc)
	}
}

// alert is what the tests' jobs write.
type alert struct {
	N     int64  `json:"n"`
	Part  int    `json:"part"`
	Topic string `json:"topic"`
}

// TestSQLTopicPushdown runs a SQL job whose condition on the topic
// narrows its subscription, in MQTT 5 and 3.1.1: only the messages of the
// topic pass, and, once the job has stopped, its session holds the narrowed
// subscription alone: the broker queues for it the messages of that topic
// and of no other.
func TestSQLTopicPushdown(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			p, client := unique(t), unique(t)
			t.Cleanup(func() { dropSession(t, client+"-0") })
			out := dialRaw(t, unique(t)+"-sub", true, 0)
			defer out.close()
			out.subscribe(1, p+"/alerts")
			pub := dialRaw(t, unique(t)+"-pub", true, 0)
			defer pub.close()
			s := sql.NewSession(sql.WithParallelism(2))
			script := fmt.Sprintf(`
CREATE TABLE readings (
  part INT, n BIGINT, src STRING METADATA FROM 'topic' VIRTUAL
) WITH (
  'connector' = 'mqtt', 'url' = '%[1]s', 'topic' = '%[2]s/sensors/+', 'client-id' = '%[3]s',
  'format' = 'json', 'mqtt.version' = '%[4]s');
CREATE TABLE alerts (n BIGINT, part INT, topic STRING) WITH (
  'connector' = 'mqtt', 'url' = '%[1]s', 'topic' = '%[2]s/alerts', 'format' = 'json');
INSERT INTO alerts SELECT n, part, src FROM readings WHERE src = '%[2]s/sensors/1' AND MOD(n, 2) = 0;
`, brokerURL, p, client, version)
			if _, err := s.Execute(script); err != nil {
				t.Fatal(err)
			}
			env := checkpointed(t, 2)
			if err := s.Build(env); err != nil {
				t.Fatal(err)
			}
			j := startJob(t, env)
			// Publish rounds over four topics until alerts come: the first
			// rounds may precede the subscription.
			round := 0
			publishRound := func() {
				for k := 0; k < 4; k++ {
					pub.publish(fmt.Sprintf("%s/sensors/%d", p, k), line{Part: k, N: int64(round)}.json(), 1, false)
				}
				round++
			}
			deadline := time.Now().Add(time.Minute)
			for len(out.received()) < 20 {
				if err := j.failed(); err != nil {
					t.Fatalf("the job failed: %v", err)
				}
				if time.Now().After(deadline) {
					t.Fatalf("after %d rounds, %d alerts arrived", round, len(out.received()))
				}
				publishRound()
				time.Sleep(2 * time.Millisecond)
			}
			if err := j.stop(); err != nil {
				t.Fatal(err)
			}
			for _, m := range out.received() {
				var a alert
				if err := json.Unmarshal(m.payload, &a); err != nil {
					t.Fatalf("%q: %v", m.payload, err)
				}
				// The plan writes the constant of the condition as the
				// topic; the part says where the message was published.
				if a.Topic != p+"/sensors/1" || a.Part != 1 || a.N%2 != 0 {
					t.Fatalf("the job wrote %+v; want messages of %s/sensors/1 with an even n", a, p)
				}
			}
			// The job's session stays with its subscriptions: the broker
			// queues for it what matches them. Messages to every topic,
			// then a last one to the narrowed topic: once that arrives,
			// every message queued before it has.
			for i := 0; i < 10; i++ {
				for k := 0; k < 4; k++ {
					pub.publish(fmt.Sprintf("%s/sensors/%d", p, k), line{Part: k, N: -1}.json(), 1, false)
				}
			}
			pub.publish(p+"/sensors/1", line{Part: 1, N: -2}.json(), 1, false)
			sess := dialRaw(t, client+"-0", false, 3600)
			defer sess.close()
			if !sess.present {
				t.Fatalf("the broker kept no session for %s-0", client)
			}
			got := sess.waitUntil(time.Minute, "the last message queued for the session", func(ms []rawMsg) bool {
				return slices.ContainsFunc(ms, func(m rawMsg) bool { return strings.Contains(string(m.payload), `"n":-2`) })
			})
			for _, m := range got {
				if m.topic != p+"/sensors/1" {
					t.Fatalf("the broker queued a message of %s for the session narrowed to %s/sensors/1", m.topic, p)
				}
			}
			if len(got) < 11 {
				t.Fatalf("the broker queued %d messages for the session; want the 11 of %s/sensors/1", len(got), p)
			}
		})
	}
}

// TestSQLTopicPushdownNothing runs a job whose condition names a topic
// its filter does not match: it subscribes to nothing and ends at once,
// having written nothing.
func TestSQLTopicPushdownNothing(t *testing.T) {
	needBroker(t)
	p := unique(t)
	out := dialRaw(t, unique(t)+"-sub", true, 0)
	defer out.close()
	out.subscribe(1, p+"/alerts")
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
CREATE TABLE readings (part INT, n BIGINT, topic STRING METADATA VIRTUAL) WITH (
  'connector' = 'mqtt', 'url' = '%[1]s', 'topic' = '%[2]s/sensors/+', 'format' = 'json');
CREATE TABLE alerts (n BIGINT) WITH (
  'connector' = 'mqtt', 'url' = '%[1]s', 'topic' = '%[2]s/alerts', 'format' = 'json');
INSERT INTO alerts SELECT n FROM readings WHERE topic = '%[2]s/alarms/1';
`, brokerURL, p)
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := checkpointed(t, 2)
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := env.Execute(ctx, "nothing"); err != nil {
		t.Fatalf("the job reading no topic: %v", err)
	}
	if n := len(out.received()); n != 0 {
		t.Fatalf("the job reading no topic wrote %d alerts", n)
	}
}

// TestTopicPushdownStaleSession narrows the read of a session that an
// earlier run subscribed to the whole filter: the broker still sends it
// the other topics, which the reader leaves out.
func TestTopicPushdownStaleSession(t *testing.T) {
	needBroker(t)
	p, client := unique(t), unique(t)
	presubscribe(t, client, "", 0, p+"/sensors/+")
	pub := dialRaw(t, unique(t)+"-pub", true, 0)
	defer pub.close()
	for k := 0; k < 4; k++ {
		pub.publishLines(func(int) string { return fmt.Sprintf("%s/sensors/%d", p, k) }, k*100, k*100+100, 4)
	}
	out := dialRaw(t, unique(t)+"-sub", true, 0)
	defer out.close()
	out.subscribe(1, p+"/alerts")
	s := sql.NewSession(sql.WithParallelism(1))
	script := fmt.Sprintf(`
CREATE TABLE readings (part INT, n BIGINT, topic STRING METADATA VIRTUAL) WITH (
  'connector' = 'mqtt', 'url' = '%[1]s', 'topic' = '%[2]s/sensors/+', 'client-id' = '%[3]s', 'format' = 'json');
CREATE TABLE alerts (n BIGINT, topic STRING) WITH (
  'connector' = 'mqtt', 'url' = '%[1]s', 'topic' = '%[2]s/alerts', 'format' = 'json');
INSERT INTO alerts SELECT n, topic FROM readings WHERE topic = '%[2]s/sensors/3';
`, brokerURL, p, client)
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := checkpointed(t, 1)
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	j := startJob(t, env)
	// The session holds the 400 messages; those of sensors/3 come last.
	got := out.waitUntil(time.Minute, "the 100 messages of sensors/3", func(ms []rawMsg) bool {
		if err := j.failed(); err != nil {
			t.Fatalf("the job failed: %v", err)
		}
		return len(ms) >= 100
	})
	if err := j.stop(); err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		var a alert
		if err := json.Unmarshal(m.payload, &a); err != nil {
			t.Fatalf("%q: %v", m.payload, err)
		}
		if a.Topic != p+"/sensors/3" || a.N < 300 {
			t.Fatalf("the job wrote %+v; want the messages of %s/sensors/3 alone", a, p)
		}
	}
}

const explainDDL = `
CREATE TABLE readings (
  sensor STRING, celsius INT,
  topic STRING METADATA VIRTUAL,
  q INT METADATA FROM 'qos' VIRTUAL
) WITH ('connector' = 'mqtt', 'url' = 'tcp://127.0.0.1:1', 'topic' = 'sensors/+', 'format' = 'json');
CREATE TABLE alerts (sensor STRING, celsius INT) WITH (
  'connector' = 'mqtt', 'url' = 'tcp://127.0.0.1:1', 'topic' = 'alerts', 'format' = 'json');
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

// TestExplainTopicPushdown plans a query with a condition on the topic
// and one on a column of the message: the scan subscribes to the one
// topic, the Calc keeps the other condition. Planning connects to no
// broker.
func TestExplainTopicPushdown(t *testing.T) {
	const query = "INSERT INTO alerts SELECT sensor, celsius FROM readings WHERE topic = 'sensors/7' AND celsius > 40"
	want := `== Physical Plan ==
+- Sink(table=[alerts], fields=[` + "`sensor`, `celsius`" + `]), changelogMode=[I], parallelism=1
   +- Calc(select=[` + "`sensor`, `celsius`" + `], where=[(` + "`celsius`" + ` > 40)]), changelogMode=[I], parallelism=1
      +- TableSourceScan(table=[readings, filter=[(` + "`topic`" + ` = 'sensors/7')]], fields=[` + "`sensor`, `celsius`, `topic`, `qos`" + `]), changelogMode=[I], parallelism=1
`
	if got := explain(t, explainDDL, query); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
	}
	// Without pushdown the Calc tests both.
	off := explain(t, "SET 'table.optimizer.source.predicate-pushdown-enabled' = 'false';\n"+explainDDL, query)
	if strings.Contains(off, "filter=[") || !strings.Contains(off, "'sensors/7'") {
		t.Fatalf("with pushdown off, the plan is\n%s", off)
	}
	// A wildcard is a literal to SQL, not to MQTT, and <> is no
	// subscription: the Calc keeps them.
	for _, cond := range []string{"topic = 'sensors/+'", "topic <> 'sensors/7'", "topic LIKE 'sensors/%'", "q = 1"} {
		plan := explain(t, explainDDL, "INSERT INTO alerts SELECT sensor, celsius FROM readings WHERE "+cond)
		if strings.Contains(plan, "filter=[") {
			t.Fatalf("%s was pushed into the scan:\n%s", cond, plan)
		}
	}
}

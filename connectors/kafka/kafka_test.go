package kafka_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	_ "github.com/eddystream/eddy/connectors/kafka"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// The tests run against franz-go's in-process fake cluster (kfake), not a
// real broker.

type line struct {
	Part int   `json:"part"`
	N    int64 `json:"n"`
}

// startCluster starts a one-broker fake cluster and returns its address.
func startCluster(t testing.TB) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

func client(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

var topics atomic.Int64

// freshTopic creates a topic of a new name with parts partitions.
func freshTopic(t testing.TB, addr string, parts int32) string {
	t.Helper()
	name := fmt.Sprintf("t%d", topics.Add(1))
	createTopic(t, addr, name, parts)
	return name
}

func createTopic(t testing.TB, addr, name string, parts int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, parts, 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(context.Background(), client(t, addr))
	if err != nil {
		t.Fatal(err)
	}
	if ec := resp.Topics[0].ErrorCode; ec != 0 {
		t.Fatalf("creating topic %s: error code %d", name, ec)
	}
}

func addPartitions(t testing.TB, addr, name string, total int32) {
	t.Helper()
	req := kmsg.NewPtrCreatePartitionsRequest()
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = name, total
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(context.Background(), client(t, addr))
	if err != nil {
		t.Fatal(err)
	}
	if ec := resp.Topics[0].ErrorCode; ec != 0 {
		t.Fatalf("adding partitions to %s: error code %d", name, ec)
	}
}

// produceLines writes lines [from, to) to topic, line n to partition
// n mod parts.
func produceLines(t testing.TB, addr, topic string, from, to, parts int) []line {
	t.Helper()
	cl := client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var out []line
	var recs []*kgo.Record
	for n := from; n < to; n++ {
		l := line{Part: n % parts, N: int64(n)}
		b, _ := json.Marshal(l)
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(l.Part), Value: b})
		out = append(out, l)
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return out
}

// readTopic returns the committed messages of topic, waiting until no
// transaction is open on it (those a failed run left are aborted by the
// broker after their timeout).
func readTopic(t testing.TB, addr, topic string) []*kgo.Record {
	t.Helper()
	cl := client(t, addr)
	deadline := time.Now().Add(60 * time.Second)
	var ends map[int32]int64
	for {
		hw, lso := offsets(t, cl, topic, 0), offsets(t, cl, topic, 1)
		if fmt.Sprint(hw) == fmt.Sprint(lso) {
			ends = lso
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s keeps an open transaction: high watermarks %v, last stable offsets %v", topic, hw, lso)
		}
		time.Sleep(50 * time.Millisecond)
	}
	parts := map[int32]kgo.Offset{}
	left := 0
	for p, e := range ends {
		if e > 0 {
			parts[p] = kgo.NewOffset().AtStart()
			left++
		}
	}
	var out []*kgo.Record
	if left == 0 {
		return nil
	}
	rc := client(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	done := map[int32]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for len(done) < left {
		fs := rc.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading topic %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				out = append(out, r)
			}
			if r.Offset+1 >= ends[r.Partition] {
				done[r.Partition] = true
			}
		})
	}
	return out
}

// offsets returns the end offsets of topic's partitions: the high
// watermarks (isolation 0) or the last stable offsets (1).
func offsets(t testing.TB, cl *kgo.Client, topic string, isolation int8) map[int32]int64 {
	t.Helper()
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, p := range mresp.Topics[0].Partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p.Partition, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	for _, p := range resp.Topics[0].Partitions {
		out[p.Partition] = p.Offset
	}
	return out
}

func readLines(t testing.TB, addr, topic string) []line {
	t.Helper()
	var out []line
	for _, r := range readTopic(t, addr, topic) {
		var l line
		if err := json.Unmarshal(r.Value, &l); err != nil {
			t.Fatalf("topic %s holds %q: %v", topic, r.Value, err)
		}
		out = append(out, l)
	}
	return out
}

func openSource(t testing.TB, opts map[string]string) connector.Source[line] {
	t.Helper()
	src, err := connector.OpenSource[line](connector.Default, "kafka", opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestSourceConformance(t *testing.T) {
	addr := startCluster(t)
	var want []line
	for n := 0; n < 3000; n++ {
		want = append(want, line{Part: n % 3, N: int64(n)})
	}
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			topic := freshTopic(t, addr, 3)
			produceLines(t, addr, topic, 0, 3000, 3)
			return openSource(t, map[string]string{"properties.bootstrap.servers": addr, "topic": topic, "format": "json",
				"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}), nil
		},
		Want: want,
		Seq:  func(l line) int64 { return l.N },
	})
}

// TestUnboundedSourceConformance reads topics matching a pattern while
// they grow.
func TestUnboundedSourceConformance(t *testing.T) {
	addr := startCluster(t)
	var want []line
	for n := 0; n < 2000; n++ {
		want = append(want, line{Part: n % 2, N: int64(n)})
	}
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			topic := freshTopic(t, addr, 2)
			produceLines(t, addr, topic, 0, 800, 2)
			grow := func() { produceLines(t, addr, topic, 800, 2000, 2) }
			return openSource(t, map[string]string{"properties.bootstrap.servers": addr, "topic-pattern": topic + "|nothing-.*", "format": "json",
				"scan.startup.mode": "earliest-offset", "scan.topic-partition-discovery.interval": "50 ms"}), grow
		},
		Want:       want,
		Unbounded:  true,
		Seq:        func(l line) int64 { return l.N },
		PauseAfter: 400,
	})
}

func sinkInput(n int) []line {
	var in []line
	for i := 0; i < n; i++ {
		in = append(in, line{Part: i % 5, N: int64(i)})
	}
	return in
}

func TestSinkConformance(t *testing.T) {
	addr := startCluster(t)
	for _, g := range []struct {
		option    string
		guarantee connectortest.Guarantee
	}{{"exactly-once", connectortest.ExactlyOnce}, {"at-least-once", connectortest.AtLeastOnce}} {
		t.Run(g.option, func(t *testing.T) {
			connectortest.RunSink(t, connectortest.SinkCase[line]{
				Open: func(t testing.TB) (connector.Sink[line], func() []line) {
					topic := freshTopic(t, addr, 3)
					opts := map[string]string{"properties.bootstrap.servers": addr, "topic": topic, "format": "json",
						"sink.delivery-guarantee": g.option}
					if g.option == "exactly-once" {
						opts["sink.transactional-id-prefix"] = topic
						opts["properties.transaction.timeout.ms"] = "2000"
					}
					sink, err := connector.OpenSink[line](connector.Default, "kafka", opts)
					if err != nil {
						t.Fatal(err)
					}
					return sink, func() []line { return readLines(t, addr, topic) }
				},
				Input:     sinkInput(3000),
				Guarantee: g.guarantee,
			})
		})
	}
}

func TestOptionsConformance(t *testing.T) {
	connectortest.RunOptions[line](t, connectortest.OptionsCase{
		Name:  "kafka",
		Valid: map[string]string{"properties.bootstrap.servers": "localhost:9092", "topic": "orders", "format": "json"},
	})
}

func TestOptionErrors(t *testing.T) {
	base := func(kv ...string) map[string]string {
		m := map[string]string{"properties.bootstrap.servers": "localhost:9092", "format": "json"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		sink    bool
		opts    map[string]string
		key     string
		problem string
	}{
		{false, base(), "topic", "is required"},
		{false, base("topic", "a", "topic-pattern", "a.*"), "topic-pattern", "set one of them"},
		{false, base("topic", "a", "properties.max.poll.records", "5"), "properties.max.poll.records", "not a Kafka client property"},
		{false, base("topic", "a", "scan.startup.mode", "timestamp"), "scan.startup.timestamp-millis", "is required"},
		{false, base("topic", "a", "scan.startup.mode", "group-offsets"), "scan.startup.mode", "needs 'properties.group.id'"},
		{false, base("topic", "a", "scan.startup.mode", "specific-offsets", "scan.startup.specific-offsets", "partition:0;offset:1"), "scan.startup.specific-offsets", "partition:<n>,offset:<n>"},
		{false, base("topic", "a", "sink.partitioner", "fixed"), "sink.partitioner", "option of sinks"},
		{false, base("topic", "a", "csv.field-delimiter", ";"), "csv.field-delimiter", "which 'format' does not choose"},
		{true, base("topic", "a;b"), "topic", "one topic"},
		{true, base("topic", "a", "sink.delivery-guarantee", "exactly-once"), "sink.transactional-id-prefix", "is required"},
		{true, base("topic", "a", "scan.bounded.mode", "latest-offset"), "scan.bounded.mode", "option of sources"},
		{true, base("topic", "a", "properties.security.protocol", "SASL_SSL"), "properties.sasl.jaas.config", "is required"},
		{true, base("topic", "a", "key.format", "json"), "key.fields", "is required"},
	} {
		var err error
		if c.sink {
			_, err = connector.OpenSink[line](connector.Default, "kafka", c.opts)
		} else {
			_, err = connector.OpenSource[line](connector.Default, "kafka", c.opts)
		}
		if err == nil || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), c.problem) {
			t.Errorf("options %v: error %v, want one naming %q and saying %q", c.opts, err, c.key, c.problem)
		}
	}
}

// TestSQLTopicToTopic runs a SQL job from one topic to another, in JSON,
// exactly once, with the key and metadata columns.
// (The physical column topic shares its name with the topic metadata key.)
func TestSQLTopicToTopic(t *testing.T) {
	addr := startCluster(t)
	createTopic(t, addr, "orders", 4)
	createTopic(t, addr, "big_orders", 2)
	cl := client(t, addr)
	var recs []*kgo.Record
	for i := 0; i < 500; i++ {
		recs = append(recs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf(`{"id": %d, "customer": "c%d", "amount": %d, "topic": "from-json"}`, i, i%7, i))})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
CREATE TABLE orders (
  id BIGINT, customer STRING, amount BIGINT, topic STRING,
  part INT METADATA FROM 'partition', off BIGINT METADATA FROM 'offset', src STRING METADATA FROM 'topic'
) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'orders',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE big_orders (id BIGINT, customer STRING, doubled BIGINT, src STRING, part INT) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'big_orders',
  'key.format' = 'json', 'key.fields' = 'id', 'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'big-orders');
INSERT INTO big_orders SELECT id, UPPER(customer), amount * 2, src, part FROM orders WHERE amount >= 100 AND off >= 0 AND topic = 'from-json';
`, addr)
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := env.Execute(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	type val struct {
		Customer string `json:"customer"`
		Doubled  int64  `json:"doubled"`
		Src      string `json:"src"`
		Part     *int   `json:"part"`
	}
	var got []string
	for _, r := range readTopic(t, addr, "big_orders") {
		var k struct {
			ID int64 `json:"id"`
		}
		var v val
		if err := json.Unmarshal(r.Key, &k); err != nil {
			t.Fatalf("key %q: %v", r.Key, err)
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("value %q: %v", r.Value, err)
		}
		if v.Part == nil || v.Src != "orders" {
			t.Fatalf("value %q lacks the metadata", r.Value)
		}
		got = append(got, fmt.Sprintf("%d %s %d", k.ID, v.Customer, v.Doubled))
	}
	var want []string
	for i := 100; i < 500; i++ {
		want = append(want, fmt.Sprintf("%d C%d %d", i, i%7, 2*i))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("topic big_orders holds %d messages, want %d; first: %v", len(got), len(want), got[:min(5, len(got))])
	}
}

// TestExactlyOnceAcrossFailures copies a topic into another through a map
// that panics three times; what the output topic commits is what a run
// without failures commits.
func TestExactlyOnceAcrossFailures(t *testing.T) {
	const n = 20000
	addr := startCluster(t)
	in := freshTopic(t, addr, 4)
	produceLines(t, addr, in, 0, n, 4)
	run := func(panicAt map[int64]bool) (string, int) {
		out := freshTopic(t, addr, 3)
		env := eddy.NewEnvironment(eddy.WithParallelism(2),
			eddy.WithCheckpointing(10*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
			eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
		var seen atomic.Int64
		src := openSource(t, map[string]string{"properties.bootstrap.servers": addr, "topic": in, "format": "json",
			"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})
		sink, err := connector.OpenSink[line](connector.Default, "kafka", map[string]string{"properties.bootstrap.servers": addr, "topic": out,
			"format": "json", "sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": out, "properties.transaction.timeout.ms": "2000"})
		if err != nil {
			t.Fatal(err)
		}
		s := eddy.FromSource(env, "kafka in", src, eddy.NoWatermarks[line]())
		s = eddy.Map(s, func(l line) line {
			if k := seen.Add(1); panicAt[k] {
				panic(fmt.Sprintf("injected failure after %d records", k))
			}
			return line{Part: l.Part, N: l.N * 10}
		})
		eddy.WriteTo(s, "kafka out", sink)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		if err := env.Execute(ctx, "copy"); err != nil {
			t.Fatal(err)
		}
		return out, env.Restarts()
	}
	render := func(ls []line) []string {
		out := make([]string, len(ls))
		for i, l := range ls {
			out[i] = fmt.Sprintf("%d/%d", l.Part, l.N)
		}
		slices.Sort(out)
		return out
	}
	clean, r := run(nil)
	if r != 0 {
		t.Fatalf("the failure-free run restarted %d times", r)
	}
	want := render(readLines(t, addr, clean))
	if len(want) != n {
		t.Fatalf("the failure-free run committed %d records, want %d", len(want), n)
	}
	// The source reads the transactional topic to its end with
	// read_committed, past the transaction markers.
	var readBack []line
	for _, n := range readAll(t, map[string]string{"properties.bootstrap.servers": addr, "topic": clean, "format": "json",
		"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset", "properties.isolation.level": "read_committed"}) {
		readBack = append(readBack, line{Part: int(n/10) % 4, N: n})
	}
	if got := render(readBack); !slices.Equal(got, want) {
		t.Fatalf("the source read %d committed records of the clean run's output, want %d", len(got), len(want))
	}
	failing, r := run(map[int64]bool{3000: true, 9000: true, 15000: true})
	// Two failures may fall in one attempt (a subtask reaching the next
	// one while the job stops), so the job restarts once to three times.
	if r < 1 || r > 3 {
		t.Fatalf("the job restarted %d times, want 1 to 3", r)
	}
	got := render(readLines(t, addr, failing))
	if !slices.Equal(got, want) {
		seen := map[string]int{}
		var dups []string
		for _, k := range got {
			if seen[k]++; seen[k] == 2 {
				dups = append(dups, k)
			}
		}
		t.Fatalf("the output topic commits %d records (duplicates: %d, e.g. %v), want the failure-free run's %d", len(got), len(dups), dups[:min(5, len(dups))], len(want))
	}
}

// TestPartitionDiscovery adds partitions to a topic while a job reads it,
// and creates a topic its pattern matches.
func TestPartitionDiscovery(t *testing.T) {
	addr := startCluster(t)
	topic := freshTopic(t, addr, 1)
	produceLines(t, addr, topic, 0, 100, 1)
	src := openSource(t, map[string]string{"properties.bootstrap.servers": addr, "topic-pattern": topic + "(-extra)?", "format": "json",
		"scan.startup.mode": "earliest-offset", "scan.topic-partition-discovery.interval": "20 ms"})
	sink := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "kafka", src, eddy.NoWatermarks[line]()), "memory", sink.Sink())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "discovery") }()
	wait := func(n int) {
		wctx, wcancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer wcancel()
		if err := sink.WaitFor(wctx, n); err != nil {
			t.Fatalf("waiting for %d records: %v (have %d)", n, err, len(sink.Committed()))
		}
	}
	wait(100)
	addPartitions(t, addr, topic, 3)
	produceLines(t, addr, topic, 100, 400, 3)
	wait(400)
	createTopic(t, addr, topic+"-extra", 2)
	produceLines(t, addr, topic+"-extra", 400, 500, 2)
	wait(500)
	cancel()
	<-done
	var got []int64
	for _, l := range sink.Committed() {
		got = append(got, l.N)
	}
	slices.Sort(got)
	if len(got) != 500 || got[0] != 0 || got[499] != 499 || len(slices.Compact(got)) != 500 {
		t.Fatalf("the job read %d records, want 0..499 once each", len(sink.Committed()))
	}
}

// TestUpsertKafkaRoundTrip writes an aggregation of a changelog into an
// upsert-kafka table (upserts, and tombstones for groups whose rows are all
// deleted), checks the topic's last message per key, then reads the table
// back as an upsert changelog into an aggregation over it.
func TestUpsertKafkaRoundTrip(t *testing.T) {
	addr := startCluster(t)
	createTopic(t, addr, "events", 1)
	createTopic(t, addr, "totals", 2)
	createTopic(t, addr, "doubled", 1)
	type row struct {
		ID int64  `json:"id"`
		K  string `json:"k"`
		V  int64  `json:"v"`
	}
	rows := map[int64]row{}
	var msgs []*kgo.Record
	emit := func(op string, before, after *row) {
		b, _ := json.Marshal(map[string]any{"before": before, "after": after, "op": op})
		msgs = append(msgs, &kgo.Record{Topic: "events", Value: b})
	}
	for id := int64(0); id < 200; id++ {
		r := row{id, fmt.Sprintf("k%d", id%10), id}
		rows[id] = r
		emit("c", nil, &r)
	}
	for id := int64(0); id < 50; id++ {
		old, r := rows[id], rows[id]
		r.V += 1000
		rows[id] = r
		emit("u", &old, &r)
	}
	for id := int64(0); id < 200; id++ {
		if r, ok := rows[id]; ok && (id%10 == 3 || id%10 == 7 || id >= 100 && id < 110) {
			delete(rows, id)
			emit("d", &r, nil)
		}
	}
	if err := client(t, addr).ProduceSync(context.Background(), msgs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	type total struct{ total, n int64 }
	want := map[string]total{}
	for _, r := range rows {
		w := want[r.K]
		w.total += r.V
		w.n++
		want[r.K] = w
	}
	run := func(script string) {
		t.Helper()
		s := sql.NewSession(sql.WithParallelism(2))
		if _, err := s.Execute(script); err != nil {
			t.Fatal(err)
		}
		env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
		if err := s.Build(env); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := env.Execute(ctx, "upsert"); err != nil {
			t.Fatal(err)
		}
	}
	run(fmt.Sprintf(`
CREATE TABLE events (id BIGINT, k STRING, v BIGINT) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'events',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'debezium-json');
CREATE TABLE totals (k STRING, total BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'totals',
  'key.format' = 'json', 'value.format' = 'json');
INSERT INTO totals SELECT k, SUM(v), COUNT(*) FROM events GROUP BY k;
`, addr))
	// The topic's last message of each key is the key's row, or a
	// tombstone for the groups deleted.
	last := map[string][]byte{}
	for _, r := range readTopic(t, addr, "totals") {
		var k struct {
			K string `json:"k"`
		}
		if err := json.Unmarshal(r.Key, &k); err != nil {
			t.Fatalf("key %q: %v", r.Key, err)
		}
		last[k.K] = r.Value
	}
	got := map[string]total{}
	tombstones := 0
	for k, v := range last {
		if v == nil {
			tombstones++
			continue
		}
		var o struct {
			K     string `json:"k"`
			Total int64  `json:"total"`
			N     int64  `json:"n"`
		}
		if err := json.Unmarshal(v, &o); err != nil {
			t.Fatalf("value %q: %v", v, err)
		}
		if o.K != k {
			t.Fatalf("the value of key %s holds k = %s", k, o.K)
		}
		got[k] = total{o.Total, o.N}
	}
	if tombstones != 2 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("topic totals ends with %v and %d tombstones, want %v and 2 (k3, k7)", got, tombstones, want)
	}
	// Read back as an upsert changelog, through a projection, into another
	// upsert-kafka table, exactly once.
	run(fmt.Sprintf(`
CREATE TABLE totals (k STRING, total BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'totals',
  'key.format' = 'json', 'value.format' = 'json', 'value.fields-include' = 'ALL', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE doubled (k STRING, twice BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'doubled',
  'key.format' = 'json', 'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'doubled');
INSERT INTO doubled SELECT k, 2 * total FROM totals;
`, addr))
	wantTwice := map[string]int64{}
	for k, w := range want {
		wantTwice[k] = 2 * w.total
	}
	gotTwice := map[string]int64{}
	for _, r := range readTopic(t, addr, "doubled") {
		var k struct {
			K string `json:"k"`
		}
		if err := json.Unmarshal(r.Key, &k); err != nil {
			t.Fatalf("key %q: %v", r.Key, err)
		}
		if r.Value == nil {
			delete(gotTwice, k.K)
			continue
		}
		var v struct {
			Twice int64   `json:"twice"`
			K     *string `json:"k"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.K != nil {
			t.Fatalf("value %q: %v (the key's column must not be in it)", r.Value, err)
		}
		gotTwice[k.K] = v.Twice
	}
	if fmt.Sprint(gotTwice) != fmt.Sprint(wantTwice) {
		t.Fatalf("topic doubled ends with %v, want %v", gotTwice, wantTwice)
	}
	// The source's changelog: +U for each value, -D for each tombstone.
	rt := types.MustRowType(types.F("k", types.String()), types.F("total", types.BigInt()), types.F("n", types.BigInt()))
	src, err := connector.OpenTableSource(connector.Default, "upsert-kafka", map[string]string{"properties.bootstrap.servers": addr, "topic": "totals",
		"key.format": "json", "value.format": "json", "scan.bounded.mode": "latest-offset"}, &connector.Table{Schema: rt, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	if m := src.(connector.ChangelogSource).ChangelogMode(); m != changelog.Upsert {
		t.Fatalf("the upsert-kafka source declares %v, want an upsert changelog", m)
	}
	sink := connectortest.NewMemorySink[connector.TableRecord]()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	eddy.WriteTo(eddy.FromSource(env, "upsert-kafka", src, eddy.NoWatermarks[connector.TableRecord]()), "memory", sink.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := env.Execute(ctx, "changelog"); err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	kinds := map[changelog.Kind]int{}
	for _, c := range sink.Committed() {
		kinds[c.Kind]++
		k := c.Row.String(0)
		switch c.Kind {
		case changelog.UpdateAfter:
			state[k] = fmt.Sprintf("%d/%d", c.Row.Int64(1), c.Row.Int64(2))
		case changelog.Delete:
			if !c.Row.IsNull(1) {
				t.Fatalf("a deletion of %s carries more than the key", k)
			}
			delete(state, k)
		default:
			t.Fatalf("the source emitted a %v change", c.Kind)
		}
	}
	wantState := map[string]string{}
	for k, w := range want {
		wantState[k] = fmt.Sprintf("%d/%d", w.total, w.n)
	}
	if kinds[changelog.Delete] == 0 || fmt.Sprint(state) != fmt.Sprint(wantState) {
		t.Fatalf("the changelog (%v) ends with %v, want %v", kinds, state, wantState)
	}
}

func TestUpsertOptionErrors(t *testing.T) {
	rt := types.MustRowType(types.F("k", types.String()), types.F("v", types.BigInt()))
	keyed := &connector.Table{Schema: rt, PrimaryKey: []int{0}}
	base := func(kv ...string) map[string]string {
		m := map[string]string{"properties.bootstrap.servers": "localhost:9092", "topic": "t", "key.format": "json", "value.format": "json"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	for _, c := range []struct {
		table   *connector.Table
		opts    map[string]string
		problem string
	}{
		{keyed, base("key.format", ""), "'key.format' is required"},
		{keyed, base("value.format", "debezium-json"), "'value.format'"},
		{keyed, base("scan.startup.mode", "latest-offset"), "'scan.startup.mode' is unknown"},
		{keyed, base("topic", "a;b"), "one topic"},
		{&connector.Table{Schema: rt}, base(), "has no PRIMARY KEY"},
		{keyed, base("value.fields-include", "EXCEPT_KEY", "value.csv.field-delimiter", ";"), "'value.csv.field-delimiter'"},
	} {
		_, err := connector.OpenTableSink(connector.Default, "upsert-kafka", c.opts, c.table)
		if err == nil || !strings.Contains(err.Error(), c.problem) {
			t.Errorf("options %v: error %v, want one saying %q", c.opts, err, c.problem)
		}
	}
	if _, err := connector.OpenSource[line](connector.Default, "upsert-kafka", base()); err == nil || !strings.Contains(err.Error(), "PRIMARY KEY") {
		t.Errorf("an upsert-kafka source of Go values: error %v, want one saying it needs a table", err)
	}
}

// readAll runs a job reading the source of opts to its end (a bounded
// mode) and returns the N of the records, sorted.
func readAll(t *testing.T, opts map[string]string) []int64 {
	t.Helper()
	src := openSource(t, opts)
	sink := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	eddy.WriteTo(eddy.FromSource(env, "kafka", src, eddy.NoWatermarks[line]()), "memory", sink.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := env.Execute(ctx, "read"); err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, l := range sink.Committed() {
		out = append(out, l.N)
	}
	slices.Sort(out)
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for n := from; n < to; n++ {
		out = append(out, n)
	}
	return out
}

func commitGroup(t *testing.T, cl *kgo.Client, group, topic string, offsets map[int32]int64) {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	rt.TopicID = mresp.Topics[0].TopicID
	for p, o := range offsets {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = p, o, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 {
			t.Fatalf("committing offsets of group %s: error code %d", group, p.ErrorCode)
		}
	}
}

// TestStartupAndBoundedModes reads a topic of two partitions, lines 0-99
// with timestamps 1000+n ms, line n at offset n/2 of partition n%2.
func TestStartupAndBoundedModes(t *testing.T) {
	addr := startCluster(t)
	topic := freshTopic(t, addr, 2)
	cl := client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for n := 0; n < 100; n++ {
		b, _ := json.Marshal(line{Part: n % 2, N: int64(n)})
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(n % 2), Value: b, Timestamp: time.UnixMilli(int64(1000 + n))})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	commitGroup(t, cl, "g1", topic, map[int32]int64{0: 10, 1: 20})
	opts := func(kv ...string) map[string]string {
		m := map[string]string{"properties.bootstrap.servers": addr, "topic": topic, "format": "json", "scan.bounded.mode": "latest-offset"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	var from80 []int64
	for n := int64(0); n < 100; n++ {
		if n%2 == 0 && n >= 20 || n%2 == 1 && n >= 41 {
			from80 = append(from80, n)
		}
	}
	for _, c := range []struct {
		name string
		opts map[string]string
		want []int64
	}{
		{"earliest", opts("scan.startup.mode", "earliest-offset"), span(0, 100)},
		{"latest", opts("scan.startup.mode", "latest-offset"), nil},
		{"timestamp", opts("scan.startup.mode", "timestamp", "scan.startup.timestamp-millis", "1090"), span(90, 100)},
		{"specific offsets", opts("scan.startup.mode", "specific-offsets", "scan.startup.specific-offsets", "partition:0,offset:10;partition:1,offset:20"), from80},
		{"group offsets", opts("properties.group.id", "g1"), from80},
		{"group offsets, none committed", opts("properties.group.id", "g2", "properties.auto.offset.reset", "latest"), nil},
		{"bounded by timestamp", opts("scan.startup.mode", "earliest-offset", "scan.bounded.mode", "timestamp", "scan.bounded.timestamp-millis", "1010"), span(0, 10)},
		{"bounded by offsets", opts("scan.startup.mode", "earliest-offset", "scan.bounded.mode", "specific-offsets", "scan.bounded.specific-offsets", "partition:0,offset:3;partition:1,offset:1"), []int64{0, 1, 2, 4}},
		{"bounded by group offsets", opts("scan.startup.mode", "earliest-offset", "scan.bounded.mode", "group-offsets", "properties.group.id", "g1"), func() []int64 {
			var out []int64
			for n := int64(0); n < 100; n++ {
				if n%2 == 0 && n < 20 || n%2 == 1 && n < 41 {
					out = append(out, n)
				}
			}
			return out
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := readAll(t, c.opts); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("read %v, want %v", got, c.want)
			}
		})
	}
	_, err := connector.OpenSource[line](connector.Default, "kafka", opts("properties.group.id", "g2"))
	if err != nil {
		t.Fatal(err)
	}
	src := openSource(t, opts("properties.group.id", "g2"))
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	eddy.WriteTo(eddy.FromSource(env, "kafka", src, eddy.NoWatermarks[line]()), "memory", connectortest.NewMemorySink[line]().Sink())
	if err := env.Execute(context.Background(), "no offsets"); err == nil || !strings.Contains(err.Error(), "properties.auto.offset.reset") {
		t.Fatalf("group-offsets without committed offsets or a reset policy: error %v, want one naming 'properties.auto.offset.reset'", err)
	}
}

// TestGroupOffsetsCommitted checks that an unbounded source commits the
// offsets of completed checkpoints to its consumer group.
func TestGroupOffsetsCommitted(t *testing.T) {
	addr := startCluster(t)
	topic := freshTopic(t, addr, 2)
	produceLines(t, addr, topic, 0, 100, 2)
	src := openSource(t, map[string]string{"properties.bootstrap.servers": addr, "topic": topic, "format": "json",
		"properties.group.id": "watchers", "properties.auto.offset.reset": "earliest"})
	sink := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "kafka", src, eddy.NoWatermarks[line]()), "memory", sink.Sink())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "group") }()
	cl := client(t, addr)
	deadline := time.Now().Add(60 * time.Second)
	for {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = "watchers"
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{0, 1}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int32]int64{}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				got[p.Partition] = p.Offset
			}
		}
		if got[0] == 50 && got[1] == 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group watchers committed %v, want 50 for both partitions", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
}

// TestSinkOptions writes with each partitioner, the 'none' guarantee and
// csv values.
func TestSinkOptions(t *testing.T) {
	addr := startCluster(t)
	for _, c := range []struct {
		opts  map[string]string
		check func(t *testing.T, recs []*kgo.Record)
	}{
		{map[string]string{"sink.partitioner": "fixed", "format": "json"}, func(t *testing.T, recs []*kgo.Record) {
			for _, r := range recs {
				var l line
				_ = json.Unmarshal(r.Value, &l)
				if r.Partition > 1 {
					t.Fatalf("a fixed partitioner at parallelism 2 wrote to partition %d", r.Partition)
				}
			}
		}},
		{map[string]string{"sink.partitioner": "round-robin", "format": "json", "sink.delivery-guarantee": "none"}, func(t *testing.T, recs []*kgo.Record) {
			per := map[int32]int{}
			for _, r := range recs {
				per[r.Partition]++
			}
			if len(per) != 3 {
				t.Fatalf("round-robin wrote to partitions %v, want all three", per)
			}
		}},
		{map[string]string{"value.format": "csv", "properties.compression.type": "zstd", "properties.linger.ms": "5"}, func(t *testing.T, recs []*kgo.Record) {
			if string(recs[0].Value) == "" || strings.Contains(string(recs[0].Value), "{") {
				t.Fatalf("a csv value is %q", recs[0].Value)
			}
		}},
	} {
		topic := freshTopic(t, addr, 3)
		opts := map[string]string{"properties.bootstrap.servers": addr, "topic": topic}
		for k, v := range c.opts {
			opts[k] = v
		}
		sink, err := connector.OpenSink[line](connector.Default, "kafka", opts)
		if err != nil {
			t.Fatal(err)
		}
		env := eddy.NewEnvironment(eddy.WithParallelism(2))
		eddy.WriteTo(eddy.FromSlice(env, sinkInput(300), eddy.NoWatermarks[line]()), "kafka", sink)
		if err := env.Execute(context.Background(), "write"); err != nil {
			t.Fatal(err)
		}
		recs := readTopic(t, addr, topic)
		if len(recs) != 300 {
			t.Fatalf("options %v: the topic holds %d records, want 300", c.opts, len(recs))
		}
		c.check(t, recs)
	}
}

// TestLingeringTransactionsAborted leaves a transaction of the sink's
// prefix open on the broker, as a killed run does, and one of another
// prefix, then runs an exactly-once job writing the same topic: the sink
// aborts its prefix's transaction when it starts, so that the topic's last
// stable offset moves past it and consumers reading committed records see
// the job's output (rather than nothing for transaction.timeout.ms), and
// leaves the other prefix's alone.
func TestLingeringTransactionsAborted(t *testing.T) {
	addr := startCluster(t)
	out := freshTopic(t, addr, 1)
	open := func(id string) {
		cl := client(t, addr, kgo.TransactionalID(id), kgo.TransactionTimeout(15*time.Minute), kgo.DefaultProduceTopic(out))
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(context.Background(), kgo.StringRecord(`{"part": -1, "n": -1}`)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	open(out + "-0-5")     // a killed run's
	other := out + "x-0-1" // another job's
	open(other)
	ongoing := func() map[string]bool {
		req := kmsg.NewPtrListTransactionsRequest()
		req.StateFilters = []string{"Ongoing"}
		got := map[string]bool{}
		for _, shard := range client(t, addr).RequestSharded(context.Background(), req) {
			if shard.Err != nil {
				t.Fatal(shard.Err)
			}
			for _, s := range shard.Resp.(*kmsg.ListTransactionsResponse).TransactionStates {
				got[s.TransactionalID] = true
			}
		}
		return got
	}
	if o := ongoing(); !o[out+"-0-5"] || !o[other] {
		t.Fatalf("the broker lists the open transactions %v, want both of the test's", o)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(10*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	sink, err := connector.OpenSink[line](connector.Default, "kafka", map[string]string{"properties.bootstrap.servers": addr, "topic": out,
		"format": "json", "sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": out})
	if err != nil {
		t.Fatal(err)
	}
	eddy.WriteTo(eddy.FromSlice(env, sinkInput(100), eddy.NoWatermarks[line]()), "kafka out", sink)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := env.Execute(ctx, "write"); err != nil {
		t.Fatal(err)
	}
	// The other prefix's transaction still holds the last stable offset:
	// end it before reading.
	if o := ongoing(); o[out+"-0-5"] || !o[other] {
		t.Fatalf("after the job, the open transactions are %v: want the other prefix's only", o)
	}
	fencer := client(t, addr, kgo.TransactionalID(other))
	if _, _, err := fencer.ProducerID(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, addr, out)
	if len(got) != 100 {
		t.Fatalf("the topic commits %d records, want the job's 100: %v", len(got), got)
	}
	for _, l := range got {
		if l.N < 0 {
			t.Fatalf("a record of an aborted transaction was committed: %v", l)
		}
	}
}

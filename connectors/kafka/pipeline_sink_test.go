package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mysqlclient "github.com/go-mysql-org/go-mysql/client"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/connectors/mysqlcdc" // the pipelines' mysql source
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// The pipeline sink's tests run against franz-go's in-process fake
// cluster (kfake), not a real broker.

// startAutoCluster starts a one-broker fake cluster that creates the
// topics producers ask for, with three partitions, and returns its address.
func startAutoCluster(t testing.TB) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

// pipelineDefinition parses a pipeline whose sink block has keys sink.
func pipelineDefinition(t testing.TB, sink string) *pipeline.Definition {
	t.Helper()
	src := "source:\n  type: mysql\n  tables: shop.\\.*\nsink:\n  type: kafka\n" + sink + "pipeline:\n  schema.change.behavior: evolve\n"
	d, err := pipeline.Parse([]byte(src), "kafka.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// openPipelineSink makes the sink of d's sink block, as eddy pipeline does.
func openPipelineSink(t testing.TB, d *pipeline.Definition) connector.Sink[pipeline.Event] {
	t.Helper()
	f, err := pipeline.Sinks.Connector("kafka")
	if err != nil {
		t.Fatal(err)
	}
	spec := f.Spec()
	opts, err := spec.Validate(d.Sink.Options)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.(connector.SinkFactory).NewSink(connector.Context{Name: "kafka sink", Options: opts, RecordType: reflect.TypeFor[pipeline.Event](), Registry: pipeline.Sinks})
	if err != nil {
		t.Fatal(err)
	}
	return s.(connector.Sink[pipeline.Event])
}

// shopEvents are the events of two tables: inserts, updates (one without
// its -U, as PostgreSQL's default replica identity gives them, between the
// -U and +U of another table's update), deletes,
// and a column added to one table midway. Each element is what the source
// emits at once: an update's -U and +U together.
func shopEvents() [][]pipeline.Event {
	orders, users := pipeline.TableID{Schema: "shop", Table: "orders"}, pipeline.TableID{Schema: "shop", Table: "users"}
	o1 := &pipeline.Schema{Columns: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("item", types.String()), types.F("qty", types.Int())), PrimaryKey: []string{"id"}, Version: 1}
	o2 := &pipeline.Schema{Columns: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("item", types.String()), types.F("qty", types.Int()), types.F("note", types.String())), PrimaryKey: []string{"id"}, Version: 2}
	u1 := &pipeline.Schema{Columns: types.MustRowType(types.F("id", types.BigInt().NotNull()), types.F("name", types.String())), PrimaryKey: []string{"id"}, Version: 1}
	row := func(id pipeline.TableID, s *pipeline.Schema, kind changelog.Kind, vals ...types.Value) pipeline.Event {
		return pipeline.Event{Kind: pipeline.DataChange, Table: id, Schema: s, Change: changelog.Of(kind, types.MustBuildRow(s.Columns, nil, vals...))}
	}
	return [][]pipeline.Event{
		{{Kind: pipeline.CreateTable, Table: orders, Schema: o1}},
		{{Kind: pipeline.CreateTable, Table: users, Schema: u1}},
		{row(orders, o1, changelog.Insert, int32(1), "apple", int32(3))},
		{row(orders, o1, changelog.Insert, int32(2), "pear", int32(5))},
		{row(users, u1, changelog.Insert, int64(10), "ann")},
		{row(orders, o1, changelog.UpdateBefore, int32(1), "apple", int32(3)), row(orders, o1, changelog.UpdateAfter, int32(1), "apple", int32(4))},
		{row(users, u1, changelog.Insert, int64(11), "bob")},
		{row(users, u1, changelog.Delete, int64(10), "ann")},
		{{Kind: pipeline.AlterTable, Table: orders, Schema: o2, Changes: []pipeline.SchemaChange{{Kind: pipeline.AddColumn, Column: "note", Type: types.String(), Position: 3}}}},
		{row(orders, o2, changelog.Insert, int32(3), "fig", int32(1), "gift")},
		// Another table's change between the -U and the +U of an update, as
		// when several source subtasks feed one sink subtask.
		{row(orders, o2, changelog.UpdateBefore, int32(2), "pear", int32(5), nil), row(users, u1, changelog.UpdateAfter, int64(11), "bobby"),
			row(orders, o2, changelog.UpdateAfter, int32(2), "pear", int32(6), "x")},
		{row(orders, o2, changelog.Delete, int32(1), "apple", int32(4), nil)},
	}
}

// runPipeline runs the events through the pipeline d (its transform,
// route and schema operator) into its kafka sink.
func runPipeline(t *testing.T, d *pipeline.Definition, events [][]pipeline.Event) {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	src := eddy.FromSlice(env, events, eddy.NoWatermarks[[]pipeline.Event]()).Parallelism(1)
	flat := eddy.FlatMap(src, func(es []pipeline.Event, emit func(pipeline.Event)) {
		for _, e := range es {
			emit(e)
		}
	}).Parallelism(1)
	// The source and the transform run as one subtask, keeping the order
	// of the events; the schema operator and the sink as two, each with
	// its tables.
	eddy.WriteTo(pipeline.Apply(flat, d).Parallelism(2), "kafka", openPipelineSink(t, d))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if err := env.Execute(ctx, "pipeline kafka"); err != nil {
		t.Fatal(err)
	}
}

// message is a message read back, its headers as "k=v" in order.
type message struct {
	partition  int32
	key, value string
	headers    []string
}

func readMessages(t *testing.T, addr, topic string) []message {
	t.Helper()
	var out []message
	for _, r := range readTopic(t, addr, topic) {
		m := message{partition: r.Partition, key: string(r.Key), value: string(r.Value)}
		for _, h := range r.Headers {
			m.headers = append(m.headers, h.Key+"="+string(h.Value))
		}
		out = append(out, m)
	}
	return out
}

// byKey returns each key's values in the order of its partition, having
// checked that every message of a key is in one partition.
func byKey(t *testing.T, topic string, ms []message) map[string][]string {
	t.Helper()
	out, parts := map[string][]string{}, map[string]int32{}
	for _, m := range ms {
		if p, ok := parts[m.key]; ok && p != m.partition {
			t.Errorf("topic %s: key %s is in partitions %d and %d", topic, m.key, p, m.partition)
		}
		parts[m.key] = m.partition
		out[m.key] = append(out[m.key], m.value)
	}
	return out
}

// TestPipelineSinkDebeziumTopicsAndHeaders writes two tables' changes
// with the default value format, debezium-json: each table to its own
// topic (one named after its table id, one as the mapping says), by the
// hash of the key, with the table id and custom headers; and with
// canal-json, a csv key and one topic for both tables, all to partition 0.
func TestPipelineSinkDebeziumTopicsAndHeaders(t *testing.T) {
	addr := startAutoCluster(t)
	t.Run("debezium-json", func(t *testing.T) {
		d := pipelineDefinition(t, "  properties.bootstrap.servers: "+addr+"\n"+
			"  sink.tableId-to-topic.mapping: shop.users:people\n"+
			"  partition.strategy: hash-by-key\n"+
			"  sink.add-tableId-to-header-enabled: true\n"+
			"  sink.custom-header: origin:eddy,env:test;v:1\n")
		runPipeline(t, d, shopEvents())
		src := `,"source":{"db":"shop","table":"orders"}}`
		want := map[string]map[string][]string{
			"shop.orders": {
				`{"TableId":"shop.orders","id":1}`: {
					`{"before":null,"after":{"id":1,"item":"apple","qty":3},"op":"c"` + src,
					`{"before":{"id":1,"item":"apple","qty":3},"after":{"id":1,"item":"apple","qty":4},"op":"u"` + src,
					`{"before":{"id":1,"item":"apple","qty":4,"note":null},"after":null,"op":"d"` + src,
				},
				`{"TableId":"shop.orders","id":2}`: {
					`{"before":null,"after":{"id":2,"item":"pear","qty":5},"op":"c"` + src,
					`{"before":{"id":2,"item":"pear","qty":5,"note":null},"after":{"id":2,"item":"pear","qty":6,"note":"x"},"op":"u"` + src,
				},
				`{"TableId":"shop.orders","id":3}`: {
					`{"before":null,"after":{"id":3,"item":"fig","qty":1,"note":"gift"},"op":"c"` + src,
				},
			},
			"people": {
				`{"TableId":"shop.users","id":10}`: {
					`{"before":null,"after":{"id":10,"name":"ann"},"op":"c","source":{"db":"shop","table":"users"}}`,
					`{"before":{"id":10,"name":"ann"},"after":null,"op":"d","source":{"db":"shop","table":"users"}}`,
				},
				`{"TableId":"shop.users","id":11}`: {
					`{"before":null,"after":{"id":11,"name":"bob"},"op":"c","source":{"db":"shop","table":"users"}}`,
					`{"before":null,"after":{"id":11,"name":"bobby"},"op":"u","source":{"db":"shop","table":"users"}}`,
				},
			},
		}
		for topic, keys := range want {
			ms := readMessages(t, addr, topic)
			got := byKey(t, topic, ms)
			if !reflect.DeepEqual(got, keys) {
				t.Errorf("topic %s holds\n%s\nwant\n%s", topic, render(got), render(keys))
			}
			table := strings.TrimPrefix(strings.Split(ms[0].key, `"`)[3], "shop.")
			for _, m := range ms {
				if h := []string{"namespace=", "schemaName=shop", "tableName=" + table, "origin=eddy", "env=test", "v=1"}; !slices.Equal(m.headers, h) {
					t.Errorf("topic %s: a message has headers %q, want %q", topic, m.headers, h)
				}
			}
		}
		parts := map[int32]bool{}
		for _, m := range readMessages(t, addr, "shop.orders") {
			parts[m.partition] = true
		}
		if len(parts) < 2 {
			t.Errorf("hash-by-key wrote the three keys of shop.orders to partitions %v of three, want them spread", parts)
		}
	})
	t.Run("canal-json", func(t *testing.T) {
		createTopic(t, addr, "cdc-all", 3)
		d := pipelineDefinition(t, "  properties.bootstrap.servers: "+addr+"\n"+
			"  topic: cdc-all\n"+
			"  value.format: canal-json\n"+
			"  key.format: csv\n")
		runPipeline(t, d, shopEvents())
		orders := `,"database":"shop","table":"orders","pkNames":["id"]}`
		users := `,"database":"shop","table":"users","pkNames":["id"]}`
		want := map[string][]string{
			"shop.orders": {
				`shop.orders,1 {"old":null,"data":[{"id":1,"item":"apple","qty":3}],"type":"INSERT"` + orders,
				`shop.orders,2 {"old":null,"data":[{"id":2,"item":"pear","qty":5}],"type":"INSERT"` + orders,
				`shop.orders,1 {"old":[{"id":1,"item":"apple","qty":3}],"data":[{"id":1,"item":"apple","qty":4}],"type":"UPDATE"` + orders,
				`shop.orders,3 {"old":null,"data":[{"id":3,"item":"fig","qty":1,"note":"gift"}],"type":"INSERT"` + orders,
				`shop.orders,2 {"old":[{"id":2,"item":"pear","qty":5,"note":null}],"data":[{"id":2,"item":"pear","qty":6,"note":"x"}],"type":"UPDATE"` + orders,
				`shop.orders,1 {"old":null,"data":[{"id":1,"item":"apple","qty":4,"note":null}],"type":"DELETE"` + orders,
			},
			"shop.users": {
				`shop.users,10 {"old":null,"data":[{"id":10,"name":"ann"}],"type":"INSERT"` + users,
				`shop.users,11 {"old":null,"data":[{"id":11,"name":"bob"}],"type":"INSERT"` + users,
				`shop.users,10 {"old":null,"data":[{"id":10,"name":"ann"}],"type":"DELETE"` + users,
				`shop.users,11 {"old":null,"data":[{"id":11,"name":"bobby"}],"type":"UPDATE"` + users,
			},
		}
		got := map[string][]string{}
		for _, m := range readMessages(t, addr, "cdc-all") {
			if m.partition != 0 {
				t.Errorf("all-to-zero wrote a message to partition %d: %s", m.partition, m.value)
			}
			if len(m.headers) != 0 {
				t.Errorf("a message has headers %q, want none", m.headers)
			}
			table, _, _ := strings.Cut(m.key, ",")
			got[table] = append(got[table], m.key+" "+m.value)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("topic cdc-all holds\n%s\nwant\n%s", render(got), render(want))
		}
	})
}

func render(m map[string][]string) string {
	var b strings.Builder
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s:\n", k)
		for _, v := range m[k] {
			fmt.Fprintf(&b, "    %s\n", v)
		}
	}
	return b.String()
}

// TestPipelineSinkOptionErrors checks that mistaken sink blocks are
// refused, naming the key.
func TestPipelineSinkOptionErrors(t *testing.T) {
	f, err := pipeline.Sinks.Connector("kafka")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{}, "properties.bootstrap.servers"},
		{map[string]string{"properties.bootstrap.servers": "k:9092", "value.format": "json"}, "value.format"},
		{map[string]string{"properties.bootstrap.servers": "k:9092", "partition.strategy": "fixed"}, "partition.strategy"},
		{map[string]string{"properties.bootstrap.servers": "k:9092", "sink.tableId-to-topic.mapping": "shop.orders"}, "sink.tableId-to-topic.mapping"},
		{map[string]string{"properties.bootstrap.servers": "k:9092", "sink.tableId-to-topic.mapping": "shop.orders:o", "topic": "all"}, "sink.tableId-to-topic.mapping"},
		{map[string]string{"properties.bootstrap.servers": "k:9092", "sink.custom-header": "novalue"}, "sink.custom-header"},
		{map[string]string{"properties.bootstrap.servers": "k:9092", "sink.delivery-guarantee": "exactly-once"}, "sink.transactional-id-prefix"},
		{map[string]string{"properties.bootstrap.servers": "k:9092", "properties.colour": "blue"}, "properties.colour"},
		{map[string]string{"properties.bootstrap.servers": "k:9092", "sink.debezium-json.include-schema.enabled": "yes"}, "sink.debezium-json.include-schema.enabled"},
		{map[string]string{"properties.bootstrap.servers": "k:9092", "sink.debezium-json.include-schema.enabled": "true", "value.format": "canal-json"}, "sink.debezium-json.include-schema.enabled"},
	} {
		spec := f.Spec()
		opts, err := spec.Validate(c.opts)
		if err == nil {
			_, err = f.(connector.SinkFactory).NewSink(connector.Context{Name: "kafka sink", Options: opts, RecordType: reflect.TypeFor[pipeline.Event](), Registry: pipeline.Sinks})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("options %v: error %v, want one naming %s", c.opts, err, c.want)
		}
	}
}

// TestPipelineSinkExactlyOnceAcrossFailures writes two tables, one of
// which gains a column midway, exactly once through injected failures:
// what a read_committed consumer reads equals a failure-free run's output.
func TestPipelineSinkExactlyOnceAcrossFailures(t *testing.T) {
	const n, keys = 6000, 97
	a, b := pipeline.TableID{Schema: "shop", Table: "a"}, pipeline.TableID{Schema: "shop", Table: "b"}
	id := types.F("id", types.BigInt().NotNull())
	a1 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("v", types.Int())), PrimaryKey: []string{"id"}, Version: 1}
	a2 := &pipeline.Schema{Columns: types.MustRowType(id, types.F("v", types.Int()), types.F("w", types.String())), PrimaryKey: []string{"id"}, Version: 2}
	bs := &pipeline.Schema{Columns: types.MustRowType(id, types.F("s", types.String())), PrimaryKey: []string{"id"}, Version: 1}
	events := [][]pipeline.Event{{{Kind: pipeline.CreateTable, Table: a, Schema: a1}}, {{Kind: pipeline.CreateTable, Table: b, Schema: bs}}}
	ev := func(tbl pipeline.TableID, s *pipeline.Schema, kind changelog.Kind, vals ...types.Value) pipeline.Event {
		return pipeline.Event{Kind: pipeline.DataChange, Table: tbl, Schema: s, Change: changelog.Of(kind, types.MustBuildRow(s.Columns, nil, vals...))}
	}
	aRows, bRows := map[int64][]types.Value{}, map[int64]string{}
	as := a1
	for i := int64(0); i < n; i++ {
		k := i % keys
		switch {
		case i == n/2:
			as = a2
			events = append(events, []pipeline.Event{{Kind: pipeline.AlterTable, Table: a, Schema: a2,
				Changes: []pipeline.SchemaChange{{Kind: pipeline.AddColumn, Column: "w", Type: types.String(), Position: 2}}}})
			for k, v := range aRows {
				aRows[k] = append(v[:2:2], nil)
			}
		case i%5 == 0:
			if old, ok := bRows[k]; ok && i%2 == 0 {
				events = append(events, []pipeline.Event{ev(b, bs, changelog.Delete, k, old)})
				delete(bRows, k)
			} else if ok {
				events = append(events, []pipeline.Event{ev(b, bs, changelog.UpdateBefore, k, old), ev(b, bs, changelog.UpdateAfter, k, fmt.Sprint("s", i))})
				bRows[k] = fmt.Sprint("s", i)
			} else {
				events = append(events, []pipeline.Event{ev(b, bs, changelog.Insert, k, fmt.Sprint("s", i))})
				bRows[k] = fmt.Sprint("s", i)
			}
		default:
			vals := []types.Value{k, int32(i)}
			if as == a2 {
				vals = append(vals, fmt.Sprint("w", i))
			}
			if old, ok := aRows[k]; ok {
				events = append(events, []pipeline.Event{ev(a, as, changelog.UpdateBefore, old...), ev(a, as, changelog.UpdateAfter, vals...)})
			} else {
				events = append(events, []pipeline.Event{ev(a, as, changelog.Insert, vals...)})
			}
			aRows[k] = vals
		}
	}
	run := func(prefix string, panicAt map[int64]bool) (string, int) {
		addr := startAutoCluster(t)
		d := pipelineDefinition(t, "  properties.bootstrap.servers: "+addr+"\n"+
			"  partition.strategy: hash-by-key\n"+
			"  sink.delivery-guarantee: exactly-once\n"+
			"  sink.transactional-id-prefix: "+prefix+"\n"+
			"  properties.transaction.timeout.ms: 2000\n")
		env := eddy.NewEnvironment(eddy.WithParallelism(1),
			eddy.WithCheckpointing(15*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
			eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
		var mu sync.Mutex
		src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(events)), RatePerSecond: 20000},
			func(i int64) int64 { return i }, eddy.NoWatermarks[int64]()).Parallelism(1)
		flat := eddy.FlatMap(src, func(i int64, emit func(pipeline.Event)) {
			mu.Lock()
			boom := panicAt[i]
			delete(panicAt, i)
			mu.Unlock()
			if boom {
				panic(fmt.Sprintf("injected failure at element %d", i))
			}
			for _, e := range events[i] {
				emit(e)
			}
		}).Parallelism(1)
		eddy.WriteTo(pipeline.Apply(flat, d).Parallelism(2), "kafka", openPipelineSink(t, d))
		ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
		defer cancel()
		if err := env.Execute(ctx, "pipeline kafka exactly once"); err != nil {
			t.Fatal(err)
		}
		return addr, env.Restarts()
	}
	read := func(addr string) map[string]map[string][]string {
		out := map[string]map[string][]string{}
		for _, topic := range []string{"shop.a", "shop.b"} {
			out[topic] = byKey(t, topic, readMessages(t, addr, topic))
		}
		return out
	}
	clean, r := run("clean", nil)
	if r != 0 {
		t.Fatalf("the failure-free run restarted %d times", r)
	}
	want := read(clean)
	if len(want["shop.a"]) != keys || len(want["shop.b"]) == 0 {
		t.Fatalf("the failure-free run wrote %d keys of shop.a, %d of shop.b", len(want["shop.a"]), len(want["shop.b"]))
	}
	messages, changes := 0, 0
	for _, keys := range want {
		for _, vs := range keys {
			messages += len(vs)
		}
	}
	for _, es := range events {
		if es[0].Kind == pipeline.DataChange {
			changes++
		}
	}
	if messages != changes {
		t.Fatalf("the failure-free run wrote %d messages for %d row changes", messages, changes)
	}
	failing, r := run("failing", map[int64]bool{int64(len(events) / 5): true, int64(len(events) / 2): true, int64(len(events) * 4 / 5): true})
	if r < 1 || r > 3 {
		t.Fatalf("the job restarted %d times, want 1 to 3", r)
	}
	got := read(failing)
	for topic, keys := range want {
		for k, vs := range keys {
			if g := got[topic][k]; !slices.Equal(g, vs) {
				t.Errorf("topic %s, key %s: %d messages after the failures, %d without; first differing:\n%s", topic, k, len(g), len(vs), firstDiff(g, vs))
			}
		}
		if len(got[topic]) != len(keys) {
			t.Errorf("topic %s: %d keys after the failures, %d without", topic, len(got[topic]), len(keys))
		}
	}
}

func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("  #%d got  %s\n  #%d want %s", i, g, i, w)
		}
	}
	return ""
}

// TestPipelineMariaDBToKafka runs 'eddy pipeline”s job, built from YAML,
// from a private MariaDB server into Kafka: the snapshot of two tables,
// then inserts, updates and deletes, and a column added to one of them,
// arrive in each table's topic as debezium-json messages, the rows after
// the ALTER TABLE with the new column.
func TestPipelineMariaDBToKafka(t *testing.T) {
	m := testservers.StartMariaDB(t)
	conn, err := mysqlclient.Connect(m.Addr(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := conn.Execute(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	exec("CREATE DATABASE shop",
		"CREATE TABLE shop.orders (id INT PRIMARY KEY, item VARCHAR(20), qty INT)",
		"CREATE TABLE shop.users (id BIGINT PRIMARY KEY, name VARCHAR(20))",
		"INSERT INTO shop.orders VALUES (1, 'apple', 3), (2, 'pear', 5)",
		"INSERT INTO shop.users VALUES (10, 'ann')")
	addr := startAutoCluster(t)
	yaml := fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %d
  username: root
  tables: shop.\.*
  server-id: 5400-5404
sink:
  type: kafka
  properties.bootstrap.servers: %s
  sink.add-tableId-to-header-enabled: true
pipeline:
  name: shop to kafka
  schema.change.behavior: evolve
`, m.Host, m.Port, addr)
	d, err := pipeline.Parse([]byte(yaml), "shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(100*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	if err := pipeline.Build(env, d); err != nil {
		t.Fatal(err)
	}
	r := cdctest.Execute(t, env, "shop to kafka", 3*time.Minute)
	orders := func(op, before, after string) string {
		return `{"before":` + before + `,"after":` + after + `,"op":"` + op + `","source":{"db":"shop","table":"orders"}}`
	}
	users := func(op, before, after string) string {
		return `{"before":` + before + `,"after":` + after + `,"op":"` + op + `","source":{"db":"shop","table":"users"}}`
	}
	// wait waits until the topics hold want, each key's messages in order.
	wait := func(want map[string]map[string][]string) {
		t.Helper()
		var got map[string]map[string][]string
		for {
			got = map[string]map[string][]string{}
			for topic := range want {
				if topicExists(t, addr, topic) {
					got[topic] = byKey(t, topic, readMessages(t, addr, topic))
				}
			}
			if reflect.DeepEqual(got, want) {
				return
			}
			select {
			case <-r.Ctx.Done():
				t.Fatalf("the topics hold\n%s\nwant\n%s", renderTopics(got), renderTopics(want))
			case <-r.Finished():
				t.Fatalf("the job ended: %v; the topics hold\n%s", r.Wait(), renderTopics(got))
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	k1, k2, k3 := `{"TableId":"shop.orders","id":1}`, `{"TableId":"shop.orders","id":2}`, `{"TableId":"shop.orders","id":3}`
	k10, k11 := `{"TableId":"shop.users","id":10}`, `{"TableId":"shop.users","id":11}`
	want := map[string]map[string][]string{
		"shop.orders": {
			k1: {orders("c", "null", `{"id":1,"item":"apple","qty":3}`)},
			k2: {orders("c", "null", `{"id":2,"item":"pear","qty":5}`)},
		},
		"shop.users": {k10: {users("c", "null", `{"id":10,"name":"ann"}`)}},
	}
	wait(want)
	exec("UPDATE shop.orders SET qty = 4 WHERE id = 1",
		"INSERT INTO shop.users VALUES (11, 'bob')",
		"DELETE FROM shop.users WHERE id = 10",
		"ALTER TABLE shop.orders ADD COLUMN note VARCHAR(20)",
		"INSERT INTO shop.orders VALUES (3, 'fig', 1, 'gift')",
		"UPDATE shop.orders SET qty = 6, note = 'x' WHERE id = 2",
		"DELETE FROM shop.orders WHERE id = 1")
	want["shop.orders"][k1] = append(want["shop.orders"][k1],
		orders("u", `{"id":1,"item":"apple","qty":3}`, `{"id":1,"item":"apple","qty":4}`),
		orders("d", `{"id":1,"item":"apple","qty":4,"note":null}`, "null"))
	want["shop.orders"][k2] = append(want["shop.orders"][k2],
		orders("u", `{"id":2,"item":"pear","qty":5,"note":null}`, `{"id":2,"item":"pear","qty":6,"note":"x"}`))
	want["shop.orders"][k3] = []string{orders("c", "null", `{"id":3,"item":"fig","qty":1,"note":"gift"}`)}
	want["shop.users"][k10] = append(want["shop.users"][k10], users("d", `{"id":10,"name":"ann"}`, "null"))
	want["shop.users"][k11] = []string{users("c", "null", `{"id":11,"name":"bob"}`)}
	wait(want)
	for _, topic := range []string{"shop.orders", "shop.users"} {
		for _, msg := range readMessages(t, addr, topic) {
			if h := []string{"namespace=", "schemaName=shop", "tableName=" + strings.TrimPrefix(topic, "shop.")}; !slices.Equal(msg.headers, h) {
				t.Errorf("topic %s: a message has headers %q, want %q", topic, msg.headers, h)
			}
			if msg.partition != 0 {
				t.Errorf("topic %s: a message is in partition %d, want 0 (all-to-zero)", topic, msg.partition)
			}
		}
	}
	if err := r.Stop(); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
}

// topicExists tells whether the cluster at addr has topic, with its
// partitions.
func topicExists(t *testing.T, addr, topic string) bool {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), client(t, addr))
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0 && len(resp.Topics[0].Partitions) > 0
}

func renderTopics(m map[string]map[string][]string) string {
	var b strings.Builder
	for _, topic := range []string{"shop.orders", "shop.users"} {
		fmt.Fprintf(&b, "%s:\n%s", topic, render(m[topic]))
	}
	return b.String()
}

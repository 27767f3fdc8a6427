package kafka_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// The avro-confluent tests use srfake, franz-go's in-process fake of a
// Confluent schema registry, beside the kfake cluster.

// runSQL runs a bounded SQL job, without restarts, and returns its error.
func runSQL(t *testing.T, script string) error {
	t.Helper()
	s := sql.NewSession(sql.WithParallelism(2))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
		eddy.WithRestartStrategy(eddy.NoRestart()))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return env.Execute(ctx, "avro")
}

// jsonRows returns the rows of the JSON messages of topic, printed and
// sorted.
func jsonRows(t *testing.T, addr, topic, schema string) []string {
	t.Helper()
	typ, err := types.ParseType(schema)
	if err != nil {
		t.Fatal(err)
	}
	rt := typ.Row()
	jd, err := types.NewJSONDecoder(rt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range readTopic(t, addr, topic) {
		row, err := jd.Decode(r.Value)
		if err != nil {
			t.Fatalf("message %q of topic %s: %v", r.Value, topic, err)
		}
		out = append(out, types.FormatChange(changelog.Insert, rt, row))
	}
	slices.Sort(out)
	return out
}

const avroPeople = "ROW<id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<STRING>, addr ROW<city STRING, zip INT>>"

// TestAvroConfluentTopicToTopic writes rows to a topic in avro-confluent
// (keys and values) with one SQL job and reads them back with another.
func TestAvroConfluentTopicToTopic(t *testing.T) {
	addr := startCluster(t)
	reg := srfake.New()
	defer reg.Close()
	createTopic(t, addr, "people_json", 2)
	createTopic(t, addr, "people", 2)
	createTopic(t, addr, "people_back", 1)
	var recs []*kgo.Record
	for i := 0; i < 200; i++ {
		v := fmt.Sprintf(`{"id": %d, "name": "n%d", "price": %d.%02d, "ts": "2024-03-0%d 10:11:12.%03d", "tags": ["a%d", null], "addr": {"city": "c%d", "zip": %d}}`,
			i, i, i, i%100, 1+i%9, i, i%3, i%5, 1000+i)
		if i%10 == 0 {
			v = fmt.Sprintf(`{"id": %d}`, i)
		}
		recs = append(recs, &kgo.Record{Topic: "people_json", Value: []byte(v)})
	}
	if err := client(t, addr).ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cols := "id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<STRING>, addr ROW<city STRING, zip INT>"
	if err := runSQL(t, fmt.Sprintf(`
CREATE TABLE src (%[3]s) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'people_json',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE people (%[3]s) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'people',
  'key.format' = 'avro-confluent', 'key.avro-confluent.url' = '%[2]s', 'key.fields' = 'id',
  'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '%[2]s',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'people');
INSERT INTO people SELECT * FROM src;
`, addr, reg.URL(), cols)); err != nil {
		t.Fatal(err)
	}
	// The schemas are registered under the subjects the topic names.
	for subject, want := range map[string]string{"people-key": "ROW<id BIGINT NOT NULL>", "people-value": avroPeople} {
		ss, ok := reg.GetSchema(subject, 1)
		if !ok {
			t.Fatalf("no schema was registered under subject %s", subject)
		}
		if !strings.Contains(ss.Schema.Schema, `"name":"org.apache.flink.avro.generated.record"`) {
			t.Fatalf("subject %s holds %s, not the schema derived from %s", subject, ss.Schema.Schema, want)
		}
	}
	msgs := readTopic(t, addr, "people")
	if len(msgs) != 200 {
		t.Fatalf("topic people holds %d messages, want 200", len(msgs))
	}
	for _, m := range msgs {
		for _, b := range [][]byte{m.Key, m.Value} {
			if len(b) < 5 || b[0] != 0 {
				t.Fatalf("message %x is not in Confluent's wire format", b)
			}
		}
	}

	if err := runSQL(t, fmt.Sprintf(`
CREATE TABLE people (%[3]s) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'people',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'format' = 'avro-confluent', 'avro-confluent.url' = '%[2]s');
CREATE TABLE back (%[3]s) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'people_back', 'format' = 'json');
INSERT INTO back SELECT * FROM people;
`, addr, reg.URL(), cols)); err != nil {
		t.Fatal(err)
	}
	got, want := jsonRows(t, addr, "people_back", avroPeople), jsonRows(t, addr, "people_json", avroPeople)
	if len(want) != 200 || !slices.Equal(got, want) {
		t.Fatalf("read back %d rows, want the %d written; first: %v, want %v", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
	}
}

// TestAvroConfluentSchemaEvolution reads a topic written by another
// program with two versions of its schema: the first lacks the column
// email, the second has it (added with a default) and drops the field
// legacy. The table reads both.
func TestAvroConfluentSchemaEvolution(t *testing.T) {
	addr := startCluster(t)
	reg := srfake.New()
	defer reg.Close()
	createTopic(t, addr, "users", 1)
	createTopic(t, addr, "users_json", 1)
	v1 := `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"legacy","type":"string"},{"name":"name","type":"string"}]}`
	v2 := `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"email","type":["null","string"],"default":null}]}`
	var recs []*kgo.Record
	for i, sch := range []string{v1, v2} {
		id, _, err := reg.RegisterSchema("users-value", sr.Schema{Schema: sch, Type: sr.TypeAvro})
		if err != nil {
			t.Fatalf("registering version %d: %v", i+1, err)
		}
		s, err := avro.Parse(sch)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < 3; n++ {
			rec := map[string]any{"id": int64(10*(i+1) + n), "name": fmt.Sprintf("u%d", n), "legacy": "old"}
			if i == 1 {
				rec["email"] = fmt.Sprintf("u%d@example.com", n)
			}
			b, err := s.AppendEncode(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), rec)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, &kgo.Record{Topic: "users", Value: b})
		}
	}
	if err := client(t, addr).ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := runSQL(t, fmt.Sprintf(`
CREATE TABLE users (id BIGINT NOT NULL, name STRING, email STRING) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'users',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'format' = 'avro-confluent', 'avro-confluent.url' = '%[2]s');
CREATE TABLE out (id BIGINT NOT NULL, name STRING, email STRING) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'users_json', 'format' = 'json');
INSERT INTO out SELECT * FROM users;
`, addr, reg.URL())); err != nil {
		t.Fatal(err)
	}
	got := jsonRows(t, addr, "users_json", "ROW<id BIGINT NOT NULL, name STRING, email STRING>")
	want := []string{
		"+I[10, u0, null]", "+I[11, u1, null]", "+I[12, u2, null]",
		"+I[20, u0, u0@example.com]", "+I[21, u1, u1@example.com]", "+I[22, u2, u2@example.com]",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
}

// TestAvroConfluentMalformed reads messages that are not in the wire format
// or name a schema id the registry does not know: a SQL job fails on the
// first, naming the message and what is wrong with it, as it does on
// malformed JSON.
func TestAvroConfluentMalformed(t *testing.T) {
	addr := startCluster(t)
	reg := srfake.New()
	defer reg.Close()
	for _, c := range []struct {
		msg  []byte
		want string
	}{
		{[]byte(`{"id": 1}`), "starts with 0x7b, not the magic byte 0"},
		{[]byte{0, 0, 0, 0, 99, 2}, "schema id 99 is unknown to the schema registry"},
	} {
		topic := freshTopic(t, addr, 1)
		createTopic(t, addr, topic+"_out", 1)
		if err := client(t, addr).ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: c.msg}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		err := runSQL(t, fmt.Sprintf(`
CREATE TABLE bad (id INT) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = '%[3]s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'format' = 'avro-confluent', 'avro-confluent.url' = '%[2]s');
CREATE TABLE sink (id INT) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = '%[3]s_out', 'format' = 'json');
INSERT INTO sink SELECT * FROM bad;
`, addr, reg.URL(), topic))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "topic "+topic+" partition 0 offset 0") {
			t.Fatalf("reading %x: %v, want an error naming the message and saying %q", c.msg, err, c.want)
		}
	}
}

// TestAvroConfluentUpsert writes an aggregation to upsert-kafka with Avro
// keys and values and reads it back as an upsert changelog whose final
// state is the aggregation's.
func TestAvroConfluentUpsert(t *testing.T) {
	addr := startCluster(t)
	reg := srfake.New()
	defer reg.Close()
	createTopic(t, addr, "words", 2)
	createTopic(t, addr, "counts", 2)
	createTopic(t, addr, "counts_json", 1)
	var recs []*kgo.Record
	want := map[string]int{}
	for i := 0; i < 300; i++ {
		w := fmt.Sprintf("w%d", i%13)
		want[w]++
		recs = append(recs, &kgo.Record{Topic: "words", Value: []byte(fmt.Sprintf(`{"word": %q}`, w))})
	}
	if err := client(t, addr).ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := runSQL(t, fmt.Sprintf(`
CREATE TABLE words (word STRING) WITH (
  'connector' = 'kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'words',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE counts (word STRING, n BIGINT, PRIMARY KEY (word) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'counts',
  'key.format' = 'avro-confluent', 'key.avro-confluent.url' = '%[2]s',
  'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '%[2]s');
INSERT INTO counts SELECT word, COUNT(*) FROM words GROUP BY word;
`, addr, reg.URL())); err != nil {
		t.Fatal(err)
	}
	for _, subject := range []string{"counts-key", "counts-value"} {
		if _, ok := reg.GetSchema(subject, 1); !ok {
			t.Fatalf("the upsert-kafka sink registered no schema under subject %s", subject)
		}
	}
	if err := runSQL(t, fmt.Sprintf(`
CREATE TABLE counts (word STRING, n BIGINT, PRIMARY KEY (word) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'counts',
  'scan.bounded.mode' = 'latest-offset',
  'key.format' = 'avro-confluent', 'key.avro-confluent.url' = '%[2]s',
  'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '%[2]s');
CREATE TABLE counts_json (word STRING, n BIGINT, PRIMARY KEY (word) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'properties.bootstrap.servers' = '%[1]s', 'topic' = 'counts_json',
  'key.format' = 'json', 'value.format' = 'json');
INSERT INTO counts_json SELECT * FROM counts;
`, addr, reg.URL())); err != nil {
		t.Fatal(err)
	}
	last := map[string]string{}
	for _, r := range readTopic(t, addr, "counts_json") {
		last[string(r.Key)] = string(r.Value)
	}
	got := map[string]int{}
	for k, v := range last {
		var o struct {
			Word string `json:"word"`
			N    int    `json:"n"`
		}
		if err := json.Unmarshal([]byte(v), &o); err != nil {
			t.Fatalf("key %s value %s: %v", k, v, err)
		}
		got[o.Word] = o.N
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read back %v, want %v", got, want)
	}
}

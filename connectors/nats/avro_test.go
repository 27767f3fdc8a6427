package nats_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// TestAvroStreamToStream writes rows to a JetStream stream in avro and in
// avro-confluent (against srfake, franz-go's in-process fake of a Confluent
// schema registry) with one SQL job each, and reads them back with
// another: the rows read are the rows written.
func TestAvroStreamToStream(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	reg := srfake.New()
	defer reg.Close()
	const cols = "id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<STRING>, attrs MAP<STRING, INT>"
	createStream(t, js, "SRC", "src")
	var futures []jetstream.PubAckFuture
	for i := 0; i < 100; i++ {
		b := fmt.Sprintf(`{"id": %d, "name": "n%d", "price": %d.25, "ts": "2024-05-06 07:08:09.%03d", "tags": ["t%d"], "attrs": {"a": %d}}`, i, i, i, i, i%4, i)
		if i%7 == 0 {
			b = fmt.Sprintf(`{"id": %d}`, i)
		}
		f, err := js.PublishAsync("src", []byte(b))
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		}
	}
	run := func(script string) {
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
		if err := env.Execute(ctx, "avro"); err != nil {
			t.Fatal(err)
		}
	}
	typ, err := types.ParseType("ROW<" + cols + ">")
	if err != nil {
		t.Fatal(err)
	}
	rt := typ.Row()
	rows := func(stream string) []string {
		t.Helper()
		jd, err := types.NewJSONDecoder(rt, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range readStream(t, js, stream) {
			r, err := jd.Decode(b)
			if err != nil {
				t.Fatalf("%q: %v", b, err)
			}
			out = append(out, types.FormatChange(changelog.Insert, rt, r))
		}
		slices.Sort(out)
		return out
	}
	want := rows("SRC")
	for i, format := range []string{
		"'format' = 'avro'",
		fmt.Sprintf("'format' = 'avro-confluent', 'avro-confluent.url' = '%s', 'avro-confluent.subject' = 'mid-value'", reg.URL()),
	} {
		mid, back := fmt.Sprintf("MID%d", i), fmt.Sprintf("BACK%d", i)
		createStream(t, js, mid, fmt.Sprintf("mid%d", i))
		createStream(t, js, back, fmt.Sprintf("back%d", i))
		run(fmt.Sprintf(`
CREATE TABLE src (%[2]s) WITH ('connector' = 'nats', 'url' = '%[1]s', 'stream' = 'SRC', 'subject' = 'src', 'format' = 'json', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE mid (%[2]s) WITH ('connector' = 'nats', 'url' = '%[1]s', 'stream' = '%[3]s', 'subject' = 'mid%[4]d', %[5]s);
INSERT INTO mid SELECT * FROM src;
`, url, cols, mid, i, format))
		run(fmt.Sprintf(`
CREATE TABLE mid (%[2]s) WITH ('connector' = 'nats', 'url' = '%[1]s', 'stream' = '%[3]s', 'subject' = 'mid%[4]d', 'scan.bounded.mode' = 'latest-offset', %[5]s);
CREATE TABLE back (%[2]s) WITH ('connector' = 'nats', 'url' = '%[1]s', 'stream' = '%[6]s', 'subject' = 'back%[4]d', 'format' = 'json');
INSERT INTO back SELECT * FROM mid;
`, url, cols, mid, i, format, back))
		if got := rows(back); len(want) != 100 || !slices.Equal(got, want) {
			t.Fatalf("%s: read back %d rows, want the %d written; first: %v, want %v", format, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
		}
	}
	if _, ok := reg.GetSchema("mid-value", 1); !ok {
		t.Fatal("the avro-confluent sink registered no schema under subject mid-value")
	}
}

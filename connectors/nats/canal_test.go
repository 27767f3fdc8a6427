package nats_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// TestChangeFormatsStreamToStream copies a changelog (Debezium messages
// with inserts, updates and deletes) into a JetStream stream in canal-json
// and in maxwell-json with one SQL job each, and copies that stream on to
// another in the same format with a second job: the first stream holds an
// insertion per +I and +U and a deletion per -U and -D, and the changes
// of the last one leave the rows the Debezium messages do.
func TestChangeFormatsStreamToStream(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	const cols = "id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<STRING>, attrs MAP<STRING, INT>"
	typ, err := types.ParseType("ROW<" + cols + ">")
	if err != nil {
		t.Fatal(err)
	}
	rt := typ.Row()
	row := func(id int, name string) string {
		return fmt.Sprintf(`{"id": %d, "name": "%s", "price": %d.25, "ts": "2024-05-06 07:08:09.%03d", "tags": ["t%d"], "attrs": {"a": %d}}`, id, name, id, id, id%4, id)
	}
	createStream(t, js, "SRC", "src")
	var msgs []string
	for i := 0; i < 100; i++ {
		msgs = append(msgs, fmt.Sprintf(`{"before": null, "after": %s, "op": "c"}`, row(i, fmt.Sprint("n", i))))
	}
	for i := 0; i < 30; i++ {
		msgs = append(msgs, fmt.Sprintf(`{"before": %s, "after": %s, "op": "u"}`, row(i, fmt.Sprint("n", i)), row(i, fmt.Sprint("m", i))))
	}
	for i := 90; i < 100; i++ {
		msgs = append(msgs, fmt.Sprintf(`{"before": %s, "after": null, "op": "d"}`, row(i, fmt.Sprint("n", i))))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range msgs {
		if _, err := js.Publish(ctx, "src", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	// The rows the changes leave.
	jd, err := types.NewJSONDecoder(rt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 0; i < 90; i++ {
		name := fmt.Sprint("n", i)
		if i < 30 {
			name = fmt.Sprint("m", i)
		}
		r, err := jd.Decode([]byte(row(i, name)))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, types.FormatChange(changelog.Insert, rt, r))
	}
	slices.Sort(want)

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
		if err := env.Execute(ctx, "change formats"); err != nil {
			t.Fatal(err)
		}
	}
	// materialize applies the changes the stream's messages hold, in the
	// format, to a bag of rows (in any order: the jobs run in parallel).
	materialize := func(format, stream string) (rows []string, inserts, deletes int) {
		t.Helper()
		dec, err := connector.OpenTableDecoder(connector.Default, format, nil, &connector.Table{Schema: rt})
		if err != nil {
			t.Fatal(err)
		}
		bag := map[string]int{}
		for _, b := range readStream(t, js, stream) {
			if err := dec.Decode(b, func(c connector.TableRecord) {
				k := types.FormatChange(changelog.Insert, rt, c.Row)
				switch c.Kind {
				case changelog.Insert:
					inserts++
					bag[k]++
				case changelog.Delete:
					deletes++
					bag[k]--
				default:
					t.Errorf("%s: %q read as a %v change; the format writes insertions and deletions only", format, b, c.Kind)
				}
			}); err != nil {
				t.Fatalf("%s: %q: %v", format, b, err)
			}
		}
		for k, n := range bag {
			if n < 0 || n > 1 {
				t.Errorf("%s: stream %s leaves row %s %d times", format, stream, k, n)
			}
			if n == 1 {
				rows = append(rows, k)
			}
		}
		slices.Sort(rows)
		return rows, inserts, deletes
	}
	for i, format := range []string{"canal-json", "maxwell-json"} {
		mid, back := fmt.Sprintf("MID%d", i), fmt.Sprintf("BACK%d", i)
		createStream(t, js, mid, fmt.Sprintf("mid%d", i))
		createStream(t, js, back, fmt.Sprintf("back%d", i))
		run(fmt.Sprintf(`
CREATE TABLE src (%[2]s) WITH ('connector' = 'nats', 'url' = '%[1]s', 'stream' = 'SRC', 'subject' = 'src', 'format' = 'debezium-json', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE mid (%[2]s) WITH ('connector' = 'nats', 'url' = '%[1]s', 'stream' = '%[3]s', 'subject' = 'mid%[4]d', 'format' = '%[5]s');
INSERT INTO mid SELECT * FROM src;
`, url, cols, mid, i, format))
		got, ins, del := materialize(format, mid)
		if ins != 130 || del != 40 {
			t.Errorf("%s: stream %s holds %d insertions and %d deletions, want 130 (100 +I, 30 +U) and 40 (30 -U, 10 -D)", format, mid, ins, del)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: stream %s leaves %d rows, want %d; first: %v, want %v", format, mid, len(got), len(want), got[:min(3, len(got))], want[:3])
		}
		for _, b := range readStream(t, js, mid)[:1] {
			if !bytes.HasPrefix(b, []byte(`{"data":`)) {
				t.Errorf("%s: message %q does not start with {\"data\":", format, b)
			}
		}
		run(fmt.Sprintf(`
CREATE TABLE mid (%[2]s) WITH ('connector' = 'nats', 'url' = '%[1]s', 'stream' = '%[3]s', 'subject' = 'mid%[4]d', 'scan.bounded.mode' = 'latest-offset', 'format' = '%[5]s');
CREATE TABLE back (%[2]s) WITH ('connector' = 'nats', 'url' = '%[1]s', 'stream' = '%[6]s', 'subject' = 'back%[4]d', 'format' = '%[5]s');
INSERT INTO back SELECT * FROM mid;
`, url, cols, mid, i, format, back))
		if got, _, _ := materialize(format, back); !slices.Equal(got, want) {
			t.Fatalf("%s: stream %s leaves %d rows, want %d; first: %v, want %v", format, back, len(got), len(want), got[:min(3, len(got))], want[:3])
		}
	}
}

package sql_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql"
)

// runWith runs script as one job with the environment's options and
// returns what its "collect" tables received.
func runWith(t *testing.T, script string, opts ...eddy.Option) ([]string, *eddy.Environment) {
	t.Helper()
	c := &collectSink{}
	s := sql.NewSession(sql.WithConnectors(registry(c)))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(opts...)
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := env.Execute(ctx, "sql"); err != nil {
		t.Fatal(err)
	}
	return c.lines, env
}

// planError returns the error of executing script (nil if it plans).
func planError(script string) error {
	c := &collectSink{}
	s := sql.NewSession(sql.WithConnectors(registry(c)))
	_, err := s.Execute(script)
	return err
}

func sorted(lines []string) []string {
	out := slices.Clone(lines)
	sort.Strings(out)
	return out
}

func writeFile(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// committedFiles lists the visible files below dir, relative to it.
func committedFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

const ordersSchema = `(id BIGINT, customer STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), paid BOOLEAN)`

func ordersInput(n int) (json []string, want []string) {
	for i := 0; i < n; i++ {
		cust := fmt.Sprintf("c%d", i%7)
		if i%11 == 0 {
			cust = "Smith, \"Bob\""
		}
		ts := time.Date(2024, 3, 1+i%3, i%24, i%60, 0, (i%1000)*1e6, time.UTC)
		json = append(json, fmt.Sprintf(`{"id":%d,"customer":%q,"amount":%d.%02d,"ts":"%s","paid":%t}`, i, cust, i, i%100, ts.Format("2006-01-02 15:04:05.000"), i%2 == 0))
		amount := fmt.Sprintf("%d.%02d", i, i%100)
		tsText := ts.Format("2006-01-02T15:04")
		if ts.Second() != 0 || ts.Nanosecond() != 0 {
			tsText = ts.Format("2006-01-02T15:04:05.000")
			tsText = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(tsText, "0"), "0"), ".0")
			if strings.HasSuffix(tsText, ".") {
				tsText = strings.TrimSuffix(tsText, ".")
			}
		}
		want = append(want, fmt.Sprintf("+I[%d, %s, %s, %s, %t]", i, cust, amount, tsText, i%2 == 0))
	}
	return json, want
}

// TestFilesystemFormatsRoundTrip writes rows into a filesystem table in
// each append-only format and in debezium-json with one job, and reads
// them back with another.
func TestFilesystemFormatsRoundTrip(t *testing.T) {
	in := t.TempDir()
	lines, _ := ordersInput(200)
	writeFile(t, filepath.Join(in, "orders.jsonl"), lines...)
	reference, _ := runWith(t, fmt.Sprintf(`
CREATE TABLE src %s WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE out %s WITH ('connector' = 'collect');
INSERT INTO out SELECT * FROM src;`, ordersSchema, in, ordersSchema), eddy.WithParallelism(1))
	if len(reference) != 200 {
		t.Fatalf("read %d rows of 200", len(reference))
	}
	for _, format := range []string{"json", "csv", "debezium-json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			runWith(t, fmt.Sprintf(`
CREATE TABLE src %s WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE dst %s WITH ('connector' = 'filesystem', 'path' = 'file://%s', 'format' = '%s');
INSERT INTO dst SELECT * FROM src;`, ordersSchema, in, ordersSchema, dir, format), eddy.WithParallelism(2))
			for _, f := range committedFiles(t, dir) {
				if !strings.HasPrefix(filepath.Base(f), "part-") {
					t.Errorf("unexpected file %s", f)
				}
			}
			got, _ := runWith(t, fmt.Sprintf(`
CREATE TABLE back %s WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = '%s');
CREATE TABLE out %s WITH ('connector' = 'collect');
INSERT INTO out SELECT * FROM back;`, ordersSchema, dir, format, ordersSchema), eddy.WithParallelism(2))
			if d := diffLines(sorted(got), sorted(reference)); d != "" {
				t.Fatal(d)
			}
		})
	}
}

func diffLines(got, want []string) string {
	if slices.Equal(got, want) {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "got %d lines, want %d\n", len(got), len(want))
	for i := 0; i < max(len(got), len(want)) && i < 400; i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			fmt.Fprintf(&b, "line %d:\n  got  %s\n  want %s\n", i, g, w)
		}
	}
	return b.String()
}

// TestDebeziumChangelogThroughFilesystem reads a changelog from Debezium
// messages and writes it through to a debezium-json table as Flink's
// encoder does.
func TestDebeziumChangelogThroughFilesystem(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(in, "products.json"),
		`{"before":null,"after":{"id":1,"name":"scooter","weight":3.14},"op":"c"}`,
		`{"before":null,"after":{"id":2,"name":"car","weight":8.1},"op":"r"}`,
		`{"before":{"id":1,"name":"scooter","weight":3.14},"after":{"id":1,"name":"scooter","weight":5.18},"op":"u"}`,
		`{"before":{"id":2,"name":"car","weight":8.1},"after":null,"op":"d"}`)
	ddl := fmt.Sprintf(`
CREATE TABLE products (id INT, name STRING, weight DOUBLE) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE copy (id INT, name STRING, weight DOUBLE) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE seen (id INT, name STRING, weight DOUBLE) WITH ('connector' = 'collect');
`, in, out)
	got, _ := runWith(t, ddl+`INSERT INTO seen SELECT * FROM products;`, eddy.WithParallelism(1))
	want := []string{"+I[1, scooter, 3.14]", "+I[2, car, 8.1]", "-U[1, scooter, 3.14]", "+U[1, scooter, 5.18]", "-D[2, car, 8.1]"}
	if d := diffLines(got, want); d != "" {
		t.Fatal(d)
	}
	runWith(t, ddl+`INSERT INTO copy SELECT id, name, weight FROM products WHERE id > 0;`, eddy.WithParallelism(1))
	var text []string
	for _, f := range committedFiles(t, out) {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		text = append(text, strings.Split(strings.TrimSpace(string(b)), "\n")...)
	}
	wantText := []string{
		`{"before":null,"after":{"id":1,"name":"scooter","weight":3.14},"op":"c"}`,
		`{"before":null,"after":{"id":2,"name":"car","weight":8.1},"op":"c"}`,
		`{"before":{"id":1,"name":"scooter","weight":3.14},"after":null,"op":"d"}`,
		`{"before":null,"after":{"id":1,"name":"scooter","weight":5.18},"op":"c"}`,
		`{"before":{"id":2,"name":"car","weight":8.1},"after":null,"op":"d"}`,
	}
	if d := diffLines(text, wantText); d != "" {
		t.Fatal(d)
	}
	// Read back, the -U/+U pairs come back as a delete and an insert.
	back, _ := runWith(t, strings.Replace(ddl, "'path' = '"+in+"'", "'path' = '"+out+"'", 1)+`INSERT INTO seen SELECT * FROM products;`, eddy.WithParallelism(1))
	wantBack := []string{"+I[1, scooter, 3.14]", "+I[2, car, 8.1]", "-D[1, scooter, 3.14]", "+I[1, scooter, 5.18]", "-D[2, car, 8.1]"}
	if d := diffLines(back, wantBack); d != "" {
		t.Fatal(d)
	}
	// An append-only table refuses the changelog, naming the sink.
	err := planError(ddl + fmt.Sprintf(`CREATE TABLE plain (id INT, name STRING, weight DOUBLE) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO plain SELECT * FROM products;`, t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "plain") || !strings.Contains(err.Error(), "debezium-json") {
		t.Fatalf("an append-only sink took a changelog: %v", err)
	}
}

// TestPartitionedFilesystemTable writes a table partitioned by day and
// hour into Hive-style directories with success files, and reads it back
// with the partition columns filled from the paths.
func TestPartitionedFilesystemTable(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	var lines, want []string
	for i := 0; i < 60; i++ {
		dt, hr := fmt.Sprintf("2024-03-0%d", 1+i%2), fmt.Sprintf("%02d", i%3)
		lines = append(lines, fmt.Sprintf(`{"id":%d,"v":"x%d","dt":"%s","hr":"%s"}`, i, i, dt, hr))
		want = append(want, fmt.Sprintf("+I[%d, x%d, %s, %s]", i, i, dt, hr))
	}
	lines = append(lines, `{"id":60,"v":"nul","dt":"2024-03-01","hr":null}`)
	want = append(want, "+I[60, nul, 2024-03-01, null]")
	writeFile(t, filepath.Join(in, "in.jsonl"), lines...)
	for _, trigger := range []string{"process-time", "partition-time"} {
		t.Run(trigger, func(t *testing.T) {
			out := filepath.Join(out, trigger)
			runWith(t, fmt.Sprintf(`
CREATE TABLE src (id INT, v STRING, dt STRING, hr STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE dst (id INT, v STRING, dt STRING, hr STRING) PARTITIONED BY (dt, hr) WITH (
  'connector' = 'filesystem', 'path' = '%s', 'format' = 'csv',
  'sink.partition-commit.trigger' = '%s',
  'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00',
  'sink.partition-commit.delay' = '1 h',
  'sink.partition-commit.policy.kind' = 'success-file',
  'sink.rolling-policy.rollover-interval' = '1min',
  'sink.rolling-policy.check-interval' = '1min');
INSERT INTO dst SELECT * FROM src;`, in, out, trigger), eddy.WithParallelism(1))
			files := committedFiles(t, out)
			dirs := map[string]bool{}
			success := map[string]bool{}
			for _, f := range files {
				if filepath.Base(f) == "_SUCCESS" {
					success[filepath.Dir(f)] = true
				} else {
					dirs[filepath.Dir(f)] = true
				}
			}
			wantDirs := []string{"dt=2024-03-01/hr=00", "dt=2024-03-01/hr=01", "dt=2024-03-01/hr=02", "dt=2024-03-01/hr=__DEFAULT_PARTITION__",
				"dt=2024-03-02/hr=00", "dt=2024-03-02/hr=01", "dt=2024-03-02/hr=02"}
			gotDirs := slices.Sorted(func(yield func(string) bool) {
				for d := range dirs {
					if !yield(d) {
						return
					}
				}
			})
			if !slices.Equal(gotDirs, wantDirs) {
				t.Fatalf("partition directories %v, want %v", gotDirs, wantDirs)
			}
			for d := range dirs {
				if !success[d] {
					t.Errorf("partition %s has no _SUCCESS file at the end of the input", d)
				}
			}
			b, err := os.ReadFile(filepath.Join(out, "dt=2024-03-01/hr=00", firstPart(t, filepath.Join(out, "dt=2024-03-01/hr=00"))))
			if err != nil || strings.Contains(string(b), "2024-03-01") {
				t.Errorf("the part files hold the partition columns (or cannot be read: %v):\n%s", err, b)
			}
			got, _ := runWith(t, fmt.Sprintf(`
CREATE TABLE back (id INT, v STRING, dt STRING, hr STRING) PARTITIONED BY (dt, hr) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE seen (id INT, v STRING, dt STRING, hr STRING) WITH ('connector' = 'collect');
INSERT INTO seen SELECT * FROM back;`, out), eddy.WithParallelism(2))
			if d := diffLines(sorted(got), sorted(want)); d != "" {
				t.Fatal(d)
			}
		})
	}
}

func firstPart(t *testing.T, dir string) string {
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasPrefix(e.Name(), "part-") {
			return e.Name()
		}
	}
	t.Fatalf("no part file in %s", dir)
	return ""
}

// failOnce is a SQL function that fails the job once, at its row number
// at, and sleeps a little every 50 rows so that checkpoints are taken
// before.
var failOnce struct {
	at, seen atomic.Int64
	fired    atomic.Bool
}

func init() {
	err := sql.RegisterFunction("test.FailOnce", sql.ScalarFunction{
		Args: []string{"BIGINT"}, Result: "BIGINT",
		Eval: func(args []any) (any, error) {
			n := failOnce.seen.Add(1)
			if n%50 == 0 {
				time.Sleep(2 * time.Millisecond)
			}
			if n == failOnce.at.Load() && failOnce.fired.CompareAndSwap(false, true) {
				panic("injected failure")
			}
			return args[0], nil
		},
	})
	if err != nil {
		panic(err)
	}
}

// TestFilesystemSinkKillAndResume runs an INSERT into a filesystem table
// that fails midway and restarts from its last checkpoint: the table
// holds every row exactly once, as after a run without failures.
func TestFilesystemSinkKillAndResume(t *testing.T) {
	in := t.TempDir()
	lines, _ := ordersInput(3000)
	for f := 0; f < 3; f++ {
		writeFile(t, filepath.Join(in, fmt.Sprintf("f%d.jsonl", f)), lines[f*1000:(f+1)*1000]...)
	}
	script := func(out string) string {
		return fmt.Sprintf(`
CREATE FUNCTION fail_once AS 'test.FailOnce';
CREATE TABLE src %s WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE dst %s WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
INSERT INTO dst SELECT fail_once(id), customer, amount, ts, paid FROM src;`, ordersSchema, in, ordersSchema, out)
	}
	readBack := func(out string) []string {
		got, _ := runWith(t, fmt.Sprintf(`
CREATE TABLE back %s WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE seen %s WITH ('connector' = 'collect');
INSERT INTO seen SELECT * FROM back;`, ordersSchema, out, ordersSchema), eddy.WithParallelism(2))
		return sorted(got)
	}
	failOnce.at.Store(-1)
	clean := t.TempDir()
	runWith(t, script(clean), eddy.WithParallelism(2))
	want := readBack(clean)
	if len(want) != 3000 {
		t.Fatalf("the run without failures wrote %d rows of 3000", len(want))
	}

	failOnce.seen.Store(0)
	failOnce.fired.Store(false)
	failOnce.at.Store(2000)
	failed := t.TempDir()
	_, env := runWith(t, script(failed), eddy.WithParallelism(2), eddy.WithCheckpointing(5*time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.FixedDelayRestart(2, 10*time.Millisecond)))
	if !failOnce.fired.Load() || env.Restarts() != 1 {
		t.Fatalf("the injected failure fired %v, the job restarted %d times; want one failure and one restart", failOnce.fired.Load(), env.Restarts())
	}
	for _, f := range committedFiles(t, failed) {
		if strings.HasPrefix(filepath.Base(f), ".") {
			t.Errorf("an uncommitted file is left: %s", f)
		}
	}
	if d := diffLines(readBack(failed), want); d != "" {
		t.Fatal(d)
	}
}

// TestFilesystemOptionErrors checks that bad options of filesystem tables
// give errors naming the option.
func TestFilesystemOptionErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ with, insert, want string }{
		{`'format' = 'xml'`, "", "'format' = 'xml' is not a format"},
		{`'format' = 'json', 'json.timestamp-format.standard' = 'ISO'`, "", "'json.timestamp-format.standard' = 'ISO' is not one of SQL, ISO-8601"},
		{`'format' = 'json', 'json.fail-on-missing-feld' = 'true'`, "", "did you mean 'json.fail-on-missing-field'"},
		{`'format' = 'csv', 'csv.field-delimiter' = ';;'`, "", "'csv.field-delimiter' = ';;'"},
		{`'format' = 'csv', 'csv.quote-character' = ','`, "x", "'quote-character' is the field delimiter"},
		{`'format' = 'debezium-json', 'debezium-json.schema-include' = 'maybe'`, "", "'debezium-json.schema-include' = 'maybe'"},
		{`'format' = 'json', 'sink.partition-commit.policy.kind' = 'metastore'`, "", "'sink.partition-commit.policy.kind' = 'metastore': the 'metastore' policy needs a Hive metastore"},
		{`'format' = 'json', 'sink.partition-commit.trigger' = 'watermark'`, "", "'sink.partition-commit.trigger' = 'watermark' is not one of process-time, partition-time"},
		{`'format' = 'json', 'sink.partition-commit.delay' = '1 fortnight'`, "", "'sink.partition-commit.delay' = '1 fortnight'"},
		{`'format' = 'json', 'partition.time-extractor.timestamp-pattern' = '$day'`, "x", "'partition.time-extractor.timestamp-pattern' = '$day' refers to $day"},
		{`'format' = 'json', 'sink.partition-commit.policy.kind' = 'success-file'`, "unpartitioned", "has no partitions to commit"},
	} {
		part := "PARTITIONED BY (dt)"
		if c.insert == "unpartitioned" {
			part = ""
		}
		script := fmt.Sprintf(`CREATE TABLE t (id INT, dt STRING) %s WITH ('connector' = 'filesystem', 'path' = '%s', %s);`, part, dir, c.with)
		if c.insert != "" {
			script += fmt.Sprintf(`CREATE TABLE s (id INT, dt STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO t SELECT * FROM s;`, dir)
		}
		err := planError(script)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WITH (%s): got %v, want an error containing %q", c.with, err, c.want)
		}
	}
}

// TestDatagenSequencesAndBounds generates sequences and bounded random
// values of many types.
func TestDatagenSequencesAndBounds(t *testing.T) {
	got, _ := runWith(t, `
CREATE TABLE gen (
  id BIGINT, code STRING, n INT, d DOUBLE, price DECIMAL(6, 2), s VARCHAR(8), b BOOLEAN, ts TIMESTAMP(3),
  r ROW<x INT, y STRING>, a ARRAY<INT>, m MAP<STRING, BIGINT>, nul INT
) WITH (
  'connector' = 'datagen', 'rows-per-second' = '100000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '500',
  'fields.code.kind' = 'sequence', 'fields.code.start' = '1000', 'fields.code.end' = '2000',
  'fields.n.min' = '-5', 'fields.n.max' = '5',
  'fields.d.min' = '0.5', 'fields.d.max' = '1.5',
  'fields.price.min' = '1', 'fields.price.max' = '10',
  'fields.s.length' = '4', 'fields.a.length' = '2',
  'fields.ts.max-past' = '1 h',
  'fields.nul.null-rate' = '1'
);
CREATE TABLE out (id BIGINT, code STRING, n INT, d DOUBLE, price DECIMAL(6, 2), s VARCHAR(8), b BOOLEAN, ts TIMESTAMP(3),
  r ROW<x INT, y STRING>, a ARRAY<INT>, m MAP<STRING, BIGINT>, nul INT) WITH ('connector' = 'collect');
INSERT INTO out SELECT * FROM gen WHERE n BETWEEN -5 AND 5 AND d >= 0.5 AND d <= 1.5 AND price BETWEEN 1 AND 10
  AND CHAR_LENGTH(s) = 4 AND CARDINALITY(a) = 2 AND CARDINALITY(m) = 3 AND nul IS NULL
  AND ts <= LOCALTIMESTAMP AND ts > LOCALTIMESTAMP - INTERVAL '2' HOUR AND CAST(code AS BIGINT) = id + 999;`, eddy.WithParallelism(3))
	if len(got) != 500 {
		t.Fatalf("%d rows passed the bounds of 500 generated (the sequence of id ends at 500):\n%s", len(got), strings.Join(got[:min(5, len(got))], "\n"))
	}
	ids := map[string]bool{}
	for _, l := range got {
		id, _, _ := strings.Cut(strings.TrimPrefix(l, "+I["), ",")
		if ids[id] {
			t.Fatalf("id %s twice", id)
		}
		ids[id] = true
	}
	rows, _ := runWith(t, `
CREATE TABLE gen (v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '37', 'rows-per-second' = '100000');
CREATE TABLE out (v INT) WITH ('connector' = 'collect');
INSERT INTO out SELECT * FROM gen;`, eddy.WithParallelism(2))
	if len(rows) != 37 {
		t.Fatalf("number-of-rows 37 gave %d rows", len(rows))
	}
}

// TestDatagenResumesItsSequence kills an INSERT of a datagen sequence
// into a filesystem table and restarts it from its checkpoint: every
// number is there exactly once.
func TestDatagenResumesItsSequence(t *testing.T) {
	out := t.TempDir()
	failOnce.seen.Store(0)
	failOnce.fired.Store(false)
	failOnce.at.Store(1500)
	_, env := runWith(t, fmt.Sprintf(`
CREATE FUNCTION fail_once AS 'test.FailOnce';
CREATE TABLE gen (id BIGINT, r DOUBLE) WITH ('connector' = 'datagen', 'rows-per-second' = '20000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000');
CREATE TABLE dst (id BIGINT, r DOUBLE) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
INSERT INTO dst SELECT fail_once(id), r FROM gen;`, out), eddy.WithParallelism(2), eddy.WithCheckpointing(5*time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.FixedDelayRestart(2, 10*time.Millisecond)))
	if !failOnce.fired.Load() || env.Restarts() != 1 {
		t.Fatalf("the injected failure fired %v, the job restarted %d times; want one failure and one restart", failOnce.fired.Load(), env.Restarts())
	}
	got, _ := runWith(t, fmt.Sprintf(`
CREATE TABLE back (id BIGINT, r DOUBLE) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE seen (id BIGINT, r DOUBLE) WITH ('connector' = 'collect');
INSERT INTO seen SELECT * FROM back;`, out), eddy.WithParallelism(1))
	seen := map[string]int{}
	for _, l := range got {
		id, _, _ := strings.Cut(strings.TrimPrefix(l, "+I["), ",")
		seen[id]++
	}
	for i := 1; i <= 3000; i++ {
		if n := seen[fmt.Sprint(i)]; n != 1 {
			t.Fatalf("id %d is in the table %d times; want exactly once (%d rows in all)", i, n, len(got))
		}
	}
	if len(got) != 3000 {
		t.Fatalf("%d rows; want 3000", len(got))
	}
}

// TestDatagenOptionErrors checks that each bad datagen option gives an
// error naming it.
func TestDatagenOptionErrors(t *testing.T) {
	for _, c := range []struct{ with, want string }{
		{`'rows-per-second' = '0'`, "'rows-per-second' = '0': want a positive number"},
		{`'number-of-rows' = 'many'`, "'number-of-rows' = 'many'"},
		{`'fields.idd.kind' = 'sequence'`, "'fields.idd.kind' names no column `idd`"},
		{`'fields.ID.min' = '1'`, "did you mean 'fields.id.min'"},
		{`'fields.id.knd' = 'random'`, "did you mean 'fields.id.kind'"},
		{`'fields.id.kind' = 'serial'`, "'fields.id.kind' = 'serial' is not one of random, sequence"},
		{`'fields.id.kind' = 'sequence', 'fields.id.start' = '1'`, "'fields.id.end' is required"},
		{`'fields.id.kind' = 'sequence', 'fields.id.start' = '9', 'fields.id.end' = '1'`, "'fields.id.end' = '1' is before"},
		{`'fields.id.kind' = 'sequence', 'fields.id.start' = 'a', 'fields.id.end' = '1'`, "'fields.id.start' = 'a'"},
		{`'fields.ts.kind' = 'sequence', 'fields.ts.start' = '1', 'fields.ts.end' = '2'`, "'fields.ts.kind' = 'sequence' but column ts is TIMESTAMP(3)"},
		{`'fields.id.min' = '10', 'fields.id.max' = '1'`, "'fields.id.min' = '10' is above"},
		{`'fields.id.min' = 'low'`, "'fields.id.min' = 'low' is not an integer"},
		{`'fields.small.max' = '1000'`, "'fields.small.max' = '1000' is not an integer in the range of TINYINT"},
		{`'fields.name.min' = '1'`, "'fields.name.min' does not apply to column name"},
		{`'fields.id.length' = '3'`, "'fields.id.length' does not apply"},
		{`'fields.name.length' = '-3'`, "'fields.name.length' = '-3'"},
		{`'fields.id.max-past' = '1 h'`, "'fields.id.max-past' does not apply"},
		{`'fields.id.null-rate' = '2'`, "'fields.id.null-rate' = '2': want a fraction from 0 to 1"},
		{`'fields.nn.null-rate' = '0.5'`, "'fields.nn.null-rate' = '0.5' but column nn is NOT NULL"},
		{`'fields.id.start' = '1'`, "'fields.id.start' applies to sequences"},
	} {
		err := planError(fmt.Sprintf(`CREATE TABLE g (id BIGINT, name STRING, ts TIMESTAMP(3), small TINYINT, nn INT NOT NULL) WITH ('connector' = 'datagen', %s);
CREATE TABLE out (id BIGINT) WITH ('connector' = 'collect');
INSERT INTO out SELECT id FROM g;`, c.with))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WITH (%s): got %v, want an error containing %q", c.with, err, c.want)
		}
	}
}

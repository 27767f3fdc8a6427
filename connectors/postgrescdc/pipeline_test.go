package postgrescdc

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/pipeline"
)

// pipelineOptions returns the options of a 'type: postgres' source block
// for the tables of schema.
func (s *server) pipelineOptions(schema, slot string, extra ...string) map[string]string {
	return cdctest.Options(map[string]string{
		"hostname": s.Host, "port": fmt.Sprint(s.Port), "username": "postgres", "password": "",
		"tables": "postgres." + schema + `.\.*`, "slot.name": slot,
		"debezium.publication.name": "pub_" + slot, "heartbeat.interval": "100ms",
	}, extra...)
}

// TestPipelineSourceSchemaChanges reads a schema as a pipeline's postgres
// source while its tables change: a column added, one dropped, one
// retyped, a table truncated, one created that 'tables' matches (and one
// it excludes). The job fails once, right after the first change with the
// added column, when every later change is already in the catalog: the
// restored job decodes with the tables as its checkpoint holds them, and
// the relations of the stream from there, so the events say each change
// once and in order, and rows after a change carry the new columns.
func TestPipelineSourceSchemaChanges(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	run(t, c,
		"CREATE TABLE "+schema+".a (id INT PRIMARY KEY, name VARCHAR(10), amount NUMERIC(8, 2) NOT NULL, big NUMERIC, at TIMESTAMPTZ(3), d DATE)",
		"ALTER TABLE "+schema+".a REPLICA IDENTITY FULL",
		"CREATE TABLE "+schema+".b (id BIGINT PRIMARY KEY, note TEXT, flag BOOLEAN NOT NULL DEFAULT true, raw BYTEA, c CHAR(3))",
		"CREATE TABLE "+schema+".skip_me (id INT PRIMARY KEY)",
		"INSERT INTO "+schema+".a VALUES (1, 'x', 1.50, 123456789012345678901234567890.123456789, '2024-05-06 07:08:09.123+02', '2024-05-06')",
		"INSERT INTO "+schema+".a VALUES (2, NULL, 2.50, NULL, NULL, NULL)",
		"INSERT INTO "+schema+".b VALUES (1, 'one', false, '\\x0102', 'ab')",
		"INSERT INTO "+schema+".skip_me VALUES (1)")

	f, _ := pipeline.Sources.Connector("postgres")
	spec := f.Spec()
	opts, err := spec.Validate(s.pipelineOptions(schema, slot, "tables.exclude", "postgres."+schema+`.skip_\.*`))
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewPipelineSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	sink := connectortest.NewMemorySink[string]()
	var mu sync.Mutex
	failed := false
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond),
		eddy.WithCheckpointDir(filepath.Join(t.TempDir(), "checkpoints")),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(5, 10*time.Millisecond)))
	events := pipeline.Apply(eddy.FromSource(env, "postgres", src, eddy.NoWatermarks[pipeline.Event]()), &pipeline.Definition{Behavior: pipeline.Evolve})
	lines := eddy.Map(events, func(e pipeline.Event) string {
		l := pipeline.FormatEvent(e)
		mu.Lock()
		fail := !failed && strings.HasPrefix(l, "+I "+schema+".a[3,")
		failed = failed || fail
		mu.Unlock()
		if fail {
			panic("failure injected at the first row with the added column")
		}
		return l
	}).Name("failure hook")
	eddy.WriteTo(lines, "memory sink", sink.Sink())
	r := cdctest.Execute(t, env, "pipeline source", 2*time.Minute)

	wait := func(want ...string) {
		t.Helper()
		cdctest.WaitLines(t, r.Ctx, func() string { return strings.Join(sink.Committed(), "\n") + "\n" }, "S.", schema+".", want...)
	}
	wait("CREATE TABLE S.a (id INT NOT NULL, name VARCHAR(10), amount DECIMAL(8, 2) NOT NULL, big STRING, at TIMESTAMP_LTZ(3), d DATE, PRIMARY KEY (id))",
		"+I S.a[1, x, 1.50, 123456789012345678901234567890.123456789, 2024-05-06T05:08:09.123Z, 2024-05-06]",
		"+I S.a[2, null, 2.50, null, null, null]",
		"CREATE TABLE S.b (id BIGINT NOT NULL, note STRING, flag BOOLEAN NOT NULL, raw BYTES, c CHAR(3), PRIMARY KEY (id))",
		"+I S.b[1, one, false, [1, 2], ab ]")
	run(t, c,
		"ALTER TABLE "+schema+".a ADD COLUMN note TEXT",
		"INSERT INTO "+schema+".a VALUES (3, 'y', 3.50, 1, NULL, NULL, 'hello')",
		"ALTER TABLE "+schema+".a DROP COLUMN name",
		"UPDATE "+schema+".a SET amount = 9.99 WHERE id = 3",
		"ALTER TABLE "+schema+".a ALTER COLUMN amount TYPE NUMERIC(12, 3)",
		"INSERT INTO "+schema+".a VALUES (4, 4.125, NULL, NULL, NULL, 'four')",
		"BEGIN; TRUNCATE "+schema+".b; INSERT INTO "+schema+".b VALUES (2, 'after'); COMMIT",
		"UPDATE "+schema+".b SET note = 'changed' WHERE id = 2",
		"DELETE FROM "+schema+".b WHERE id = 2",
		"CREATE TABLE "+schema+".c (id INT PRIMARY KEY, v VARCHAR(5) NOT NULL)",
		"INSERT INTO "+schema+".c VALUES (1, 'new')",
		"INSERT INTO "+schema+".skip_me VALUES (2)")
	wait("ALTER TABLE S.a ADD COLUMN note STRING",
		"+I S.a[3, y, 3.50, 1, null, null, hello]",
		"ALTER TABLE S.a DROP COLUMN name",
		"-U S.a[3, 3.50, 1, null, null, hello]",
		"+U S.a[3, 9.99, 1, null, null, hello]",
		"ALTER TABLE S.a ALTER COLUMN amount TYPE DECIMAL(12, 3) NOT NULL",
		"+I S.a[4, 4.125, null, null, null, four]",
		"TRUNCATE TABLE S.b",
		"+I S.b[2, after, true, null, null]",
		"+U S.b[2, changed, true, null, null]",
		"-D S.b[2, null, null, null, null]",
		"CREATE TABLE S.c (id INT NOT NULL, v VARCHAR(5) NOT NULL, PRIMARY KEY (id))",
		"+I S.c[1, new]")
	got := sink.Committed()
	mu.Lock()
	if !failed {
		t.Error("the failure was not injected")
	}
	mu.Unlock()
	var schemaEvents []string
	for _, l := range got {
		if strings.Contains(l, "skip_") {
			t.Errorf("an excluded table reached the pipeline: %s", l)
		}
		if !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "-") {
			schemaEvents = append(schemaEvents, strings.ReplaceAll(l, schema+".", "S."))
		}
	}
	want := []string{
		"CREATE TABLE S.a (id INT NOT NULL, name VARCHAR(10), amount DECIMAL(8, 2) NOT NULL, big STRING, at TIMESTAMP_LTZ(3), d DATE, PRIMARY KEY (id))",
		"CREATE TABLE S.b (id BIGINT NOT NULL, note STRING, flag BOOLEAN NOT NULL, raw BYTES, c CHAR(3), PRIMARY KEY (id))",
		"ALTER TABLE S.a ADD COLUMN note STRING",
		"ALTER TABLE S.a DROP COLUMN name",
		"ALTER TABLE S.a ALTER COLUMN amount TYPE DECIMAL(12, 3) NOT NULL",
		"TRUNCATE TABLE S.b",
		"CREATE TABLE S.c (id INT NOT NULL, v VARCHAR(5) NOT NULL, PRIMARY KEY (id))",
	}
	if strings.Join(schemaEvents, "\n") != strings.Join(want, "\n") {
		t.Errorf("schema events:\n%s\nwant:\n%s\nall events:\n%s", strings.Join(schemaEvents, "\n"), strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	seen := map[string]int{}
	for _, l := range got {
		seen[l]++
		if seen[l] > 1 && !strings.HasPrefix(l, "TRUNCATE") {
			t.Errorf("event %q committed twice", l)
		}
	}
}

// TestPipelineTablesOption reads the database of 'tables' and refuses
// patterns that do not name one database.
func TestPipelineTablesOption(t *testing.T) {
	for expr, want := range map[string]string{
		`app.public.\.*`:                      "app",
		`app.public.orders, app.s_[0-9]+.\.*`: "app",
		`app.a\.b.c`:                          "app",
	} {
		got, err := tablesDatabase(expr)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", expr, got, err, want)
		}
	}
	for expr, msg := range map[string]string{
		`public.orders`:                "database.schema.table",
		`app.public.a, other.public.b`: "names databases",
		`app|web.public.a`:             "not a regular expression",
		` , `:                          "no table pattern",
	} {
		if _, err := tablesDatabase(expr); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: got %v, want an error saying %q", expr, err, msg)
		}
	}
}

// TestPipelineTypes maps PostgreSQL's column types to the pipeline's.
func TestPipelineTypes(t *testing.T) {
	for _, c := range []struct {
		typname, typeName string
		notNull           bool
		want              string
	}{
		{"int2", "smallint", false, "SMALLINT"},
		{"int8", "bigint", true, "BIGINT NOT NULL"},
		{"numeric", "numeric(10,2)", false, "DECIMAL(10, 2)"},
		{"numeric", "numeric(5)", false, "DECIMAL(5, 0)"},
		{"numeric", "numeric", false, "STRING"},
		{"numeric", "numeric(50,2)", false, "STRING"},
		{"varchar", "character varying(32)", false, "VARCHAR(32)"},
		{"varchar", "character varying", false, "STRING"},
		{"bpchar", "character(3)", false, "CHAR(3)"},
		{"text", "text", false, "STRING"},
		{"timestamptz", "timestamp(3) with time zone", false, "TIMESTAMP_LTZ(3)"},
		{"timestamptz", "timestamp with time zone", false, "TIMESTAMP_LTZ(6)"},
		{"timestamp", "timestamp without time zone", false, "TIMESTAMP(6)"},
		{"time", "time(0) without time zone", false, "TIME(0)"},
		{"interval", "interval", false, "STRING"},
		{"_int4", "integer[]", false, "STRING"},
	} {
		if got := pipelineType(&column{typname: c.typname, typeName: c.typeName, notNull: c.notNull}).String(); got != c.want {
			t.Errorf("%s: got %s, want %s", c.typeName, got, c.want)
		}
	}
}

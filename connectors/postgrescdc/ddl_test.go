package postgrescdc

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	_ "github.com/eddystream/eddy/connectors/jdbc" // the pipeline sinks
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/pipeline"
)

// eventRun is a pipeline of a schema's tables into a memory sink of event
// lines (pipeline.FormatEvent), under 'evolve'.
type eventRun struct {
	*cdctest.Running
	sink   *connectortest.MemorySink[string]
	schema string
}

// startEvents starts a pipeline with the postgres source's options opts,
// checkpointing into dir (a restarted pipeline on the same dir resumes
// from its last checkpoint, given the sink of the earlier run). fail, if
// not nil, is called with each line and panics to inject a failure; the
// job then restarts.
func startEvents(t *testing.T, opts map[string]string, schema, dir string, sink *connectortest.MemorySink[string], fail func(line string) bool) *eventRun {
	t.Helper()
	f, _ := pipeline.Sources.Connector("postgres")
	spec := f.Spec()
	o, err := spec.Validate(opts)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewPipelineSource(o)
	if err != nil {
		t.Fatal(err)
	}
	if sink == nil {
		sink = connectortest.NewMemorySink[string]()
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(dir),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(5, 10*time.Millisecond)))
	events := pipeline.Apply(eddy.FromSource(env, "postgres", src, eddy.NoWatermarks[pipeline.Event]()), &pipeline.Definition{Behavior: pipeline.Evolve})
	var mu sync.Mutex
	lines := eddy.Map(events, func(e pipeline.Event) string {
		l := pipeline.FormatEvent(e)
		if fail != nil {
			mu.Lock()
			f := fail(l)
			mu.Unlock()
			if f {
				panic("failure injected at " + l)
			}
		}
		return l
	}).Name("failure hook")
	eddy.WriteTo(lines, "memory sink", sink.Sink())
	return &eventRun{Running: cdctest.Execute(t, env, "pipeline source", 2*time.Minute), sink: sink, schema: schema}
}

// wait waits for lines (with S. for the schema) among the committed
// events.
func (r *eventRun) wait(t *testing.T, lines ...string) {
	t.Helper()
	cdctest.WaitLines(t, r.Ctx, func() string {
		select {
		case <-r.Finished():
			t.Fatalf("the pipeline ended: %v", r.Wait())
		default:
		}
		return strings.Join(r.sink.Committed(), "\n") + "\n"
	}, "S.", r.schema+".", lines...)
}

// schemaEvents returns the committed events other than row changes, with
// S. for the schema.
func (r *eventRun) schemaEvents() []string {
	var out []string
	for _, l := range r.sink.Committed() {
		if !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "-") {
			out = append(out, strings.ReplaceAll(l, r.schema+".", "S."))
		}
	}
	return out
}

// wantEvents compares the schema events with want and checks that no
// event was committed twice.
func (r *eventRun) wantEvents(t *testing.T, want ...string) {
	t.Helper()
	if got := r.schemaEvents(); !slices.Equal(got, want) {
		t.Errorf("schema events:\n%s\nwant:\n%s\nall events:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), strings.Join(r.sink.Committed(), "\n"))
	}
	seen := map[string]bool{}
	for _, l := range r.sink.Committed() {
		if seen[l] {
			t.Errorf("event %q committed twice", l)
		}
		seen[l] = true
	}
}

// TestEventTriggerSchemaChanges reads a schema's tables with
// 'schema-change.capture' = 'event-trigger' while columns are renamed
// (one alone, one with a column added in the same transaction, with rows
// between), a table is renamed, another dropped. The job fails once, at
// the end of a transaction of two DDL statements between many rows, and
// restores a checkpoint taken in the middle of it: the restored job reads the transaction again from the
// tables as they were at its start, so each event and row is committed
// once, in order.
func TestEventTriggerSchemaChanges(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	run(t, c,
		"CREATE TABLE "+schema+".a (id INT PRIMARY KEY, name VARCHAR(10), amount NUMERIC(8, 2) NOT NULL, g INT GENERATED ALWAYS AS (id * 2) STORED)",
		"ALTER TABLE "+schema+".a REPLICA IDENTITY FULL",
		"CREATE TABLE "+schema+".b (id INT PRIMARY KEY, v TEXT)",
		"CREATE TABLE "+schema+".c (id INT PRIMARY KEY)",
		"INSERT INTO "+schema+".a VALUES (1, 'x', 1.50)",
		"INSERT INTO "+schema+".b VALUES (1, 'one')")
	failed := false
	r := startEvents(t, s.pipelineOptions(schema, slot, "schema-change.capture", "event-trigger"), schema, filepath.Join(t.TempDir(), "checkpoints"), nil,
		func(l string) bool {
			f := !failed && strings.HasPrefix(l, "+I "+schema+".a[4,")
			failed = failed || f
			return f
		})
	r.wait(t, "CREATE TABLE S.a (id INT NOT NULL, name VARCHAR(10), amount DECIMAL(8, 2) NOT NULL, PRIMARY KEY (id))",
		"+I S.a[1, x, 1.50]", "CREATE TABLE S.b (id INT NOT NULL, v STRING, PRIMARY KEY (id))", "CREATE TABLE S.c (id INT NOT NULL, PRIMARY KEY (id))")
	run(t, c,
		"ALTER TABLE "+schema+".a RENAME COLUMN name TO label",
		"UPDATE "+schema+".a SET amount = 2.50 WHERE id = 1",
		"BEGIN; INSERT INTO "+schema+".a SELECT g, 'y', 2 FROM generate_series(100, 10099) g; ALTER TABLE "+schema+".a RENAME COLUMN amount TO total; "+
			"INSERT INTO "+schema+".a SELECT g, 'z', 3 FROM generate_series(10100, 20099) g; "+
			"ALTER TABLE "+schema+".a ADD COLUMN note TEXT; INSERT INTO "+schema+".a (id, label, total, note) VALUES (4, 'w', 4, 'four'); COMMIT",
		"ALTER TABLE "+schema+".b RENAME TO b2",
		"INSERT INTO "+schema+".b2 VALUES (2, 'two')",
		"DROP TABLE "+schema+".c")
	r.wait(t, "ALTER TABLE S.a RENAME COLUMN name TO label",
		"-U S.a[1, x, 1.50]", "+U S.a[1, x, 2.50]",
		"+I S.a[100, y, 2.00]", "+I S.a[10099, y, 2.00]",
		"ALTER TABLE S.a RENAME COLUMN amount TO total",
		"+I S.a[10100, z, 3.00]", "+I S.a[20099, z, 3.00]",
		"ALTER TABLE S.a ADD COLUMN note STRING",
		"+I S.a[4, w, 4.00, four]",
		"DROP TABLE S.b",
		"CREATE TABLE S.b2 (id INT NOT NULL, v STRING, PRIMARY KEY (id))",
		"+I S.b2[2, two]",
		"DROP TABLE S.c")
	if !failed {
		t.Error("the failure was not injected")
	}
	r.wantEvents(t,
		"CREATE TABLE S.a (id INT NOT NULL, name VARCHAR(10), amount DECIMAL(8, 2) NOT NULL, PRIMARY KEY (id))",
		"CREATE TABLE S.b (id INT NOT NULL, v STRING, PRIMARY KEY (id))",
		"CREATE TABLE S.c (id INT NOT NULL, PRIMARY KEY (id))",
		"ALTER TABLE S.a RENAME COLUMN name TO label",
		"ALTER TABLE S.a RENAME COLUMN amount TO total",
		"ALTER TABLE S.a ADD COLUMN note STRING",
		"DROP TABLE S.b",
		"CREATE TABLE S.b2 (id INT NOT NULL, v STRING, PRIMARY KEY (id))",
		"DROP TABLE S.c")
	inserts := 0
	for _, l := range r.sink.Committed() {
		if strings.HasPrefix(l, "+I "+schema+".a[") {
			inserts++
		}
	}
	if inserts != 1+20000+1 {
		t.Errorf("%d inserts into a committed, want %d", inserts, 1+20000+1)
	}
}

// TestRelationRenames reads column renames without the event triggers,
// from pgoutput's relations. A rename whose table's catalog still has the
// relation's columns when the relation is read is a rename; the pipeline
// is then stopped, and a column renamed twice with a row between, so that
// the restored pipeline reads a relation the catalog no longer matches:
// that rename shows as a column dropped and one added. A renamed table is
// dropped and created under its new name.
func TestRelationRenames(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	run(t, c,
		"CREATE TABLE "+schema+".a (id INT PRIMARY KEY, name VARCHAR(10), amount INT)",
		"CREATE TABLE "+schema+".b (id INT PRIMARY KEY, v TEXT)",
		"INSERT INTO "+schema+".a VALUES (1, 'x', 1)")
	dir := filepath.Join(t.TempDir(), "checkpoints")
	opts := s.pipelineOptions(schema, slot)
	r := startEvents(t, opts, schema, dir, nil, nil)
	r.wait(t, "+I S.a[1, x, 1]", "CREATE TABLE S.b (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
	run(t, c,
		"ALTER TABLE "+schema+".a RENAME COLUMN name TO label",
		"INSERT INTO "+schema+".a VALUES (2, 'y', 2)",
		"ALTER TABLE "+schema+".b RENAME TO b2",
		"INSERT INTO "+schema+".b2 VALUES (1, 'one')")
	r.wait(t, "ALTER TABLE S.a RENAME COLUMN name TO label", "+I S.a[2, y, 2]",
		"DROP TABLE S.b", "CREATE TABLE S.b2 (id INT NOT NULL, v STRING, PRIMARY KEY (id))", "+I S.b2[1, one]")
	r.wantEvents(t,
		"CREATE TABLE S.a (id INT NOT NULL, name VARCHAR(10), amount INT, PRIMARY KEY (id))",
		"CREATE TABLE S.b (id INT NOT NULL, v STRING, PRIMARY KEY (id))",
		"ALTER TABLE S.a RENAME COLUMN name TO label",
		"DROP TABLE S.b",
		"CREATE TABLE S.b2 (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	run(t, c,
		"ALTER TABLE "+schema+".a RENAME COLUMN amount TO total",
		"INSERT INTO "+schema+".a VALUES (3, 'z', 3)",
		"ALTER TABLE "+schema+".a RENAME COLUMN total TO sum")
	r = startEvents(t, opts, schema, dir, r.sink, nil)
	r.wait(t, "ALTER TABLE S.a DROP COLUMN amount, ADD COLUMN total INT", "+I S.a[3, z, 3]")
}

// TestEventTriggerIntoSink runs a pipeline with the event triggers into
// the PostgreSQL sink (another database of the same server) under
// 'evolve': renamed columns keep their values in the sink table. The
// pipeline is stopped after the first rename and restored from its
// checkpoint after more DDL: a column renamed and one added in one
// transaction, a table renamed, another dropped.
func TestEventTriggerIntoSink(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	run(t, c,
		"CREATE DATABASE sinkdb",
		"CREATE TABLE "+schema+".a (id INT PRIMARY KEY, name VARCHAR(10), amount NUMERIC(8, 2) NOT NULL)",
		"CREATE TABLE "+schema+".b (id INT PRIMARY KEY, v TEXT)",
		"CREATE TABLE "+schema+".c (id INT PRIMARY KEY)",
		"INSERT INTO "+schema+".a VALUES (1, 'x', 1.50), (2, 'y', 2.50)",
		"INSERT INTO "+schema+".b VALUES (1, 'one')",
		"INSERT INTO "+schema+".c VALUES (1)")
	sinkConn, err := pgconn.Connect(context.Background(), s.DSN("sinkdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer sinkConn.Close(context.Background())
	sinkRows := func(q string) ([]string, error) {
		res, err := sinkConn.Exec(context.Background(), q).ReadAll()
		if err != nil {
			return nil, err
		}
		var out []string
		for _, row := range res[0].Rows {
			f := make([]string, len(row))
			for i, v := range row {
				f[i] = string(v)
				if v == nil {
					f[i] = "NULL"
				}
			}
			out = append(out, strings.Join(f, "|"))
		}
		return out, nil
	}
	def, err := pipeline.Parse([]byte(fmt.Sprintf(`
source:
  type: postgres
  hostname: %s
  port: %d
  username: postgres
  password: ""
  tables: postgres.%s.\.*
  slot.name: %s
  debezium.publication.name: pub_%s
  heartbeat.interval: 100ms
  schema-change.capture: event-trigger
sink:
  type: postgres
  url: jdbc:postgresql://%s:%d/sinkdb
  username: postgres
pipeline:
  schema.change.behavior: evolve
`, s.Host, s.Port, schema, slot, slot, s.Host, s.Port)), "sink.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "checkpoints")
	start := func() *cdctest.Running {
		env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(50*time.Millisecond), eddy.WithCheckpointDir(dir))
		if err := pipeline.Build(env, def); err != nil {
			t.Fatal(err)
		}
		return cdctest.Execute(t, env, "pipeline", 2*time.Minute)
	}
	waitSink := func(r *cdctest.Running, q string, want ...string) {
		t.Helper()
		for {
			select {
			case <-r.Finished():
				t.Fatalf("the pipeline ended: %v", r.Wait())
			default:
			}
			got, err := sinkRows(q)
			if err == nil && slices.Equal(got, want) {
				return
			}
			if r.Ctx.Err() != nil {
				t.Fatalf("%s: got %v (%v), want %v", q, got, err, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	tables := "SELECT table_name FROM information_schema.tables WHERE table_schema = '" + schema + "' ORDER BY 1"
	r := start()
	waitSink(r, tables, "a", "b", "c")
	run(t, c, "ALTER TABLE "+schema+".a RENAME COLUMN name TO label", "UPDATE "+schema+".a SET amount = 3 WHERE id = 2")
	waitSink(r, "SELECT id, label, amount FROM "+schema+".a ORDER BY id", "1|x|1.50", "2|y|3.00")
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	run(t, c,
		"BEGIN; ALTER TABLE "+schema+".a RENAME COLUMN amount TO total; ALTER TABLE "+schema+".a ADD COLUMN note TEXT; INSERT INTO "+schema+".a VALUES (3, 'z', 3, 'three'); COMMIT",
		"ALTER TABLE "+schema+".b RENAME TO b2",
		"INSERT INTO "+schema+".b2 VALUES (2, 'two')",
		"DROP TABLE "+schema+".c")
	r = start()
	waitSink(r, tables, "a", "b2")
	waitSink(r, "SELECT id, label, total, note FROM "+schema+".a ORDER BY id", "1|x|1.50|NULL", "2|y|3.00|NULL", "3|z|3.00|three")
	waitSink(r, "SELECT id, v FROM "+schema+".b2 ORDER BY id", "2|two")
	waitSink(r, "SELECT column_name FROM information_schema.columns WHERE table_schema = '"+schema+"' AND table_name = 'a' ORDER BY ordinal_position",
		"id", "label", "total", "note")
}

// TestEventTriggerPrivilege starts a pipeline with the event triggers as a
// user that may not create them: the error names the option and gives
// the SQL a superuser runs; once one has, the user's pipeline starts.
func TestEventTriggerPrivilege(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	run(t, c,
		"CREATE TABLE "+schema+".a (id INT PRIMARY KEY)",
		"CREATE PUBLICATION pub_"+slot+" FOR ALL TABLES",
		"CREATE USER eddy PASSWORD 'pw' REPLICATION",
		"GRANT USAGE ON SCHEMA "+schema+" TO eddy",
		"GRANT SELECT ON ALL TABLES IN SCHEMA "+schema+" TO eddy")
	opts := s.pipelineOptions(schema, slot, "schema-change.capture", "event-trigger", "username", "eddy", "password", "pw")
	r := startEvents(t, opts, schema, filepath.Join(t.TempDir(), "checkpoints"), nil, nil)
	err := r.Wait()
	cdctest.WantError(t, err, "'schema-change.capture' = 'event-trigger'", "user 'eddy'", "superuser",
		"CREATE EVENT TRIGGER eddy_capture_ddl_end", "CREATE EVENT TRIGGER eddy_capture_ddl_drop", "'schema-change.capture' = 'relation'")
	// The SQL of the error, as a superuser runs it.
	i := strings.Index(err.Error(), "CREATE OR REPLACE FUNCTION")
	j := strings.LastIndex(err.Error(), "();")
	if i < 0 || j < i {
		t.Fatalf("the error has no SQL to run: %v", err)
	}
	run(t, c, "BEGIN; "+err.Error()[i:j+3]+" COMMIT")
	r = startEvents(t, opts, schema, filepath.Join(t.TempDir(), "checkpoints"), nil, nil)
	r.wait(t, "CREATE TABLE S.a (id INT NOT NULL, PRIMARY KEY (id))")
	run(t, c, "ALTER TABLE "+schema+".a ADD COLUMN v INT", "ALTER TABLE "+schema+".a RENAME COLUMN v TO w")
	r.wait(t, "ALTER TABLE S.a ADD COLUMN v INT", "ALTER TABLE S.a RENAME COLUMN v TO w")
}

// startSQL runs a job of src into a memory sink, with checkpoints and
// without restarts.
func startSQL(t *testing.T, src connector.Source[connector.TableRecord]) *cdctest.Running {
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond),
		eddy.WithCheckpointDir(filepath.Join(t.TempDir(), "checkpoints")), eddy.WithRestartStrategy(eddy.NoRestart()))
	sink := connectortest.NewMemorySink[connector.TableRecord]()
	eddy.WriteTo(eddy.FromSource(env, "postgres-cdc", src, eddy.WatermarkStrategy[connector.TableRecord]{}), "memory sink", sink.Sink())
	r := cdctest.Execute(t, env, "postgres-cdc", time.Minute)
	r.Sink = sink
	return r
}

// TestSQLTableDDL stops SQL tables' jobs whose tables are dropped (seen
// through the event triggers) or renamed (seen through a relation too),
// with errors naming the table and the statement.
func TestSQLTableDDL(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	t.Run("drop", func(t *testing.T) {
		schema, slot := s.newSchema(c)
		createAccounts(t, c, schema, 3)
		r := startSQL(t, openSource(t, s.options(schema, "accounts", slot, "schema-change.capture", "event-trigger"), accountsTable))
		r.WaitFor(t, 3)
		// The error names the command and the table, never the client's
		// query text, which may hold more (here a comment with a secret).
		run(t, c, "DROP TABLE "+schema+".accounts /* password=hunter2 */")
		err := r.Wait()
		cdctest.WantError(t, err, schema+".accounts was dropped", "DROP TABLE "+schema+".accounts")
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error quotes the client's query text: %v", err)
		}
	})
	t.Run("rename", func(t *testing.T) {
		schema, slot := s.newSchema(c)
		createAccounts(t, c, schema, 3)
		r := startSQL(t, openSource(t, s.options(schema, "accounts", slot), accountsTable))
		r.WaitFor(t, 3)
		run(t, c, "ALTER TABLE "+schema+".accounts RENAME TO old_accounts", "INSERT INTO "+schema+".old_accounts VALUES (4, 4, 'four')")
		cdctest.WantError(t, r.Wait(), schema+".accounts was renamed to "+schema+".old_accounts", "'table-name'")
	})
	// A table dropped and created again under its name is another table
	// (another oid): its changes stop the job instead of being skipped
	// unseen.
	t.Run("recreate", func(t *testing.T) {
		schema, slot := s.newSchema(c)
		createAccounts(t, c, schema, 3)
		r := startSQL(t, openSource(t, s.options(schema, "accounts", slot), accountsTable))
		r.WaitFor(t, 3)
		run(t, c, "DROP TABLE "+schema+".accounts", "CREATE TABLE "+schema+".accounts "+cdctest.AccountsColumns,
			"ALTER TABLE "+schema+".accounts REPLICA IDENTITY FULL", "INSERT INTO "+schema+".accounts VALUES (4, 4, 'four')")
		cdctest.WantError(t, r.Wait(), schema+".accounts was dropped or renamed, and another table took its name", "'slot.name'")
	})
}

// TestEventTriggerFunctionOwner checks that the installed function is a
// superuser's, whoever created it first: a user who may create functions
// in schema public and made public.eddy_capture_ddl() before eddy
// installed its triggers must not be able to change the body the triggers
// run (as the user running DDL, superusers too). An installation whose
// function is not a superuser's is done again, and another function of
// the name (another signature) does not stop the source.
func TestEventTriggerFunctionOwner(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	run(t, c, "CREATE USER mallory PASSWORD 'pw'", "GRANT CREATE ON SCHEMA public TO mallory")
	mc, err := pgconn.Connect(context.Background(), fmt.Sprintf("postgres://mallory:pw@%s:%d/postgres?sslmode=disable", s.Host, s.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close(context.Background())
	m := &conn{mc}
	run(t, m, "CREATE FUNCTION public.eddy_capture_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$BEGIN END$$")
	cfg := &config{ddlTrigger: true, database: "postgres", user: "postgres", host: s.Host, port: s.Port}
	ensure := func() {
		t.Helper()
		if err := cfg.ensureDDLCapture(context.Background(), c.PgConn); err != nil {
			t.Fatal(err)
		}
		if got := rows(t, c, "SELECT proowner::regrole FROM pg_proc WHERE oid = 'public.eddy_capture_ddl()'::regprocedure"); len(got) != 1 || got[0] != "postgres" {
			t.Errorf("the function's owner is %v, want postgres", got)
		}
	}
	ensure()
	_, err = mc.Exec(context.Background(), "CREATE OR REPLACE FUNCTION public.eddy_capture_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$BEGIN EXECUTE 'ALTER ROLE mallory SUPERUSER'; END$$").ReadAll()
	if pgCode(err) != "42501" {
		t.Errorf("mallory replaced the function's body: %v", err)
	}
	run(t, c, "CREATE TABLE owner_check (id INT)")
	if got := rows(t, c, "SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'"); got[0] != "f" {
		t.Fatal("mallory's body ran as the superuser")
	}
	// An installation whose function someone else owns is done again.
	run(t, c, "ALTER FUNCTION public.eddy_capture_ddl() OWNER TO mallory")
	run(t, m, "CREATE FUNCTION public.eddy_capture_ddl(int) RETURNS int LANGUAGE sql AS $$SELECT 1$$")
	ensure()
}

package mysqlcdc

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/pipeline"
)

// historySink records a pipeline's events as lines of text: each as
// pipeline.FormatEvent writes it, followed, but for DROP TABLE, by the
// schema it carries, so that a row's values can be told by column.
type historySink struct {
	mu    sync.Mutex
	lines []string
}

// NewWriter returns the writer of a subtask.
func (s *historySink) NewWriter(connector.WriterContext) (connector.Writer[pipeline.Event], error) {
	return historyWriter{s}, nil
}

type historyWriter struct{ s *historySink }

// Write records events.
func (w historyWriter) Write(events []pipeline.Event, _ []int64) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for _, e := range events {
		line := pipeline.FormatEvent(e)
		if e.Kind != pipeline.DropTable && e.Schema != nil {
			line += " " + e.Schema.String()
		}
		w.s.lines = append(w.s.lines, line)
	}
	return nil
}

// Flush does nothing: the events are recorded as they come.
func (historyWriter) Flush() error { return nil }

// Close does nothing.
func (historyWriter) Close() error { return nil }

// got returns the lines recorded so far, the database db written DB.
func (s *historySink) got(db string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.lines))
	for i, l := range s.lines {
		out[i] = strings.ReplaceAll(l, db+".", "DB.")
	}
	return out
}

// historyRun is a pipeline of a mysql source of every table of a
// database into a historySink.
type historyRun struct {
	env  *eddy.Environment
	run  *cdctest.Running
	sink *historySink
	db   string
}

// runHistory starts a pipeline of the tables of db, from the savepoint
// at restore where it is not "".
func runHistory(t *testing.T, s *server, db, serverIDs, restore string) *historyRun {
	t.Helper()
	f, _ := pipeline.Sources.Connector("mysql")
	spec := f.Spec()
	opts, err := spec.Validate(map[string]string{"hostname": s.Host, "port": fmt.Sprint(s.Port), "username": "root",
		"tables": db + `.\.*`, "server-id": serverIDs})
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewPipelineSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	o := []eddy.Option{eddy.WithParallelism(1)}
	if restore != "" {
		o = append(o, eddy.WithRestoreFrom(restore))
	}
	h := &historyRun{env: eddy.NewEnvironment(o...), sink: &historySink{}, db: db}
	eddy.WriteTo(eddy.FromSource(h.env, "mysql", src, eddy.NoWatermarks[pipeline.Event]()), "history", h.sink)
	h.run = cdctest.Execute(t, h.env, "schema history", 2*time.Minute)
	return h
}

// waitFor waits until a recorded line starts with each of prefixes, and
// returns the lines.
func (h *historyRun) waitFor(t *testing.T, prefixes ...string) []string {
	t.Helper()
	for {
		got := h.sink.got(h.db)
		missing := ""
		for _, p := range prefixes {
			found := false
			for _, l := range got {
				found = found || strings.HasPrefix(l, p)
			}
			if !found {
				missing = p
				break
			}
		}
		if missing == "" {
			return got
		}
		select {
		case <-h.run.Ctx.Done():
			t.Fatalf("the pipeline did not give %q:\n%s", missing, strings.Join(got, "\n"))
		case <-h.run.Finished():
			t.Fatalf("the pipeline ended (%v) without giving %q:\n%s", h.run.Wait(), missing, strings.Join(got, "\n"))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// savepoint takes a savepoint that stops the pipeline, and returns its
// path.
func (h *historyRun) savepoint(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "savepoint")
	var path string
	var err error
	for range 200 { // refused until every task runs
		if path, err = h.env.TriggerSavepoint(context.Background(), dir, true); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := h.run.Wait(); err != nil {
		t.Fatal(err)
	}
	return path
}

// stoppedAt runs a pipeline of db's tables until it has read the rows of
// its snapshot and a row of the binary log (stmts, which the test gives),
// then stops it with a savepoint, whose path it returns: a pipeline
// restored from it reads the binary log from there, behind the server by
// whatever the test runs in between.
func stoppedAt(t *testing.T, s *server, c *conn, db, serverIDs string, snapshot []string, marker string, stmts ...string) string {
	t.Helper()
	h := runHistory(t, s, db, serverIDs, "")
	h.waitFor(t, snapshot...)
	c.Exec(t, stmts...)
	h.waitFor(t, marker)
	return h.savepoint(t)
}

// TestPipelineSourceReadsBehindSchemaChanges restores a pipeline from a
// savepoint taken before a table changed several times, so that its
// source reads every statement behind the server, which has changed the
// table again since (and dropped it, in the end): a column added in the
// middle, columns renamed and reordered with as many columns as before, a
// type changed and a column dropped, a table created, renamed and
// altered. Each schema event says the change of its statement, and every
// row is read into the columns it was written to.
func TestPipelineSourceReadsBehindSchemaChanges(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "USE "+db,
		"CREATE TABLE a (id INT PRIMARY KEY, x INT, y INT, note VARCHAR(10))",
		"INSERT INTO a VALUES (1, 10, 100, 'one')")
	sp := stoppedAt(t, s, c, db, "6300-6310", []string{"+I DB.a[1, 10, 100, one]"}, "+I DB.a[5, 50, 500, marker]",
		"INSERT INTO a VALUES (5, 50, 500, 'marker')")
	c.Exec(t,
		"ALTER TABLE a ADD COLUMN z INT AFTER x",
		"INSERT INTO a VALUES (2, 20, 2000, 200, 'two')",
		"ALTER TABLE a CHANGE y w INT FIRST, MODIFY note VARCHAR(20) AFTER id",
		"INSERT INTO a (id, x, z, w, note) VALUES (3, 30, 3000, 300, 'three')",
		"ALTER TABLE a MODIFY x BIGINT, DROP COLUMN z",
		"INSERT INTO a VALUES (400, 4, 'four', 40)",
		"UPDATE a SET note = 'uno' WHERE id = 1",
		"DROP TABLE a",
		"CREATE TABLE c (id INT PRIMARY KEY, t DATETIME(3))",
		"INSERT INTO c VALUES (1, '2024-05-06 07:08:09.123')",
		"RENAME TABLE c TO d",
		"INSERT INTO d VALUES (2, '2024-05-06 07:08:10')",
		"ALTER TABLE d ADD COLUMN n INT NOT NULL DEFAULT 7 FIRST",
		"INSERT INTO d VALUES (8, 3, NULL)",
		"DROP TABLE d")
	h := runHistory(t, s, db, "6300-6310", sp)
	got := h.waitFor(t, "DROP TABLE DB.d")
	h.run.Stop()
	want := []string{
		"CREATE TABLE DB.a (id INT NOT NULL, x INT, y INT, note VARCHAR(10), PRIMARY KEY (id)) (id INT NOT NULL, x INT, y INT, note VARCHAR(10), PRIMARY KEY (id))",
		"ALTER TABLE DB.a ADD COLUMN z INT (id INT NOT NULL, x INT, z INT, y INT, note VARCHAR(10), PRIMARY KEY (id))",
		"+I DB.a[2, 20, 2000, 200, two] (id INT NOT NULL, x INT, z INT, y INT, note VARCHAR(10), PRIMARY KEY (id))",
		"ALTER TABLE DB.a RENAME COLUMN y TO w, ALTER COLUMN note TYPE VARCHAR(20) (w INT, id INT NOT NULL, note VARCHAR(20), x INT, z INT, PRIMARY KEY (id))",
		"+I DB.a[300, 3, three, 30, 3000] (w INT, id INT NOT NULL, note VARCHAR(20), x INT, z INT, PRIMARY KEY (id))",
		"ALTER TABLE DB.a DROP COLUMN z, ALTER COLUMN x TYPE BIGINT (w INT, id INT NOT NULL, note VARCHAR(20), x BIGINT, PRIMARY KEY (id))",
		"+I DB.a[400, 4, four, 40] (w INT, id INT NOT NULL, note VARCHAR(20), x BIGINT, PRIMARY KEY (id))",
		"-U DB.a[100, 1, one, 10] (w INT, id INT NOT NULL, note VARCHAR(20), x BIGINT, PRIMARY KEY (id))",
		"+U DB.a[100, 1, uno, 10] (w INT, id INT NOT NULL, note VARCHAR(20), x BIGINT, PRIMARY KEY (id))",
		"DROP TABLE DB.a",
		"CREATE TABLE DB.c (id INT NOT NULL, t TIMESTAMP(3), PRIMARY KEY (id)) (id INT NOT NULL, t TIMESTAMP(3), PRIMARY KEY (id))",
		"+I DB.c[1, 2024-05-06T07:08:09.123] (id INT NOT NULL, t TIMESTAMP(3), PRIMARY KEY (id))",
		"DROP TABLE DB.c",
		"CREATE TABLE DB.d (id INT NOT NULL, t TIMESTAMP(3), PRIMARY KEY (id)) (id INT NOT NULL, t TIMESTAMP(3), PRIMARY KEY (id))",
		"+I DB.d[2, 2024-05-06T07:08:10] (id INT NOT NULL, t TIMESTAMP(3), PRIMARY KEY (id))",
		"ALTER TABLE DB.d ADD COLUMN n INT NOT NULL (n INT NOT NULL, id INT NOT NULL, t TIMESTAMP(3), PRIMARY KEY (id))",
		"+I DB.d[8, 3, null] (n INT NOT NULL, id INT NOT NULL, t TIMESTAMP(3), PRIMARY KEY (id))",
		"DROP TABLE DB.d",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the pipeline gave\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

package postgrescdc

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/pipeline"
)

// restoreRun runs a job of a fresh schema's accounts (3000 rows, chunks of
// 200) that, once the snapshot is read, gets one transaction of 20000
// inserts and 3000 updates; failAt injects failures downstream at those
// records. It returns the committed records.
func restoreRun(t *testing.T, s *server, failAt ...int64) []string {
	t.Helper()
	admin := s.conn()
	schema, slot := s.newSchema(admin)
	createAccounts(t, admin, schema, 3000)
	failures := cdctest.NewFailures(false, failAt...)
	j := job(openSource(t, s.options(schema, "accounts", slot, "scan.incremental.snapshot.chunk.size", "200"), accountsTable))
	j.Parallelism, j.Checkpoints, j.Restarts, j.Timeout, j.Hook = 2, 5*time.Millisecond, 20, 2*time.Minute, failures.Hook
	r := j.Start(t)
	r.WaitFor(t, 3000) // the snapshot
	admin.Tx(t, "INSERT INTO "+schema+".accounts SELECT g, g, 'big' FROM generate_series(100001, 120000) g",
		"UPDATE "+schema+".accounts SET balance = balance + 1 WHERE id <= 3000")
	const total = 3000 + 20000 + 2*3000
	r.WaitFor(t, total)                // the transaction
	time.Sleep(200 * time.Millisecond) // anything more would be a duplicate
	r.Stop()
	if left := failures.Left(); len(left) != 0 {
		t.Errorf("failures not injected: %v", left)
	}
	return cdctest.Keys(accountsTable.Schema, r.Sink.Committed())
}

// TestRestoreMidSnapshotAndTransaction compares the output of a job that
// fails in the middle of its snapshot (the restored job reads the chunks
// left in a new exported snapshot) and twice in the middle of one large
// transaction (the restored job reads the transaction again and skips the
// changes it had emitted) with that of a job without failures: they must
// be the same records, each once.
func TestRestoreMidSnapshotAndTransaction(t *testing.T) {
	s := startServer(t)
	want := restoreRun(t, s)
	got := restoreRun(t, s, 1500, 3000+9000, 3000+21000)
	if !slices.Equal(got, want) {
		t.Fatalf("with failures the job emitted %d records, without %d; first differences:\n%s", len(got), len(want), firstDiffs(got, want))
	}
}

// firstDiffs lists records in one list and not the other.
func firstDiffs(got, want []string) string {
	in := map[string]int{}
	for _, r := range want {
		in[r]++
	}
	for _, r := range got {
		in[r]--
	}
	var lines []string
	for r, n := range in {
		if n != 0 {
			lines = append(lines, fmt.Sprintf("%+d %s", -n, r))
		}
	}
	slices.Sort(lines)
	if len(lines) > 20 {
		lines = lines[:20]
	}
	return fmt.Sprint(lines)
}

// readerCtx is the context of a reader a test drives itself.
type readerCtx struct{}

func (readerCtx) SourceName() string                   { return "postgres" }
func (readerCtx) Subtask() int                         { return 0 }
func (readerCtx) Parallelism() int                     { return 1 }
func (readerCtx) RequestSplit()                        {}
func (readerCtx) SendEvent([]byte)                     {}
func (readerCtx) ProcessingTime() int64                { return time.Now().UnixMilli() }
func (readerCtx) Log() *slog.Logger                    { return slog.Default() }
func (o *eventLines) Room() int                        { return o.room }
func (o *eventLines) Finish()                          {}
func (o *eventLines) EmitAt(e pipeline.Event, _ int64) { o.Emit(e) }

// eventLines collects, formatted, the events a reader emits, one at a
// time (room is 1 for each Read), so that a test can checkpoint the reader
// after any of them.
type eventLines struct {
	room   int
	prefix string // replaced by "S." in the lines
	lines  []string
}

func (o *eventLines) Split(string) connector.SplitOutput[pipeline.Event] { return o }
func (o *eventLines) BadRecord(d connector.DeadLetter) error {
	return fmt.Errorf("bad record at %s: %s", d.Location, d.Error)
}
func (o *eventLines) Emit(e pipeline.Event) {
	o.room--
	o.lines = append(o.lines, strings.ReplaceAll(pipeline.FormatEvent(e), o.prefix, "S."))
}

// readUntil reads the stream until a line starting with until is emitted
// (a Read emits one line at most); the test fails if the reader fails or
// if the line has not come after two minutes.
func readUntil(t *testing.T, r connector.Reader[pipeline.Event], out *eventLines, until string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out.room = 1
		n := len(out.lines)
		if err := r.Read(out); err != nil {
			t.Fatalf("reading until %q: %v; read so far:\n%s", until, err, strings.Join(out.lines, "\n"))
		}
		if len(out.lines) > n && strings.HasPrefix(out.lines[len(out.lines)-1], until) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line %q after two minutes; read so far:\n%s", until, strings.Join(out.lines, "\n"))
		}
	}
}

// TestPipelineRestoreBeforeSchemaChanges restores a pipeline's stream
// from checkpoints taken before a table's columns were added, dropped,
// retyped (and, with the event triggers, renamed and made nullable) and a
// table created, all of which are in the catalog before the restored
// reader reads them. The first checkpoint is taken before the stream is
// opened, the second in the middle of the changes: each restored reader
// decodes every change with the table as it was when the change was
// written, so that it emits the same events, in the same order, as a
// reader that read them as they came.
func TestPipelineRestoreBeforeSchemaChanges(t *testing.T) {
	s := startServer(t)
	for _, mode := range []string{"relation", "event-trigger"} {
		t.Run(mode, func(t *testing.T) {
			trigger := mode == "event-trigger"
			c := s.conn()
			schema, slot := s.newSchema(c)
			a := schema + ".a"
			run(t, c, "CREATE TABLE "+a+" (id INT PRIMARY KEY, name VARCHAR(10), amount NUMERIC(8, 2) NOT NULL)",
				"ALTER TABLE "+a+" REPLICA IDENTITY FULL", "INSERT INTO "+a+" VALUES (1, 'a', 1.50)")
			f, _ := pipeline.Sources.Connector("postgres")
			spec := f.Spec()
			opts, err := spec.Validate(s.pipelineOptions(schema, slot, "scan.startup.mode", "latest-offset", "schema-change.capture", mode))
			if err != nil {
				t.Fatal(err)
			}
			src, err := NewPipelineSource(opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx := &gateCtx{p: 1, assigned: map[int][]connector.Split{}}
			e, err := newEnumerator(ctx, src.cfg, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.discovered(e.discover()); err != nil {
				t.Fatal(err)
			}
			// An enumerator restored before it handed out the stream split
			// hands it out with the tables as discovery found them.
			state, err := e.SnapshotState(1)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.HandleSplitRequest(0); err != nil {
				t.Fatal(err)
			}
			ctx2 := &gateCtx{p: 1, assigned: map[int][]connector.Split{}}
			e2, err := newEnumerator(ctx2, src.cfg, nil, state)
			if err != nil {
				t.Fatal(err)
			}
			if err := e2.HandleSplitRequest(0); err != nil {
				t.Fatal(err)
			}
			for _, splits := range [][]connector.Split{ctx.assigned[0], ctx2.assigned[0]} {
				if len(splits) != 1 {
					t.Fatalf("the enumerator handed out %d splits, want the stream split", len(splits))
				}
				_, ss, err := decodeSplit(splits[0])
				if err != nil || ss == nil || len(ss.tables) != 1 || ss.tables[0].id() != a || ss.tables[0].columnNames() != "id, name, amount" || ss.tables[0].version != 1 {
					t.Fatalf("the stream split (%v) has tables %v, want %s (id, name, amount) at version 1", err, ss, a)
				}
			}
			newReader := func(splits []connector.Split) connector.Reader[pipeline.Event] {
				r, err := src.NewReader(readerCtx{})
				if err != nil {
					t.Fatal(err)
				}
				if err := r.AddSplits(splits); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = r.Close() })
				return r
			}
			// A checkpoint of a reader that has the stream split and has
			// not opened it yet.
			r1 := newReader(ctx.assigned[0])
			before, err := r1.SnapshotState(1)
			if err != nil {
				t.Fatal(err)
			}
			_ = r1.Close()

			stmts := []string{
				"INSERT INTO " + a + " VALUES (2, 'b', 2.50)",
				"ALTER TABLE " + a + " ADD COLUMN note TEXT",
				"INSERT INTO " + a + " VALUES (3, 'c', 3.50, 'three')",
				"ALTER TABLE " + a + " DROP COLUMN name",
				"UPDATE " + a + " SET amount = 9.99 WHERE id = 3",
				"ALTER TABLE " + a + " ALTER COLUMN amount TYPE NUMERIC(12, 3)",
				"INSERT INTO " + a + " VALUES (4, 4.125, 'four')",
			}
			want := []string{
				"CREATE TABLE S.a (id INT NOT NULL, name VARCHAR(10), amount DECIMAL(8, 2) NOT NULL, PRIMARY KEY (id))",
				"+I S.a[2, b, 2.50]",
				"ALTER TABLE S.a ADD COLUMN note STRING",
				"+I S.a[3, c, 3.50, three]",
				"ALTER TABLE S.a DROP COLUMN name",
				"-U S.a[3, 3.50, three]",
				"+U S.a[3, 9.99, three]",
				"ALTER TABLE S.a ALTER COLUMN amount TYPE DECIMAL(12, 3) NOT NULL",
				"+I S.a[4, 4.125, four]",
			}
			if trigger {
				// Without the event triggers a relation cannot tell a
				// column renamed from one dropped and one added, nor a
				// column's NOT NULL then, once the catalog has changed.
				stmts = append(stmts,
					"ALTER TABLE "+a+" RENAME COLUMN note TO remark",
					"INSERT INTO "+a+" VALUES (5, 5, 'five')",
					"ALTER TABLE "+a+" ALTER COLUMN amount DROP NOT NULL",
					"INSERT INTO "+a+" VALUES (6, NULL, 'six')")
				want = append(want,
					"ALTER TABLE S.a RENAME COLUMN note TO remark",
					"+I S.a[5, 5.000, five]",
					"ALTER TABLE S.a ALTER COLUMN amount TYPE DECIMAL(12, 3)",
					"+I S.a[6, null, six]")
			}
			stmts = append(stmts,
				"CREATE TABLE "+schema+".c (id INT PRIMARY KEY, v VARCHAR(5) NOT NULL)",
				"INSERT INTO "+schema+".c VALUES (1, 'new')")
			want = append(want,
				"CREATE TABLE S.c (id INT NOT NULL, v VARCHAR(5) NOT NULL, PRIMARY KEY (id))",
				"+I S.c[1, new]")
			run(t, c, stmts...)

			// Restored from before the changes, the reader is checkpointed
			// again in the middle of them.
			r2 := newReader(before)
			out2 := &eventLines{prefix: schema + "."}
			readUntil(t, r2, out2, "+I S.a[3,")
			mid, err := r2.SnapshotState(2)
			if err != nil {
				t.Fatal(err)
			}
			at := len(out2.lines)
			readUntil(t, r2, out2, "+I S.c[1,")
			if !slices.Equal(out2.lines, want) {
				t.Fatalf("restored from before the changes, the stream emitted:\n%s\nwant:\n%s", strings.Join(out2.lines, "\n"), strings.Join(want, "\n"))
			}
			_ = r2.Close()

			r3 := newReader(mid)
			out3 := &eventLines{prefix: schema + "."}
			readUntil(t, r3, out3, "+I S.c[1,")
			// The checkpoint is in the transaction of the row: the table as
			// it was at the transaction's start is announced (with the
			// event triggers, the column added by the transaction before;
			// without, as the relation in the row's transaction has not
			// yet added it), and the transaction read again from its
			// start, without its events emitted before.
			announced := want[0]
			if trigger {
				announced = "CREATE TABLE S.a (id INT NOT NULL, name VARCHAR(10), amount DECIMAL(8, 2) NOT NULL, note STRING, PRIMARY KEY (id))"
			}
			want3 := append([]string{announced}, want[at:]...)
			if !slices.Equal(out3.lines, want3) {
				t.Fatalf("restored from after %q, the stream emitted:\n%s\nwant:\n%s", want[at-1], strings.Join(out3.lines, "\n"), strings.Join(want3, "\n"))
			}
		})
	}
}

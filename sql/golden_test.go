package sql_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/nexmark/queries"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// TestGolden runs the SQL scripts of testdata/golden. The directive
//
//	run p=N stop-after=K
//	<script>
//	----
//	<final table>
//
// runs the script (DDL and one INSERT INTO a table of the 'golden'
// connector) at parallelism N twice: once without interruption, and once
// stopped with a savepoint while it is in the middle of its input (every
// reader of its nexmark and datagen tables pauses after K records until
// the savepoint is taken) and restored from the savepoint by a job built
// from the script again. The final tables of the two (the changelog the
// sink received, materialized) must be equal; the output is the final
// table, a row a line, sorted. The directive ddl keeps its input, which
// every later run of the file runs first (the tables and views the
// scripts share). ${SIDE_INPUT} in a script is a CSV file of the rows
// "i,i" for i in [0, 10000), as Nexmark's q13 reads.
//
// A 'golden' table writes the changes it gets into a filesystem table in
// debezium-json, whose exactly-once part files are what the test reads.
func TestGolden(t *testing.T) {
	sideInput := filepath.Join(t.TempDir(), "side_input.txt")
	if err := queries.WriteSideInput(sideInput, queries.SideInputRows); err != nil {
		t.Fatal(err)
	}
	datadriven.Walk(t, "testdata/golden", func(t *testing.T, path string) {
		ddl := ""
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "ddl":
				ddl = d.Input + "\n"
				return ""
			case "run":
			default:
				d.Fatalf(t, "unknown directive %s; the directives are ddl and run p=N stop-after=K", d.Cmd)
			}
			p, stopAfter := 1, 0
			d.MaybeScanArgs(t, "p", &p)
			d.ScanArgs(t, "stop-after", &stopAfter)
			script := strings.ReplaceAll(ddl+d.Input, "${SIDE_INPUT}", sideInput)
			whole, err := goldenRun(t, script, p, 0)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			if stopAfter <= 0 {
				d.Fatalf(t, "stop-after=%d: want the number of records (> 0) each reader reads before the savepoint", stopAfter)
			}
			restored, err := goldenRun(t, script, p, int64(stopAfter))
			if err != nil {
				d.Fatalf(t, "the run stopped with a savepoint and restored: %v", err)
			}
			if diff := diffLines(restored, whole); diff != "" {
				t.Errorf("%s: the run stopped with a savepoint and restored differs from the uninterrupted run (got the restored, want the uninterrupted):\n%s", d.Pos, diff)
			}
			return strings.Join(whole, "\n") + "\n"
		})
	})
}

// goldenRun runs script at parallelism p and returns the final table of
// its golden sink. With stopAfter > 0, every gated reader pauses after
// emitting stopAfter records, the job stops with a savepoint once all have
// paused, and a new job built from the script restores from it and runs
// to the end.
func goldenRun(t *testing.T, script string, p int, stopAfter int64) ([]string, error) {
	t.Helper()
	g := &goldenEnv{out: filepath.Join(t.TempDir(), "out")}
	build := func(opts ...eddy.Option) (*eddy.Environment, error) {
		s := sql.NewSession(sql.WithConnectors(g.registry()))
		if _, err := s.Execute(script); err != nil {
			return nil, err
		}
		env := eddy.NewEnvironment(append([]eddy.Option{eddy.WithParallelism(p)}, opts...)...)
		if err := s.Build(env); err != nil {
			return nil, err
		}
		return env, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if stopAfter == 0 {
		env, err := build()
		if err != nil {
			return nil, err
		}
		if err := env.Execute(ctx, "golden"); err != nil {
			return nil, err
		}
		return g.finalTable(t)
	}

	// The interrupted run: the gated readers pause after stopAfter records
	// each; once they all have, a savepoint stops the job.
	g.gate.pauseAfter = stopAfter
	env, err := build(eddy.WithCheckpointDir(t.TempDir()))
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "golden") }()
	if err := g.gate.waitPaused(ctx, done); err != nil {
		return nil, err
	}
	sp, err := env.TriggerSavepoint(ctx, t.TempDir(), true)
	if err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	if err := <-done; err != nil {
		return nil, fmt.Errorf("the job stopped with a savepoint: %w", err)
	}
	before := g.gate.emitted.Load()

	// The restored run, the gate open.
	g.gate.open()
	env, err = build(eddy.WithRestoreFrom(sp), eddy.WithCheckpointDir(t.TempDir()))
	if err != nil {
		return nil, err
	}
	if err := env.Execute(ctx, "golden restored"); err != nil {
		return nil, fmt.Errorf("the job restored from %s: %w", sp, err)
	}
	if after := g.gate.emitted.Load() - before; after == 0 {
		return nil, fmt.Errorf("the restored job read nothing more (%d records before the savepoint): the savepoint was not in the middle of the input; lower stop-after", before)
	}
	return g.finalTable(t)
}

// goldenEnv is the connectors of a golden run: the built-in ones, with the
// readers of nexmark and datagen tables behind a gate, and 'golden'.
type goldenEnv struct {
	out    string // the directory of the golden table's files
	gate   gate
	mu     sync.Mutex
	schema *types.RowType // the golden table's columns
}

func (g *goldenEnv) registry() *connector.Registry {
	return gatedRegistry(&g.gate, goldenSinkFactory{g})
}

// gatedRegistry returns the default connectors and formats, nexmark and
// datagen behind gate, and sink.
func gatedRegistry(gate *gate, sink connector.Factory) *connector.Registry {
	r := connector.NewRegistry()
	for _, s := range connector.Default.Specs() {
		if s.Kind == connector.FormatKind {
			f, _ := connector.Default.Format(s.Name)
			r.Register(f)
			continue
		}
		f, _ := connector.Default.Connector(s.Name)
		if s.Name == "nexmark" || s.Name == "datagen" {
			f = gatedFactory{f.(connector.SourceFactory), gate}
		}
		r.Register(f)
	}
	r.Register(sink)
	return r
}

// goldenSinkFactory makes the golden table: a filesystem table in
// debezium-json in the run's directory.
type goldenSinkFactory struct{ g *goldenEnv }

func (f goldenSinkFactory) Spec() connector.Spec {
	return connector.Spec{Name: "golden", Kind: connector.SinkKind, Description: "test sink: the changes, exactly once"}
}

func (f goldenSinkFactory) NewSink(ctx connector.Context) (any, error) {
	f.g.mu.Lock()
	f.g.schema = ctx.Table.Schema
	f.g.mu.Unlock()
	return connector.OpenTableSink(connector.Default, "filesystem", map[string]string{"path": f.g.out, "format": "debezium-json"}, ctx.Table)
}

// finalTable reads the committed files of the golden table and returns the
// rows its changes leave, printed as Flink prints rows, sorted.
func (g *goldenEnv) finalTable(t *testing.T) ([]string, error) {
	t.Helper()
	g.mu.Lock()
	rt := g.schema
	g.mu.Unlock()
	if rt == nil {
		return nil, fmt.Errorf("the script writes no golden table: INSERT INTO a table WITH ('connector' = 'golden')")
	}
	dec, err := connector.OpenTableDecoder(connector.Default, "debezium-json", nil, &connector.Table{Schema: rt})
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	var files []string
	if _, err := os.Stat(g.out); err == nil {
		files = visibleFiles(t, g.out)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var derr error
			err := dec.Decode(line, func(c connector.TableRecord) {
				row := strings.TrimPrefix(types.FormatRow(rt, c.Row), "+I")
				if c.Kind.IsAddition() {
					count[row]++
				} else if count[row]--; count[row] < 0 {
					derr = fmt.Errorf("%s: a retraction of a row not in the table: %s", f, row)
				}
			})
			if err == nil {
				err = derr
			}
			if err != nil {
				return nil, err
			}
		}
	}
	var out []string
	for r, n := range count {
		for ; n > 0; n-- {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out, nil
}

// gate pauses the readers of sources: while it is closed, each reader
// emits at most pauseAfter records, then nothing until the gate opens (its
// Read returns at once, so that checkpoints and savepoints go on).
type gate struct {
	pauseAfter int64 // 0: open
	opened     atomic.Bool
	readers    atomic.Int64
	paused     atomic.Int64
	emitted    atomic.Int64 // by every reader, in every run
}

func (g *gate) open() { g.opened.Store(true) }

func (g *gate) closed() bool { return g.pauseAfter > 0 && !g.opened.Load() }

// waitPaused waits until every gated reader has paused, or the job ended
// (done), which it reports as an error.
func (g *gate) waitPaused(ctx context.Context, done <-chan error) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if n := g.readers.Load(); n > 0 && g.paused.Load() == n {
			return nil
		}
		select {
		case err := <-done:
			return fmt.Errorf("the job ended (%v) before its readers paused: the input is shorter than stop-after records per reader", err)
		case <-ctx.Done():
			return fmt.Errorf("waiting for the readers to pause: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// gatedFactory makes the sources of a connector with gated readers.
type gatedFactory struct {
	connector.SourceFactory
	g *gate
}

func (f gatedFactory) NewSource(ctx connector.Context) (any, error) {
	v, err := f.SourceFactory.NewSource(ctx)
	if err != nil {
		return nil, err
	}
	if s, ok := v.(connector.Source[connector.TableRecord]); ok && ctx.Table != nil {
		return &gatedSource{s, f.g}, nil
	}
	return v, nil
}

// gatedSource is a table's source whose readers are gated. It keeps the
// source's changelog mode and projections.
type gatedSource struct {
	connector.Source[connector.TableRecord]
	g *gate
}

func (s *gatedSource) ChangelogMode() changelog.Mode {
	if c, ok := s.Source.(connector.ChangelogSource); ok {
		return c.ChangelogMode()
	}
	return changelog.InsertOnly
}

func (s *gatedSource) ProjectFields(paths [][]int) (connector.Source[connector.TableRecord], bool) {
	p, ok := s.Source.(connector.ProjectableSource)
	if !ok {
		return nil, false
	}
	inner, ok := p.ProjectFields(paths)
	if !ok {
		return nil, false
	}
	return &gatedSource{inner, s.g}, true
}

func (s *gatedSource) NewReader(ctx connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	r, err := s.Source.NewReader(ctx)
	if err != nil {
		return nil, err
	}
	s.g.readers.Add(1)
	return &gatedReader{Reader: r, g: s.g}, nil
}

// gatedReader emits at most pauseAfter records while its gate is closed.
// It counts as paused once it has, or once its input has ended.
type gatedReader struct {
	connector.Reader[connector.TableRecord]
	g               *gate
	emitted         int64
	paused          bool
	added, finished int
	noMore          bool
}

func (r *gatedReader) pause() {
	if !r.paused {
		r.paused = true
		r.g.paused.Add(1)
	}
}

func (r *gatedReader) AddSplits(splits []connector.Split) error {
	r.added += len(splits)
	return r.Reader.AddSplits(splits)
}

func (r *gatedReader) Read(out connector.Output[connector.TableRecord]) error {
	if !r.g.closed() {
		return r.Reader.Read(&gatedOutput{Output: out, r: r, open: true})
	}
	if r.emitted >= r.g.pauseAfter {
		r.pause()
		time.Sleep(time.Millisecond)
		return nil
	}
	err := r.Reader.Read(&gatedOutput{Output: out, r: r})
	if r.noMore && r.finished == r.added {
		r.pause()
	}
	return err
}

func (r *gatedReader) NoMoreSplits() {
	r.noMore = true
	if h, ok := r.Reader.(connector.NoMoreSplitsHandler); ok {
		h.NoMoreSplits()
	}
}

func (r *gatedReader) HandleEvent(event []byte) error {
	if h, ok := r.Reader.(connector.ReaderEventHandler); ok {
		return h.HandleEvent(event)
	}
	return nil
}

func (r *gatedReader) NotifyCheckpointComplete(id int64) error {
	if l, ok := r.Reader.(connector.CheckpointListener); ok {
		return l.NotifyCheckpointComplete(id)
	}
	return nil
}

// gatedOutput counts what a gated reader emits and, while the gate is
// closed, leaves room for no more than its share.
type gatedOutput struct {
	connector.Output[connector.TableRecord]
	r    *gatedReader
	open bool
}

func (o *gatedOutput) Room() int {
	room := o.Output.Room()
	if !o.open {
		room = min(room, int(max(0, o.r.g.pauseAfter-o.r.emitted)))
	}
	return room
}

func (o *gatedOutput) Split(id string) connector.SplitOutput[connector.TableRecord] {
	return gatedSplit{o.Output.Split(id), o.r}
}

type gatedSplit struct {
	connector.SplitOutput[connector.TableRecord]
	r *gatedReader
}

func (s gatedSplit) Emit(v connector.TableRecord) {
	s.r.emitted++
	s.r.g.emitted.Add(1)
	s.SplitOutput.Emit(v)
}

func (s gatedSplit) EmitAt(v connector.TableRecord, ts int64) {
	s.r.emitted++
	s.r.g.emitted.Add(1)
	s.SplitOutput.EmitAt(v, ts)
}

func (s gatedSplit) Finish() {
	s.r.finished++
	s.SplitOutput.Finish()
}

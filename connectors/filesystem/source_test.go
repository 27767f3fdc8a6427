package filesystem_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/connectors/filesystem"
	"github.com/eddystream/eddy/formats"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// output collects what a reader emits, with a room of at most room records
// per Read.
type output struct {
	room     int
	emitted  int
	records  []line
	finished []string
	bad      []connector.DeadLetter
}

func (o *output) Split(id string) connector.SplitOutput[line] { return splitOut{o, id} }
func (o *output) Room() int                                   { return o.room - o.emitted }
func (o *output) BadRecord(d connector.DeadLetter) error {
	o.bad = append(o.bad, d)
	return nil
}

type splitOut struct {
	o  *output
	id string
}

func (s splitOut) Emit(v line)            { s.o.records = append(s.o.records, v); s.o.emitted++ }
func (s splitOut) EmitAt(v line, _ int64) { s.Emit(v) }
func (s splitOut) Finish()                { s.o.finished = append(s.o.finished, s.id) }

type readerCtx struct{}

func (readerCtx) SourceName() string    { return "files" }
func (readerCtx) Subtask() int          { return 0 }
func (readerCtx) Parallelism() int      { return 1 }
func (readerCtx) RequestSplit()         {}
func (readerCtx) SendEvent([]byte)      {}
func (readerCtx) ProcessingTime() int64 { return 0 }
func (readerCtx) Log() *slog.Logger     { return slog.Default() }

// TestLinePositionsAcrossRestore reads a file a few lines at a time, each
// time with a new reader restored from the last one's snapshot, and checks
// that every line is read once and bad lines are located by their line.
func TestLinePositionsAcrossRestore(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.jsonl")
	var b strings.Builder
	var want []line
	for i := 1; i <= 23; i++ {
		switch {
		case i%7 == 0:
			b.WriteString("{broken\r\n")
		case i%5 == 0:
			b.WriteString("   \n") // blank: skipped, but counted
		default:
			fmt.Fprintf(&b, "{\"file\":0,\"n\":%d}\r\n", i)
			want = append(want, line{0, int64(i)})
		}
	}
	b.WriteString(`{"file":0,"n":24}`) // the last line has no line ending
	want = append(want, line{0, 24})
	write(t, path, b.String())

	src := filesystem.NewSource(filesystem.SourceOptions{Paths: []string{path}}, formats.JSON[line])
	splits := []connector.Split{}
	{
		// The first split comes from the enumerator's discovery.
		e, err := src.NewEnumerator(&assignCtx{assign: func(s []connector.Split) { splits = append(splits, s...) }}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.AddReader(0); err != nil {
			t.Fatal(err)
		}
	}
	if len(splits) != 1 || splits[0].ID != path {
		t.Fatalf("splits %v", splits)
	}
	var got []line
	var bad []connector.DeadLetter
	for round := 0; len(splits) > 0; round++ {
		if round > 30 {
			t.Fatal("the reader does not advance")
		}
		r, err := src.NewReader(readerCtx{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.AddSplits(splits); err != nil {
			t.Fatal(err)
		}
		out := &output{room: 3}
		if err := r.Read(out); err != nil {
			t.Fatal(err)
		}
		got = append(got, out.records...)
		bad = append(bad, out.bad...)
		if splits, err = r.SnapshotState(int64(round)); err != nil {
			t.Fatal(err)
		}
		if len(out.finished) > 0 && len(splits) > 0 {
			t.Fatalf("a finished split is in the snapshot: %v", splits)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("read %v\nwant %v", got, want)
	}
	var locs []string
	for _, d := range bad {
		locs = append(locs, strings.TrimPrefix(d.Location, dir+string(filepath.Separator)))
		if d.Source != "files" || !strings.HasPrefix(d.Raw, "{broken") || strings.HasSuffix(d.Raw, "\r") || d.Error == "" {
			t.Errorf("dead letter %+v", d)
		}
	}
	if want := []string{"in.jsonl:7", "in.jsonl:14", "in.jsonl:21"}; !slices.Equal(locs, want) {
		t.Errorf("bad lines at %q, want %q", locs, want)
	}
}

// assignCtx is an enumerator context that hands assignments to a function.
type assignCtx struct {
	assign func([]connector.Split)
}

func (c *assignCtx) SourceName() string                                    { return "files" }
func (c *assignCtx) Parallelism() int                                      { return 1 }
func (c *assignCtx) Checkpointing() bool                                   { return true }
func (c *assignCtx) AssignSplits(_ int, s ...connector.Split)              { c.assign(s) }
func (c *assignCtx) SignalNoMoreSplits(int)                                {}
func (c *assignCtx) SendEvent(int, []byte)                                 {}
func (c *assignCtx) CallAsync(func() (any, error), func(any, error) error) {}
func (c *assignCtx) Every(time.Duration, func() error)                     {}
func (c *assignCtx) Log() *slog.Logger                                     { return slog.Default() }

// readAll runs a job reading src and returns the records sorted, with the
// dead letters.
func readAll(t *testing.T, build func(env *eddy.Environment) *eddy.Stream[line]) ([]line, []connector.DeadLetter, error) {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	st := build(env)
	got := eddy.Collect(st)
	dead := eddy.Collect(eddy.DeadLetters(st))
	err := env.Execute(context.Background(), "files")
	v := got.Values()
	sort.Slice(v, func(i, j int) bool { return v[i].File < v[j].File || v[i].File == v[j].File && v[i].N < v[j].N })
	return v, dead.Values(), err
}

func TestHiddenFilesAndDirectoriesAreSkipped(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.jsonl"), `{"file":1,"n":1}`+"\n")
	write(t, filepath.Join(dir, "sub", "b.jsonl"), `{"file":2,"n":1}`+"\n")
	write(t, filepath.Join(dir, ".hidden.jsonl"), "not read\n")
	write(t, filepath.Join(dir, "_SUCCESS"), "not read\n")
	write(t, filepath.Join(dir, ".part-0-1.jsonl.inprogress"), "not read\n")
	write(t, filepath.Join(dir, ".staging", "c.jsonl"), "not read\n")
	write(t, filepath.Join(dir, "_temporary", "d.jsonl"), "not read\n")
	got, _, err := readAll(t, func(env *eddy.Environment) *eddy.Stream[line] {
		return eddy.FromSource(env, "files", filesystem.NewSource(filesystem.SourceOptions{Paths: []string{"file://" + dir}}, formats.JSON[line]), eddy.NoWatermarks[line]())
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []line{{1, 1}, {2, 1}}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	// A hidden file named explicitly, and glob patterns, are read.
	got, _, err = readAll(t, func(env *eddy.Environment) *eddy.Stream[line] {
		paths := []string{filepath.Join(dir, "*.jsonl"), filepath.Join(dir, "s?b", "*.jsonl"), filepath.Join(dir, ".staging", "c.jsonl")}
		write(t, filepath.Join(dir, ".staging", "c.jsonl"), `{"file":3,"n":1}`+"\n")
		return eddy.FromSource(env, "files", filesystem.NewSource(filesystem.SourceOptions{Paths: paths}, formats.JSON[line]), eddy.NoWatermarks[line]())
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []line{{1, 1}, {2, 1}, {3, 1}}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
}

func TestMissingPathsAreErrors(t *testing.T) {
	dir := t.TempDir()
	_, _, err := readAll(t, func(env *eddy.Environment) *eddy.Stream[line] {
		return eddy.FromSource(env, "files", filesystem.NewSource(filesystem.SourceOptions{Paths: []string{filepath.Join(dir, "nope", "*.jsonl")}}, formats.JSON[line]), eddy.NoWatermarks[line]())
	})
	if err == nil || !strings.Contains(err.Error(), "no file matches") || !strings.Contains(err.Error(), "nope") {
		t.Errorf("a path that matches nothing: %v", err)
	}
	_, _, err = readAll(t, func(env *eddy.Environment) *eddy.Stream[line] {
		return eddy.FromSource(env, "files", filesystem.NewSource(filesystem.SourceOptions{Paths: []string{"["}}, formats.JSON[line]), eddy.NoWatermarks[line]())
	})
	if err == nil || !strings.Contains(err.Error(), "bad file pattern") {
		t.Errorf("a bad pattern: %v", err)
	}
}

func TestBadLinesGoToDeadLetters(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.jsonl"), "{\"file\":1,\"n\":1}\n{\"file\":1,\"n\":oops}\n{\"file\":1,\"n\":3}\n")
	write(t, filepath.Join(dir, "b.jsonl"), "\n\nnot json\n")
	src := func() connector.Source[line] {
		return filesystem.NewSource(filesystem.SourceOptions{Paths: []string{dir}}, formats.JSON[line])
	}
	got, dead, err := readAll(t, func(env *eddy.Environment) *eddy.Stream[line] {
		return eddy.FromSource(env, "files", src(), eddy.NoWatermarks[line](), eddy.OnBadRecord(eddy.DeadLetterBadRecords))
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []line{{1, 1}, {1, 3}}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	var locs []string
	for _, d := range dead {
		locs = append(locs, filepath.Base(d.Location)+" "+d.Raw)
	}
	sort.Strings(locs)
	if want := []string{`a.jsonl:2 {"file":1,"n":oops}`, "b.jsonl:3 not json"}; !slices.Equal(locs, want) {
		t.Errorf("dead letters %q, want %q", locs, want)
	}
	// By default a bad line fails the job, naming it and the way out.
	_, _, err = readAll(t, func(env *eddy.Environment) *eddy.Stream[line] {
		return eddy.FromSource(env, "files", src(), eddy.NoWatermarks[line]())
	})
	if err == nil || !strings.Contains(err.Error(), "a.jsonl:2") && !strings.Contains(err.Error(), "b.jsonl:3") || !strings.Contains(err.Error(), "DeadLetterBadRecords") {
		t.Errorf("a bad line without dead letters: %v", err)
	}
}

type person struct {
	Name string
	Age  int
}

// TestRegisteredCSVWithHeader reads CSV files with a header through the
// registry, and writes them back as JSON part files through it.
func TestRegisteredCSVWithHeader(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	write(t, filepath.Join(in, "people.csv"), "name;age\nAnn;42\nBo;x\nCy;7\n")
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	st := eddy.FromConnector[person](env, "filesystem", map[string]string{
		"path": "file://" + in, "format": "csv", "csv.field-delimiter": ";", "source.skip-first-line": "true",
	}, eddy.NoWatermarks[person](), eddy.OnBadRecord(eddy.DeadLetterBadRecords))
	dead := eddy.Collect(eddy.DeadLetters(st))
	eddy.WriteToConnector(st, "filesystem", map[string]string{"path": "file://" + out, "format": "json"})
	if err := env.Execute(context.Background(), "csv to json"); err != nil {
		t.Fatal(err)
	}
	var got []person
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "part-") || !strings.HasSuffix(e.Name(), ".jsonl") {
			t.Errorf("unexpected file %s in the output", e.Name())
			continue
		}
		b, _ := os.ReadFile(filepath.Join(out, e.Name()))
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var p person
			if err := json.Unmarshal([]byte(l), &p); err != nil {
				t.Fatal(err)
			}
			got = append(got, p)
		}
	}
	if want := []person{{"Ann", 42}, {"Cy", 7}}; !slices.Equal(got, want) {
		t.Errorf("wrote %v, want %v", got, want)
	}
	if d := dead.Values(); len(d) != 1 || filepath.Base(d[0].Location) != "people.csv:3" || d[0].Raw != "Bo;x" {
		t.Errorf("dead letters %+v", d)
	}
}

func TestOptionsConformance(t *testing.T) {
	connectortest.RunOptions[person](t, connectortest.OptionsCase{
		Name:  "filesystem",
		Valid: map[string]string{"path": t.TempDir(), "format": "csv"},
	})
}

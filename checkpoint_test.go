package eddy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/internal/testutil"
	"github.com/eddystream/eddy/window"
)

// committedLines returns the committed lines of the file sink in dir.
func committedLines(t *testing.T, dir string) []string { return testutil.CommittedLines(t, dir) }

type reading2 struct {
	Sensor int64
	TS     int64
	Value  int64
}

// sensorJob builds a keyed windowed job over a deterministic, rate-limited
// generator, writing through the exactly-once file sink. hook runs on every
// record, before the window.
func sensorJob(env *eddy.Environment, n int64, rate float64, out string, hook func(reading2)) {
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: rate},
		func(i int64) reading2 { return reading2{Sensor: i % 13, TS: i * 10, Value: i % 7} },
		eddy.BoundedOutOfOrder(0, func(r reading2) int64 { return r.TS }))
	checked := eddy.Map(src, func(r reading2) reading2 {
		if hook != nil {
			hook(r)
		}
		return r
	}).Name("hook")
	sums := eddy.Aggregate(eddy.Window(eddy.KeyBy(checked, func(r reading2) int64 { return r.Sensor }), window.Tumbling(time.Second)),
		agg.Sum(func(r reading2) int64 { return r.Value }))
	eddy.WriteFiles(eddy.Map(sums, func(w eddy.Windowed[int64, int64]) string {
		return fmt.Sprintf("%d %d %d", w.Key, w.Window.Start, w.Value)
	}), out)
}

func failureFree(t *testing.T, n int64) []string {
	out := t.TempDir()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	sensorJob(env, n, 0, out, nil)
	if err := env.Execute(context.Background(), "reference"); err != nil {
		t.Fatal(err)
	}
	lines := committedLines(t, out)
	if len(lines) == 0 {
		t.Fatal("reference run wrote nothing")
	}
	return lines
}

func TestPanicsRecoverExactlyOnce(t *testing.T) {
	const n = 60000
	want := failureFree(t, n)
	out, chk := t.TempDir(), t.TempDir()
	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(30*time.Millisecond), eddy.WithCheckpointDir(chk),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
	var mu sync.Mutex
	panicAt := map[int64]bool{11000: true, 29000: true, 47000: true}
	sensorJob(env, n, 60000, out, func(r reading2) {
		i := r.TS / 10
		mu.Lock()
		boom := panicAt[i]
		delete(panicAt, i)
		mu.Unlock()
		if boom {
			panic(fmt.Sprintf("injected failure at record %d", i))
		}
	})
	if err := env.Execute(context.Background(), "panics"); err != nil {
		t.Fatal(err)
	}
	if r := env.Restarts(); r != 3 {
		t.Fatalf("job restarted %d times, want 3", r)
	}
	xs := env.Exceptions()
	if len(xs) != 3 {
		t.Fatalf("the job lists %d exceptions, want the 3 injected failures: %v", len(xs), xs)
	}
	for _, x := range xs {
		if x.Operator == "" || x.Subtask < 0 || !x.Restarted || !strings.Contains(x.Err.Error(), "injected failure") {
			t.Errorf("exception %+v: want the operator and subtask of an injected failure the job restarted after", x)
		}
	}
	got := committedLines(t, out)
	if !slices.Equal(got, want) {
		t.Fatalf("committed output differs from a failure-free run: %d lines vs %d\n%s", len(got), len(want), diff(got, want))
	}
}

// diff describes the first few differences of two sorted line lists.
func diff(got, want []string) string {
	var b strings.Builder
	count := func(l []string) map[string]int {
		m := map[string]int{}
		for _, s := range l {
			m[s]++
		}
		return m
	}
	g, w := count(got), count(want)
	shown := 0
	for s, k := range g {
		if w[s] != k && shown < 10 {
			fmt.Fprintf(&b, "%q: got %d, want %d\n", s, k, w[s])
			shown++
		}
	}
	for s, k := range w {
		if g[s] == 0 && shown < 10 {
			fmt.Fprintf(&b, "%q: missing (want %d)\n", s, k)
			shown++
		}
	}
	return b.String()
}

func TestSavepointRescale(t *testing.T) {
	const n = 60000
	want := failureFree(t, n)
	out := t.TempDir()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	sensorJob(env, n, 60000, out, nil)
	done := make(chan error, 1)
	go func() { done <- env.Execute(context.Background(), "to-savepoint") }()
	time.Sleep(300 * time.Millisecond)
	path := stopWithSavepoint(t, env, done)
	for _, p := range []int{1, 3} {
		t.Run(fmt.Sprintf("resume at parallelism %d", p), func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, out, dir)
			env := eddy.NewEnvironment(eddy.WithParallelism(p), eddy.WithRestoreFrom(path))
			sensorJob(env, n, 0, dir, nil)
			if err := env.Execute(context.Background(), "resumed"); err != nil {
				t.Fatal(err)
			}
			if got := committedLines(t, dir); !slices.Equal(got, want) {
				t.Fatalf("resumed output differs: %d lines vs %d\n%s", len(got), len(want), diff(got, want))
			}
		})
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPebbleBackendGivesTheHeapResults(t *testing.T) {
	const n = 40000
	want := failureFree(t, n)
	out := t.TempDir()
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)))
	sensorJob(env, n, 0, out, nil)
	if err := env.Execute(context.Background(), "pebble"); err != nil {
		t.Fatal(err)
	}
	if got := committedLines(t, out); !slices.Equal(got, want) {
		t.Fatalf("pebble output differs from heap: %d lines vs %d\n%s", len(got), len(want), diff(got, want))
	}
}

func TestPebbleStateRecoversExactlyOnce(t *testing.T) {
	const n = 30000
	want := failureFree(t, n)
	out, chk := t.TempDir(), t.TempDir()
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)),
		eddy.WithCheckpointing(30*time.Millisecond), eddy.WithCheckpointDir(chk),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
	var mu sync.Mutex
	panicAt := map[int64]bool{9000: true, 21000: true}
	sensorJob(env, n, 30000, out, func(r reading2) {
		mu.Lock()
		boom := panicAt[r.TS/10]
		delete(panicAt, r.TS/10)
		mu.Unlock()
		if boom {
			panic("injected failure")
		}
	})
	if err := env.Execute(context.Background(), "pebble-panics"); err != nil {
		t.Fatal(err)
	}
	if r := env.Restarts(); r != 2 {
		t.Fatalf("restarted %d times, want 2", r)
	}
	if got := committedLines(t, out); !slices.Equal(got, want) {
		t.Fatalf("output differs from a failure-free run: %d lines vs %d\n%s", len(got), len(want), diff(got, want))
	}
}

func TestSetupErrorsDoNotRestart(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithCheckpointing(time.Second), eddy.WithCheckpointDir(t.TempDir()),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(-1, time.Millisecond)))
	src := eddy.ReadJSONLines(env, eddy.FileOptions[int]{}, filepath.Join(t.TempDir(), "missing.jsonl"))
	eddy.Discard(src)
	err := env.Execute(context.Background(), "setup")
	if err == nil || !strings.Contains(err.Error(), "no file matches") {
		t.Fatalf("got %v", err)
	}
	if r := env.Restarts(); r != 0 {
		t.Fatalf("restarted %d times on a setup error", r)
	}
}

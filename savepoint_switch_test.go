package eddy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/state"
)

// pendingValue is a value waiting in list state for its window to fire.
type pendingValue struct {
	Window int64
	Value  int64
}

// switchFn keeps keyed state of every kind a savepoint carries: value state
// (windows fired so far), map state (sum per window), list state (the
// values of open windows) and event-time timers (one per window). What a
// timer emits depends only on the records of its window and on the windows
// fired before, so the output does not depend on how the run is cut.
type switchFn struct {
	fired   state.Value[int64]
	sums    state.Map[int64, int64]
	pending state.List[pendingValue]
}

func (f *switchFn) Open(ctx *eddy.KeyedContext[int64, string]) error {
	f.fired = state.NewValue(ctx.Store(), state.ValueDescriptor[int64]{Name: "fired"})
	f.sums = state.NewMap(ctx.Store(), state.MapDescriptor[int64, int64]{Name: "sums"})
	f.pending = state.NewList(ctx.Store(), state.ListDescriptor[pendingValue]{Name: "pending"})
	return nil
}

const switchWindow = 1000

func (f *switchFn) ProcessElement(ctx *eddy.KeyedContext[int64, string], r reading2) error {
	w := r.TS / switchWindow
	s, _ := f.sums.Get(w)
	f.sums.Put(w, s+r.Value)
	f.pending.Add(pendingValue{Window: w, Value: r.Value})
	ctx.RegisterEventTimeTimer((w+1)*switchWindow - 1)
	return nil
}

func (f *switchFn) OnTimer(ctx *eddy.KeyedContext[int64, string], ts int64) error {
	w := ts / switchWindow
	sum, _ := f.sums.Get(w)
	f.sums.Delete(w)
	var keep []pendingValue
	count, listSum := 0, int64(0)
	for _, p := range f.pending.Get() {
		if p.Window == w {
			count++
			listSum += p.Value
		} else {
			keep = append(keep, p)
		}
	}
	f.pending.Update(keep)
	n, _ := f.fired.Value()
	f.fired.Update(n + 1)
	ctx.Emit(fmt.Sprintf("key %d window %d sum %d values %d/%d fired %d", ctx.Key(), w, sum, count, listSum, n+1))
	return nil
}

// switchJob runs switchFn over n readings of 17 sensors at rate per second
// (0: unlimited), writing through the exactly-once file sink into out. When
// the reading with index signalAt passes (before the keyed operator), it
// closes reached once.
func switchJob(env *eddy.Environment, n int64, rate float64, out string, signalAt int64, reached chan struct{}) {
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: rate},
		func(i int64) reading2 { return reading2{Sensor: i % 17, TS: i * 3, Value: i % 11} },
		eddy.BoundedOutOfOrder(0, func(r reading2) int64 { return r.TS }))
	var once atomic.Bool
	hooked := eddy.Map(src, func(r reading2) reading2 {
		if reached != nil && r.TS/3 >= signalAt && once.CompareAndSwap(false, true) {
			close(reached)
		}
		return r
	}).Name("hook")
	keyed := eddy.KeyBy(hooked, func(r reading2) int64 { return r.Sensor })
	outs := eddy.ProcessKeyed(keyed, func() eddy.KeyedProcessFunction[int64, reading2, string] { return &switchFn{} }).UID("switch")
	eddy.WriteFiles(outs, out)
}

// runToSavepoint runs the job until the reading signalAt has passed, then
// takes a savepoint that stops the job, and returns its path.
func runToSavepoint(t *testing.T, env *eddy.Environment, n int64, out string, signalAt int64) string {
	t.Helper()
	reached := make(chan struct{})
	switchJob(env, n, 40000, out, signalAt, reached)
	done := make(chan error, 1)
	go func() { done <- env.Execute(context.Background(), "switch") }()
	select {
	case <-reached:
	case err := <-done:
		t.Fatalf("the job ended before reading %d: %v", signalAt, err)
	}
	path := stopWithSavepoint(t, env, done)
	if v := formatVersion(t, path); v != 3 {
		t.Fatalf("a savepoint of keyed state is written in format version %d, want 3 (the canonical format)", v)
	}
	return path
}

// formatVersion returns the format version in the metadata of the
// checkpoint or savepoint at path.
func formatVersion(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(path, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version int `json:"version"`
	}
	body := bytes.TrimRight(b, "\n")
	if err := json.Unmarshal(body[:bytes.LastIndexByte(body, '\n')], &m); err != nil {
		t.Fatalf("metadata of %s: %v", path, err)
	}
	return m.Version
}

// TestSavepointSwitchesStateBackends runs a job with value, map and list
// state and timers on the heap backend, takes a savepoint, restores it on
// the Pebble backend, runs on, takes another savepoint and restores it on
// the heap backend to the end: the output equals a failure-free run's. The
// second case changes the parallelism at each switch too.
func TestSavepointSwitchesStateBackends(t *testing.T) {
	const n = 60000
	ref := t.TempDir()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	switchJob(env, n, 0, ref, -1, nil)
	if err := env.Execute(context.Background(), "reference"); err != nil {
		t.Fatal(err)
	}
	want := committedLines(t, ref)
	if len(want) < 17*n*3/switchWindow {
		t.Fatalf("the reference run wrote %d lines", len(want))
	}
	pebble := func() eddy.Option { return eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)) }
	for _, p := range [][3]int{{2, 2, 2}, {2, 3, 1}} {
		t.Run(fmt.Sprintf("parallelism %d-%d-%d", p[0], p[1], p[2]), func(t *testing.T) {
			out := t.TempDir()
			sp1 := runToSavepoint(t, eddy.NewEnvironment(eddy.WithParallelism(p[0])), n, out, n/4)
			sp2 := runToSavepoint(t, eddy.NewEnvironment(eddy.WithParallelism(p[1]), pebble(), eddy.WithRestoreFrom(sp1)), n, out, n/2)
			env := eddy.NewEnvironment(eddy.WithParallelism(p[2]), eddy.WithRestoreFrom(sp2))
			switchJob(env, n, 0, out, -1, nil)
			if err := env.Execute(context.Background(), "switch"); err != nil {
				t.Fatal(err)
			}
			if got := committedLines(t, out); !slices.Equal(got, want) {
				t.Fatalf("output after heap → Pebble → heap differs from a failure-free run: %d lines vs %d\n%s", len(got), len(want), diff(got, want))
			}
		})
	}
}

// TestPebbleSavepointRestoresOnHeap starts on Pebble: a savepoint of Pebble
// state, restored on the heap backend, gives the failure-free output.
func TestPebbleSavepointRestoresOnHeap(t *testing.T) {
	const n = 30000
	ref := t.TempDir()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	switchJob(env, n, 0, ref, -1, nil)
	if err := env.Execute(context.Background(), "reference"); err != nil {
		t.Fatal(err)
	}
	want := committedLines(t, ref)
	out := t.TempDir()
	sp := runToSavepoint(t, eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20))), n, out, n/2)
	env = eddy.NewEnvironment(eddy.WithParallelism(3), eddy.WithRestoreFrom(sp))
	switchJob(env, n, 0, out, -1, nil)
	if err := env.Execute(context.Background(), "switch"); err != nil {
		t.Fatal(err)
	}
	if got := committedLines(t, out); !slices.Equal(got, want) {
		t.Fatalf("output after Pebble → heap differs from a failure-free run: %d lines vs %d\n%s", len(got), len(want), diff(got, want))
	}
}

// stopWithSavepoint takes a savepoint that stops the job env runs, whose
// Execute returns into done, and returns the savepoint's path once the job
// has ended well.
func stopWithSavepoint(t *testing.T, env *eddy.Environment, done <-chan error) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sp")
	var path string
	var err error
	for range 100 { // a savepoint is refused until every task runs
		if path, err = env.TriggerSavepoint(context.Background(), dir, true); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return path
}

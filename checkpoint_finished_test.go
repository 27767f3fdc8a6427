package eddy_test

import (
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

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/window"
)

// finishingJob is a short bounded source (300 records, done at once) and a
// long rate-limited one. The short one feeds an exactly-once sink of its
// own, chained to it (which pre-commits at its end of input), and a keyed
// window that fires everything on its final watermark; the window's
// results are unioned with the long source into a second exactly-once
// sink. hook runs on every record of the long source.
func finishingJob(env *eddy.Environment, outShort, out string, longCount int64, hook func(i int64)) {
	type rec struct{ I, TS int64 }
	ts := eddy.BoundedOutOfOrder(time.Hour, func(r rec) int64 { return r.TS })
	shortData := make([]rec, 300)
	for i := range shortData {
		shortData[i] = rec{I: int64(i), TS: int64(i) * 7}
	}
	short := eddy.FromSlice(env, shortData, ts).UID("short")
	eddy.WriteFiles(eddy.Map(short, func(r rec) string { return fmt.Sprintf("short %d", r.I) }), outShort)
	sums := eddy.Aggregate(eddy.Window(eddy.KeyBy(short, func(r rec) int64 { return r.I % 5 }), window.Tumbling(time.Second)),
		agg.Sum(func(r rec) int64 { return r.I }))
	sumLines := eddy.Map(sums, func(w eddy.Windowed[int64, int64]) string {
		return fmt.Sprintf("sum %d %d %d", w.Key, w.Window.Start, w.Value)
	})
	long := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: longCount, RatePerSecond: 4000},
		func(i int64) rec { return rec{I: i, TS: i} }, ts).UID("long")
	longLines := eddy.Map(long, func(r rec) string {
		if hook != nil {
			hook(r.I)
		}
		return fmt.Sprintf("long %d", r.I)
	})
	eddy.WriteFiles(eddy.Union(sumLines, longLines), out)
}

// newestMarksFinished reports whether the newest checkpoint in dir marks a
// subtask finished, and its directory.
func newestMarksFinished(dir string) (string, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	var newest string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "chk-") && e.Name() > newest {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "_metadata")); err == nil {
				newest = e.Name()
			}
		}
	}
	if newest == "" {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(dir, newest, "_metadata"))
	if err != nil {
		return "", false
	}
	return newest, strings.Contains(string(b), `"finished": true`)
}

// TestCheckpointsGoOnAfterASourceFinishes runs a job whose short source
// ends at once while the long one runs for seconds: checkpoints keep
// completing after the short one has finished (they mark it finished), and
// a failure injected after two of them restarts the job from the newest,
// which must neither replay the short source nor lose what its sink
// pre-committed at its end: the committed output equals a failure-free
// run's.
func TestCheckpointsGoOnAfterASourceFinishes(t *testing.T) {
	const longCount = 8000
	refShort, ref := t.TempDir(), t.TempDir()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	finishingJob(env, refShort, ref, longCount, nil)
	if err := env.Execute(context.Background(), "reference"); err != nil {
		t.Fatal(err)
	}
	wantShort, want := committedLines(t, refShort), committedLines(t, ref)
	if len(wantShort) != 300 || len(want) < longCount {
		t.Fatalf("reference run: %d short lines, %d lines", len(wantShort), len(want))
	}

	outShort, out, chk := t.TempDir(), t.TempDir(), t.TempDir()
	env = eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(chk),
		eddy.WithRetainedCheckpoints(1000),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(3, 5*time.Millisecond)))
	var (
		mu       sync.Mutex
		seen     []string // checkpoints marking a finished subtask
		restored string   // the checkpoint the failure left as newest
		failed   atomic.Bool
	)
	finishingJob(env, outShort, out, longCount, func(i int64) {
		if failed.Load() || i%50 != 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		name, ok := newestMarksFinished(chk)
		if ok && !slices.Contains(seen, name) {
			seen = append(seen, name)
		}
		if len(seen) >= 2 && !failed.Swap(true) {
			restored = name
			panic(fmt.Sprintf("injected failure at record %d, after checkpoints %v", i, seen))
		}
	})
	if err := env.Execute(context.Background(), "finishing"); err != nil {
		t.Fatal(err)
	}
	if !failed.Load() {
		t.Fatalf("no two checkpoints marking the finished source completed while the long source ran (saw %v)", seen)
	}
	if r := env.Restarts(); r != 1 {
		t.Fatalf("the job restarted %d times, want 1", r)
	}
	t.Logf("failed after checkpoints %v; restarted from %s or later", seen, restored)
	if got := committedLines(t, outShort); !slices.Equal(got, wantShort) {
		t.Fatalf("the short source's sink committed %d lines, a failure-free run %d:\n%s", len(got), len(wantShort), diff(got, wantShort))
	}
	if got := committedLines(t, out); !slices.Equal(got, want) {
		t.Fatalf("the union's sink committed %d lines, a failure-free run %d:\n%s", len(got), len(want), diff(got, want))
	}
}

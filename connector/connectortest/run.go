package connectortest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
)

// JobTimeout bounds every job the suite runs. It only keeps a broken
// connector from hanging the tests: no check of the suite depends on how
// long anything takes.
var JobTimeout = 3 * time.Minute

// checkpointInterval is the interval of the suite's checkpointed jobs.
const checkpointInterval = 20 * time.Millisecond

// job is one run of a job the suite built.
type job struct {
	env    *eddy.Environment
	ctx    context.Context
	cancel context.CancelFunc
	ended  chan struct{}
	err    error
}

// logger keeps the jobs' logs to warnings and errors.
var logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// startJob builds a job with build at parallelism p and runs it in the
// background.
func startJob(t testing.TB, name string, p int, opts []eddy.Option, build func(env *eddy.Environment)) *job {
	t.Helper()
	all := append([]eddy.Option{eddy.WithParallelism(p), eddy.WithLogger(logger)}, opts...)
	env := eddy.NewEnvironment(all...)
	build(env)
	ctx, cancel := context.WithTimeout(context.Background(), JobTimeout)
	j := &job{env: env, ctx: ctx, cancel: cancel, ended: make(chan struct{})}
	go func() {
		defer close(j.ended)
		j.err = env.Execute(ctx, name)
	}()
	t.Cleanup(func() {
		cancel()
		<-j.ended
	})
	return j
}

// wait waits for the job to end and returns its error. A job that runs into
// JobTimeout fails the test.
func (j *job) wait(t testing.TB) error {
	t.Helper()
	<-j.ended
	if errors.Is(j.ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("the job did not end within %v: is the connector stuck?", JobTimeout)
	}
	return j.err
}

// mustEnd waits for the job to end and fails the test if it failed.
func (j *job) mustEnd(t testing.TB) {
	t.Helper()
	if err := j.wait(t); err != nil {
		t.Fatalf("the job failed: %v", err)
	}
}

// stop cancels the job and waits for it to end.
func (j *job) stop(t testing.TB) {
	t.Helper()
	if errors.Is(j.ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("the job did not end within %v: is the connector stuck?", JobTimeout)
	}
	j.cancel()
	<-j.ended
	if j.err != nil {
		t.Fatalf("the job failed: %v", j.err)
	}
}

// await waits until ch is closed. If the job ends first (or runs into the
// timeout), the test fails with what was awaited.
func (j *job) await(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		return
	case <-j.ended:
	}
	select {
	case <-ch: // both happened
		return
	default:
	}
	if j.err != nil {
		t.Fatalf("the job failed while the suite waited for %s: %v", what, j.err)
	}
	t.Fatalf("the job ended before %s", what)
}

// savepoint takes a savepoint of the running job into a new directory and
// stops the job. A job that is not running yet, or has a checkpoint in
// flight, is asked again.
func (j *job) savepoint(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "savepoint")
	for {
		path, err := j.env.TriggerSavepoint(j.ctx, dir, true)
		if err == nil {
			if err := j.wait(t); err != nil {
				t.Fatalf("the job failed after its savepoint: %v", err)
			}
			return path
		}
		select {
		case <-j.ended:
			t.Fatalf("the job ended before a savepoint could be taken (last attempt: %v); error: %v", err, j.err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// failHook is a map function that panics once, when it sees its at-th
// record, to inject a failure downstream of a source.
type failHook struct {
	at    int64 // 0: never
	seen  atomic.Int64
	fired atomic.Bool
}

func (h *failHook) see() {
	if n := h.seen.Add(1); h.at > 0 && n == h.at && h.fired.CompareAndSwap(false, true) {
		panic(fmt.Sprintf("connectortest: failure injected at record %d", n))
	}
}

// keyOf returns the key function of a case: k, or fmt's %+v.
func keyOf[T any](k func(T) string) func(T) string {
	if k != nil {
		return k
	}
	return func(v T) string { return fmt.Sprintf("%+v", v) }
}

// multisetDiff describes how got differs from want as multisets of keys,
// or returns "" if they are equal.
func multisetDiff[T any](got, want []T, key func(T) string) string {
	return countDiff(count(got, key), count(want, key), len(got), len(want), false)
}

// subsetDiff describes the records of got that want does not hold (as
// multisets), or returns "".
func subsetDiff[T any](got, want []T, key func(T) string) string {
	return countDiff(count(got, key), count(want, key), len(got), len(want), true)
}

func count[T any](l []T, key func(T) string) map[string]int {
	m := map[string]int{}
	for _, v := range l {
		m[key(v)]++
	}
	return m
}

func countDiff(g, w map[string]int, ng, nw int, subset bool) string {
	var lines []string
	for k, n := range g {
		if n > w[k] {
			lines = append(lines, fmt.Sprintf("  %s: %d times, want %d", k, n, w[k]))
		}
	}
	if !subset {
		for k, n := range w {
			if g[k] < n {
				lines = append(lines, fmt.Sprintf("  %s: %d times, want %d", k, g[k], n))
			}
		}
	}
	if len(lines) == 0 {
		return ""
	}
	sort.Strings(lines)
	more := ""
	if len(lines) > 10 {
		more = fmt.Sprintf("\n  … and %d more", len(lines)-10)
		lines = lines[:10]
	}
	return fmt.Sprintf("%d records, want %d; differences:\n%s%s", ng, nw, strings.Join(lines, "\n"), more)
}

// report fails the test with every problem listed.
func report(t testing.TB, what string, problems []string) {
	t.Helper()
	for _, p := range problems {
		t.Errorf("%s: %s", what, p)
	}
}

package eddy_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/internal/checkpoint"
)

// sharedFilesOnDisk lists the files under chk/shared, as keys.
func sharedFilesOnDisk(t *testing.T, chk string) []string {
	t.Helper()
	var keys []string
	filepath.WalkDir(filepath.Join(chk, checkpoint.SharedDir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(chk, p)
			keys = append(keys, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(keys)
	return keys
}

// referencedSharedFiles returns the shared files the completed checkpoints
// in chk reference, and the newest checkpoint's path.
func referencedSharedFiles(t *testing.T, chk string) ([]string, string) {
	t.Helper()
	d, err := checkpoint.NewDir(chk)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := d.List()
	if err != nil || len(refs) == 0 {
		t.Fatalf("no checkpoints in %s: %v", chk, err)
	}
	set := map[string]bool{}
	newest := ""
	for _, r := range refs {
		m, err := checkpoint.ReadMetadata(r.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range m.Operators {
			for _, st := range op.Subtasks {
				for _, b := range st.Backends {
					if newest == "" {
						newest = r.Path
					}
					for _, f := range b.Files {
						if f.Shared != "" {
							set[f.Shared] = true
						}
					}
				}
			}
		}
	}
	var keys []string
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, newest
}

// runPebbleUntil runs the sensor job on Pebble state with checkpoints into
// chk, its n records spread over seconds of processing time. With stopAt >
// 0 it cancels the job once that many checkpoints have completed (and fails
// if the input ends first); with 0 the job runs to the end.
func runPebbleUntil(t *testing.T, n int64, seconds float64, out, chk string, stopAt int) *eddy.Environment {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)),
		eddy.WithCheckpointing(25*time.Millisecond), eddy.WithCheckpointDir(chk), eddy.WithRetainedCheckpoints(2))
	sensorJob(env, n, float64(n)/seconds, out, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if stopAt > 0 {
		go func() {
			for ctx.Err() == nil && len(env.CheckpointStats()) < stopAt {
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
		}()
	}
	if err := env.Execute(ctx, "pebble-incremental"); err != nil {
		t.Fatal(err)
	}
	if got := len(env.CheckpointStats()); got < max(stopAt, 1) {
		t.Fatalf("the input ended after %d checkpoints; want %d", got, max(stopAt, 1))
	}
	return env
}

func TestPebbleCheckpointsAreIncremental(t *testing.T) {
	const n = 30000
	want := failureFree(t, n)
	out, chk := t.TempDir(), t.TempDir()
	env := runPebbleUntil(t, n, 3, out, chk, 0)
	if got := committedLines(t, out); !slices.Equal(got, want) {
		t.Fatalf("output differs from a failure-free run: %d lines vs %d\n%s", len(got), len(want), diff(got, want))
	}
	stats := env.CheckpointStats()
	if len(stats) < 3 {
		t.Fatalf("only %d checkpoints completed", len(stats))
	}
	reused := 0
	for _, s := range stats {
		if s.Uploaded > s.Bytes {
			t.Errorf("checkpoint %d uploaded %d bytes of %d", s.ID, s.Uploaded, s.Bytes)
		}
		if s.Uploaded < s.Bytes {
			reused++
		}
	}
	if reused == 0 {
		t.Errorf("no checkpoint reused a shared file of an earlier one: %+v", stats)
	}
	referenced, newest := referencedSharedFiles(t, chk)
	if newest == "" || len(referenced) == 0 {
		t.Fatalf("the retained checkpoints hold no Pebble files")
	}
	// Shared files of checkpoints that retention deleted are gone; those
	// of retained ones are all there.
	if onDisk := sharedFilesOnDisk(t, chk); !slices.Equal(onDisk, referenced) {
		t.Errorf("shared files on disk %v, referenced by retained checkpoints %v", onDisk, referenced)
	}
}

func TestPebbleCheckpointRestoresAtOtherParallelism(t *testing.T) {
	const n = 30000
	want := failureFree(t, n)
	out, chk := t.TempDir(), t.TempDir()
	runPebbleUntil(t, n, 30, out, chk, 3)
	_, newest := referencedSharedFiles(t, chk)
	if newest == "" {
		t.Fatal("no checkpoint with Pebble files")
	}
	for _, p := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("parallelism %d", p), func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, out, dir)
			env := eddy.NewEnvironment(eddy.WithParallelism(p), eddy.WithRestoreFrom(newest),
				eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)))
			sensorJob(env, n, 0, dir, nil)
			if err := env.Execute(context.Background(), "resumed"); err != nil {
				t.Fatal(err)
			}
			if got := committedLines(t, dir); !slices.Equal(got, want) {
				t.Fatalf("resumed output differs: %d lines vs %d\n%s", len(got), len(want), diff(got, want))
			}
		})
	}
	t.Run("heap backend refuses", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, out, dir)
		env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithRestoreFrom(newest))
		sensorJob(env, n, 0, dir, nil)
		err := env.Execute(context.Background(), "resumed")
		if err == nil || !strings.Contains(err.Error(), "PebbleState") {
			t.Fatalf("restoring Pebble files into heap state: err = %v, want one that names eddy.PebbleState", err)
		}
	})
}

func TestPebbleCheckpointMissingSharedFile(t *testing.T) {
	const n = 20000
	out, chk := t.TempDir(), t.TempDir()
	runPebbleUntil(t, n, 30, out, chk, 3)
	referenced, newest := referencedSharedFiles(t, chk)
	if newest == "" || len(referenced) == 0 {
		t.Fatal("no checkpoint with Pebble files")
	}
	m, err := checkpoint.ReadMetadata(newest)
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, b := range st.Backends {
				for _, f := range b.Files {
					if f.Shared != "" && victim == "" {
						victim = f.Shared
					}
				}
			}
		}
	}
	path := filepath.Join(chk, filepath.FromSlash(victim))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithRestoreFrom(newest),
		eddy.WithStateBackend(eddy.PebbleState(t.TempDir(), 64<<20)))
	sensorJob(env, n, 0, t.TempDir(), nil)
	err = env.Execute(context.Background(), "resumed")
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "restore from an earlier checkpoint") {
		t.Fatalf("restoring a checkpoint missing %s: err = %v, want one naming the file and the way out", path, err)
	}
}

func TestPebbleStateOfEndedProcessesIsRemoved(t *testing.T) {
	dir := t.TempDir()
	// A process id that does not run: above the kernel's pid_max.
	stale := filepath.Join(dir, "Window-0-99999999-123")
	if err := os.MkdirAll(filepath.Join(stale, "db"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, fmt.Sprintf("Window-1-%d-456", os.Getpid()))
	other := filepath.Join(dir, "unrelated")
	for _, d := range []string{mine, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := eddy.NewEnvironment(eddy.WithStateBackend(eddy.PebbleState(dir, 64<<20)))
	sensorJob(env, 100, 0, t.TempDir(), nil)
	if err := env.Execute(context.Background(), "sweep"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the state of an ended process is still there: %v", err)
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

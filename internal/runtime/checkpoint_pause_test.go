package runtime

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/checkpoint"
)

// startPaced runs a job whose checkpoints start every millisecond, with
// the minimum pause given, and waits for its first checkpoint.
func startPaced(t *testing.T, pause time.Duration) (*Job, context.CancelFunc, <-chan error) {
	t.Helper()
	chk, err := checkpoint.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	job, err := NewJob(finishingGraph(&collector{}, 1_000_000, false, time.Millisecond), Config{
		Name: "paced", Checkpoints: CheckpointConfig{Interval: time.Millisecond, MinPause: pause, Storage: chk, Retain: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- job.Run(ctx) }()
	for len(job.CheckpointStats()) == 0 {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("the job ended before its first checkpoint: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	return job, cancel, done
}

// TestCheckpointMinPause runs a job with a 1 ms checkpoint interval and an
// hour's minimum pause: after its first checkpoint completes, no second one
// starts, however long the job runs.
func TestCheckpointMinPause(t *testing.T) {
	job, cancel, done := startPaced(t, time.Hour)
	// A 1 ms interval alone would start checkpoints all along these
	// 200 ms.
	time.Sleep(200 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := job.CheckpointStats(); len(got) != 1 {
		t.Fatalf("checkpoints after the first despite the minimum pause: %+v", got)
	}
}

// TestSavepointBetweenBackToBackCheckpoints asks for savepoints while
// checkpoints run back to back (a 1 ms interval, no pause): each waits for
// the checkpoint in flight and is taken, at the first request.
func TestSavepointBetweenBackToBackCheckpoints(t *testing.T) {
	job, cancel, done := startPaced(t, 0)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}()
	for i := 0; i < 5; i++ {
		path, err := job.TriggerSavepoint(context.Background(), t.TempDir(), false)
		if err != nil {
			t.Fatalf("savepoint %d: %v", i, err)
		}
		if _, err := checkpoint.LoadPath(path); err != nil {
			t.Fatalf("savepoint %d at %s: %v", i, path, err)
		}
	}
}

// TestSavepointGivenUpWhileQueued asks for savepoints whose askers have
// already given up, while checkpoints run back to back: none is taken,
// and a savepoint asked for afterwards is.
func TestSavepointGivenUpWhileQueued(t *testing.T) {
	job, cancel, done := startPaced(t, 0)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}()
	gone, giveUp := context.WithCancel(context.Background())
	giveUp()
	var dirs []string
	for i := 0; i < 20; i++ {
		dir := t.TempDir()
		dirs = append(dirs, dir)
		if _, err := job.TriggerSavepoint(gone, dir, false); err == nil {
			t.Fatalf("savepoint %d was taken for an asker who gave up", i)
		}
	}
	// Once this one is taken, no request before it is left in the queue.
	if _, err := job.TriggerSavepoint(context.Background(), t.TempDir(), false); err != nil {
		t.Fatal(err)
	}
	for i, dir := range dirs {
		if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
			t.Fatalf("savepoint %d, given up, was written: %v %v", i, entries, err)
		}
	}
}

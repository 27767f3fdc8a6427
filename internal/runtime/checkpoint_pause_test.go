package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/checkpoint"
)

// TestCheckpointMinPause runs a job with a 1 ms checkpoint interval and an
// hour's minimum pause: after its first checkpoint completes, no second one
// starts, however long the job runs.
func TestCheckpointMinPause(t *testing.T) {
	chk, err := checkpoint.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	job, err := NewJob(finishingGraph(&collector{}, 1_000_000, false, time.Millisecond), Config{
		Name: "paused", Checkpoints: CheckpointConfig{Interval: time.Millisecond, MinPause: time.Hour, Storage: chk, Retain: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- job.Run(ctx) }()
	for len(job.CheckpointStats()) == 0 {
		time.Sleep(time.Millisecond)
	}
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

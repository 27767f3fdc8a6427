package eddy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
)

// TestOptionsOutOfRangeAreErrors checks that every option given a value out
// of its range makes Plan and Execute fail with an error naming the option,
// the value and the valid range, rather than running with a default.
func TestOptionsOutOfRangeAreErrors(t *testing.T) {
	for _, tc := range []struct {
		opt  eddy.Option
		want string
	}{
		{eddy.WithParallelism(0), "eddy.WithParallelism(0): the parallelism must be between 1 and 32768"},
		{eddy.WithParallelism(-3), "eddy.WithParallelism(-3): the parallelism must be between 1 and 32768"},
		{eddy.WithMaxParallelism(0), "eddy.WithMaxParallelism(0): the max parallelism (the number of key groups) must be between 1 and 32768"},
		{eddy.WithMaxParallelism(32769), "eddy.WithMaxParallelism(32769): the max parallelism (the number of key groups) must be between 1 and 32768"},
		{eddy.WithBatchSize(0), "eddy.WithBatchSize(0): the batch size must be at least 1"},
		{eddy.WithLinger(-time.Millisecond), "eddy.WithLinger(-1ms): the linger must be 0 or more"},
		{eddy.WithChannelCapacity(-1), "eddy.WithChannelCapacity(-1): the channel capacity must be at least 1"},
		{eddy.WithCheckpointing(0), "eddy.WithCheckpointing(0s): the checkpoint interval must be positive"},
		{eddy.WithRetainedCheckpoints(0), "eddy.WithRetainedCheckpoints(0): at least 1 checkpoint must be retained"},
		{eddy.WithCheckpointTimeout(-time.Second), "eddy.WithCheckpointTimeout(-1s): the checkpoint timeout must be positive"},
		{eddy.WithRestartStrategy(eddy.FixedDelayRestart(3, -time.Second)), "the delays must be 0 or more"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			build := func() *eddy.Environment {
				env := eddy.NewEnvironment(tc.opt)
				eddy.Discard(eddy.FromSlice(env, []int{1, 2, 3}, eddy.NoWatermarks[int]()))
				return env
			}
			if _, err := build().Plan(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Plan: error %v, want one containing %q", err, tc.want)
			}
			if err := build().Execute(context.Background(), "bad-option"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Execute: error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestOperatorParallelismOutOfRange checks Parallelism(n) with n <= 0 on a
// stream and on a sink, and a parallelism above the max parallelism.
func TestOperatorParallelismOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(env *eddy.Environment)
		want  string
	}{
		{"stream 0", func(env *eddy.Environment) {
			eddy.Discard(eddy.Map(eddy.FromSlice(env, []int{1}, eddy.NoWatermarks[int]()), func(v int) int { return v }).Name("double").Parallelism(0))
		}, `Parallelism(0) on operator "double": the parallelism of an operator must be at least 1`},
		{"sink -2", func(env *eddy.Environment) {
			eddy.Discard(eddy.FromSlice(env, []int{1}, eddy.NoWatermarks[int]())).Parallelism(-2)
		}, `Parallelism(-2) on operator "Sink: Discard": the parallelism of an operator must be at least 1`},
		{"above max parallelism", func(env *eddy.Environment) {
			eddy.Discard(eddy.FromSlice(env, []int{1}, eddy.NoWatermarks[int]()).Parallelism(200))
		}, "parallelism 200 above its max parallelism 128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := eddy.NewEnvironment()
			tc.build(env)
			if _, err := env.Plan(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Plan: error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestLingerZeroRuns checks that a linger of 0 is valid and the job runs.
func TestLingerZeroRuns(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithLinger(0), eddy.WithParallelism(2))
	c := eddy.Collect(eddy.FromSlice(env, []int{1, 2, 3, 4}, eddy.NoWatermarks[int]()))
	if err := env.Execute(context.Background(), "no-linger"); err != nil {
		t.Fatal(err)
	}
	if got := len(c.Values()); got != 4 {
		t.Fatalf("collected %d values, want 4", got)
	}
}

// TestMetricsAreASnapshotPerSubtask checks the public metrics: one entry
// per operator subtask, with its index and plain counts.
func TestMetricsAreASnapshotPerSubtask(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	if env.Metrics() != nil {
		t.Fatal("metrics before Execute")
	}
	eddy.Discard(eddy.FromSlice(env, []int{1, 2, 3, 4, 5}, eddy.NoWatermarks[int]()).Rebalance())
	if err := env.Execute(context.Background(), "metrics"); err != nil {
		t.Fatal(err)
	}
	subtasks := map[string][]int{}
	var out, in int64
	for _, m := range env.Metrics() {
		subtasks[m.Name] = append(subtasks[m.Name], m.Subtask)
		out += m.RecordsOut
		if m.Name == "Sink: Discard" {
			in += m.RecordsIn
		}
	}
	if len(subtasks) != 2 || len(subtasks["Sink: Discard"]) != 2 || out != 5 || in != 5 {
		t.Fatalf("metrics: subtasks %v, records out %d, into the sink %d", subtasks, out, in)
	}
}

package eddy_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
)

func TestSmoke(t *testing.T) {
	for _, p := range []int{1, 2, 3} {
		env := eddy.NewEnvironment(eddy.WithParallelism(p))
		src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: 100000}, func(i int64) int64 { return i }, eddy.NoWatermarks[int64]())
		sq := eddy.Map(eddy.Filter(src, func(v int64) bool { return v%2 == 0 }), func(v int64) int64 { return v * 3 })
		out := eddy.Collect(sq.Rebalance())
		if err := env.Execute(context.Background(), "smoke"); err != nil {
			t.Fatal(err)
		}
		v := out.Values()
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		if len(v) != 50000 || v[0] != 0 || v[49999] != 3*99998 {
			t.Fatalf("p=%d got %d values", p, len(v))
		}
	}
}

func TestOperatorPanicFailsJobWithName(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: -1}, func(i int64) int64 { return i }, eddy.NoWatermarks[int64]())
	boom := eddy.Map(src, func(v int64) int64 {
		if v == 5000 {
			panic("boom at 5000")
		}
		return v
	}).Name("explode")
	eddy.Discard(boom.Rebalance())
	done := make(chan error, 1)
	go func() { done <- env.Execute(context.Background(), "panics") }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), `operator "explode"`) || !strings.Contains(err.Error(), "boom at 5000") {
			t.Fatalf("error does not name the operator and cause: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("job did not fail after an operator panicked")
	}
}

func TestOperatorErrorFailsJob(t *testing.T) {
	env := eddy.NewEnvironment()
	src := eddy.FromSlice(env, []int{1, 2, 3}, eddy.NoWatermarks[int]())
	bad := eddy.TryMap(src, func(v int) (int, error) {
		if v == 2 {
			return 0, errors.New("two is not allowed")
		}
		return v, nil
	}).Name("validate")
	eddy.Discard(bad)
	err := env.Execute(context.Background(), "errors")
	if err == nil || !strings.Contains(err.Error(), `operator "validate" (subtask 1/1): two is not allowed`) {
		t.Fatalf("got %v", err)
	}
}

func TestCancelEndsUnboundedJob(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: -1}, func(i int64) int64 { return i }, eddy.NoWatermarks[int64]())
	eddy.Discard(eddy.Map(src, func(v int64) int64 { return v + 1 }).Rebalance())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "forever") }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cancelled job returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancelled job did not end")
	}
}

func TestExecuteTwiceIsAnError(t *testing.T) {
	env := eddy.NewEnvironment()
	eddy.Discard(eddy.FromSlice(env, []int{1}, eddy.NoWatermarks[int]()))
	if err := env.Execute(context.Background(), "once"); err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(context.Background(), "once"); err == nil {
		t.Fatal("second Execute succeeded")
	}
}

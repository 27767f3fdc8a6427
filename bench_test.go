package eddy_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/window"
)

// cpuTime returns the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runJob executes env and reports records/s and records/s per core of the
// process, measured as the reference Nexmark runner does: CPU time over
// wall time is the number of cores used.
func runJob(b *testing.B, env *eddy.Environment, records int64) {
	b.Helper()
	b.ResetTimer()
	cpu0, wall0 := cpuTime(), time.Now()
	if err := env.Execute(context.Background(), b.Name()); err != nil {
		b.Fatal(err)
	}
	wall, cpu := time.Since(wall0), cpuTime()-cpu0
	b.StopTimer()
	cores := cpu.Seconds() / wall.Seconds()
	b.ReportMetric(float64(records)/wall.Seconds(), "rec/s")
	b.ReportMetric(float64(records)/cpu.Seconds(), "rec/s/core")
	b.ReportMetric(cores, "cores")
}

type click struct {
	Page int64
	TS   int64
}

// clicks generates n clicks on 10 000 pages at 100 000 clicks per second of
// event time, in order.
func clicks(env *eddy.Environment, n int64) *eddy.Stream[click] {
	return eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n},
		func(i int64) click { return click{Page: (i * 7919) % 10000, TS: i / 100} },
		eddy.BoundedOutOfOrder(0, func(c click) int64 { return c.TS }))
}

func BenchmarkStateless(b *testing.B) {
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("p%d", p), func(b *testing.B) {
			n := int64(max(b.N, 1))
			env := eddy.NewEnvironment(eddy.WithParallelism(p))
			src := clicks(env, n)
			m := eddy.Map(eddy.Filter(src, func(c click) bool { return c.Page%10 != 3 }), func(c click) int64 { return c.Page * 3 })
			eddy.Discard(m)
			runJob(b, env, n)
		})
	}
}

func benchWindow(b *testing.B, a window.Assigner) {
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("p%d", p), func(b *testing.B) {
			n := int64(max(b.N, 1))
			env := eddy.NewEnvironment(eddy.WithParallelism(p))
			keyed := eddy.KeyBy(clicks(env, n), func(c click) int64 { return c.Page })
			eddy.Discard(eddy.Aggregate(eddy.Window(keyed, a), agg.Count[click]()))
			runJob(b, env, n)
		})
	}
}

func BenchmarkTumblingCount(b *testing.B) { benchWindow(b, window.Tumbling(10*time.Second)) }

func BenchmarkSlidingCount(b *testing.B) {
	benchWindow(b, window.Sliding(10*time.Second, 2*time.Second))
}

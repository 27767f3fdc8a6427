package queries

import (
	"context"
	"fmt"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/nexmark"
)

// benchVariants runs each variant of a query on b.N events at parallelism
// 1 and 2, variants alternating, and reports events/s and events/s per
// core as BenchmarkQueries does, and the peak of the heap's live and
// unswept objects during the run (sampled every 10 ms).
func benchVariants(b *testing.B, variants []string, build func(variant string, env *eddy.Environment, cfg nexmark.Config)) {
	for _, p := range []int{1, 2} {
		for _, v := range variants {
			b.Run(fmt.Sprintf("p%d/%s", p, v), func(b *testing.B) {
				cfg := nexmark.DefaultConfig()
				cfg.MaxEvents = int64(max(b.N, 1))
				env := eddy.NewEnvironment(eddy.WithParallelism(p))
				build(v, env, cfg)
				b.ResetTimer()
				peak := samplePeakHeap()
				cpu0, wall0 := connectortest.CPUTime(), time.Now()
				if err := env.Execute(context.Background(), v); err != nil {
					b.Fatal(err)
				}
				wall, cpu := time.Since(wall0), connectortest.CPUTime()-cpu0
				b.StopTimer()
				b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(cfg.MaxEvents)/wall.Seconds(), "events/s")
				b.ReportMetric(float64(cfg.MaxEvents)/cpu.Seconds(), "events/s/core")
				b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
			})
		}
	}
}

// BenchmarkQ20Variants runs q20 as Q20 runs it ("custom": one keyed
// function) and as Flink plans it ("join": q20OnJoin, the regular join with
// the auctions unique on their id; "join-general" without the declaration,
// keeping every bid), alternating, at parallelism 1 and 2:
//
//	go test -run XXX -bench Q20Variants -benchtime 3000000x ./nexmark/queries
func BenchmarkQ20Variants(b *testing.B) {
	benchVariants(b, []string{"custom", "join", "join-general"}, func(v string, env *eddy.Environment, cfg nexmark.Config) {
		switch v {
		case "join":
			eddy.Discard(q20OnJoin(env, cfg))
		case "join-general":
			eddy.Discard(q20Plan(env, cfg))
		default:
			eddy.Discard(Q20(env, cfg))
		}
	})
}

// samplePeakHeap samples the bytes of heap objects every 10 ms until the
// returned function is called, which returns the largest sample.
func samplePeakHeap() func() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		return <-done
	}
}

package eddy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/state"
	"github.com/eddystream/eddy/window"
)

// runJob executes env and reports records/s and records/s per core of the
// process, measured as the reference Nexmark runner does: CPU time over
// wall time is the number of cores used.
func runJob(b *testing.B, env *eddy.Environment, records int64) {
	b.Helper()
	b.ResetTimer()
	cpu0, wall0 := connectortest.CPUTime(), time.Now()
	if err := env.Execute(context.Background(), b.Name()); err != nil {
		b.Fatal(err)
	}
	wall, cpu := time.Since(wall0), connectortest.CPUTime()-cpu0
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

// BenchmarkCheckpointOverhead runs the keyed tumbling count over 20 M
// records without checkpoints and with a checkpoint every second.
func BenchmarkCheckpointOverhead(b *testing.B) {
	for _, interval := range []time.Duration{0, time.Second} {
		name := "none"
		if interval > 0 {
			name = "every-" + interval.String()
		}
		b.Run(name, func(b *testing.B) {
			const n = 20_000_000
			for i := 0; i < b.N; i++ {
				opts := []eddy.Option{eddy.WithParallelism(2)}
				if interval > 0 {
					opts = append(opts, eddy.WithCheckpointing(interval), eddy.WithCheckpointDir(b.TempDir()))
				}
				env := eddy.NewEnvironment(opts...)
				keyed := eddy.KeyBy(clicks(env, n), func(c click) int64 { return c.Page })
				eddy.Discard(eddy.Aggregate(eddy.Window(keyed, window.Tumbling(10*time.Second)), agg.Count[click]()))
				runJob(b, env, n)
				if interval > 0 {
					b.ReportMetric(float64(len(env.CheckpointStats())), "checkpoints")
				}
			}
		})
	}
}

type blob struct {
	Key     int64
	Payload [96]byte
}

// keepLast keeps the last value of every key in keyed state.
type keepLast struct {
	last state.Value[blob]
}

func (k *keepLast) Open(ctx *eddy.KeyedContext[int64, int64]) error {
	k.last = state.NewValue(ctx.Store(), state.ValueDescriptor[blob]{Name: "last"})
	return nil
}

func (k *keepLast) ProcessElement(_ *eddy.KeyedContext[int64, int64], v blob) error {
	k.last.Update(v)
	return nil
}

// largeStateJob keeps a 96-byte value for each of keys keys, cycling over
// them count records (forever if count < 0).
func largeStateJob(env *eddy.Environment, keys, count int64) {
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: count}, func(i int64) blob {
		var p [96]byte
		p[0] = byte(i)
		return blob{Key: i % keys, Payload: p}
	}, eddy.NoWatermarks[blob]())
	eddy.Discard(eddy.ProcessKeyed(eddy.KeyBy(src, func(v blob) int64 { return v.Key }),
		func() eddy.KeyedProcessFunction[int64, blob, int64] { return &keepLast{} }))
}

// BenchmarkCheckpointLargeState builds about 100 MB of keyed heap state (1 M
// keys, each a 96-byte value plus its key), takes a savepoint of it and
// reports its duration and size, then restores it and reports the time the
// restored job takes to load it.
func BenchmarkCheckpointLargeState(b *testing.B) {
	const keys = 1_000_000
	for i := 0; i < b.N; i++ {
		env := eddy.NewEnvironment(eddy.WithParallelism(2))
		largeStateJob(env, keys, -1)
		done := make(chan error, 1)
		go func() { done <- env.Execute(context.Background(), "large-state") }()
		for {
			var out int64
			for _, m := range env.Metrics() {
				out += m.RecordsOut
			}
			if out >= 2*keys {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		path, err := env.TriggerSavepoint(context.Background(), b.TempDir(), true)
		if err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		stats := env.CheckpointStats()
		st := stats[len(stats)-1]
		b.ReportMetric(float64(st.Bytes)/1e6, "MB")
		b.ReportMetric(st.Duration.Seconds()*1000, "checkpoint-ms")
		b.ReportMetric(st.Write.Seconds()*1000, "write-ms")
		b.ReportMetric(st.Sync.Seconds()*1000, "pause-ms")

		restored := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithRestoreFrom(path))
		largeStateJob(restored, keys, 0)
		start := time.Now()
		if err := restored.Execute(context.Background(), "restore"); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds()*1000, "restore-ms")
	}
}

// BenchmarkStateBackends runs the keyed 10 s / 2 s sliding count on the
// heap and on Pebble, at parallelism 2.
func BenchmarkStateBackends(b *testing.B) {
	for _, name := range []string{"heap", "pebble"} {
		b.Run(name, func(b *testing.B) {
			n := int64(max(b.N, 1))
			backend := eddy.HeapState()
			if name == "pebble" {
				backend = eddy.PebbleState(b.TempDir(), 256<<20)
			}
			env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithStateBackend(backend))
			keyed := eddy.KeyBy(clicks(env, n), func(c click) int64 { return c.Page })
			eddy.Discard(eddy.Aggregate(eddy.Window(keyed, window.Sliding(10*time.Second, 2*time.Second)), agg.Count[click]()))
			runJob(b, env, n)
		})
	}
}

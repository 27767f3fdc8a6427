package nats_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// The benchmarks run the embedded NATS server in the benchmark's process:
// their CPU time is eddy's, the client's and the server's together.

// padded is the record of the benchmarks: its JSON is about size bytes.
type padded struct {
	N   int64  `json:"n"`
	Pad string `json:"pad"`
}

var benchSizes = []struct {
	name string
	size int
}{{"100B", 100}, {"1KB", 1024}}

func pad(size int) string { return strings.Repeat("x", max(0, size-20)) }

// counter is a sink that counts what it is given.
type counter struct{ n atomic.Int64 }

func (c *counter) NewWriter(connector.WriterContext) (connector.Writer[padded], error) {
	return counterWriter{c}, nil
}

type counterWriter struct{ c *counter }

func (w counterWriter) Write(r []padded, _ []int64) error { w.c.n.Add(int64(len(r))); return nil }
func (w counterWriter) Flush() error                      { return nil }
func (w counterWriter) Close() error                      { return nil }

// measure times run and reports messages per second, megabytes per second
// and messages per second of CPU time (the process's, over all cores).
func measure(b *testing.B, size int, run func()) {
	b.Helper()
	b.ResetTimer()
	m := connectortest.StartMeter()
	run()
	b.StopTimer()
	m.Report(b, b.N, size, "msgs")
}

// fillStream publishes n messages of about size bytes to subject.
func fillStream(b *testing.B, js jetstream.JetStream, subject string, n, size int) {
	b.Helper()
	p := pad(size)
	var futures []jetstream.PubAckFuture
	for i := 0; i < n; i++ {
		data, _ := json.Marshal(padded{N: int64(i), Pad: p})
		f, err := js.PublishAsync(subject, data)
		if err != nil {
			b.Fatal(err)
		}
		if futures = append(futures, f); len(futures) == 4000 || i == n-1 {
			for _, f := range futures {
				select {
				case <-f.Ok():
				case err := <-f.Err():
					b.Fatal(err)
				}
			}
			futures = futures[:0]
		}
	}
}

// BenchmarkSource reads b.N messages at parallelism 1 into a sink that
// counts them: from a JetStream stream (ordered consumers, exactly once,
// checkpoints every 100 ms), and from a core NATS subject, published while
// the job runs with at most 20,000 messages ahead of the job (so that the
// subscription drops none).
func BenchmarkSource(b *testing.B) {
	url := startServer(b)
	nc, js := connect(b, url)
	for _, sz := range benchSizes {
		b.Run("jetstream/"+sz.name, func(b *testing.B) {
			name, prefix := freshStream(b, js)
			fillStream(b, js, prefix+".in", b.N, sz.size)
			src, err := connector.OpenSource[padded](connector.Default, "nats", map[string]string{"url": url, "stream": name, "format": "json", "scan.bounded.mode": "latest-offset"})
			if err != nil {
				b.Fatal(err)
			}
			sink := &counter{}
			env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(100*time.Millisecond), eddy.WithCheckpointDir(b.TempDir()))
			eddy.WriteTo(eddy.FromSource(env, "nats in", src, eddy.NoWatermarks[padded]()), "count", connector.Sink[padded](sink))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			measure(b, sz.size, func() {
				if err := env.Execute(ctx, "bench"); err != nil {
					b.Fatal(err)
				}
			})
			if got := sink.n.Load(); got != int64(b.N) {
				b.Fatalf("read %d messages, want %d", got, b.N)
			}
		})
	}
	for _, sz := range benchSizes {
		b.Run("core/"+sz.name, func(b *testing.B) {
			subject := fmt.Sprintf("bench.core.%d", streams.Add(1))
			src, err := connector.OpenSource[padded](connector.Default, "nats", map[string]string{"url": url, "subject": subject, "format": "json"})
			if err != nil {
				b.Fatal(err)
			}
			sink := &counter{}
			env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(100*time.Millisecond), eddy.WithCheckpointDir(b.TempDir()))
			eddy.WriteTo(eddy.FromSource(env, "nats in", src, eddy.NoWatermarks[padded]()), "count", connector.Sink[padded](sink))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- env.Execute(ctx, "bench") }()
			// Wait for the subscription: publish probes until one arrives.
			probe, _ := json.Marshal(padded{N: -1})
			for sink.n.Load() == 0 {
				select {
				case err := <-done:
					b.Fatalf("the job ended: %v", err)
				case <-time.After(5 * time.Millisecond):
				}
				if err := nc.Publish(subject, probe); err != nil {
					b.Fatal(err)
				}
			}
			time.Sleep(50 * time.Millisecond)
			base := sink.n.Load()
			data, _ := json.Marshal(padded{N: 1, Pad: pad(sz.size)})
			measure(b, sz.size, func() {
				for i := 0; i < b.N; i++ {
					for int64(i)-(sink.n.Load()-base) > 20000 {
						time.Sleep(20 * time.Microsecond)
					}
					if err := nc.Publish(subject, data); err != nil {
						b.Fatal(err)
					}
				}
				deadline := time.Now().Add(time.Minute)
				for sink.n.Load()-base < int64(b.N) {
					if time.Now().After(deadline) {
						b.Fatalf("the job received %d of %d messages", sink.n.Load()-base, b.N)
					}
					time.Sleep(100 * time.Microsecond)
				}
			})
			cancel()
			<-done
		})
	}
}

// BenchmarkSink writes b.N generated records at parallelism 1 into a
// JetStream stream, exactly once (published when the checkpoints, every
// 100 ms, complete) and at least once, and to a core NATS subject.
func BenchmarkSink(b *testing.B) {
	url := startServer(b)
	_, js := connect(b, url)
	for _, g := range []string{"exactly-once", "at-least-once", "core"} {
		for _, sz := range benchSizes {
			b.Run(g+"/"+sz.name, func(b *testing.B) {
				name, prefix := freshStream(b, js)
				opts := map[string]string{"url": url, "stream": name, "subject": prefix + ".out", "format": "json", "sink.delivery-guarantee": g}
				if g == "core" {
					opts = map[string]string{"url": url, "subject": prefix + ".core", "format": "json"}
				}
				sink, err := connector.OpenSink[padded](connector.Default, "nats", opts)
				if err != nil {
					b.Fatal(err)
				}
				p := pad(sz.size)
				env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(100*time.Millisecond), eddy.WithCheckpointDir(b.TempDir()))
				in := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(b.N)}, func(i int64) padded { return padded{N: i, Pad: p} }, eddy.NoWatermarks[padded]())
				eddy.WriteTo(in, "nats out", sink)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				measure(b, sz.size, func() {
					if err := env.Execute(ctx, "bench"); err != nil {
						b.Fatal(err)
					}
				})
				if g == "core" {
					return
				}
				st, err := js.Stream(ctx, name)
				if err != nil {
					b.Fatal(err)
				}
				info, err := st.Info(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if info.State.Msgs != uint64(b.N) {
					b.Fatalf("the stream holds %d messages, want %d", info.State.Msgs, b.N)
				}
			})
		}
	}
}

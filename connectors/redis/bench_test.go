package redis_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// payload is a benchmark record, padded so that its JSON has about the
// size the benchmark names.
type payload struct {
	N   int64  `json:"n"`
	Pad string `json:"pad"`
}

// pad returns the padding that makes the JSON of a payload size bytes.
func pad(size int) string {
	b, _ := json.Marshal(payload{N: 1000000})
	return strings.Repeat("x", max(0, size-len(b)))
}

var sizes = []struct {
	name string
	size int
}{{"100B", 100}, {"1KB", 1024}}

// quiet discards the benchmarks' job logs, which would break up their
// output.
var quiet = slog.New(slog.DiscardHandler)

// countSink counts the records it is given.
type countSink[T any] struct{ n *atomic.Int64 }

func (s countSink[T]) NewWriter(connector.WriterContext) (connector.Writer[T], error) {
	return countWriter[T](s), nil
}

type countWriter[T any] struct{ n *atomic.Int64 }

func (w countWriter[T]) Write(records []T, _ []int64) error { w.n.Add(int64(len(records))); return nil }
func (w countWriter[T]) Flush() error                       { return nil }
func (w countWriter[T]) Close() error                       { return nil }

// fill adds n payloads of the given size to the stream.
func fill(b *testing.B, cli *goredis.Client, stream string, n, size int) {
	b.Helper()
	ctx := context.Background()
	p := pad(size)
	for lo := 0; lo < n; lo += 1000 {
		pipe := cli.Pipeline()
		for i := lo; i < min(lo+1000, n); i++ {
			js, _ := json.Marshal(payload{N: int64(i), Pad: p})
			pipe.XAdd(ctx, &goredis.XAddArgs{Stream: stream, Values: []any{"data", js}})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSource reads b.N entries, without and with a group, at
// parallelism 1, into a sink that counts them; it reports entries per
// second.
func BenchmarkSource(b *testing.B) {
	cli := server(b)
	for _, mode := range []string{"xread", "group"} {
		for _, sz := range sizes {
			b.Run(mode+"/"+sz.name, func(b *testing.B) {
				stream := freshStream(b, cli)
				fill(b, cli, stream, b.N, sz.size)
				opts := map[string]string{"url": serverURL, "stream": stream, "format": "json", "scan.bounded.mode": "latest-offset"}
				if mode == "group" {
					opts = map[string]string{"url": serverURL, "stream": stream, "format": "json", "group": "bench"}
				}
				src, err := connector.OpenSource[payload](connector.Default, "redis", opts)
				if err != nil {
					b.Fatal(err)
				}
				var n atomic.Int64
				env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(time.Second), eddy.WithCheckpointDir(b.TempDir()), eddy.WithLogger(quiet))
				eddy.WriteTo(eddy.FromSource(env, "redis in", src, eddy.NoWatermarks[payload]()), "count", countSink[payload]{&n})
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				b.SetBytes(int64(sz.size))
				b.ResetTimer()
				m := connectortest.StartMeter()
				done := make(chan error, 1)
				go func() { done <- env.Execute(ctx, "read") }()
				if mode == "group" {
					for n.Load() < int64(b.N) {
						select {
						case err := <-done:
							b.Fatalf("the job ended: %v", err)
						case <-time.After(time.Millisecond):
						}
					}
					b.StopTimer()
					m.Report(b, b.N, 0, "entries")
					cancel()
					<-done
					return
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				m.Report(b, b.N, 0, "entries")
				if n.Load() != int64(b.N) {
					b.Fatalf("read %d entries, want %d", n.Load(), b.N)
				}
			})
		}
	}
}

// BenchmarkSink writes b.N generated records at parallelism 1, with each
// guarantee, checkpointing every second; it reports entries per second.
func BenchmarkSink(b *testing.B) {
	cli := server(b)
	for _, g := range []string{"exactly-once", "at-least-once"} {
		for _, sz := range sizes {
			b.Run(g+"/"+sz.name, func(b *testing.B) {
				stream := freshStream(b, cli)
				sink, err := connector.OpenSink[payload](connector.Default, "redis", map[string]string{"url": serverURL, "stream": stream, "format": "json", "sink.delivery-guarantee": g})
				if err != nil {
					b.Fatal(err)
				}
				p := pad(sz.size)
				env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(time.Second), eddy.WithCheckpointDir(b.TempDir()), eddy.WithLogger(quiet))
				s := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(b.N)}, func(i int64) payload { return payload{N: i, Pad: p} }, eddy.NoWatermarks[payload]())
				eddy.WriteTo(s, "redis out", sink)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				b.SetBytes(int64(sz.size))
				b.ResetTimer()
				m := connectortest.StartMeter()
				if err := env.Execute(ctx, "write"); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				m.Report(b, b.N, 0, "entries")
				if l, err := cli.XLen(ctx, stream).Result(); err != nil || l != int64(b.N) {
					b.Fatalf("the stream holds %d entries (%v), want %d", l, err, b.N)
				}
			})
		}
	}
}

package rabbitmq_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// padded is the record of the benchmarks: its JSON is about size bytes.
type padded struct {
	N   int64  `json:"n"`
	Pad string `json:"pad"`
}

func paddedJSON(n int64, size int) []byte {
	b, _ := json.Marshal(padded{N: n, Pad: strings.Repeat("x", max(0, size-20))})
	return b
}

var sizes = []struct {
	name string
	size int
}{{"100B", 100}, {"1KB", 1024}}

// countingSink counts the records written to it.
type countingSink struct{ n atomic.Int64 }

func (s *countingSink) NewWriter(connector.WriterContext) (connector.Writer[padded], error) {
	return countingWriter{s}, nil
}

type countingWriter struct{ s *countingSink }

func (w countingWriter) Write(r []padded, _ []int64) error { w.s.n.Add(int64(len(r))); return nil }
func (w countingWriter) Flush() error                      { return nil }
func (w countingWriter) Close() error                      { return nil }

// fill publishes n messages of about size bytes to the queue.
func fill(b *testing.B, conn *amqp.Connection, queue string, n, size int) {
	b.Helper()
	ch := channel(b, conn)
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		b.Fatal(err)
	}
	var dcs []*amqp.DeferredConfirmation
	for i := 0; i < n; i++ {
		dc, err := ch.PublishWithDeferredConfirm("", queue, false, false, amqp.Publishing{Body: paddedJSON(int64(i), size)})
		if err != nil {
			b.Fatal(err)
		}
		dcs = append(dcs, dc)
		if len(dcs) == 2000 {
			for _, dc := range dcs {
				dc.Wait()
			}
			dcs = dcs[:0]
		}
	}
	for _, dc := range dcs {
		dc.Wait()
	}
}

// BenchmarkSource reads b.N messages from a stream queue and from a classic
// queue (acknowledged at checkpoints every 100 ms) into a sink that counts
// them, at parallelism 1, and reports messages per second.
func BenchmarkSource(b *testing.B) {
	conn := connect(b)
	for _, typ := range []string{"stream", "classic"} {
		for _, sz := range sizes {
			b.Run(typ+"/"+sz.name, func(b *testing.B) {
				q := freshQueue(b, conn, typ)
				fill(b, conn, q, b.N, sz.size)
				src, err := connector.OpenSource[padded](connector.Default, "rabbitmq", map[string]string{"url": brokerURL, "queue": q, "format": "json"})
				if err != nil {
					b.Fatal(err)
				}
				sink := &countingSink{}
				env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(100*time.Millisecond), eddy.WithCheckpointDir(b.TempDir()))
				eddy.WriteTo(eddy.FromSource(env, "rabbitmq in", src, eddy.NoWatermarks[padded]()), "count", connector.Sink[padded](sink))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				b.ResetTimer()
				m := connectortest.StartMeter()
				done := make(chan error, 1)
				go func() { done <- env.Execute(ctx, "bench") }()
				for sink.n.Load() < int64(b.N) {
					select {
					case err := <-done:
						b.Fatalf("the job ended after %d of %d messages: %v", sink.n.Load(), b.N, err)
					case <-time.After(time.Millisecond):
					}
				}
				b.StopTimer()
				m.Report(b, b.N, sz.size, "msgs")
				cancel()
				<-done
			})
		}
	}
}

// BenchmarkSink writes b.N records through the at-least-once sink (and
// without confirms) into a classic queue, at parallelism 1, and reports
// messages per second.
func BenchmarkSink(b *testing.B) {
	conn := connect(b)
	for _, g := range []string{"at-least-once", "none"} {
		for _, sz := range sizes {
			b.Run(g+"/"+sz.name, func(b *testing.B) {
				q := freshQueue(b, conn, "classic")
				sink, err := connector.OpenSink[padded](connector.Default, "rabbitmq", map[string]string{"url": brokerURL, "queue": q, "format": "json", "sink.delivery-guarantee": g})
				if err != nil {
					b.Fatal(err)
				}
				pad := strings.Repeat("x", max(0, sz.size-20))
				env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(100*time.Millisecond), eddy.WithCheckpointDir(b.TempDir()))
				in := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(b.N)}, func(i int64) padded { return padded{N: i, Pad: pad} }, eddy.NoWatermarks[padded]())
				eddy.WriteTo(in, "rabbitmq out", sink)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				b.ResetTimer()
				m := connectortest.StartMeter()
				if err := env.Execute(ctx, "bench"); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				m.Report(b, b.N, sz.size, "msgs")
				if g == "at-least-once" {
					if ready, _ := inspect(b, conn, q); ready < b.N {
						b.Fatalf("the queue holds %d messages, want %d", ready, b.N)
					}
				}
			})
		}
	}
}

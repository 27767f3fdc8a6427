package kafka_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// The benchmarks run against kfake, franz-go's in-process fake cluster,
// not a Kafka broker: their figures are those of eddy and the fake
// together, in one process, and say nothing of a real cluster's.

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
// and messages per second of CPU time (the process's, over all cores:
// eddy's and kfake's).
func measure(b *testing.B, size int, run func()) {
	b.Helper()
	b.ResetTimer()
	m := connectortest.StartMeter()
	run()
	b.StopTimer()
	m.Report(b, b.N, size, "msgs")
}

// BenchmarkSource reads b.N records of one partition at parallelism 1
// (bounded, checkpoints every 100 ms) into a sink that counts them.
func BenchmarkSource(b *testing.B) {
	addr := startCluster(b)
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			topic := freshTopic(b, addr, 1)
			cl := client(b, addr)
			p := pad(sz.size)
			for i := 0; i < b.N; {
				var recs []*kgo.Record
				for ; i < b.N && len(recs) < 5000; i++ {
					v, _ := json.Marshal(padded{N: int64(i), Pad: p})
					recs = append(recs, &kgo.Record{Topic: topic, Value: v})
				}
				if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
			src, err := connector.OpenSource[padded](connector.Default, "kafka", map[string]string{"properties.bootstrap.servers": addr, "topic": topic, "format": "json",
				"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})
			if err != nil {
				b.Fatal(err)
			}
			sink := &counter{}
			env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(100*time.Millisecond), eddy.WithCheckpointDir(b.TempDir()))
			eddy.WriteTo(eddy.FromSource(env, "kafka in", src, eddy.NoWatermarks[padded]()), "count", connector.Sink[padded](sink))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			measure(b, sz.size, func() {
				if err := env.Execute(ctx, "bench"); err != nil {
					b.Fatal(err)
				}
			})
			if got := sink.n.Load(); got != int64(b.N) {
				b.Fatalf("read %d records, want %d", got, b.N)
			}
		})
	}
}

// BenchmarkSink writes b.N generated records at parallelism 1 into a
// topic of one partition, exactly once (a transaction per checkpoint,
// every 100 ms) and at least once.
func BenchmarkSink(b *testing.B) {
	addr := startCluster(b)
	for _, g := range []string{"exactly-once", "at-least-once"} {
		for _, sz := range benchSizes {
			b.Run(g+"/"+sz.name, func(b *testing.B) {
				topic := freshTopic(b, addr, 1)
				opts := map[string]string{"properties.bootstrap.servers": addr, "topic": topic, "format": "json", "sink.delivery-guarantee": g}
				if g == "exactly-once" {
					opts["sink.transactional-id-prefix"] = topic
				}
				sink, err := connector.OpenSink[padded](connector.Default, "kafka", opts)
				if err != nil {
					b.Fatal(err)
				}
				p := pad(sz.size)
				env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(100*time.Millisecond), eddy.WithCheckpointDir(b.TempDir()))
				in := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(b.N)}, func(i int64) padded { return padded{N: i, Pad: p} }, eddy.NoWatermarks[padded]())
				eddy.WriteTo(in, "kafka out", sink)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				measure(b, sz.size, func() {
					if err := env.Execute(ctx, "bench"); err != nil {
						b.Fatal(err)
					}
				})
				b.StopTimer()
				hw := offsets(b, client(b, addr), topic, 1)
				if hw[0] < int64(b.N) {
					b.Fatalf("the topic's last stable offset is %d, want at least %d records", hw[0], b.N)
				}
			})
		}
	}
}

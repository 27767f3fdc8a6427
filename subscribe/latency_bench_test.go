package subscribe_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/subscribe"
)

var latencyRate = flag.Int("latency.rate", 2000, "BenchmarkSubscriptionLatency: messages published per second")

// BenchmarkSubscriptionLatency measures the end-to-end latency from the
// publication of a message to a JetStream stream to its arrival at an HTTP
// subscriber of a job's table: the job reads the stream (exactly once,
// checkpointing every second), filters it and publishes the result with
// the 'publish' connector; the subscriber holds a condition of its own.
// Messages are published at a steady rate (-latency.rate per second) and
// carry their send time; the benchmark reports the median and the 99th
// percentile of the latency of the b.N messages the subscriber receives.
func BenchmarkSubscriptionLatency(b *testing.B) {
	url := startNATS(b)
	nc, err := natsgo.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "TICKS", Subjects: []string{"ticks"}}); err != nil {
		b.Fatal(err)
	}
	s := sql.NewSession()
	if _, err := s.Execute(fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '1 s';
CREATE TABLE ticks (id BIGINT, sent BIGINT, kind STRING) WITH ('connector' = 'nats', 'url' = '%s', 'stream' = 'TICKS', 'format' = 'json');
CREATE TABLE latency_ticks (id BIGINT, sent BIGINT, kind STRING) WITH ('connector' = 'publish');
INSERT INTO latency_ticks SELECT id, sent, kind FROM ticks WHERE kind <> 'noise';
`, url)); err != nil {
		b.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointDir(b.TempDir()))
	if err := s.Build(env); err != nil {
		b.Fatal(err)
	}
	jobErr := make(chan error, 1)
	go func() { jobErr <- env.Execute(ctx, "latency") }()
	srv := httptest.NewServer(subscribe.Default.Handler())
	b.Cleanup(srv.Close) // after the event stream closes
	// Wait until the job has published the table.
	for {
		if _, ok := subscribe.Default.Topic("latency_ticks"); ok {
			break
		}
		select {
		case err := <-jobErr:
			b.Fatalf("the job ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	c := openSSE(b, srv.URL+"/v1/subscriptions/latency_ticks/events?where=kind%20%3D%20%27tick%27", nil)
	period := time.Second / time.Duration(*latencyRate)
	b.ResetTimer()
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for i := 0; i < b.N; i++ {
			<-tick.C
			msg := fmt.Sprintf(`{"id": %d, "sent": %d, "kind": "tick"}`, i, time.Now().UnixNano())
			if _, err := js.PublishAsync("ticks", []byte(msg)); err != nil {
				return
			}
			if i%10 == 0 { // noise the job filters out
				_, _ = js.PublishAsync("ticks", []byte(`{"id": -1, "sent": 0, "kind": "noise"}`))
			}
		}
	}()
	lat := make([]time.Duration, 0, b.N)
	for len(lat) < b.N {
		_, typ, data := c.event(b)
		if typ != "change" {
			b.Fatalf("event %s: %s", typ, data)
		}
		var e struct{ Row struct{ Sent int64 } }
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Duration(time.Now().UnixNano()-e.Row.Sent))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(0, "ns/op")
	cancel()
	if err := <-jobErr; err != nil && !strings.Contains(err.Error(), "context canceled") {
		b.Logf("the job ended with %v", err)
	}
}

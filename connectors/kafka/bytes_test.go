package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// TestBytesCounted reads a topic into another: the source counts the bytes
// of the values it read, the sink those of the values it produced.
func TestBytesCounted(t *testing.T) {
	addr := startCluster(t)
	in, out := freshTopic(t, addr, 3), freshTopic(t, addr, 2)
	produceLines(t, addr, in, 0, 500, 3)
	var sent int64
	for _, r := range readTopic(t, addr, in) {
		sent += int64(len(r.Value))
	}
	src := openSource(t, map[string]string{"properties.bootstrap.servers": addr, "topic": in, "format": "json",
		"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})
	sink, err := connector.OpenSink[line](connector.Default, "kafka", map[string]string{"properties.bootstrap.servers": addr, "topic": out,
		"format": "json", "sink.delivery-guarantee": "at-least-once"})
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	eddy.WriteTo(eddy.FromSource(env, "in", src, eddy.NoWatermarks[line]()).Rebalance(), "out", sink)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := env.Execute(ctx, "bytes"); err != nil {
		t.Fatal(err)
	}
	var written int64
	for _, r := range readTopic(t, addr, out) {
		written += int64(len(r.Value))
	}
	var bytesIn, bytesOut int64
	for _, m := range env.Metrics() {
		switch m.Name {
		case "Source: in":
			bytesIn += m.BytesIn
		case "Sink: out":
			bytesOut += m.BytesOut
		}
	}
	if sent == 0 || bytesIn != sent {
		t.Errorf("the source counted %d bytes in, want the %d bytes of the values it read", bytesIn, sent)
	}
	if written == 0 || bytesOut != written {
		t.Errorf("the sink counted %d bytes out, want the %d bytes of the values it produced", bytesOut, written)
	}
}

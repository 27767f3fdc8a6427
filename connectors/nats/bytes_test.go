package nats_test

import (
	"context"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// TestBytesCounted reads a stream into another: the source counts the
// bytes of the messages' data it read, the sink those of the messages it
// published, with either guarantee.
func TestBytesCounted(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	for _, guarantee := range []string{"at-least-once", "exactly-once"} {
		t.Run(guarantee, func(t *testing.T) {
			in, inPrefix := freshStream(t, js)
			publishLines(t, js, inPrefix, 0, 400, 3)
			var sent int64
			for _, b := range readStream(t, js, in) {
				sent += int64(len(b))
			}
			out, outPrefix := freshStream(t, js)
			src := openSource(t, map[string]string{"url": url, "stream": in, "format": "json", "scan.bounded.mode": "latest-offset"})
			sink, err := connector.OpenSink[line](connector.Default, "nats", map[string]string{
				"url": url, "stream": out, "subject": outPrefix + ".out", "format": "json", "sink.delivery-guarantee": guarantee})
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
			for _, b := range readStream(t, js, out) {
				written += int64(len(b))
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
				t.Errorf("the source counted %d bytes in, want the %d bytes of the messages it read", bytesIn, sent)
			}
			if written == 0 || bytesOut != written {
				t.Errorf("the sink counted %d bytes out, want the %d bytes of the messages it published", bytesOut, written)
			}
		})
	}
}

package mqtt_test

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

func sinkInput(n int) []line {
	var in []line
	for i := 0; i < n; i++ {
		in = append(in, line{Part: i % 5, N: int64(i)})
	}
	return in
}

func openSink(t testing.TB, opts map[string]string) connector.Sink[line] {
	t.Helper()
	s, err := connector.OpenSink[line](connector.Default, "mqtt", opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// collect subscribes to topic and returns what reads back the lines
// published to it: it waits until every line of want has arrived.
func collect(t testing.TB, topic string, want []line) func() []line {
	sub := dialRaw(t, unique(t)+"-sub", true, 0)
	// QoS 1: a QoS 2 subscriber falls behind a fast publisher, and Mosquitto
	// drops what it queues beyond max_queued_messages.
	sub.subscribe(1, topic)
	t.Cleanup(sub.close)
	return func() []line {
		decode := func(ms []rawMsg) []line {
			var out []line
			for _, m := range ms {
				var l line
				if err := json.Unmarshal(m.payload, &l); err != nil {
					t.Fatalf("topic %s holds %q: %v", topic, m.payload, err)
				}
				out = append(out, l)
			}
			return out
		}
		ms := sub.waitUntil(time.Minute, "every line published", func(ms []rawMsg) bool {
			c := counts(decode(ms))
			for _, l := range want {
				if c[l.N] == 0 {
					return false
				}
			}
			return true
		})
		return decode(ms)
	}
}

// TestSinkConformance runs the sink suite at least once, with QoS 1 and 2.
func TestSinkConformance(t *testing.T) {
	needBroker(t)
	input := sinkInput(3000)
	for _, c := range []struct{ version, qos string }{{"5", "1"}, {"3.1.1", "1"}, {"5", "2"}, {"3.1.1", "2"}} {
		t.Run(c.version+"/qos"+c.qos, func(t *testing.T) {
			connectortest.RunSink(t, connectortest.SinkCase[line]{
				Open: func(t testing.TB) (connector.Sink[line], func() []line) {
					topic := unique(t) + "/out"
					readBack := collect(t, topic, input)
					return openSink(t, map[string]string{"url": brokerURL, "topic": topic, "qos": c.qos, "format": "json", "mqtt.version": c.version}), readBack
				},
				Input:     input,
				Guarantee: connectortest.AtLeastOnce,
			})
		})
	}
}

type writerCtx struct{}

func (writerCtx) SinkName() string      { return "mqtt out" }
func (writerCtx) Subtask() int          { return 0 }
func (writerCtx) Parallelism() int      { return 1 }
func (writerCtx) ProcessingTime() int64 { return time.Now().UnixMilli() }
func (writerCtx) Log() *slog.Logger     { return quiet() }

// TestSinkRetainAndQoS0 publishes with QoS 0 and the retain flag: a
// subscriber that comes after the writer gets the last message.
func TestSinkRetainAndQoS0(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			topic := unique(t) + "/state"
			t.Cleanup(func() { clearRetained(t, topic) })
			w, err := openSink(t, map[string]string{"url": brokerURL, "topic": topic, "qos": "0", "sink.retain": "true", "format": "json", "mqtt.version": version}).NewWriter(writerCtx{})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(sinkInput(10), nil); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			// QoS 0 is not acknowledged, and the broker may read the
			// writer's last messages after another client's
			// subscription: a new subscriber gets the last line,
			// retained, once the broker has read them.
			deadline := time.Now().Add(time.Minute)
			for {
				sub := dialRaw(t, unique(t)+"-sub", true, 0)
				sub.subscribe(1, topic)
				got := sub.waitUntil(time.Minute, "the retained message", func(ms []rawMsg) bool { return len(ms) > 0 })
				sub.close()
				var l line
				err := json.Unmarshal(got[0].payload, &l)
				if err == nil && l.N == 9 && got[0].retained {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("a new subscriber got %q (retained %v), want the last line, retained", got[0].payload, got[0].retained)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

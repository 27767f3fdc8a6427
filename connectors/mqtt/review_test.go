package mqtt_test

import (
	"encoding/json"
	"testing"
	"time"
)

// TestSinkResendKeepsOrder cuts a writer's connection while the broker
// has not acknowledged all it published, then writes on: the messages the
// broker did not acknowledge are published again before the newer ones,
// so that the topic's retained message is the last record written, not
// an older one published again after it.
func TestSinkResendKeepsOrder(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			topic := unique(t) + "/state"
			t.Cleanup(func() { clearRetained(t, topic) })
			input := sinkInput(3000)
			px := startProxy(t)
			w, err := openSink(t, map[string]string{"url": px.url(), "topic": topic, "qos": "1", "sink.retain": "true", "format": "json", "mqtt.version": version}).NewWriter(writerCtx{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for i := 0; i < len(input); i += 1000 {
				if err := w.Write(input[i:i+1000], nil); err != nil {
					t.Fatal(err)
				}
				if i < 2000 && px.cut() != 1 {
					t.Fatal("the writer had no connection to cut")
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			// A subscriber connecting once the broker has handled every
			// message gets the last one as the retained message. The raw
			// client's own barrier makes sure the broker is done.
			deadline := time.Now().Add(30 * time.Second)
			for {
				sub := dialRaw(t, unique(t)+"-sub", true, 0)
				sub.subscribe(1, topic)
				got := sub.waitUntil(time.Minute, "the retained message", func(ms []rawMsg) bool { return len(ms) > 0 })
				sub.close()
				var l line
				if err := json.Unmarshal(got[0].payload, &l); err != nil || !got[0].retained {
					t.Fatalf("a new subscriber got %q (retained %v)", got[0].payload, got[0].retained)
				}
				if l.N == int64(len(input)-1) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the retained message of the topic is line %d, want the last line written, %d: a message published again after the connection was lost went out after newer ones", l.N, len(input)-1)
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
}

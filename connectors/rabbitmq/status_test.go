package rabbitmq_test

import (
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestStreamReaderStatus reads a stream queue to its end: the reader's
// status has the offset of the next message and the messages delivered.
func TestStreamReaderStatus(t *testing.T) {
	conn := connect(t)
	q := freshQueue(t, conn, "stream")
	publishLines(t, conn, q, 0, 10, 1, false)
	src := connectortest.NewStatusSource(openSource(t, map[string]string{"url": brokerURL, "queue": q, "format": "json"}))
	mem := connectortest.NewMemorySink[line]()
	j := runJob(t, src.Source(), mem, 1, nil, eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	j.waitFor(t, mem, 10)
	j.stop()

	sts := src.ReaderStatuses()
	if len(sts) != 1 || sts[0] == nil {
		t.Fatalf("reader statuses %v, want one", sts)
	}
	st := sts[0]
	splits := st["splits"].(map[string]any)
	if len(splits) != 1 || st["queue"] != q || st["messagesRecords"].(int64) < 10 {
		t.Fatalf("status %v, want one split and 10 messages delivered", st)
	}
	for _, s := range splits {
		if s := s.(map[string]any); s["offset"] != int64(10) {
			t.Fatalf("split status %v, want the offset 10", s)
		}
	}
	for k, v := range st {
		if s, ok := v.(string); ok && s == brokerURL {
			t.Fatalf("status entry %s holds the broker's URL", k)
		}
	}
}

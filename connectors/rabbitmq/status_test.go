package rabbitmq_test

import (
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// statusSource keeps the readers a source makes, so that a test can call
// their Status once the job has ended.
type statusSource[T any] struct {
	connector.Source[T]
	mu      sync.Mutex
	readers []connector.Reader[T]
}

func (s *statusSource[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	r, err := s.Source.NewReader(ctx)
	s.mu.Lock()
	s.readers = append(s.readers, r)
	s.mu.Unlock()
	return r, err
}

// TestStreamReaderStatus reads a stream queue to its end: the reader's
// status has the offset of the next message and the messages delivered.
func TestStreamReaderStatus(t *testing.T) {
	conn := connect(t)
	q := freshQueue(t, conn, "stream")
	publishLines(t, conn, q, 0, 10, 1, false)
	src := &statusSource[line]{Source: openSource(t, map[string]string{"url": brokerURL, "queue": q, "format": "json"})}
	mem := connectortest.NewMemorySink[line]()
	j := runJob(t, src, mem, 1, nil, eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	j.waitFor(t, mem, 10)
	j.stop()

	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.readers) != 1 {
		t.Fatalf("%d readers, want 1", len(src.readers))
	}
	sr, ok := src.readers[0].(connector.StatusReporter)
	if !ok {
		t.Fatalf("the %T reader reports no status", src.readers[0])
	}
	st := sr.Status()
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

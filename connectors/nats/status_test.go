package nats_test

import (
	"context"
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

// TestJetStreamReaderStatus reads a stream to its end: the reader's status
// has the messages read, the next stream sequence and none pending.
func TestJetStreamReaderStatus(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	name, prefix := freshStream(t, js)
	publishLines(t, js, prefix, 0, 10, 1)
	src := &statusSource[line]{Source: openSource(t, map[string]string{"url": url, "stream": name, "format": "json"})}
	mem := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "status", src, eddy.NoWatermarks[line]()), "memory", mem.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "status") }()
	if err := mem.WaitFor(ctx, 10); err != nil {
		t.Fatalf("waiting for 10 records: %v", err)
	}
	cancel()
	<-done

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
	if len(splits) != 1 || st["stream"] != name || st["messagesRecords"] != int64(10) || st["pendingRecords"] != uint64(0) {
		t.Fatalf("status %v, want one split, 10 messages read, none pending", st)
	}
	for _, s := range splits {
		s := s.(map[string]any)
		if s["nextSequence"] != uint64(11) || s["pendingRecords"] != uint64(0) || s["messagesRecords"] != int64(10) || s["lastMessageTime"] == nil {
			t.Fatalf("split status %v, want the next sequence 11, 10 messages read, none pending", s)
		}
	}
}

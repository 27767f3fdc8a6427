package kafka_test

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

func (s *statusSource[T]) statuses(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, r := range s.readers {
		sr, ok := r.(connector.StatusReporter)
		if !ok {
			t.Fatalf("the %T reader reports no status", r)
		}
		out = append(out, sr.Status())
	}
	return out
}

// TestReaderStatus reads two partitions to their ends, with more records
// in them than the source read: the reader's status has, per partition,
// the offset of the next record, the high watermark and the records
// between.
func TestReaderStatus(t *testing.T) {
	addr := startCluster(t)
	topic := freshTopic(t, addr, 2)
	produceLines(t, addr, topic, 0, 10, 2)
	src := &statusSource[line]{Source: openSource(t, map[string]string{"properties.bootstrap.servers": addr, "topic": topic, "format": "json",
		"scan.startup.mode": "earliest-offset"})}
	sink := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "kafka", src, eddy.NoWatermarks[line]()), "memory", sink.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "status") }()
	if err := sink.WaitFor(ctx, 10); err != nil {
		t.Fatalf("waiting for 10 records: %v", err)
	}
	cancel()
	<-done

	st := src.statuses(t)
	if len(st) != 1 {
		t.Fatalf("%d readers, want 1", len(st))
	}
	parts := st[0]["partitions"].(map[string]any)
	for _, id := range []string{topic + "-0", topic + "-1"} {
		p, _ := parts[id].(map[string]any)
		if p["offset"] != int64(5) || p["highWatermark"] != int64(5) || p["lagRecords"] != int64(0) {
			t.Fatalf("partition %s: status %v, want offset 5, high watermark 5, no lag (all: %v)", id, p, st[0])
		}
	}
	if st[0]["lagRecords"] != int64(0) {
		t.Fatalf("status %v, want no lag", st[0])
	}
}

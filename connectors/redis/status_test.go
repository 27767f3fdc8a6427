package redis_test

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

// TestReaderStatus reads a stream to its end: the reader's status has the
// entries read and the id of the last one.
func TestReaderStatus(t *testing.T) {
	cli := server(t)
	stream := freshStream(t, cli)
	addLines(t, cli, stream, 0, 10, 1)
	last := cli.XRevRangeN(context.Background(), stream, "+", "-", 1).Val()[0].ID
	src := &statusSource[line]{Source: openSource(t, map[string]string{"stream": stream, "format": "json"})}
	mem := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "redis in", src, eddy.NoWatermarks[line]()), "memory", mem.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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
	if st := sr.Status(); st["stream"] != stream || st["entriesRecords"] != int64(10) || st["lastEntryId"] != last {
		t.Fatalf("status %v, want 10 entries read, the last %s", st, last)
	}
}

package nats_test

import (
	"context"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestJetStreamReaderStatus reads a stream to its end: the reader's status
// has the messages read, the next stream sequence and none pending.
func TestJetStreamReaderStatus(t *testing.T) {
	url := startServer(t)
	_, js := connect(t, url)
	name, prefix := freshStream(t, js)
	publishLines(t, js, prefix, 0, 10, 1)
	src := connectortest.NewStatusSource(openSource(t, map[string]string{"url": url, "stream": name, "format": "json"}))
	mem := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "status", src.Source(), eddy.NoWatermarks[line]()), "memory", mem.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "status") }()
	if err := mem.WaitFor(ctx, 10); err != nil {
		t.Fatalf("waiting for 10 records: %v", err)
	}
	cancel()
	<-done

	sts := src.ReaderStatuses()
	if len(sts) != 1 || sts[0] == nil {
		t.Fatalf("reader statuses %v, want one", sts)
	}
	st := sts[0]
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

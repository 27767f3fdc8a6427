package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestReaderStatus reads a stream to its end: the reader's status has the
// entries read and the id of the last one.
func TestReaderStatus(t *testing.T) {
	cli := server(t)
	stream := freshStream(t, cli)
	addLines(t, cli, stream, 0, 10, 1)
	last := cli.XRevRangeN(context.Background(), stream, "+", "-", 1).Val()[0].ID
	src := connectortest.NewStatusSource(openSource(t, map[string]string{"stream": stream, "format": "json"}))
	mem := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "redis in", src.Source(), eddy.NoWatermarks[line]()), "memory", mem.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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
	if st := sts[0]; st["stream"] != stream || st["entriesRecords"] != int64(10) || st["lastEntryId"] != last {
		t.Fatalf("status %v, want 10 entries read, the last %s", st, last)
	}
}

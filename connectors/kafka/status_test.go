package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestReaderStatus reads two partitions to their ends, with more records
// in them than the source read: the reader's status has, per partition,
// the offset of the next record, the high watermark and the records
// between.
func TestReaderStatus(t *testing.T) {
	addr := startCluster(t)
	topic := freshTopic(t, addr, 2)
	produceLines(t, addr, topic, 0, 10, 2)
	src := connectortest.NewStatusSource(openSource(t, map[string]string{"properties.bootstrap.servers": addr, "topic": topic, "format": "json",
		"scan.startup.mode": "earliest-offset"}))
	sink := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	eddy.WriteTo(eddy.FromSource(env, "kafka", src.Source(), eddy.NoWatermarks[line]()), "memory", sink.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "status") }()
	if err := sink.WaitFor(ctx, 10); err != nil {
		t.Fatalf("waiting for 10 records: %v", err)
	}
	cancel()
	<-done

	st := src.ReaderStatuses()
	if len(st) != 1 || st[0] == nil {
		t.Fatalf("reader statuses %v, want one", st)
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

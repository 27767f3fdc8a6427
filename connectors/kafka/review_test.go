package kafka_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// TestSharedTransactionalIDPrefixRefused runs a job with two exactly-once
// sinks given the same transactional-id prefix (two INSERTs into one
// table make two such sinks). Each would abort, when the job is restored,
// the transactions of the other's checkpoint that must still be committed
// (they are of its prefix, in neither its checkpoint nor open in the
// process), losing their records, and their ids can collide: the job is
// refused, naming the prefix and the fix.
func TestSharedTransactionalIDPrefixRefused(t *testing.T) {
	addr := startCluster(t)
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(10*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	in := eddy.FromSlice(env, sinkInput(100), eddy.NoWatermarks[line]())
	for i := range 2 {
		out := freshTopic(t, addr, 1)
		sink, err := connector.OpenSink[line](connector.Default, "kafka", map[string]string{"properties.bootstrap.servers": addr, "topic": out,
			"format": "json", "sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "shared-prefix"})
		if err != nil {
			t.Fatal(err)
		}
		eddy.WriteTo(in, "kafka out "+string(rune('a'+i)), sink)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := env.Execute(ctx, "write twice")
	if err == nil || !strings.Contains(err.Error(), "'shared-prefix'") || !strings.Contains(err.Error(), "its own prefix") {
		t.Fatalf("a job with two exactly-once sinks of one prefix: %v; want an error naming the prefix", err)
	}
	// The prefix is free again once the job has ended.
	env2 := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(10*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	sink, err := connector.OpenSink[line](connector.Default, "kafka", map[string]string{"properties.bootstrap.servers": addr, "topic": freshTopic(t, addr, 1),
		"format": "json", "sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "shared-prefix"})
	if err != nil {
		t.Fatal(err)
	}
	eddy.WriteTo(eddy.FromSlice(env2, sinkInput(10), eddy.NoWatermarks[line]()), "kafka out", sink)
	if err := env2.Execute(ctx, "write once"); err != nil {
		t.Fatalf("a job with the prefix alone, after the other ended: %v", err)
	}
}

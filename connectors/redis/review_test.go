package redis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestCommitAfterBatchSizeChange cuts a commit short after its first
// chunk, as a crash does, and commits the transaction again from a job
// restored with another 'sink.batch-size': the chunks of the repeated
// commit are those of the first, so the stream holds every record once.
func TestCommitAfterBatchSizeChange(t *testing.T) {
	cli := server(t)
	ctx := context.Background()
	stream := freshStream(t, cli)
	first := openSink(t, map[string]string{"stream": stream, "format": "json", "sink.batch-size": "100", "sink.transaction.marker-ttl": "1 h"}).(connector.TransactionalSink[line])
	w, err := first.NewTransactionalWriter(connectortest.WriterContext{Name: "redis out"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(linesUpTo(250, 1), nil); err != nil {
		t.Fatal(err)
	}
	tx, err := w.PreCommit()
	if err != nil {
		t.Fatal(err)
	}
	var x struct{ ID string }
	if err := json.Unmarshal(tx, &x); err != nil {
		t.Fatal(err)
	}
	// What the commit's first script call did before the crash: chunk 0
	// (records 0 to 99) added, with its marker.
	staged := fmt.Sprintf("eddy:txn:%s:%s:staged", stream, x.ID)
	recs, err := cli.LRange(ctx, staged, 0, 99).Result()
	if err != nil || len(recs) != 100 {
		t.Fatalf("reading the staged records: %d, %v", len(recs), err)
	}
	for _, r := range recs {
		if err := cli.XAdd(ctx, &goredis.XAddArgs{Stream: stream, Values: []any{"data", r}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cli.Set(ctx, fmt.Sprintf("eddy:txn:%s:%s:0", stream, x.ID), "1", 0).Err(); err != nil {
		t.Fatal(err)
	}

	restored := openSink(t, map[string]string{"stream": stream, "format": "json", "sink.batch-size": "70", "sink.transaction.marker-ttl": "1 h"}).(connector.TransactionalSink[line])
	again, err := restored.NewTransactionalWriter(connectortest.WriterContext{Name: "redis out"})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := again.Commit(tx); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, cli, stream)
	if len(got) != 250 {
		t.Fatalf("the stream holds %d entries after the repeated commit, want 250", len(got))
	}
	for i, l := range got {
		if l.N != int64(i) {
			t.Fatalf("entry %d holds record %d, want %d", i, l.N, i)
		}
	}
}

package redis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

func TestSinkConformance(t *testing.T) {
	cli := server(t)
	for _, g := range []struct {
		option    string
		guarantee connectortest.Guarantee
	}{{"exactly-once", connectortest.ExactlyOnce}, {"at-least-once", connectortest.AtLeastOnce}} {
		t.Run(g.option, func(t *testing.T) {
			connectortest.RunSink(t, connectortest.SinkCase[line]{
				Open: func(t testing.TB) (connector.Sink[line], func() []line) {
					stream := freshStream(t, cli)
					sink := openSink(t, map[string]string{"stream": stream, "format": "json", "sink.delivery-guarantee": g.option, "sink.batch-size": "70"})
					return sink, func() []line { return readLines(t, cli, stream) }
				},
				Input:     linesUpTo(3000, 5),
				Guarantee: g.guarantee,
			})
		})
	}
}

// TestRepeatedCommitAddsNothing commits a transaction, then commits it
// again, as a restored job does, from another writer: the stream holds its
// records once, and every chunk has a marker that expires.
func TestRepeatedCommitAddsNothing(t *testing.T) {
	cli := server(t)
	stream := freshStream(t, cli)
	sink := openSink(t, map[string]string{"stream": stream, "format": "json", "sink.batch-size": "100", "sink.transaction.marker-ttl": "1 h"})
	ts, ok := sink.(connector.TransactionalSink[line])
	if !ok {
		t.Fatalf("the exactly-once sink is a %T, not a TransactionalSink", sink)
	}
	w, err := ts.NewTransactionalWriter(connectortest.WriterContext{Name: "redis out"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(linesUpTo(250, 1), nil); err != nil {
		t.Fatal(err)
	}
	tx, err := w.PreCommit()
	if err != nil || tx == nil {
		t.Fatalf("pre-commit: %v, %v", tx, err)
	}
	if got := readLines(t, cli, stream); len(got) != 0 {
		t.Fatalf("the stream holds %d entries before the commit, want none", len(got))
	}
	var x struct{ ID string }
	if err := json.Unmarshal(tx, &x); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	staged := fmt.Sprintf("eddy:txn:%s:%s:staged", stream, x.ID)
	if n, err := cli.LLen(ctx, staged).Result(); err != nil || n != 250 {
		t.Fatalf("the pre-committed transaction has %d records staged in %s (%v), want 250", n, staged, err)
	}
	if err := w.Commit(tx); err != nil {
		t.Fatal(err)
	}
	again, err := ts.NewTransactionalWriter(connectortest.WriterContext{Name: "redis out"})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := again.Commit(tx); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, cli, stream)
	if len(got) != 250 {
		t.Fatalf("after two commits of one transaction the stream holds %d entries, want 250", len(got))
	}
	for i, l := range got {
		if l.N != int64(i) {
			t.Fatalf("entry %d holds record %d: the chunks are out of order", i, l.N)
		}
	}
	if n, err := cli.Exists(ctx, staged).Result(); err != nil || n != 0 {
		t.Fatalf("the staged records of a committed transaction are still there (%v)", err)
	}
	for k := 0; k < 3; k++ {
		key := fmt.Sprintf("eddy:txn:%s:%s:%d", stream, x.ID, k)
		ttl, err := cli.PTTL(ctx, key).Result()
		if err != nil || ttl <= 0 || ttl > time.Hour {
			t.Fatalf("the marker %s has time to live %v (%v), want at most an hour", key, ttl, err)
		}
	}
}

// TestAbortAndLostStaging aborts a transaction, which deletes its staged
// records, and commits a transaction whose staged records and markers are
// gone, which adds nothing and does not fail.
func TestAbortAndLostStaging(t *testing.T) {
	cli := server(t)
	ctx := context.Background()
	stream := freshStream(t, cli)
	ts := openSink(t, map[string]string{"stream": stream, "format": "json", "sink.batch-size": "10"}).(connector.TransactionalSink[line])
	w, err := ts.NewTransactionalWriter(connectortest.WriterContext{Name: "redis out"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, commit := range []bool{false, true} {
		if err := w.Write(linesUpTo(25, 1), nil); err != nil {
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
		staged := fmt.Sprintf("eddy:txn:%s:%s:staged", stream, x.ID)
		if !commit {
			if err := w.Abort(tx); err != nil {
				t.Fatal(err)
			}
			if n, _ := cli.Exists(ctx, staged).Result(); n != 0 {
				t.Fatalf("an aborted transaction's staged records are still there")
			}
			continue
		}
		if err := cli.Del(ctx, staged).Err(); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(tx); err != nil {
			t.Fatalf("committing a transaction whose staged records are gone: %v", err)
		}
	}
	if got := readLines(t, cli, stream); len(got) != 0 {
		t.Fatalf("the stream holds %d entries, want none", len(got))
	}
}

// TestMaxLen trims the stream as the sink adds entries, with both
// guarantees.
func TestMaxLen(t *testing.T) {
	cli := server(t)
	for _, g := range []string{"exactly-once", "at-least-once"} {
		stream := freshStream(t, cli)
		sink := openSink(t, map[string]string{"stream": stream, "format": "json", "sink.delivery-guarantee": g, "sink.max-len": "100", "sink.batch-size": "50"})
		w, err := sink.NewWriter(connectortest.WriterContext{Name: "redis out"})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			if err := w.Write(linesUpTo(500, 1), nil); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		n, err := cli.XLen(context.Background(), stream).Result()
		if err != nil {
			t.Fatal(err)
		}
		// MAXLEN ~ trims whole nodes of the stream (100 entries each by
		// default): it keeps at least 100 entries and far fewer than 5000.
		if n < 100 || n > 1000 {
			t.Fatalf("%s: the stream holds %d entries after 5000 were added with 'sink.max-len' = 100", g, n)
		}
	}
}

// TestSinkToAnotherType fails naming the key, the stream and its type.
func TestSinkToAnotherType(t *testing.T) {
	cli := server(t)
	for _, g := range []string{"exactly-once", "at-least-once"} {
		key := freshStream(t, cli)
		if err := cli.Set(context.Background(), key, "a string", 0).Err(); err != nil {
			t.Fatal(err)
		}
		sink := openSink(t, map[string]string{"stream": key, "format": "json", "sink.delivery-guarantee": g})
		w, err := sink.NewWriter(connectortest.WriterContext{Name: "redis out"})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Write(linesUpTo(3, 1), nil)
		if err == nil {
			err = w.Flush()
		}
		w.Close()
		if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") || !strings.Contains(err.Error(), key) {
			t.Fatalf("%s: writing to a string key: %v, want a WRONGTYPE error naming %s", g, err, key)
		}
	}
}

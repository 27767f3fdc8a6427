package rabbitmq_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// TestQueueSourceAtLeastOnce reads a classic queue with two consumers
// through a job that fails three times downstream of the source and twice
// right after a checkpoint completes, before the readers acknowledge what
// it covers: every message arrives, some twice.
func TestQueueSourceAtLeastOnce(t *testing.T) {
	conn := connect(t)
	const n = 4000
	q := freshQueue(t, conn, "classic")
	publishLines(t, conn, q, 0, n, 4, false)
	mem := connectortest.NewMemorySink[line]()
	w := watch(openSource(t, map[string]string{"url": brokerURL, "queue": q, "format": "json", "scan.prefetch-count": "100"}))
	w.failNotifications(2, 6)
	var consumers atomic.Int64
	j := runJob(t, w, mem, 2, failAt(900, 2000, 3100),
		eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 10*time.Millisecond)))
	distinct := func() int {
		seen := map[int64]bool{}
		for _, l := range mem.Committed() {
			seen[l.N] = true
		}
		return len(seen)
	}
	eventually(t, "every message to be committed", func() bool {
		if _, c := inspect(t, conn, q); c > int(consumers.Load()) {
			consumers.Store(int64(c))
		}
		return distinct() == n
	})
	// The messages a checkpoint covered when its completion failed come
	// again.
	eventually(t, "messages delivered again to be committed", func() bool { return len(mem.Committed()) > n })
	j.stop()
	// Five failures are injected; a record's failure and a failed
	// notification can strike the same attempt and cost one restart.
	if r := j.env.Restarts(); r < 3 || r > 5 {
		t.Errorf("the job restarted %d times, want 3 to 5", r)
	}
	if c := consumers.Load(); c != 2 {
		t.Errorf("the queue had at most %d consumers, want 2 (one per reader)", c)
	}
	got := mem.Committed()
	t.Logf("%d messages arrived as %d records; the source emitted %d", n, len(got), w.emitted.Load())
	if w.emitted.Load() <= int64(n) {
		t.Errorf("the source emitted %d records for %d messages: the messages read after the last checkpoint before a failure were not delivered again", w.emitted.Load(), n)
	}
	report(t, mem)
}

// TestQueueAcknowledgedAfterCheckpoint reads a classic queue: nothing is
// acknowledged before a checkpoint covering it completes (a job whose
// checkpoints never come leaves every message in the queue), and
// everything is once one does.
func TestQueueAcknowledgedAfterCheckpoint(t *testing.T) {
	conn := connect(t)
	const n = 500
	q := freshQueue(t, conn, "classic")
	publishLines(t, conn, q, 0, n, 1, false)
	opts := map[string]string{"url": brokerURL, "queue": q, "format": "json"}

	// Checkpoints an hour apart: none completes while the job runs.
	w := watch(openSource(t, opts))
	mem := connectortest.NewMemorySink[line]()
	j := runJob(t, w, mem, 1, nil, eddy.WithCheckpointing(time.Hour), eddy.WithCheckpointDir(t.TempDir()))
	eventually(t, "the source to emit every message", func() bool { return w.emitted.Load() >= n })
	if ready, consumers := inspect(t, conn, q); ready != 0 || consumers != 1 {
		t.Fatalf("while the job runs the queue has %d ready messages and %d consumers, want 0 and 1", ready, consumers)
	}
	j.stop()
	eventually(t, "the consumer to go", func() bool { _, c := inspect(t, conn, q); return c == 0 })
	if ready, _ := inspect(t, conn, q); ready != n {
		t.Fatalf("after a job without a completed checkpoint the queue has %d ready messages, want all %d: some were acknowledged", ready, n)
	}

	// Checkpoints every 20 ms: once one covering every message completes,
	// the queue is empty.
	w = watch(openSource(t, opts))
	covered := w.coverAt(n)
	mem = connectortest.NewMemorySink[line]()
	j = runJob(t, w, mem, 1, nil, eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
	select {
	case <-covered:
	case err := <-j.done:
		t.Fatalf("the job ended: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("waited a minute for a checkpoint covering every message")
	}
	j.stop()
	eventually(t, "the consumer to go", func() bool { _, c := inspect(t, conn, q); return c == 0 })
	if ready, _ := inspect(t, conn, q); ready != 0 {
		t.Fatalf("after a checkpoint covering every message completed the queue has %d ready messages, want 0", ready)
	}
	if got := len(mem.Committed()); got != n {
		t.Fatalf("committed %d records, want %d", got, n)
	}
}

// TestMalformedMessages reads a queue holding a message that is not JSON:
// the job fails naming the queue and the message, or, with dead letters,
// sets it aside, goes on, and acknowledges it with the checkpoint.
func TestMalformedMessages(t *testing.T) {
	conn := connect(t)
	for _, deadLetters := range []bool{false, true} {
		q := freshQueue(t, conn, "classic")
		publishLines(t, conn, q, 0, 10, 1, false)
		publishRaw(t, conn, q, [][]byte{[]byte("{not json")}, []string{"bad-1"})
		publishLines(t, conn, q, 10, 20, 1, false)
		w := watch(openSource(t, map[string]string{"url": brokerURL, "queue": q, "format": "json"}))
		covered := w.coverAt(21)
		mem := connectortest.NewMemorySink[line]()
		dead := connectortest.NewMemorySink[connector.DeadLetter]()
		env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.NoRestart()))
		var sopts []eddy.SourceOption
		if deadLetters {
			sopts = append(sopts, eddy.OnBadRecord(eddy.DeadLetterBadRecords))
		}
		s := eddy.FromSource(env, "bad", w, eddy.NoWatermarks[line](), sopts...)
		eddy.WriteTo(s, "memory", mem.Sink())
		if deadLetters {
			eddy.WriteTo(eddy.DeadLetters(s), "dead letters", dead.Sink())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		done := make(chan error, 1)
		go func() { done <- env.Execute(ctx, "bad") }()
		if !deadLetters {
			err := <-done
			cancel()
			if err == nil || !strings.Contains(err.Error(), "queue "+q+" delivery") || !strings.Contains(err.Error(), "message-id bad-1") {
				t.Fatalf("reading a malformed message: %v, want an error naming queue %s and message-id bad-1", err, q)
			}
			eventually(t, "the consumer to go", func() bool { _, c := inspect(t, conn, q); return c == 0 })
			if ready, _ := inspect(t, conn, q); ready != 21 {
				t.Fatalf("after the job failed the queue holds %d messages, want all 21 (none acknowledged)", ready)
			}
			continue
		}
		select {
		case <-covered:
		case err := <-done:
			t.Fatalf("the job ended: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("waited a minute for a checkpoint covering every message")
		}
		cancel()
		<-done
		var ns []int64
		for _, l := range mem.Committed() {
			ns = append(ns, l.N)
		}
		slices.Sort(ns)
		if len(ns) != 20 || ns[0] != 0 || ns[19] != 19 {
			t.Fatalf("with dead letters the job read %v, want 0 to 19", ns)
		}
		if d := dead.Committed(); len(d) != 1 || d[0].Raw != "{not json" || !strings.Contains(d[0].Location, "message-id bad-1") {
			t.Fatalf("dead letters: %+v, want the malformed message bad-1", d)
		}
		eventually(t, "the consumer to go", func() bool { _, c := inspect(t, conn, q); return c == 0 })
		if ready, _ := inspect(t, conn, q); ready != 0 {
			t.Fatalf("after a checkpoint covering every message the queue holds %d messages, want 0: the malformed message was not acknowledged", ready)
		}
	}
}

// runToEnd runs a job reading src at parallelism 1 without restarts and
// returns its error.
func runToEnd(t *testing.T, src connector.Source[line], whileRunning func()) error {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.NoRestart()))
	eddy.WriteTo(eddy.FromSource(env, "rabbitmq in", src, eddy.NoWatermarks[line]()), "memory", connectortest.NewMemorySink[line]().Sink())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "rabbitmq test") }()
	if whileRunning != nil {
		whileRunning()
	}
	err := <-done
	if ctx.Err() != nil {
		t.Fatalf("the job did not end within a minute (%v)", err)
	}
	return err
}

// TestSourceErrors starts jobs whose sources cannot read: a missing queue
// that may not be declared, startup options on a classic queue,
// deduplication on a stream, a queue deleted while the job reads it.
func TestSourceErrors(t *testing.T) {
	conn := connect(t)
	classic := freshQueue(t, conn, "classic")
	stream := freshQueue(t, conn, "stream")
	missing := "eddy-test-missing-" + randomSuffix()
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"queue": missing, "queue.declare": "false"}, "queue \"" + missing + "\" does not exist"},
		{map[string]string{"queue": classic, "scan.startup.mode": "latest-offset"}, "applies to stream queues"},
		{map[string]string{"queue": stream, "scan.deduplication": "message-id"}, "is a stream queue"},
		{map[string]string{"queue": classic, "exchange": "eddy-test-no-such-exchange"}, "declare the exchange or fix 'exchange'"},
	} {
		opts := map[string]string{"url": brokerURL, "format": "json"}
		for k, v := range c.opts {
			opts[k] = v
		}
		if err := runToEnd(t, openSource(t, opts), nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.opts, err, c.want)
		}
	}
	q := freshQueue(t, conn, "classic")
	err := runToEnd(t, openSource(t, map[string]string{"url": brokerURL, "queue": q, "format": "json"}), func() {
		eventually(t, "the consumer", func() bool { _, c := inspect(t, conn, q); return c == 1 })
		ch := channel(t, conn)
		defer ch.Close()
		if _, err := ch.QueueDelete(q, false, false, false); err != nil {
			t.Fatal(err)
		}
	})
	if err == nil || !strings.Contains(err.Error(), "was the queue deleted?") {
		t.Fatalf("deleting the queue the job reads: %v, want an error asking whether it was deleted", err)
	}
}

package rabbitmq_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

func wantLines(n, parts int) []line {
	var want []line
	for i := 0; i < n; i++ {
		want = append(want, line{Part: i % parts, N: int64(i)})
	}
	return want
}

// TestStreamSourceConformance reads a stream queue that grows while the
// job runs: exactly once from checkpointed offsets.
func TestStreamSourceConformance(t *testing.T) {
	conn := connect(t)
	connectortest.RunSource(t, connectortest.SourceCase[line]{
		Open: func(t testing.TB) (connector.Source[line], func()) {
			q := freshQueue(t, conn, "stream")
			publishLines(t, conn, q, 0, 1200, 3, false)
			grow := func() { publishLines(t, conn, q, 1200, 3000, 3, false) }
			return openSource(t, map[string]string{"url": brokerURL, "queue": q, "format": "json", "scan.prefetch-count": "500"}), grow
		},
		Want:       wantLines(3000, 3),
		Unbounded:  true,
		Seq:        func(l line) int64 { return l.N },
		PauseAfter: 600,
	})
}

// running is a job run in the background.
type running struct {
	env    *eddy.Environment
	cancel context.CancelFunc
	done   chan error
}

// runJob runs a job reading src through fn into mem at parallelism p.
func runJob(t *testing.T, src connector.Source[line], mem *connectortest.MemorySink[line], p int, fn func(line) line, opts ...eddy.Option) *running {
	t.Helper()
	env := eddy.NewEnvironment(append([]eddy.Option{eddy.WithParallelism(p)}, opts...)...)
	s := eddy.FromSource(env, "rabbitmq in", src, eddy.NoWatermarks[line]())
	if fn != nil {
		s = eddy.Map(s, fn)
	}
	eddy.WriteTo(s, "memory", mem.Sink())
	return startEnv(t, env)
}

// startEnv runs the job env holds in the background.
func startEnv(t *testing.T, env *eddy.Environment) *running {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	j := &running{env: env, cancel: cancel, done: make(chan error, 1)}
	go func() { j.done <- env.Execute(ctx, "rabbitmq test") }()
	t.Cleanup(func() {
		cancel()
		<-j.done
	})
	return j
}

// waitFor waits until mem has committed n records, failing if the job ends
// first.
func (j *running) waitFor(t *testing.T, mem *connectortest.MemorySink[line], n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		select {
		case err := <-j.done:
			j.done <- err
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := mem.WaitFor(ctx, n); err != nil {
		select {
		case err := <-j.done:
			j.done <- err
			t.Fatalf("the job ended: %v", err)
		default:
		}
		t.Fatal(err)
	}
}

// stop cancels the job and waits for it to end.
func (j *running) stop() {
	j.cancel()
	err := <-j.done
	j.done <- err
}

// keys renders lines as sorted strings.
func keys(ls []line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = fmt.Sprintf("%d/%d", l.Part, l.N)
	}
	slices.Sort(out)
	return out
}

// failAt returns a map function that panics once at each record n of at.
func failAt(at ...int64) func(line) line {
	var mu sync.Mutex
	left := map[int64]bool{}
	for _, n := range at {
		left[n] = true
	}
	return func(l line) line {
		mu.Lock()
		boom := left[l.N]
		delete(left, l.N)
		mu.Unlock()
		if boom {
			panic(fmt.Sprintf("injected failure at record %d", l.N))
		}
		return l
	}
}

// TestDeduplicatingQueueSource reads classic and quorum queues whose
// messages have unique message-ids, deduplicating redeliveries: the job's
// output holds every message once through injected failures, and through
// a savepoint restored at another parallelism.
func TestDeduplicatingQueueSource(t *testing.T) {
	conn := connect(t)
	const n = 3000
	want := keys(wantLines(n, 3))
	for _, typ := range []string{"classic", "quorum"} {
		t.Run(typ+" failures", func(t *testing.T) {
			q := freshQueue(t, conn, typ)
			publishLines(t, conn, q, 0, n, 3, true)
			mem := connectortest.NewMemorySink[line]()
			src := watch(openSource(t, map[string]string{"url": brokerURL, "queue": q, "format": "json", "scan.deduplication": "message-id", "scan.prefetch-count": "100"}))
			// Failures right after checkpoints complete leave what they
			// cover unacknowledged: the broker delivers it again.
			src.failNotifications(2, 6)
			j := runJob(t, src, mem, 2, failAt(700, 1500, 2300),
				eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
				eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 10*time.Millisecond)))
			j.waitFor(t, mem, n)
			j.stop()
			// Five failures are injected; a record's failure and a failed
			// notification can strike the same attempt and cost one restart.
			if r := j.env.Restarts(); r < 3 || r > 5 {
				t.Errorf("the job restarted %d times, want 3 to 5", r)
			}
			if got := keys(mem.Committed()); !slices.Equal(got, want) {
				t.Fatalf("the job committed %d records, want each of the %d messages once", len(got), n)
			}
			report(t, mem)
		})
		t.Run(typ+" rescale", func(t *testing.T) {
			q := freshQueue(t, conn, typ)
			publishLines(t, conn, q, 0, n, 3, true)
			mem := connectortest.NewMemorySink[line]()
			src := openSource(t, map[string]string{"url": brokerURL, "queue": q, "format": "json", "scan.deduplication": "message-id"})
			ckpt := []eddy.Option{eddy.WithCheckpointing(20 * time.Millisecond), eddy.WithCheckpointDir(t.TempDir())}
			j1 := runJob(t, src, mem, 2, nil, ckpt...)
			j1.waitFor(t, mem, n/3)
			path := savepoint(t, j1)
			j2 := runJob(t, src, mem, 3, nil, append(ckpt, eddy.WithRestoreFrom(path))...)
			j2.waitFor(t, mem, n)
			j2.stop()
			if got := keys(mem.Committed()); !slices.Equal(got, want) {
				t.Fatalf("the jobs committed %d records, want each of the %d messages once", len(got), n)
			}
			report(t, mem)
		})
	}
}

// savepoint takes a savepoint of the running job and stops it.
func savepoint(t *testing.T, j *running) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "savepoint")
	deadline := time.Now().Add(time.Minute)
	for {
		path, err := j.env.TriggerSavepoint(context.Background(), dir, true)
		if err == nil {
			if err := <-j.done; err != nil {
				t.Fatalf("the job failed after its savepoint: %v", err)
			}
			j.done <- nil
			return path
		}
		if time.Now().After(deadline) {
			t.Fatalf("no savepoint could be taken: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func report(t *testing.T, mem *connectortest.MemorySink[line]) {
	t.Helper()
	for _, p := range mem.Problems() {
		t.Error(p)
	}
}

// TestStreamStartupModes starts reading a stream queue at its end, at an
// offset and at a time, and resumes a restored job where its checkpoint
// says even when it had read nothing.
func TestStreamStartupModes(t *testing.T) {
	conn := connect(t)
	q := freshQueue(t, conn, "stream")
	publishLines(t, conn, q, 0, 5, 1, false)
	// The stream's timestamps are to the second.
	time.Sleep(1100 * time.Millisecond)
	at := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(at))
	publishLines(t, conn, q, 5, 10, 1, false)
	read := func(extra map[string]string, more func(), want int) []int64 {
		t.Helper()
		opts := map[string]string{"url": brokerURL, "queue": q, "format": "json"}
		for k, v := range extra {
			opts[k] = v
		}
		mem := connectortest.NewMemorySink[line]()
		j := runJob(t, openSource(t, opts), mem, 1, nil, eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()))
		if more != nil {
			// Wait for a checkpoint, so that the job has started reading.
			eventually(t, "a checkpoint", func() bool { return len(j.env.CheckpointStats()) > 0 })
			more()
		}
		j.waitFor(t, mem, want)
		j.stop()
		var ns []int64
		for _, l := range mem.Committed() {
			ns = append(ns, l.N)
		}
		slices.Sort(ns)
		return ns
	}
	for _, c := range []struct {
		opts map[string]string
		want []int64
	}{
		{map[string]string{}, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{map[string]string{"scan.startup.mode": "specific-offset", "scan.startup.specific-offset": "7"}, []int64{7, 8, 9}},
		{map[string]string{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": fmt.Sprint(at.UnixMilli())}, []int64{5, 6, 7, 8, 9}},
	} {
		if got := read(c.opts, nil, len(c.want)); !slices.Equal(got, c.want) {
			t.Errorf("%v: read %v, want %v", c.opts, got, c.want)
		}
	}
	// The latest offset and a time after the last message read only what
	// is published after the job started.
	n := 10
	for _, opts := range []map[string]string{
		{"scan.startup.mode": "latest-offset"},
		{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": fmt.Sprint(at.Add(time.Hour).UnixMilli())},
	} {
		from := n
		n += 3
		got := read(opts, func() { publishLines(t, conn, q, from, from+3, 1, false) }, 3)
		if want := []int64{int64(from), int64(from + 1), int64(from + 2)}; !slices.Equal(got, want) {
			t.Errorf("%v: read %v, want %v", opts, got, want)
		}
	}

	// A job that started at the latest offset of an empty stream and read
	// nothing resumes from its checkpoint at what was published since.
	q2 := freshQueue(t, conn, "stream")
	src := openSource(t, map[string]string{"url": brokerURL, "queue": q2, "format": "json", "scan.startup.mode": "latest-offset"})
	dir := t.TempDir()
	mem := connectortest.NewMemorySink[line]()
	j := runJob(t, src, mem, 1, nil, eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(dir))
	eventually(t, "a checkpoint", func() bool { return len(j.env.CheckpointStats()) > 0 })
	j.stop()
	publishLines(t, conn, q2, 0, 4, 1, false)
	j = runJob(t, src, mem, 1, nil, eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(dir))
	j.waitFor(t, mem, 4)
	j.stop()
	if got := keys(mem.Committed()); !slices.Equal(got, keys(wantLines(4, 1))) {
		t.Fatalf("the restored job read %v, want the 4 messages published while it was down", got)
	}
}

package eddy_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/window"
)

type tick struct {
	Src string
	TS  int64
}

// heldSource has one split that emits one record at ts, then nothing until
// release is closed. It is not checkpointable.
type heldSource struct {
	ts      int64
	release chan struct{}
}

func (h *heldSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "held"}}, nil
	})
}

func (h *heldSource) NewReader(connector.ReaderContext) (connector.Reader[tick], error) {
	return &heldReader{h: h}, nil
}

type heldReader struct {
	h         *heldSource
	has, sent bool
}

func (r *heldReader) AddSplits(s []connector.Split) error { r.has = r.has || len(s) > 0; return nil }

func (r *heldReader) Read(out connector.Output[tick]) error {
	if !r.has {
		return nil
	}
	so := out.Split("held")
	if !r.sent {
		r.sent = true
		so.Emit(tick{"held", r.h.ts})
		return nil
	}
	select {
	case <-r.h.release:
		so.Finish()
		r.has = false
		return nil
	case <-time.After(2 * time.Millisecond):
		return nil
	}
}

func (r *heldReader) SnapshotState(int64) ([]connector.Split, error) {
	return nil, errors.New("the held source cannot be checkpointed")
}

func (r *heldReader) Close() error { return nil }

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// unionJob unions a fast bounded source (ticks every second of event time
// up to 99 s) with a held one, counts per 1 s window, and runs the job.
func unionJob(t *testing.T, idleness time.Duration) (results *eddy.Collected[eddy.Windowed[struct{}, int64]], release chan struct{}, done chan error) {
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	var fast []tick
	for i := int64(0); i < 100; i++ {
		fast = append(fast, tick{"fast", i * 1000})
	}
	a := eddy.FromSlice(env, fast, eddy.Monotonous(func(k tick) int64 { return k.TS }))
	release = make(chan struct{})
	ws := eddy.Monotonous(func(k tick) int64 { return k.TS })
	if idleness > 0 {
		ws = ws.WithIdleness(idleness)
	}
	b := eddy.FromSource[tick](env, "held", &heldSource{ts: 2500, release: release}, ws).Parallelism(1)
	counts := eddy.Aggregate(eddy.WindowAll(eddy.Union(a, b), window.Tumbling(time.Second)), agg.Count[tick]())
	results = eddy.Collect(counts)
	done = make(chan error, 1)
	go func() { done <- env.Execute(context.Background(), "union") }()
	return results, release, done
}

func maxEnd(c *eddy.Collected[eddy.Windowed[struct{}, int64]]) int64 {
	m := int64(-1)
	for _, r := range c.Values() {
		m = max(m, r.Window.End)
	}
	return m
}

func TestUnionWatermarkIsMinimumOfInputs(t *testing.T) {
	results, release, done := unionJob(t, 0)
	waitFor(t, "the windows before the held input's watermark", func() bool { return maxEnd(results) >= 2000 })
	time.Sleep(100 * time.Millisecond)
	if e := maxEnd(results); e > 2000 {
		t.Fatalf("window ending at %d fired while an input's watermark was 2499", e)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if e := maxEnd(results); e != 100000 {
		t.Fatalf("after the end of input the last window ends at %d, want 100000", e)
	}
	var total int64
	for _, r := range results.Values() {
		total += r.Value
	}
	if total != 101 {
		t.Fatalf("counted %d records, want 101", total)
	}
}

func TestIdleInputDoesNotHoldBackWatermark(t *testing.T) {
	results, release, done := unionJob(t, 20*time.Millisecond)
	waitFor(t, "every window of the active input", func() bool { return maxEnd(results) == 100000 })
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestBackpressureBoundsWhatIsBuffered(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithChannelCapacity(2), eddy.WithBatchSize(100))
	var produced atomic.Int64
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: -1}, func(i int64) int64 {
		produced.Add(1)
		return i
	}, eddy.NoWatermarks[int64]())
	gate := make(chan struct{})
	eddy.SinkTo(src.Rebalance(), func(int64) error {
		<-gate
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "backpressure") }()
	waitFor(t, "the source to start", func() bool { return produced.Load() > 0 })
	time.Sleep(200 * time.Millisecond)
	// The sink holds one batch, the channel two, the writer one, the
	// source one being built: about 5 batches of 100.
	if n := produced.Load(); n > 1000 {
		t.Fatalf("the source produced %d records while the sink was blocked", n)
	}
	cancel()
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestLingerFlushesSlowStream(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithLinger(5*time.Millisecond))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: -1, RatePerSecond: 200}, func(i int64) int64 { return i }, eddy.NoWatermarks[int64]())
	out := eddy.Collect(eddy.Map(src, func(v int64) int64 { return v }).Rebalance())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "linger") }()
	// Far fewer than a batch of records exist; they must still arrive.
	waitFor(t, "records of a partly filled batch", func() bool { return len(out.Values()) >= 3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

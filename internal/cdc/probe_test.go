package cdc

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// eventually polls p, whose interval is short, until it answers as want
// says, failing t after a minute. It polls at the clock's time: answers
// are stamped with it, so a clock of its own running ahead would make them
// stale, and unknown, on a machine slow to run the queries.
func eventually(t *testing.T, p *Probe[int], query func(context.Context) (int, error), want func(int, bool) bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if v, ok := p.Poll(time.Now(), query); want(v, ok) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the probe did not answer as wanted within a minute")
}

// TestProbe: answers come from the background; a failure makes the answer
// unknown until a query succeeds again; Close releases once no query runs.
func TestProbe(t *testing.T) {
	var released atomic.Int32
	p := NewProbe[int](time.Nanosecond, slog.Default(), "test: a value", func() { released.Add(1) })
	if _, ok := p.Latest(time.Now()); ok {
		t.Fatal("an answer before any query")
	}
	var fail atomic.Bool
	var n atomic.Int32
	query := func(ctx context.Context) (int, error) {
		v := n.Add(1)
		if fail.Load() {
			return 0, errors.New("refused")
		}
		return int(v), nil
	}
	eventually(t, p, query, func(v int, ok bool) bool { return ok && v >= 1 })
	fail.Store(true)
	eventually(t, p, query, func(_ int, ok bool) bool { return !ok })
	fail.Store(false)
	eventually(t, p, query, func(v int, ok bool) bool { return ok && v >= 3 })

	p.Close()
	for deadline := time.Now().Add(time.Minute); released.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := released.Load(); n != 1 {
		t.Fatalf("released %d times after Close, want once", n)
	}
}

// TestProbeClose: no query starts within the interval or after Close, and
// Close releases once the query running ends.
func TestProbeClose(t *testing.T) {
	var released, queries atomic.Int32
	p := NewProbe[int](time.Second, slog.Default(), "test: a value", func() { released.Add(1) })
	block := make(chan struct{})
	slow := func(ctx context.Context) (int, error) {
		queries.Add(1)
		<-block
		return 1, nil
	}
	now := time.Now()
	p.Poll(now, slow)
	p.Poll(now.Add(2*time.Second), slow) // one runs
	p.Close()
	p.Poll(now.Add(4*time.Second), slow) // closed
	if released.Load() != 0 {
		t.Fatal("released while a query runs")
	}
	close(block)
	for deadline := time.Now().Add(time.Minute); released.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	p.Close()
	if released.Load() != 1 || queries.Load() != 1 {
		t.Fatalf("released %d times after %d queries; want once after 1", released.Load(), queries.Load())
	}
	if _, ok := p.Latest(now.Add(5 * time.Second)); ok {
		t.Fatal("an answer of a query that ended after Close")
	}
}

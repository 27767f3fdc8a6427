package ops

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops/opstest"
	"github.com/eddystream/eddy/internal/runtime"
)

// TestLookupJoinHoldsWatermark checks that a watermark waits for the
// results of the changes before it, and that results wait for their
// lookups, in input order.
func TestLookupJoinHoldsWatermark(t *testing.T) {
	release := make(chan struct{})
	h := opstest.New("lookup join")
	opstest.Output[changelog.Change[string]](h, "", nil)
	counters := &LookupCounters{}
	j := NewLookupJoin(h.Context(), LookupJoinLogic[opstest.Record, string, string, string]{
		Key: func(r opstest.Record) string { return r.Key },
		Lookup: func(ctx context.Context, key string) ([]string, error) {
			if key != "c" {
				<-release
			}
			return []string{key + "'"}, nil
		},
		Output:      func(r opstest.Record, m *string) string { return fmt.Sprintf("%s %d|%s", r.Key, r.Val, *m) },
		Concurrency: 4,
		Stats:       counters,
	}, h.Outputs())
	defer j.Close()
	if err := h.Start(joinChangeInputs(&runtime.Built{Inputs: []any{runtime.Input[changelog.Change[opstest.Record]](j)}, Control: j})); err != nil {
		t.Fatal(err)
	}
	checkJoinScript(t, h, `
a 1 v=1
b 2 v=2
c 3 v=3
watermark 3
`, "ok", true)
	if counters.MaxInFlight.Load() != 3 {
		t.Fatalf("%d lookups in flight, want 3", counters.MaxInFlight.Load())
	}
	close(release)
	for deadline := time.Now().Add(10 * time.Second); counters.InFlight.Load() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lookups did not complete")
		}
	}
	checkJoinScript(t, h, "advance-processing-time 10", `
emit ts=1: +I[a 1|a']
emit ts=2: +I[b 2|b']
emit ts=3: +I[c 3|c']
watermark 3
`, false)
}

// TestLookupCache checks the cache's bound in rows, its eviction of the
// least recently used key, and its time to live.
func TestLookupCache(t *testing.T) {
	c := newLookupCache[string, int](4, 10)
	c.put("a", []int{1, 2}, 0)
	c.put("b", nil, 0) // a key without rows weighs one row
	c.put("c", []int{3}, 0)
	if c.rows != 4 || len(c.m) != 3 {
		t.Fatalf("%d rows in %d keys, want 4 in 3", c.rows, len(c.m))
	}
	if _, ok := c.get("a", 1); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.put("d", []int{4}, 2) // evicts b, the least recent
	if _, ok := c.get("b", 2); ok {
		t.Fatal("b was not evicted")
	}
	if rows, ok := c.get("a", 9); !ok || len(rows) != 2 {
		t.Fatalf("a: %v %v", rows, ok)
	}
	if _, ok := c.get("a", 10); ok {
		t.Fatal("a outlived its time to live")
	}
	if _, ok := c.get("d", 11); !ok {
		t.Fatal("d expired early")
	}
	c.put("e", []int{1, 2, 3, 4, 5}, 11) // more rows than the cache holds
	if _, ok := c.get("e", 11); ok || c.rows > 4 {
		t.Fatalf("a result above the bound was cached (%d rows)", c.rows)
	}
}

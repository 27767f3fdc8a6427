package jdbc

import (
	"fmt"
	"testing"
	"time"

	"github.com/eddystream/eddy/sql/types"
)

// TestRowCache checks the partial cache's bounds on a fake clock: rows
// beyond max-rows evict the least recently used keys (a key without rows
// weighs one), entries expire after their write and after their last
// use.
func TestRowCache(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	rows := func(n int) []types.Row { return make([]types.Row, n) }
	has := func(c *rowCache, k string) bool { _, ok := c.get(k); return ok }

	c := newRowCache(4, 0, 0, clock)
	c.put("a", rows(2))
	c.put("b", nil)
	c.put("c", rows(1))
	has(c, "a") // a is now the most recently used
	c.put("d", rows(1))
	if has(c, "b") || !has(c, "a") || !has(c, "c") || !has(c, "d") {
		t.Errorf("max-rows 4: want b (least recently used) evicted and a, c, d kept")
	}
	if c.rows != 4 {
		t.Errorf("the cache counts %d rows, want 4", c.rows)
	}

	w := newRowCache(0, time.Minute, 0, clock)
	w.put("k", rows(1))
	now = now.Add(59 * time.Second)
	if !has(w, "k") {
		t.Error("expire-after-write: an entry 59 s old is gone")
	}
	now = now.Add(time.Second)
	if has(w, "k") {
		t.Error("expire-after-write: an entry 60 s old, read in between, is still there")
	}

	a := newRowCache(0, 0, time.Minute, clock)
	a.put("k", rows(1))
	for i := 0; i < 5; i++ {
		now = now.Add(50 * time.Second)
		if !has(a, "k") {
			t.Fatalf("expire-after-access: an entry used every 50 s expired after %d uses", i)
		}
	}
	now = now.Add(time.Minute)
	if has(a, "k") {
		t.Error("expire-after-access: an entry unused for 60 s is still there")
	}
	for i := 0; i < 3; i++ {
		a.put(fmt.Sprint(i), nil)
	}
	if a.order.Len() != 3 || len(a.byKey) != 3 {
		t.Errorf("the cache holds %d/%d entries, want 3", a.order.Len(), len(a.byKey))
	}
}

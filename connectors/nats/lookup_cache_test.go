package nats

import (
	"testing"
	"time"

	"github.com/eddystream/eddy/sql/types"
)

func cacheRow(s string) types.Row {
	w := types.NewRowWriter(types.MustRowType(types.F("v", types.String())), types.NewArena(0))
	w.SetString(0, s)
	return w.Finish()
}

func cachedValue(t *testing.T, c *partialCache, k string) (string, bool) {
	t.Helper()
	rows, ok := c.get(k)
	if !ok {
		return "", false
	}
	if len(rows) == 0 {
		return "<missing>", true
	}
	return rows[0].String(0), true
}

// TestPartialCacheRevisions: a change the watcher reports drops the entry
// it supersedes, and a read that ran while a later change came is not
// cached, so the cache never holds a value the bucket has replaced.
func TestPartialCacheRevisions(t *testing.T) {
	c := newPartialCache(&config{cacheRows: 100, cacheMissing: true}, time.Now)
	tok := c.begin("k")
	c.end(tok, "k", []types.Row{cacheRow("v5")}, 5, true)
	if v, _ := cachedValue(t, c, "k"); v != "v5" {
		t.Fatalf("cached %q, want v5", v)
	}
	c.changed("k", 5) // the change it was read at, reported late
	if v, _ := cachedValue(t, c, "k"); v != "v5" {
		t.Fatalf("a change to the revision cached dropped it: %q", v)
	}
	c.changed("k", 6)
	if _, ok := c.get("k"); ok {
		t.Fatal("a change to revision 6 left revision 5 cached")
	}
	// A read of revision 6 while the change to 7 comes: not cached.
	tok = c.begin("k")
	c.changed("k", 7)
	c.end(tok, "k", []types.Row{cacheRow("v6")}, 6, true)
	if _, ok := c.get("k"); ok {
		t.Fatal("a read overtaken by a change was cached")
	}
	// Two reads at once, one of the new revision: that one is cached, the
	// older one that ends after it does not replace it.
	a, b := c.begin("k"), c.begin("k")
	c.changed("k", 8)
	c.end(b, "k", []types.Row{cacheRow("v8")}, 8, true)
	c.end(a, "k", []types.Row{cacheRow("v7")}, 7, true)
	if v, _ := cachedValue(t, c, "k"); v != "v8" {
		t.Fatalf("cached %q, want v8", v)
	}
	// A missing key is cached at revision 0, and any change drops it.
	tok = c.begin("gone")
	c.end(tok, "gone", nil, 0, true)
	if v, _ := cachedValue(t, c, "gone"); v != "<missing>" {
		t.Fatalf("a missing key cached as %q", v)
	}
	c.changed("gone", 1)
	if _, ok := c.get("gone"); ok {
		t.Fatal("a change to a key cached as missing left it cached")
	}
	// A failed read caches nothing.
	tok = c.begin("err")
	c.end(tok, "err", nil, 0, false)
	if _, ok := c.get("err"); ok {
		t.Fatal("a failed read was cached")
	}
	if len(c.inflight) != 0 {
		t.Fatalf("%d reads still in flight", len(c.inflight))
	}
}

// TestPartialCacheBounds evicts the least recently used keys beyond
// max-rows and expires entries after write and after access.
func TestPartialCacheBounds(t *testing.T) {
	c := newPartialCache(&config{cacheRows: 2, cacheMissing: false}, time.Now)
	for _, k := range []string{"a", "b"} {
		c.end(c.begin(k), k, []types.Row{cacheRow(k)}, 1, true)
	}
	c.get("a") // b is now the least recently used
	c.end(c.begin("c"), "c", []types.Row{cacheRow("c")}, 1, true)
	if _, ok := c.get("b"); ok {
		t.Fatal("the least recently used key stayed beyond max-rows")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.get(k); !ok {
			t.Fatalf("key %s was evicted", k)
		}
	}
	c.end(c.begin("m"), "m", nil, 0, true)
	if _, ok := c.get("m"); ok {
		t.Fatal("a missing key was cached with 'cache-missing-key' = 'false'")
	}

	clock := time.Unix(1000, 0)
	now := func() time.Time { return clock }
	w := newPartialCache(&config{expireWrite: time.Minute, cacheMissing: true}, now)
	w.end(w.begin("k"), "k", []types.Row{cacheRow("k")}, 1, true)
	clock = clock.Add(59 * time.Second)
	if _, ok := w.get("k"); !ok {
		t.Fatal("expired before expire-after-write")
	}
	clock = clock.Add(time.Second)
	if _, ok := w.get("k"); ok {
		t.Fatal("not expired after expire-after-write")
	}
	u := newPartialCache(&config{expireAccess: time.Minute, cacheMissing: true}, now)
	u.end(u.begin("k"), "k", []types.Row{cacheRow("k")}, 1, true)
	for i := 0; i < 3; i++ {
		clock = clock.Add(50 * time.Second)
		if _, ok := u.get("k"); !ok {
			t.Fatalf("expired though used %d s ago", 50)
		}
	}
	clock = clock.Add(time.Minute)
	if _, ok := u.get("k"); ok {
		t.Fatal("not expired a minute after its last use")
	}
}

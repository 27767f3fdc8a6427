package pebble

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/codec"
	"github.com/eddystream/eddy/internal/state/heap"
	"github.com/eddystream/eddy/internal/state/statetest"
)

// openCached opens a backend whose object caches hold at most budget bytes.
func openCached(t testing.TB, kgs state.KeyGroupRange, maxP int, budget int64) *Backend {
	t.Helper()
	b := open(t, kgs, maxP)
	b.cacheOverride = budget
	return b
}

// TestConformanceTinyCache runs the suite with object caches that hold a
// few entries and evict all the time.
func TestConformanceTinyCache(t *testing.T) {
	statetest.Run(t, func(t *testing.T, kgs state.KeyGroupRange, maxP int) state.Backend {
		b, err := Open(t.TempDir(), kgs, maxP, testOpts)
		if err != nil {
			t.Fatal(err)
		}
		b.cacheOverride = 1 << 10
		return b
	})
}

// TestConformanceIngestedWriteBack runs the suite with object caches that
// hold a few entries and write back every full round as an ingested SST.
func TestConformanceIngestedWriteBack(t *testing.T) {
	statetest.Run(t, func(t *testing.T, kgs state.KeyGroupRange, maxP int) state.Backend {
		b, err := Open(t.TempDir(), kgs, maxP, testOpts)
		if err != nil {
			t.Fatal(err)
		}
		b.cacheOverride = 1 << 10
		b.spillOverride = 1
		return b
	})
}

// TestConformanceNoCache runs the suite on uncached tables.
func TestConformanceNoCache(t *testing.T) {
	statetest.Run(t, func(t *testing.T, kgs state.KeyGroupRange, maxP int) state.Backend {
		b, err := Open(t.TempDir(), kgs, maxP, testOpts)
		if err != nil {
			t.Fatal(err)
		}
		b.cacheOverride = -1
		return b
	})
}

// TestCacheDifferential runs random sequences of table and backend
// operations on Pebble with a tiny object cache and on the heap backend,
// checks that the cache stays within its budget all along, and that a
// checkpoint taken after FlushCaches restores what the heap backend holds.
func TestCacheDifferential(t *testing.T) {
	t.Run("batches", func(t *testing.T) { testCacheDifferential(t, 0) })
	// Every write-back of all dirty entries is an ingested SST.
	t.Run("ingested", func(t *testing.T) { testCacheDifferential(t, 1) })
}

func testCacheDifferential(t *testing.T, spill int) {
	const budget = 4 << 10
	maxP := statetest.DiffMaxParallelism
	all := state.KeyGroupRange{Start: 0, End: maxP}
	seeds, steps := uint64(6), 4000
	if testing.Short() {
		seeds, steps = 2, 1000
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			b := openCached(t, all, maxP, budget)
			b.spillOverride = spill
			ref := heap.New(all, maxP)
			peak := int64(0)
			statetest.Differential(t, b, ref, statetest.DiffOptions{
				Seed: seed, Steps: steps, Keys: 48,
				Check: func(t *testing.T, step int, op string) {
					n := b.cacheBytes()
					if n > budget || n < 0 {
						t.Fatalf("step %d, %s: object caches hold %d bytes, budget %d", step, op, n, budget)
					}
					peak = max(peak, n)
				},
			})
			if peak < budget/2 {
				t.Errorf("object caches peaked at %d bytes: the test does not fill them", peak)
			}
			if spill > 0 && b.ingests == 0 {
				t.Error("no write-back was ingested: the test does not cover ingestion")
			}
			b.FlushCaches()
			ck := filepath.Join(t.TempDir(), "ck")
			if _, err := b.Checkpoint(ck); err != nil {
				t.Fatal(err)
			}
			r, err := Restore(ck, all, maxP, testOpts)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for kg := range maxP {
				if got, want := statetest.DiffDump(t, r, kg), statetest.DiffDump(t, ref, kg); !slices.Equal(got, want) {
					t.Fatalf("restored key group %d holds\n%q\nwant\n%q", kg, got, want)
				}
			}
		})
	}
}

// TestCacheWithinBudget fills a cached table with many times what its
// cache holds and checks the cache bytes against the budget, Budget's
// report, and that every write survives eviction and FlushCaches.
func TestCacheWithinBudget(t *testing.T) {
	const maxP = 32
	all := state.KeyGroupRange{Start: 0, End: maxP}
	const budget = 64 << 10
	b := openCached(t, all, maxP, budget)
	vt, err := state.NewValueTable[int64, state.VoidNamespace, string](b, "v", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mt, err := state.NewMapTable[int64, int32, string, int64](b, "m", nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Budget reads the cache bytes from other goroutines (go test -race).
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				Budget()
			}
		}
	}()
	const keys = 20000
	val := func(k int64) string { return fmt.Sprintf("value-%d-%0*d", k, int(k%50), 0) }
	for k := range int64(keys) {
		kg := kgOf(k, maxP)
		vt.Put(kg, k, state.VoidNamespace{}, val(k))
		mt.Put(kg, k, int32(k%3), "uk", k)
		if k%1000 == 0 {
			if n := b.cacheBytes(); n > budget {
				t.Fatalf("after %d keys: caches hold %d bytes, budget %d", k, n, budget)
			}
		}
	}
	st := Budget()
	if n := b.cacheBytes(); n <= budget/2 || n > budget {
		t.Errorf("caches hold %d bytes, want in (%d, %d]", n, budget/2, budget)
	}
	if st.ObjectCacheBudget != objectCacheBudget(testBudget) || st.ObjectCacheBytes < b.cacheBytes() {
		t.Errorf("Budget() = %+v", st)
	}
	for k := range int64(keys) {
		kg := kgOf(k, maxP)
		if v, ok := vt.Get(kg, k, state.VoidNamespace{}); !ok || v != val(k) {
			t.Fatalf("Get(%d) = %q, %v", k, v, ok)
		}
	}
	if n := b.cacheBytes(); n > budget {
		t.Errorf("after reads: caches hold %d bytes, budget %d", n, budget)
	}
	// Everything written is in Pebble after FlushCaches.
	b.FlushCaches()
	n := 0
	for kg := range maxP {
		b.Scan(kgKey(kg), func(_, _ []byte) bool { n++; return true })
	}
	if n != 2*keys {
		t.Errorf("Pebble holds %d keys after FlushCaches, want %d", n, 2*keys)
	}
}

// TestCacheShare checks the object cache budget of backends sharing the
// process budget.
func TestCacheShare(t *testing.T) {
	kgs := state.KeyGroupRange{Start: 0, End: 4}
	a := open(t, kgs, 4)
	if got, want := a.CacheBudget(), objectCacheShare(testBudget, Budget().Backends); got != want {
		t.Errorf("CacheBudget() = %d, want %d", got, want)
	}
	b := open(t, kgs, 4)
	n := Budget().Backends
	if got, want := a.CacheBudget(), objectCacheShare(testBudget, n); got != want || b.CacheBudget() != want {
		t.Errorf("with %d backends: CacheBudget() = %d and %d, want %d", n, got, b.CacheBudget(), want)
	}
	c, err := Open(t.TempDir(), kgs, 4, Options{MemoryBudget: testBudget, Backends: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, want := c.CacheBudget(), objectCacheShare(testBudget, 64); got != want {
		t.Errorf("with Backends = 64: CacheBudget() = %d, want %d", got, want)
	}
}

// TestCacheCoherence checks the backend's own calls against cached tables:
// Get sees writes after FlushCaches only, Set and Delete and DeletePrefix
// win over cached entries, Scan sees every write.
func TestCacheCoherence(t *testing.T) {
	kgs := state.KeyGroupRange{Start: 0, End: 4}
	b := openCached(t, kgs, 4, 1<<20)
	vt, err := state.NewValueTable[int64, int32, string](b, "v", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := state.NewValueTable[int64, int32, string](b, "v", nil, nil, nil); again != vt {
		t.Error("declaring a table again does not return its cached table")
	}
	id := b.TableIDs()["v"]
	kc, _ := codec.Default[int64]()
	nc, _ := codec.Default[int32]()
	sc, _ := codec.Default[string]()
	key := func(kg int, k int64, n int32) []byte {
		return nc.Append(kc.Append([]byte{0, byte(kg), byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}, k), n)
	}
	kg := kgOf(7, 4)
	vt.Put(kg, 7, 1, "cached")
	if _, ok := b.Get(key(kg, 7, 1)); ok {
		t.Error("a Put reached Pebble before any flush")
	}
	b.FlushCaches()
	if v, ok := b.Get(key(kg, 7, 1)); !ok {
		t.Error("after FlushCaches, Get finds nothing")
	} else if s, _, err := sc.Decode(v); err != nil || s != "cached" {
		t.Errorf("after FlushCaches, Get = %q (%v)", s, err)
	}
	b.Set(key(kg, 7, 1), sc.Append(nil, "direct"))
	if v, _ := vt.Get(kg, 7, 1); v != "direct" {
		t.Errorf("after a direct Set, Get = %q", v)
	}
	vt.Put(kg, 7, 2, "dirty")
	b.Delete(key(kg, 7, 2))
	if v, ok := vt.Get(kg, 7, 2); ok {
		t.Errorf("after a direct Delete of a dirty entry, Get = %q", v)
	}
	vt.Put(kg, 7, 3, "dirty")
	count := 0
	b.Scan([]byte{0, byte(kg)}, func(_, _ []byte) bool { count++; return true })
	if count != 2 {
		t.Errorf("Scan saw %d keys, want 2", count)
	}
	vt.Put(kg, 7, 4, "dirty")
	state.DropKeyGroup(b, kg)
	for n := int32(1); n <= 4; n++ {
		if v, ok := vt.Get(kg, 7, n); ok {
			t.Errorf("after DropKeyGroup, Get(7, %d) = %q", n, v)
		}
	}
	b.FlushCaches()
	b.Scan(nil, func(k, _ []byte) bool { t.Errorf("key %x left after DropKeyGroup", k); return true })
}

// BenchmarkCacheFlush measures FlushCaches of 100 000 dirty entries, which
// go to Pebble in one batch.
func BenchmarkCacheFlush(b *testing.B) {
	const maxP = 128
	all := state.KeyGroupRange{Start: 0, End: maxP}
	be := openCached(b, all, maxP, 256<<20)
	vt, err := state.NewValueTable[int64, state.VoidNamespace, int64](be, "v", nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	const keys = 100000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for k := range int64(keys) {
			vt.Put(kgOf(k, maxP), k, state.VoidNamespace{}, k+int64(i))
		}
		b.StartTimer()
		be.FlushCaches()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/entry")
}

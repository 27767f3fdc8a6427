package pebble

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/heap"
	"github.com/eddystream/eddy/internal/state/kv"
	"github.com/eddystream/eddy/internal/state/statetest"
)

// testBudget keeps the tests' caches small; every test in the package uses
// it, since the first open backend fixes the process budget.
const testBudget = 64 << 20

var testOpts = Options{MemoryBudget: testBudget}

func open(t testing.TB, kgs state.KeyGroupRange, maxP int) *Backend {
	t.Helper()
	b, err := Open(t.TempDir(), kgs, maxP, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T, kgs state.KeyGroupRange, maxP int) state.Backend {
		b, err := Open(t.TempDir(), kgs, maxP, testOpts)
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

func TestScanOrderAndPrefix(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 1}, 1)
	for _, k := range []string{"b2", "a", "b1", "b", "c", "b\x00", "b\xff", "b\xff\xff1"} {
		b.Set([]byte(k), []byte("v"+k))
	}
	var got []string
	b.Scan([]byte("b"), func(k, v []byte) bool {
		got = append(got, string(k))
		if string(k) == "b1" {
			b.Delete(k)
			b.Set([]byte("b15"), nil) // added during the scan: not visited
			if v, ok := b.Get([]byte("c")); !ok || string(v) != "vc" {
				t.Errorf("Get during scan = %q, %v", v, ok)
			}
		}
		return true
	})
	if want := []string{"b", "b\x00", "b1", "b2", "b\xff", "b\xff\xff1"}; !slices.Equal(got, want) {
		t.Errorf("Scan(b) = %q, want %q", got, want)
	}
	b.DeletePrefix([]byte("b1"))
	b.DeletePrefix([]byte("b\xff"))
	got = nil
	b.Scan(nil, func(k, _ []byte) bool { got = append(got, string(k)); return true })
	if want := []string{"a", "b", "b\x00", "b2", "c"}; !slices.Equal(got, want) {
		t.Errorf("after DeletePrefix: %q, want %q", got, want)
	}
	// Scan(nil) and DeletePrefix(nil) leave the reserved keys alone.
	b.DeletePrefix(nil)
	n := 0
	b.Scan(nil, func(k, _ []byte) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d keys left after DeletePrefix(nil)", n)
	}
	if _, err := readHeader(b.db, b.dir); err != nil {
		t.Errorf("metadata after DeletePrefix(nil): %v", err)
	}
}

func TestGetBufferReused(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 1}, 1)
	b.Set([]byte("a"), []byte("1"))
	b.Set([]byte("b"), []byte("2"))
	va, _ := b.Get([]byte("a"))
	a := string(va)
	b.Set([]byte("a"), []byte("changed"))
	if a != "1" {
		t.Errorf("Get(a) = %q", a)
	}
	if _, ok := b.Get([]byte("zz")); ok {
		t.Error("Get of a missing key found something")
	}
}

func TestTableIDsPersist(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 4}, 4)
	a, _ := b.TableID("a", "value[x]")
	c, _ := b.TableID("c", "value[x]")
	if a2, err := b.TableID("a", "value[x]"); err != nil || a2 != a || a == c {
		t.Fatalf("ids a=%d c=%d a again=%d (%v)", a, c, a2, err)
	}
	if _, err := b.TableID("a", "map[x]"); !errors.Is(err, state.ErrIncompatibleTable) {
		t.Errorf("another kind: %v", err)
	}
	dir := t.TempDir() + "/ck"
	if _, err := b.Checkpoint(dir); err != nil {
		t.Fatal(err)
	}
	r, err := Restore(dir, b.KeyGroups(), 4, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if a2, _ := r.TableID("a", "value[x]"); a2 != a {
		t.Errorf("restored id of a = %d, want %d", a2, a)
	}
	if d, _ := r.TableID("d", "value[x]"); d == a || d == c {
		t.Errorf("new table d got a used id %d", d)
	}
	if _, err := r.TableID("c", "map[x]"); !errors.Is(err, state.ErrIncompatibleTable) {
		t.Errorf("restored kind not checked: %v", err)
	}
}

func TestOpenRefusesUsedDirectory(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 1}, 1)
	if _, err := Open(b.Dir(), state.KeyGroupRange{Start: 0, End: 1}, 1, testOpts); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("Open of a used directory: %v", err)
	}
	if _, err := Open(t.TempDir(), state.KeyGroupRange{Start: 0, End: 3}, 2, testOpts); err == nil {
		t.Error("Open with key groups beyond max parallelism succeeded")
	}
}

func TestCorruptValuePanics(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 1}, 1)
	b.Set([]byte("a"), []byte("1"))
	// A stored value that does not decode surfaces as a *kv.BackendError
	// from the typed tables (TestStorageErrorPanics covers the backend's own).
	vt, err := state.NewValueTable[int64, state.VoidNamespace, int64](b, "v", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	vt.Put(0, 1, state.VoidNamespace{}, 7)
	b.Scan(nil, func(k, _ []byte) bool {
		if len(k) > 6 {
			b.Set(k, nil)
		}
		return true
	})
	func() {
		defer func() {
			var be *kv.BackendError
			if e, ok := recover().(error); !ok || !errors.As(e, &be) {
				t.Errorf("recovered %v, want *kv.BackendError", e)
			}
		}()
		vt.Get(0, 1, state.VoidNamespace{})
	}()
	b.Close()
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A storage failure (here: an SST deleted under the DB) panics with a
// *kv.BackendError.
func TestStorageErrorPanics(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 1}, 1)
	b.Set([]byte("a"), []byte("1"))
	if err := b.db.Flush(); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(b.Dir(), "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no SST after flush")
	}
	for _, f := range ssts {
		os.Remove(f)
	}
	defer func() {
		var be *kv.BackendError
		if e, ok := recover().(error); !ok || !errors.As(e, &be) {
			t.Errorf("recovered %v, want *kv.BackendError", e)
		} else {
			t.Log(be)
		}
	}()
	b.Get([]byte("a"))
	t.Error("Get of a key in a deleted SST did not panic")
}

func BenchmarkPebble(b *testing.B) {
	statetest.Bench(b, func(kgs state.KeyGroupRange, maxP int) state.Backend {
		be, err := Open(b.TempDir(), kgs, maxP, testOpts)
		if err != nil {
			b.Fatal(err)
		}
		return be
	})
}

func BenchmarkHeap(b *testing.B) {
	statetest.Bench(b, func(kgs state.KeyGroupRange, maxP int) state.Backend { return heap.New(kgs, maxP) })
}

// BenchmarkValueGetPut is a Get and a Put of an int64 value per op on a
// value table of keys entries, on Pebble and on the heap backend, at a state
// that fits the block cache.
func BenchmarkValueGetPut(b *testing.B) {
	const maxP = 128
	all := state.KeyGroupRange{Start: 0, End: maxP}
	for _, keys := range []int64{1 << 12, 1 << 18} {
		for _, name := range []string{"pebble", "heap"} {
			b.Run(fmt.Sprintf("%s/keys=%d", name, keys), func(b *testing.B) {
				var be state.Backend
				if name == "heap" {
					be = heap.New(all, maxP)
				} else {
					be = open(b, all, maxP)
				}
				vt, err := state.NewValueTable[int64, state.VoidNamespace, int64](be, "v", nil, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				for k := range keys {
					vt.Put(kgOf(k, maxP), k, state.VoidNamespace{}, 0)
				}
				if pb, ok := be.(*Backend); ok {
					pb.db.Flush() // reads from SSTs through the block cache
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					k := int64(uint64(i) * 0x9E3779B97F4A7C15 % uint64(keys))
					kg := kgOf(k, maxP)
					v, _ := vt.Get(kg, k, state.VoidNamespace{})
					vt.Put(kg, k, state.VoidNamespace{}, v+1)
				}
			})
		}
	}
}

func kgOf(k int64, maxP int) int { return state.KeyGroupOf(uint64(k)*0x9E3779B97F4A7C15, maxP) }

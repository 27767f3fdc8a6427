package memtest_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/heap"
	"github.com/eddystream/eddy/internal/state/memtest"
	"github.com/eddystream/eddy/internal/state/statetest"
)

func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T, kgs state.KeyGroupRange, maxP int) state.Backend {
		return memtest.New(kgs, maxP)
	})
}

// TestConformanceCached runs the suite on the table cache, with a budget
// that holds everything and with one that holds a few entries and evicts
// all the time.
func TestConformanceCached(t *testing.T) {
	for _, budget := range []int64{64 << 20, 1 << 10} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			statetest.Run(t, func(t *testing.T, kgs state.KeyGroupRange, maxP int) state.Backend {
				return memtest.NewCached(kgs, maxP, budget)
			})
		})
	}
}

func TestScanOrderAndPrefix(t *testing.T) {
	b := memtest.New(state.KeyGroupRange{Start: 0, End: 1}, 1)
	for _, k := range []string{"b2", "a", "b1", "b", "c", "b\x00"} {
		b.Set([]byte(k), []byte("v"+k))
	}
	var got []string
	b.Scan([]byte("b"), func(k, v []byte) bool {
		got = append(got, string(k))
		if string(k) == "b1" {
			b.Delete(k)
			b.Set([]byte("b15"), nil) // added during the scan: not visited
		}
		return true
	})
	if want := []string{"b", "b\x00", "b1", "b2"}; !slices.Equal(got, want) {
		t.Errorf("Scan(b) = %q, want %q", got, want)
	}
	b.DeletePrefix([]byte("b1"))
	got = nil
	b.Scan(nil, func(k, _ []byte) bool { got = append(got, string(k)); return true })
	if want := []string{"a", "b", "b\x00", "b2", "c"}; !slices.Equal(got, want) {
		t.Errorf("after DeletePrefix(b1): %q, want %q", got, want)
	}
	if v, ok := b.Get([]byte("c")); !ok || string(v) != "vc" {
		t.Errorf("Get(c) = %q, %v", v, ok)
	}
}

func TestTableID(t *testing.T) {
	b := memtest.New(state.KeyGroupRange{Start: 0, End: 1}, 1)
	a, _ := b.TableID("a", "value[x]")
	c, _ := b.TableID("c", "value[x]")
	a2, err := b.TableID("a", "value[x]")
	if err != nil || a2 != a || a == c {
		t.Errorf("ids a=%d c=%d a again=%d (%v)", a, c, a2, err)
	}
	if _, err := b.TableID("a", "map[x]"); !errors.Is(err, state.ErrIncompatibleTable) {
		t.Errorf("another kind: %v", err)
	}
}

func BenchmarkMemtest(b *testing.B) {
	statetest.Bench(b, func(kgs state.KeyGroupRange, maxP int) state.Backend { return memtest.New(kgs, maxP) })
}

func BenchmarkMemtestCached(b *testing.B) {
	statetest.Bench(b, func(kgs state.KeyGroupRange, maxP int) state.Backend { return memtest.NewCached(kgs, maxP, 64<<20) })
}

// TestDifferentialCached compares a cached backend that evicts all the time
// with the heap backend.
func TestDifferentialCached(t *testing.T) {
	all := state.KeyGroupRange{Start: 0, End: statetest.DiffMaxParallelism}
	for seed := range uint64(8) {
		b := memtest.NewCached(all, statetest.DiffMaxParallelism, 4<<10)
		statetest.Differential(t, b, heap.New(all, statetest.DiffMaxParallelism), statetest.DiffOptions{
			Seed: seed, Steps: 5000,
			Check: func(t *testing.T, step int, op string) {
				if n := b.CacheBytes(); n > 4<<10 {
					t.Fatalf("step %d, %s: cache holds %d bytes, over its budget", step, op, n)
				}
			},
		})
	}
}

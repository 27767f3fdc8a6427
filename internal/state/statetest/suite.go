// Package statetest is the conformance suite of state backends: one set of
// tests that every Backend must pass, run by each backend's own tests as
//
//	func TestConformance(t *testing.T) {
//		statetest.Run(t, func(t *testing.T, kgs state.KeyGroupRange, maxP int) state.Backend {
//			return heap.New(kgs, maxP)
//		})
//	}
//
// It covers every table and handle kind through the typed tables of package
// state, namespaces, key-group isolation, TTL with a fake clock, timers,
// declaration conflicts, and, for object backends, snapshot round trips,
// synchronous and asynchronous (AsyncSnapshotter).
package statetest

import (
	"hash/fnv"
	"slices"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/state"
)

// NewBackend returns an empty backend for the key groups kgs of an operator
// with maxParallelism key groups. The suite closes it.
type NewBackend func(t *testing.T, kgs state.KeyGroupRange, maxParallelism int) state.Backend

// maxP is the max parallelism of the suite's operators.
const maxP = 16

// all is the key group range of a subtask that owns every key group.
var all = state.KeyGroupRange{Start: 0, End: maxP}

// Run runs the conformance suite against the backends newBackend makes.
func Run(t *testing.T, newBackend NewBackend) {
	t.Run("ValueTable", func(t *testing.T) { testValueTable(t, newBackend) })
	t.Run("ValueTableStructs", func(t *testing.T) { testValueTableStructs(t, newBackend) })
	t.Run("MapTable", func(t *testing.T) { testMapTable(t, newBackend) })
	t.Run("KeyGroupIsolation", func(t *testing.T) { testKeyGroupIsolation(t, newBackend) })
	t.Run("Declarations", func(t *testing.T) { testDeclarations(t, newBackend) })
	t.Run("ValueHandle", func(t *testing.T) { testValueHandle(t, newBackend) })
	t.Run("ListHandle", func(t *testing.T) { testListHandle(t, newBackend) })
	t.Run("MapHandle", func(t *testing.T) { testMapHandle(t, newBackend) })
	t.Run("ReducingHandle", func(t *testing.T) { testReducingHandle(t, newBackend) })
	t.Run("AggregatingHandle", func(t *testing.T) { testAggregatingHandle(t, newBackend) })
	t.Run("Namespaces", func(t *testing.T) { testNamespaces(t, newBackend) })
	t.Run("MergeNamespaces", func(t *testing.T) { testMergeNamespaces(t, newBackend) })
	t.Run("TTL", func(t *testing.T) { testTTL(t, newBackend) })
	t.Run("CleanupExpired", func(t *testing.T) { testCleanupExpired(t, newBackend) })
	t.Run("Timers", func(t *testing.T) { testTimers(t, newBackend) })
	t.Run("TimerImpls", func(t *testing.T) { testTimerImpls(t, newBackend) })
	t.Run("Snapshot", func(t *testing.T) { testSnapshot(t, newBackend) })
	t.Run("AsyncSnapshot", func(t *testing.T) { testAsyncSnapshot(t, newBackend) })
}

// env is a backend with a store keyed by strings and a fake clock.
type env struct {
	t   *testing.T
	b   state.Backend
	kc  *state.KeyContext[string]
	now int64
	s   *state.Store[string]
}

func newEnv(t *testing.T, nb NewBackend, kgs state.KeyGroupRange) *env {
	t.Helper()
	e := &env{t: t, b: nb(t, kgs, maxP), kc: &state.KeyContext[string]{}}
	t.Cleanup(func() {
		if err := e.b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	e.s = state.NewStore(e.b, e.kc, func() int64 { return e.now }, nil)
	return e
}

// key makes k the current key.
func (e *env) key(k string) {
	e.kc.Key, e.kc.KG = k, kgOfString(k)
	if !e.b.KeyGroups().Contains(e.kc.KG) {
		e.t.Fatalf("key %q is in key group %d, outside %v", k, e.kc.KG, e.b.KeyGroups())
	}
}

func kgOfString(k string) int {
	h := fnv.New64a()
	h.Write([]byte(k))
	return state.KeyGroupOf(h.Sum64(), maxP)
}

func kgOfInt(k int64) int { return state.KeyGroupOf(uint64(k), maxP) }

// keysIn returns n string keys whose key groups lie in r.
func keysIn(r state.KeyGroupRange, n int) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		k := "key-" + string(rune('a'+i%26)) + time.Duration(i).String()
		if r.Contains(kgOfString(k)) {
			keys = append(keys, k)
		}
	}
	return keys
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func expectPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func sorted[T interface{ ~int | ~int64 | ~string }](s []T) []T {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

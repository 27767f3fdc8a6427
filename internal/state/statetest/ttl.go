package statetest

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/internal/state"
)

var ttl10 = state.TTLConfig{TTL: 10 * time.Millisecond}

func testTTL(t *testing.T, nb NewBackend) {
	t.Run("Value", func(t *testing.T) {
		e := newEnv(t, nb, all)
		h, err := state.NewValueHandle[string, state.VoidNamespace, int](e.s, nil, nil, "v", nil, ttl10)
		mustNoErr(t, err)
		e.key("a")
		h.Update(1)
		e.now = 9
		if v, ok := h.Value(); !ok || v != 1 {
			t.Errorf("at 9ms: Value = %d, %v; want 1", v, ok)
		}
		e.now = 10
		if _, ok := h.Value(); ok {
			t.Error("at 10ms (stamp + TTL): value still visible")
		}
		h.Update(2)
		e.now = 19
		if v, _ := h.Value(); v != 2 {
			t.Error("an update did not restart the TTL")
		}
	})
	t.Run("OnReadAndWrite", func(t *testing.T) {
		e := newEnv(t, nb, all)
		cfg := ttl10
		cfg.Update = state.OnReadAndWrite
		h, err := state.NewValueHandle[string, state.VoidNamespace, int](e.s, nil, nil, "v", nil, cfg)
		mustNoErr(t, err)
		m, err := state.NewMapHandle[string, state.VoidNamespace, string, int](e.s, nil, nil, "m", nil, nil, cfg)
		mustNoErr(t, err)
		e.key("a")
		h.Update(1)
		m.Put("x", 1)
		m.Put("y", 2)
		e.now = 8
		h.Value()
		m.Get("x")
		e.now = 15
		if _, ok := h.Value(); !ok {
			t.Error("a read did not restart the TTL with OnReadAndWrite")
		}
		if got := maps.Collect(m.Entries()); !maps.Equal(got, map[string]int{"x": 1}) {
			t.Errorf("map entries at 15ms = %v, want only x (read at 8ms)", got)
		}
	})
	t.Run("OnCreateAndWrite", func(t *testing.T) {
		e := newEnv(t, nb, all)
		h, err := state.NewValueHandle[string, state.VoidNamespace, int](e.s, nil, nil, "v", nil, ttl10)
		mustNoErr(t, err)
		e.key("a")
		h.Update(1)
		e.now = 8
		h.Value()
		e.now = 10
		if _, ok := h.Value(); ok {
			t.Error("a read restarted the TTL with OnCreateAndWrite")
		}
	})
	t.Run("ReturnExpiredIfNotCleanedUp", func(t *testing.T) {
		e := newEnv(t, nb, all)
		cfg := ttl10
		cfg.Visibility = state.ReturnExpiredIfNotCleanedUp
		h, err := state.NewValueHandle[string, state.VoidNamespace, int](e.s, nil, nil, "v", nil, cfg)
		mustNoErr(t, err)
		e.key("a")
		h.Update(1)
		e.now = 20
		if v, ok := h.Value(); !ok || v != 1 {
			t.Errorf("expired value not returned once: %d, %v", v, ok)
		}
		if _, ok := h.Value(); ok {
			t.Error("expired value returned again: the first read did not delete it")
		}
	})
	t.Run("NeverReturnExpiredDeletes", func(t *testing.T) {
		// A second handle on the same table that would show expired entries
		// finds nothing after the first one read the expired value.
		e := newEnv(t, nb, all)
		h, err := state.NewValueHandle[string, state.VoidNamespace, int](e.s, nil, nil, "v", nil, ttl10)
		mustNoErr(t, err)
		cfg := ttl10
		cfg.Visibility = state.ReturnExpiredIfNotCleanedUp
		show, err := state.NewValueHandle[string, state.VoidNamespace, int](e.s, nil, nil, "v", nil, cfg)
		mustNoErr(t, err)
		e.key("a")
		h.Update(1)
		e.now = 10
		h.Value()
		if _, ok := show.Value(); ok {
			t.Error("an expired value was not deleted on access")
		}
	})
	t.Run("List", func(t *testing.T) {
		e := newEnv(t, nb, all)
		h, err := state.NewListHandle[string, state.VoidNamespace, string](e.s, nil, nil, "l", nil, ttl10)
		mustNoErr(t, err)
		e.key("a")
		h.Add("a")
		e.now = 5
		h.AddAll([]string{"b", "c"})
		e.now = 10
		if got := h.Get(); !slices.Equal(got, []string{"b", "c"}) {
			t.Errorf("at 10ms: %v, want [b c]", got)
		}
		h.Add("d")
		e.now = 15
		if got := h.Get(); !slices.Equal(got, []string{"d"}) {
			t.Errorf("at 15ms: %v, want [d]", got)
		}
		e.now = 20
		if got := h.Get(); got != nil {
			t.Errorf("at 20ms: %v, want nil", got)
		}
		h.Update([]string{"x"})
		e.now = 29
		if got := h.Get(); !slices.Equal(got, []string{"x"}) {
			t.Errorf("after Update: %v", got)
		}
	})
	t.Run("Map", func(t *testing.T) {
		e := newEnv(t, nb, all)
		h, err := state.NewMapHandle[string, state.VoidNamespace, string, int](e.s, nil, nil, "m", nil, nil, ttl10)
		mustNoErr(t, err)
		e.key("a")
		h.Put("x", 1)
		e.now = 5
		h.Put("y", 2)
		e.now = 10
		if h.Contains("x") {
			t.Error("expired entry x is visible")
		}
		if v, ok := h.Get("y"); !ok || v != 2 {
			t.Errorf("Get(y) = %d, %v", v, ok)
		}
		if got := slices.Collect(h.Keys()); !slices.Equal(got, []string{"y"}) {
			t.Errorf("Keys = %v", got)
		}
		if h.IsEmpty() {
			t.Error("IsEmpty with a live entry")
		}
		e.now = 15
		if !h.IsEmpty() {
			t.Error("IsEmpty is false with only expired entries")
		}
	})
	t.Run("Reducing", func(t *testing.T) {
		e := newEnv(t, nb, all)
		h, err := state.NewReducingHandle[string, state.VoidNamespace, int](e.s, nil, nil, "r", nil, func(a, b int) int { return a + b }, ttl10)
		mustNoErr(t, err)
		e.key("a")
		h.Add(1)
		e.now = 5
		h.Add(2)
		e.now = 14
		if v, _ := h.Get(); v != 3 {
			t.Errorf("Get = %d, want 3 (Add restarts the TTL)", v)
		}
		e.now = 15
		h.Add(4)
		if v, _ := h.Get(); v != 4 {
			t.Errorf("Get = %d, want 4 (an expired reduction is dropped)", v)
		}
	})
	t.Run("Aggregating", func(t *testing.T) {
		e := newEnv(t, nb, all)
		h, err := state.NewAggregatingHandle[string, state.VoidNamespace](e.s, nil, nil, "c", agg.Count[int](), nil, ttl10)
		mustNoErr(t, err)
		e.key("a")
		h.Add(1)
		h.Add(1)
		e.now = 10
		if _, ok := h.Get(); ok {
			t.Error("expired accumulator visible")
		}
		h.Add(1)
		if v, _ := h.Get(); v != 1 {
			t.Errorf("count = %d, want 1", v)
		}
	})
}

func testCleanupExpired(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	v, err := state.NewValueHandle[string, state.VoidNamespace, int](e.s, nil, nil, "v", nil, ttl10)
	mustNoErr(t, err)
	l, err := state.NewListHandle[string, state.VoidNamespace, int](e.s, nil, nil, "l", nil, ttl10)
	mustNoErr(t, err)
	m, err := state.NewMapHandle[string, state.VoidNamespace, int, int](e.s, nil, nil, "m", nil, nil, ttl10)
	mustNoErr(t, err)
	plain, err := state.NewValueHandle[string, state.VoidNamespace, int](e.s, nil, nil, "plain", nil, noTTL)
	mustNoErr(t, err)
	keys := keysIn(all, 40)
	for i, k := range keys {
		e.key(k)
		e.now = int64(i % 2 * 5) // half at 0ms, half at 5ms
		v.Update(i)
		l.AddAll([]int{i, i})
		m.Put(1, i)
		m.Put(2, i)
		plain.Update(i)
	}
	e.now = 10
	if n := e.s.CleanupExpired(0); n != 0 {
		t.Errorf("CleanupExpired(0) deleted %d", n)
	}
	total := 0
	for range 3 * maxP {
		total += e.s.CleanupExpired(1)
	}
	// 20 expired keys: one value, two list elements, two map entries each.
	if want := 20 * 5; total != want {
		t.Errorf("incremental cleanup deleted %d entries, want %d", total, want)
	}
	if n := e.s.CleanupExpired(1 << 30); n != 0 {
		t.Errorf("a second full cleanup deleted %d", n)
	}
	// What is left is what had not expired; the store without TTL is intact.
	show := state.TTLConfig{TTL: 10 * time.Millisecond, Visibility: state.ReturnExpiredIfNotCleanedUp}
	vs, err := state.NewValueHandle[string, state.VoidNamespace, int](e.s, nil, nil, "v", nil, show)
	mustNoErr(t, err)
	for i, k := range keys {
		e.key(k)
		_, ok := vs.Value()
		if want := i%2 == 1; ok != want {
			t.Errorf("key %d: value present = %v, want %v", i, ok, want)
		}
		if got, _ := plain.Value(); got != i {
			t.Errorf("key %d: state without TTL changed to %d", i, got)
		}
	}
	e.now = 15
	if n := e.s.CleanupExpired(1 << 30); n != 20*5 {
		t.Errorf("cleanup of the rest deleted %d, want %d", n, 20*5)
	}
}

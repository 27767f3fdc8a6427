package statetest

import (
	"maps"
	"slices"
	"testing"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/internal/state"
)

var noTTL state.TTLConfig

func testValueHandle(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	h, err := state.NewValueHandle[string, state.VoidNamespace, string](e.s, nil, nil, "v", nil, noTTL)
	mustNoErr(t, err)
	keys := keysIn(all, 20)
	for _, k := range keys {
		e.key(k)
		if _, ok := h.Value(); ok {
			t.Fatalf("key %q has a value before any update", k)
		}
		h.Update("v-" + k)
	}
	for _, k := range keys {
		e.key(k)
		if v, ok := h.Value(); !ok || v != "v-"+k {
			t.Errorf("key %q: Value = %q, %v", k, v, ok)
		}
	}
	e.key(keys[0])
	h.Clear()
	if _, ok := h.Value(); ok {
		t.Error("Value found a cleared value")
	}
	e.key(keys[1])
	if _, ok := h.Value(); !ok {
		t.Error("Clear of one key cleared another")
	}
}

func testListHandle(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	h, err := state.NewListHandle[string, state.VoidNamespace, int](e.s, nil, nil, "l", nil, noTTL)
	mustNoErr(t, err)
	e.key("a")
	if got := h.Get(); got != nil {
		t.Errorf("Get on an empty list = %v, want nil", got)
	}
	h.Add(1)
	h.AddAll([]int{2, 3})
	h.AddAll(nil)
	got := h.Get()
	if !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("Get = %v, want [1 2 3]", got)
	}
	_ = append(got, 99) // appending to a returned list does not change the state
	h.Add(4)
	if got := h.Get(); !slices.Equal(got, []int{1, 2, 3, 4}) {
		t.Errorf("Get = %v, want [1 2 3 4]", got)
	}
	e.key("b")
	if got := h.Get(); got != nil {
		t.Errorf("another key's list = %v, want nil", got)
	}
	in := []int{7, 8}
	h.Update(in)
	in[0] = 0 // Update copies
	if got := h.Get(); !slices.Equal(got, []int{7, 8}) {
		t.Errorf("Get after Update = %v, want [7 8]", got)
	}
	h.Update(nil)
	if got := h.Get(); got != nil {
		t.Errorf("Get after Update(nil) = %v, want nil", got)
	}
	e.key("a")
	h.Clear()
	if got := h.Get(); got != nil {
		t.Errorf("Get after Clear = %v, want nil", got)
	}
}

func testMapHandle(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	h, err := state.NewMapHandle[string, state.VoidNamespace, string, int](e.s, nil, nil, "m", nil, nil, noTTL)
	mustNoErr(t, err)
	e.key("a")
	if !h.IsEmpty() {
		t.Error("IsEmpty is false for a new key")
	}
	h.Put("x", 1)
	h.Put("y", 2)
	h.Put("z", 3)
	if v, ok := h.Get("y"); !ok || v != 2 {
		t.Errorf("Get(y) = %d, %v", v, ok)
	}
	if !h.Contains("x") || h.Contains("w") {
		t.Error("Contains is wrong")
	}
	h.Delete("z")
	if got := maps.Collect(h.Entries()); !maps.Equal(got, map[string]int{"x": 1, "y": 2}) {
		t.Errorf("Entries = %v", got)
	}
	if got := sorted(slices.Collect(h.Keys())); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("Keys = %v", got)
	}
	for k := range h.Keys() {
		_ = k
		break // stopping early is fine
	}
	e.key("b")
	if !h.IsEmpty() || h.Contains("x") {
		t.Error("another key sees the map of a")
	}
	h.Put("x", 9)
	e.key("a")
	h.Clear()
	if !h.IsEmpty() {
		t.Error("IsEmpty is false after Clear")
	}
	e.key("b")
	if v, _ := h.Get("x"); v != 9 {
		t.Error("Clear of one key cleared another")
	}
}

func testReducingHandle(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	h, err := state.NewReducingHandle[string, state.VoidNamespace, int64](e.s, nil, nil, "r", nil, func(a, b int64) int64 { return a*10 + b }, noTTL)
	mustNoErr(t, err)
	e.key("a")
	if _, ok := h.Get(); ok {
		t.Error("Get found a value before any Add")
	}
	for _, v := range []int64{1, 2, 3} {
		h.Add(v)
	}
	if v, ok := h.Get(); !ok || v != 123 {
		t.Errorf("Get = %d, %v; want 123 (reduce applied in order)", v, ok)
	}
	e.key("b")
	h.Add(5)
	if v, _ := h.Get(); v != 5 {
		t.Errorf("another key: Get = %d, want 5", v)
	}
	h.Clear()
	if _, ok := h.Get(); ok {
		t.Error("Get found a cleared value")
	}
}

type bid struct {
	Price float64
	Qty   int64
}

func testAggregatingHandle(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	h, err := state.NewAggregatingHandle[string, state.VoidNamespace](e.s, nil, nil, "avg", agg.Avg(func(b bid) float64 { return b.Price }), nil, noTTL)
	mustNoErr(t, err)
	c, err := state.NewAggregatingHandle[string, state.VoidNamespace](e.s, nil, nil, "max", agg.Max(func(b bid) int64 { return b.Qty }), nil, noTTL)
	mustNoErr(t, err)
	e.key("a")
	if _, ok := h.Get(); ok {
		t.Error("Get found a result before any Add")
	}
	for _, b := range []bid{{1, 5}, {2, 9}, {6, 2}} {
		h.Add(b)
		c.Add(b)
	}
	if v, ok := h.Get(); !ok || v != 3 {
		t.Errorf("avg = %v, %v; want 3", v, ok)
	}
	if v, ok := c.Get(); !ok || v != 9 {
		t.Errorf("max = %v, %v; want 9", v, ok)
	}
	e.key("b")
	if _, ok := h.Get(); ok {
		t.Error("another key has a result")
	}
	e.key("a")
	h.Clear()
	if _, ok := h.Get(); ok {
		t.Error("Get found a cleared accumulator")
	}
}

// window is a namespace like the window operator's.
type window struct{ Start, End int64 }

func testNamespaces(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	var ns window
	v, err := state.NewValueHandle[string, window, string](e.s, &ns, nil, "v", nil, noTTL)
	mustNoErr(t, err)
	l, err := state.NewListHandle[string, window, int](e.s, &ns, nil, "l", nil, noTTL)
	mustNoErr(t, err)
	m, err := state.NewMapHandle[string, window, int, int](e.s, &ns, nil, "m", nil, nil, noTTL)
	mustNoErr(t, err)
	r, err := state.NewAggregatingHandle[string, window](e.s, &ns, nil, "count", agg.Count[int](), nil, noTTL)
	mustNoErr(t, err)
	e.key("a")
	for w := range int64(3) {
		ns = window{w * 10, w*10 + 10}
		v.Update(string(rune('p' + w)))
		for i := range int(w) + 1 {
			l.Add(i)
			m.Put(i, int(w))
			r.Add(i)
		}
	}
	for w := range int64(3) {
		ns = window{w * 10, w*10 + 10}
		if got, _ := v.Value(); got != string(rune('p'+w)) {
			t.Errorf("window %d: value %q", w, got)
		}
		if got := l.Get(); len(got) != int(w)+1 {
			t.Errorf("window %d: list %v", w, got)
		}
		if got := maps.Collect(m.Entries()); len(got) != int(w)+1 || got[0] != int(w) {
			t.Errorf("window %d: map %v", w, got)
		}
		if got, _ := r.Get(); got != w+1 {
			t.Errorf("window %d: count %d", w, got)
		}
	}
	ns = window{10, 20}
	v.Clear()
	l.Clear()
	m.Clear()
	r.Clear()
	ns = window{0, 10}
	if _, ok := v.Value(); !ok || l.Get() == nil || m.IsEmpty() {
		t.Error("clearing one namespace cleared another")
	}
	ns = window{10, 20}
	if _, ok := v.Value(); ok || l.Get() != nil || !m.IsEmpty() {
		t.Error("a cleared namespace still has state")
	}
	if _, ok := r.Get(); ok {
		t.Error("a cleared namespace still has an accumulator")
	}
}

func testMergeNamespaces(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	var ns window
	l, err := state.NewListHandle[string, window, int](e.s, &ns, nil, "l", nil, noTTL)
	mustNoErr(t, err)
	r, err := state.NewReducingHandle[string, window, int](e.s, &ns, nil, "sum", nil, func(a, b int) int { return a + b }, noTTL)
	mustNoErr(t, err)
	a, err := state.NewAggregatingHandle[string, window](e.s, &ns, nil, "count", agg.Count[int](), nil, noTTL)
	mustNoErr(t, err)
	e.key("a")
	w1, w2, w3, target := window{0, 5}, window{3, 8}, window{9, 12}, window{0, 8}
	for i, w := range []window{w1, w2, w2} {
		ns = w
		l.Add(i)
		r.Add(i + 1)
		a.Add(i)
	}
	l.MergeNamespaces(target, w1, w2, w3)
	r.MergeNamespaces(target, w1, w2, w3)
	a.MergeNamespaces(target, w1, w2, w3)
	ns = target
	if got := sorted(l.Get()); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("merged list = %v", got)
	}
	if got, _ := r.Get(); got != 6 {
		t.Errorf("merged sum = %d, want 6", got)
	}
	if got, _ := a.Get(); got != 3 {
		t.Errorf("merged count = %d, want 3", got)
	}
	for _, w := range []window{w1, w2} {
		ns = w
		if _, ok := r.Get(); ok || l.Get() != nil {
			t.Errorf("source namespace %v survived the merge", w)
		}
	}
}

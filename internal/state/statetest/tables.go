package statetest

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/codec"
)

type entryKey struct {
	k int64
	n int32
}

func rangeValues(t state.ValueTable[int64, int32, string], kg int) map[entryKey]string {
	got := map[entryKey]string{}
	t.Range(kg, func(k int64, n int32, v string) bool {
		got[entryKey{k, n}] = v
		return true
	})
	return got
}

func testValueTable(t *testing.T, nb NewBackend) {
	b := nb(t, all, maxP)
	defer b.Close()
	vt, err := state.NewValueTable[int64, int32, string](b, "v", nil, nil, nil)
	mustNoErr(t, err)

	if _, ok := vt.Get(kgOfInt(1), 1, 0); ok {
		t.Fatal("Get on an empty table found a value")
	}
	for k := int64(-20); k < 20; k++ {
		for n := int32(-1); n <= 1; n++ {
			vt.Put(kgOfInt(k), k, n, fmt.Sprintf("%d/%d", k, n))
		}
	}
	vt.Put(kgOfInt(3), 3, 1, "overwritten")
	vt.Delete(kgOfInt(4), 4, 0)
	vt.Delete(kgOfInt(4), 4, 7) // absent
	for k := int64(-20); k < 20; k++ {
		for n := int32(-1); n <= 1; n++ {
			v, ok := vt.Get(kgOfInt(k), k, n)
			switch {
			case k == 3 && n == 1:
				if v != "overwritten" {
					t.Errorf("Get(3, 1) = %q, want the overwritten value", v)
				}
			case k == 4 && n == 0:
				if ok {
					t.Errorf("Get(4, 0) found %q after Delete", v)
				}
			case !ok || v != fmt.Sprintf("%d/%d", k, n):
				t.Errorf("Get(%d, %d) = %q, %v", k, n, v, ok)
			}
		}
	}
	if _, ok := vt.Get(kgOfInt(5), 5, 2); ok {
		t.Error("Get found a value in a namespace never written")
	}

	// Range sees exactly the entries of its key group.
	total := 0
	for kg := range maxP {
		got := rangeValues(vt, kg)
		for e := range got {
			if kgOfInt(e.k) != kg {
				t.Errorf("Range(%d) returned key %d of key group %d", kg, e.k, kgOfInt(e.k))
			}
		}
		total += len(got)
	}
	if total != 40*3-1 {
		t.Errorf("Range over all key groups saw %d entries, want %d", total, 40*3-1)
	}

	// Range stops when fn returns false.
	calls := 0
	vt.Range(kgOfInt(0), func(int64, int32, string) bool { calls++; return false })
	if calls != 1 {
		t.Errorf("Range called fn %d times after it returned false", calls)
	}

	// fn may delete or overwrite the entry it is given.
	kg := kgOfInt(0)
	before := rangeValues(vt, kg)
	vt.Range(kg, func(k int64, n int32, v string) bool {
		if n == 0 {
			vt.Delete(kg, k, n)
		} else {
			vt.Put(kg, k, n, v+"!")
		}
		return true
	})
	after := rangeValues(vt, kg)
	for e, v := range before {
		switch got, ok := after[e]; {
		case e.n == 0 && ok:
			t.Errorf("entry %v survived deletion in Range", e)
		case e.n != 0 && got != v+"!":
			t.Errorf("entry %v = %q after overwrite in Range, want %q", e, got, v+"!")
		}
	}
}

// rec exercises the reflective default codec on every backend.
type rec struct {
	ID     int64
	Name   string
	Scores []float64
	Tags   map[string]int
	Next   *rec
	At     time.Time
	Wait   time.Duration
	Flags  [2]bool
	hidden uint16
}

func testValueTableStructs(t *testing.T, nb NewBackend) {
	b := nb(t, all, maxP)
	defer b.Close()
	type key struct {
		Region string
		ID     int32
	}
	vt, err := state.NewValueTable[key, state.VoidNamespace, rec](b, "recs", nil, nil, nil)
	mustNoErr(t, err)
	v := rec{
		ID: 7, Name: "a\x00b", Scores: []float64{1.5, -2}, Tags: map[string]int{"x": 1, "y": 2},
		Next: &rec{ID: 8}, At: time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC), Wait: time.Second,
		Flags: [2]bool{true, false}, hidden: 3,
	}
	k := key{"eu\x00", 1}
	vt.Put(3, k, state.VoidNamespace{}, v)
	got, ok := vt.Get(3, k, state.VoidNamespace{})
	if !ok || !reflect.DeepEqual(got, v) {
		t.Errorf("Get = %+v, %v; want %+v", got, ok, v)
	}
	if _, ok := vt.Get(3, key{"eu", 1}, state.VoidNamespace{}); ok {
		t.Error("a key that is a prefix of a stored key found its value")
	}
	n := 0
	vt.Range(3, func(k2 key, _ state.VoidNamespace, v2 rec) bool {
		n++
		if k2 != k || !reflect.DeepEqual(v2, v) {
			t.Errorf("Range gave %+v, %+v", k2, v2)
		}
		return true
	})
	if n != 1 {
		t.Errorf("Range saw %d entries, want 1", n)
	}
}

func mapEntries(mt state.MapTable[int64, int32, string, int], kg int, k int64, n int32) map[string]int {
	got := map[string]int{}
	mt.Entries(kg, k, n, func(uk string, uv int) bool {
		got[uk] = uv
		return true
	})
	return got
}

func testMapTable(t *testing.T, nb NewBackend) {
	b := nb(t, all, maxP)
	defer b.Close()
	mt, err := state.NewMapTable[int64, int32, string, int](b, "m", nil, nil, nil, nil)
	mustNoErr(t, err)
	kg := kgOfInt(1)
	if !mt.IsEmpty(kg, 1, 0) {
		t.Fatal("IsEmpty is false on an empty table")
	}
	mt.Put(kg, 1, 0, "a", 1)
	mt.Put(kg, 1, 0, "b", 2)
	mt.Put(kg, 1, 0, "b", 3)
	mt.Put(kg, 1, 0, "", 4)
	mt.Put(kg, 1, 1, "a", 10) // other namespace
	mt.Put(kgOfInt(17), 17, 0, "a", 100)
	if v, ok := mt.Get(kg, 1, 0, "b"); !ok || v != 3 {
		t.Errorf("Get(b) = %d, %v; want 3", v, ok)
	}
	if _, ok := mt.Get(kg, 1, 0, "c"); ok {
		t.Error("Get(c) found a value never put")
	}
	if got, want := mapEntries(mt, kg, 1, 0), map[string]int{"a": 1, "b": 3, "": 4}; !maps.Equal(got, want) {
		t.Errorf("Entries = %v, want %v", got, want)
	}
	mt.Delete(kg, 1, 0, "a")
	mt.Delete(kg, 1, 0, "zz")
	if got, want := mapEntries(mt, kg, 1, 0), map[string]int{"b": 3, "": 4}; !maps.Equal(got, want) {
		t.Errorf("Entries after Delete = %v, want %v", got, want)
	}
	// Entries may delete and overwrite the entry it is given.
	mt.Entries(kg, 1, 0, func(uk string, uv int) bool {
		if uk == "" {
			mt.Delete(kg, 1, 0, uk)
		} else {
			mt.Put(kg, 1, 0, uk, uv*10)
		}
		return true
	})
	if got, want := mapEntries(mt, kg, 1, 0), map[string]int{"b": 30}; !maps.Equal(got, want) {
		t.Errorf("Entries after changes in Entries = %v, want %v", got, want)
	}
	// Range sees every entry of the key group, of every key and namespace.
	got := map[string]int{}
	mt.Range(kg, func(k int64, n int32, uk string, uv int) bool {
		got[fmt.Sprintf("%d/%d/%s", k, n, uk)] = uv
		return true
	})
	want := map[string]int{"1/0/b": 30, "1/1/a": 10}
	if kgOfInt(17) == kg {
		want["17/0/a"] = 100
	}
	if !maps.Equal(got, want) {
		t.Errorf("Range = %v, want %v", got, want)
	}
	mt.Clear(kg, 1, 0)
	if !mt.IsEmpty(kg, 1, 0) || mt.IsEmpty(kg, 1, 1) {
		t.Error("Clear removed the wrong maps")
	}
	mt.Delete(kg, 1, 1, "a")
	if !mt.IsEmpty(kg, 1, 1) {
		t.Error("a map whose last entry was deleted is not empty")
	}
}

func testKeyGroupIsolation(t *testing.T, nb NewBackend) {
	r := state.KeyGroupRange{Start: 4, End: 8}
	b := nb(t, r, maxP)
	defer b.Close()
	vt, err := state.NewValueTable[int64, int32, string](b, "v", nil, nil, nil)
	mustNoErr(t, err)
	mt, err := state.NewMapTable[int64, int32, string, int](b, "m", nil, nil, nil, nil)
	mustNoErr(t, err)
	for k := int64(0); k < 64; k++ {
		if kg := kgOfInt(k); r.Contains(kg) {
			vt.Put(kg, k, 0, "v")
			mt.Put(kg, k, 0, "u", int(k))
		}
	}
	for kg := r.Start; kg < r.End; kg++ {
		got := rangeValues(vt, kg)
		if len(got) != 4 {
			t.Errorf("Range(%d) saw %d entries, want 4", kg, len(got))
		}
		for e := range got {
			if kgOfInt(e.k) != kg {
				t.Errorf("Range(%d) saw key %d of key group %d", kg, e.k, kgOfInt(e.k))
			}
		}
	}
	expectPanic(t, "Get outside the key group range", func() { vt.Get(3, 3, 0) })
	expectPanic(t, "Put outside the key group range", func() { vt.Put(8, 8, 0, "x") })
	expectPanic(t, "map Put outside the key group range", func() { mt.Put(8, 8, 0, "u", 1) })

	state.DropKeyGroup(b, 5)
	for kg := r.Start; kg < r.End; kg++ {
		nv := len(rangeValues(vt, kg))
		nm := 0
		mt.Range(kg, func(int64, int32, string, int) bool { nm++; return true })
		want := 4
		if kg == 5 {
			want = 0
		}
		if nv != want || nm != want {
			t.Errorf("after DropKeyGroup(5), key group %d has %d values and %d map entries, want %d", kg, nv, nm, want)
		}
	}
}

func testDeclarations(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	a, err := state.NewValueHandle[string, state.VoidNamespace, int64](e.s, nil, nil, "count", nil, state.TTLConfig{})
	mustNoErr(t, err)
	b, err := state.NewValueHandle[string, state.VoidNamespace, int64](e.s, nil, nil, "count", nil, state.TTLConfig{})
	mustNoErr(t, err)
	e.key("k")
	a.Update(5)
	if v, ok := b.Value(); !ok || v != 5 {
		t.Errorf("a second handle on the same name read %d, %v; want 5", v, ok)
	}

	incompatible := func(what string, err error, kinds ...string) {
		t.Helper()
		if !errors.Is(err, state.ErrIncompatibleTable) {
			t.Errorf("%s: err = %v, want ErrIncompatibleTable", what, err)
			return
		}
		for _, s := range append(kinds, `"count"`) {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not mention %s", what, err, s)
			}
		}
	}
	_, err = state.NewValueHandle[string, state.VoidNamespace, string](e.s, nil, nil, "count", nil, state.TTLConfig{})
	incompatible("value of other type", err, "value[string,void,int64]", "value[string,void,string]")
	_, err = state.NewMapHandle[string, state.VoidNamespace, string, int64](e.s, nil, nil, "count", nil, nil, state.TTLConfig{})
	incompatible("map on a value name", err, "value[string,void,int64]", "map[string,void,string,int64]")
	_, err = state.NewValueHandle[string, int64, int64](e.s, nil, nil, "count", nil, state.TTLConfig{})
	incompatible("other namespace type", err, "value[string,int64,int64]")
	_, err = state.NewValueHandle[string, state.VoidNamespace, int64](e.s, nil, nil, "count", nil, state.TTLConfig{TTL: time.Second})
	incompatible("TTL added", err)

	if _, err := state.NewValueHandle[string, state.VoidNamespace, int64](e.s, nil, nil, "", nil, state.TTLConfig{}); err == nil {
		t.Error("an empty name was accepted")
	}
	if _, err := state.NewValueHandle[string, state.VoidNamespace, any](e.s, nil, nil, "iface", nil, state.TTLConfig{}); err == nil {
		t.Error("a value type without a default codec was accepted without a codec")
	}
	if _, err := state.NewValueHandle[string, state.VoidNamespace, any](e.s, nil, nil, "iface", codec.JSON[any](), state.TTLConfig{}); err != nil {
		t.Errorf("a value type with an explicit codec: %v", err)
	}
	if _, err := state.NewValueHandle[string, state.VoidNamespace, int64](e.s, nil, nil, "bad-ttl", nil, state.TTLConfig{TTL: time.Microsecond}); err == nil {
		t.Error("a TTL under a millisecond was accepted")
	}
	if _, err := state.NewReducingHandle[string, state.VoidNamespace, int64](e.s, nil, nil, "r", nil, nil, state.TTLConfig{}); err == nil {
		t.Error("a reducing state without a reduce function was accepted")
	}
}

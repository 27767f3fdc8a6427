package statetest

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/internal/state"
)

// declared is the state the snapshot test declares on a store.
type declared struct {
	v   *state.ValueHandle[string, state.VoidNamespace, rec]
	l   *state.ListHandle[string, window, string]
	m   *state.MapHandle[string, state.VoidNamespace, int64, bid]
	a   *state.AggregatingHandle[string, state.VoidNamespace, bid, agg.AvgAcc, float64]
	ttl *state.ValueHandle[string, state.VoidNamespace, int]
	ns  window
}

func declare(t *testing.T, e *env) *declared {
	d := &declared{}
	var err error
	d.v, err = state.NewValueHandle[string, state.VoidNamespace, rec](e.s, nil, nil, "v", nil, noTTL)
	mustNoErr(t, err)
	d.l, err = state.NewListHandle[string, window, string](e.s, &d.ns, nil, "l", nil, noTTL)
	mustNoErr(t, err)
	d.m, err = state.NewMapHandle[string, state.VoidNamespace, int64, bid](e.s, nil, nil, "m", nil, nil, noTTL)
	mustNoErr(t, err)
	d.a, err = state.NewAggregatingHandle[string, state.VoidNamespace](e.s, nil, nil, "a", agg.Avg(func(b bid) float64 { return b.Price }), nil, noTTL)
	mustNoErr(t, err)
	d.ttl, err = state.NewValueHandle[string, state.VoidNamespace, int](e.s, nil, nil, "ttl", nil, ttl10)
	mustNoErr(t, err)
	return d
}

func (d *declared) fill(e *env, keys []string) {
	for i, k := range keys {
		e.key(k)
		d.v.Update(rec{ID: int64(i), Name: k, Tags: map[string]int{k: i}})
		for w := range int64(i % 3) {
			d.ns = window{w, w + 1}
			d.l.AddAll([]string{k, "x"})
		}
		d.m.Put(int64(i), bid{float64(i), 1})
		d.m.Put(-1, bid{})
		d.a.Add(bid{Price: float64(i)})
		d.a.Add(bid{Price: 1})
		d.ttl.Update(i)
	}
}

type dump struct {
	V   rec
	L   [3][]string
	M   map[int64]bid
	A   float64
	TTL int
	OK  bool
}

func (d *declared) dump(e *env, k string) dump {
	e.key(k)
	var out dump
	out.V, _ = d.v.Value()
	for w := range int64(3) {
		d.ns = window{w, w + 1}
		out.L[w] = d.l.Get()
	}
	out.M = maps.Collect(d.m.Entries())
	out.A, _ = d.a.Get()
	out.TTL, out.OK = d.ttl.Value()
	return out
}

// testSnapshot writes every key group of every table of an object backend
// and restores them into new backends, including one that owns only some
// key groups (rescaling).
func testSnapshot(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	ob, ok := e.b.(state.ObjectBackend)
	if !ok {
		t.Skip("not an ObjectBackend: snapshots are the backend's own")
	}
	d := declare(t, e)
	keys := keysIn(all, 40)
	d.fill(e, keys)
	names := ob.Tables()
	if !slices.Equal(names, []string{"a", "l", "m", "ttl", "v"}) {
		t.Fatalf("Tables = %v", names)
	}
	blobs := map[string][][]byte{}
	for _, name := range names {
		tbl, _ := ob.Table(name)
		for kg := range maxP {
			blobs[name] = append(blobs[name], tbl.AppendKeyGroup(nil, kg))
		}
	}

	for _, r := range []state.KeyGroupRange{all, {Start: 4, End: 11}} {
		e2 := newEnv(t, nb, r)
		e2.now = e.now
		d2 := declare(t, e2)
		ob2 := e2.b.(state.ObjectBackend)
		for _, name := range names {
			tbl, _ := ob2.Table(name)
			old, _ := ob.Table(name)
			if tbl.Kind() != old.Kind() {
				t.Fatalf("table %s: kind %s, was %s", name, tbl.Kind(), old.Kind())
			}
			for kg := r.Start; kg < r.End; kg++ {
				mustNoErr(t, tbl.RestoreKeyGroup(kg, blobs[name][kg]))
			}
			n := 0
			for kg := r.Start; kg < r.End; kg++ {
				n += lenOf(t, old, kg)
			}
			if tbl.Len() != n {
				t.Errorf("range %v table %s: restored %d entries, want %d", r, name, tbl.Len(), n)
			}
		}
		for _, k := range keys {
			if !r.Contains(kgOfString(k)) {
				continue
			}
			got, want := d2.dump(e2, k), d.dump(e, k)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("range %v key %s: restored\n%+v\nwant\n%+v", r, k, got, want)
			}
		}
		// TTL stamps survive: the restored values expire on time.
		e2.key(keysIn(r, 1)[0])
		if _, ok := d2.ttl.Value(); !ok {
			t.Fatal("a restored value with a TTL is missing")
		}
		e2.now = e.now + 10
		if _, ok := d2.ttl.Value(); ok {
			t.Error("a restored value with a TTL did not expire")
		}
	}

	// Corrupt data is an error, not a panic.
	tbl, _ := ob.Table("v")
	for kg := range maxP {
		if b := blobs["v"][kg]; len(b) > 2 {
			if err := tbl.RestoreKeyGroup(kg, b[:len(b)-1]); err == nil {
				t.Error("restoring a truncated key group succeeded")
			}
			if err := tbl.RestoreKeyGroup(kg, append(slices.Clone(b), 0)); err == nil {
				t.Error("restoring a key group with trailing bytes succeeded")
			}
			break
		}
	}
}

// lenOf returns the number of entries of key group kg of tbl, by dropping
// and restoring it.
func lenOf(t *testing.T, tbl state.ObjectTable, kg int) int {
	t.Helper()
	blob := tbl.AppendKeyGroup(nil, kg)
	before := tbl.Len()
	tbl.DropKeyGroup(kg)
	n := before - tbl.Len()
	mustNoErr(t, tbl.RestoreKeyGroup(kg, blob))
	return n
}

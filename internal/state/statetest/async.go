package statetest

import (
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/eddystream/eddy/internal/state"
)

// asyncDeclared is the state of the asynchronous snapshot test: the snapshot
// test's, a list with a TTL, and timers.
type asyncDeclared struct {
	*declared
	tl     *state.ListHandle[string, state.VoidNamespace, string]
	timers *state.TimerService[string, state.VoidNamespace]
}

func declareAsync(t *testing.T, e *env) *asyncDeclared {
	d := &asyncDeclared{declared: declare(t, e)}
	var err error
	d.tl, err = state.NewListHandle[string, state.VoidNamespace, string](e.s, nil, nil, "tl", nil, ttl10)
	mustNoErr(t, err)
	d.timers = state.NewTimerService[string, state.VoidNamespace](e.b.KeyGroups(), nil, nil)
	mustNoErr(t, e.b.(state.ObjectBackend).RegisterTable("timers", d.timers))
	return d
}

func (d *asyncDeclared) fill(e *env, keys []string, round int) {
	// Change values in place, as operators do, before replacing them.
	for _, k := range keys {
		e.key(k)
		if v, ok := d.v.Value(); ok {
			v.Tags[k] += round
			d.v.Update(v)
		}
	}
	d.declared.fill(e, keys)
	for i, k := range keys {
		e.key(k)
		v, _ := d.v.Value()
		v.Tags["round"] = round
		d.tl.Add(k)
		d.timers.RegisterEventTime(e.kc.KG, k, state.VoidNamespace{}, int64(round*100+i%10))
	}
}

type asyncDump struct {
	dump
	TL []string
}

func (d *asyncDeclared) dump(e *env, k string) asyncDump {
	out := asyncDump{dump: d.declared.dump(e, k)}
	e.key(k)
	out.TL = d.tl.Get()
	return out
}

// testAsyncSnapshot snapshots every table of an object backend with
// BeginSnapshot and encodes it on another goroutine while the handles go on
// changing the state. The snapshot must restore the state at BeginSnapshot,
// and the state must end as it does without the snapshot.
func testAsyncSnapshot(t *testing.T, nb NewBackend) {
	e := newEnv(t, nb, all)
	ob, ok := e.b.(state.ObjectBackend)
	if !ok {
		t.Skip("not an ObjectBackend: snapshots are the backend's own")
	}
	d := declareAsync(t, e)
	ref := newEnv(t, nb, all) // sees the same changes, without snapshots
	dr := declareAsync(t, ref)
	keys := keysIn(all, 60)
	rev := slices.Clone(keys)
	slices.Reverse(rev)
	d.fill(e, keys, 0)
	dr.fill(ref, keys, 0)
	before := map[string]asyncDump{}
	for _, k := range keys {
		before[k] = d.dump(e, k)
	}
	beforeNow := e.now

	names := ob.Tables()
	encoders := make([]func([]byte, int) []byte, len(names))
	releases := make([]func(), len(names))
	for i, name := range names {
		tbl, _ := ob.Table(name)
		as, ok := tbl.(state.AsyncSnapshotter)
		if !ok {
			t.Fatalf("table %s (%T) is not an AsyncSnapshotter", name, tbl)
		}
		encoders[i], releases[i] = as.BeginSnapshot()
	}
	half := make(chan struct{})
	done := make(chan map[string][][]byte)
	go func() {
		blobs := map[string][][]byte{}
		// In reverse: "v", changed in place in round 1, first.
		for j := range names {
			i := len(names) - 1 - j
			name := names[i]
			if j == len(names)/2 {
				<-half
			}
			for kg := range maxP {
				blobs[name] = append(blobs[name], encoders[i](nil, kg))
				runtime.Gosched()
			}
		}
		for _, release := range releases {
			release()
		}
		done <- blobs
	}()
	// Change everything, let the TTL list expire and clean it up, while the
	// snapshot is encoded, and once more after.
	change := func(round int) {
		ks := keys
		if round%2 == 1 {
			ks = rev
		}
		d.fill(e, ks, round)
		dr.fill(ref, ks, round)
		if round%3 == 2 {
			e.now += 10
			ref.now += 10
			e.s.CleanupExpired(1 << 20)
			ref.s.CleanupExpired(1 << 20)
		}
		fire := func(kg int, k string, _ state.VoidNamespace, ts int64) error { return nil }
		mustNoErr(t, d.timers.AdvanceWatermark(int64(round*100+5), fire))
		mustNoErr(t, dr.timers.AdvanceWatermark(int64(round*100+5), fire))
	}
	var blobs map[string][][]byte
	round := 1
	for ; blobs == nil || round < 4; round++ {
		change(round)
		if round == 2 {
			close(half)
		}
		if round > 2 && blobs == nil {
			select {
			case blobs = <-done:
			default:
			}
		}
	}
	change(round)
	for _, name := range names {
		if s, ok := mustTable(t, ob, name).(state.Settler); ok {
			s.Settle()
		}
	}
	for _, k := range keys {
		if got, want := d.dump(e, k), dr.dump(ref, k); !reflect.DeepEqual(got, want) {
			t.Errorf("key %s after the snapshot:\n%+v\nwant\n%+v", k, got, want)
		}
	}
	for _, name := range names {
		if got, want := mustTable(t, ob, name).Len(), mustTable(t, ref.b.(state.ObjectBackend), name).Len(); got != want {
			t.Errorf("table %s: Len = %d, want %d", name, got, want)
		}
	}

	e2 := newEnv(t, nb, all)
	e2.now = beforeNow
	d2 := declareAsync(t, e2)
	ob2 := e2.b.(state.ObjectBackend)
	for _, name := range names {
		tbl := mustTable(t, ob2, name)
		for kg := range maxP {
			mustNoErr(t, tbl.RestoreKeyGroup(kg, blobs[name][kg]))
		}
	}
	for _, k := range keys {
		if got := d2.dump(e2, k); !reflect.DeepEqual(got, before[k]) {
			t.Errorf("key %s restored from the snapshot:\n%+v\nwant\n%+v", k, got, before[k])
		}
	}
	if got, want := d2.timers.Len(), len(keys); got != want {
		t.Errorf("restored %d timers, want %d", got, want)
	}
}

func mustTable(t *testing.T, b state.ObjectBackend, name string) state.ObjectTable {
	t.Helper()
	tbl, ok := b.Table(name)
	if !ok {
		t.Fatalf("no table %s", name)
	}
	return tbl
}

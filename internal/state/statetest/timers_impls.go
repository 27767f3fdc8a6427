package statetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/kv"
)

// testTimerImpls runs the conformance tests of state.Timers on the heap
// TimerService and, if the backend under test is a BytesBackend, on
// kv.Timers stored in it.
func testTimerImpls(t *testing.T, nb NewBackend) {
	t.Run("TimerService", func(t *testing.T) {
		b := nb(t, all, maxP)
		defer b.Close()
		testTimersConformance(t, func() state.Timers[string, int64] {
			return state.NewTimerService[string, int64](b.KeyGroups(), nil, nil)
		}, true)
	})
	b := nb(t, all, maxP)
	defer b.Close()
	bb, ok := b.(state.BytesBackend)
	if !ok {
		return
	}
	n := 0
	newBytes := func() *kv.Timers[string, int64] {
		n++
		ts, err := state.NewBytesTimers[string, int64](bb, "timers-"+string(rune('a'+n)), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	t.Run("BytesTimers", func(t *testing.T) {
		testTimersConformance(t, func() state.Timers[string, int64] { return newBytes() }, false)
	})
	t.Run("BytesTimersLazy", func(t *testing.T) { testBytesTimersLazy(t, bb, newBytes) })
	t.Run("BytesTimersFlushDuringFire", func(t *testing.T) { testBytesTimersFlushDuringFire(t, bb, newBytes) })
	t.Run("TimestampOrderAcrossKeyGroups", func(t *testing.T) { testTimestampOrderAcrossKeyGroups(t, newBytes()) })
	t.Run("BytesTimersHeldBack", func(t *testing.T) { testBytesTimersHeldBack(t, newBytes()) })
	t.Run("BytesTimersKind", func(t *testing.T) {
		if _, err := state.NewBytesTimers[int64, int64](bb, "timers-b", nil, nil); !errors.Is(err, state.ErrIncompatibleTable) {
			t.Errorf("timers redeclared with other types: err = %v", err)
		}
	})
}

// testTimestampOrderAcrossKeyGroups checks that timers of many keys, and so
// of many key groups, fire in timestamp order in one advance.
func testTimestampOrderAcrossKeyGroups(t *testing.T, ts state.Timers[string, int64]) {
	for i := range 200 {
		k := string(rune('a'+i%26)) + string(rune('a'+i/26))
		ts.RegisterEventTime(kgOfString(k), k, 0, int64((i*37)%101))
	}
	var last int64 = -1
	n := 0
	mustNoErr(t, ts.AdvanceWatermark(1000, func(_ int, k string, _ int64, at int64) error {
		if at < last {
			t.Errorf("timer of %s at %d fired after one at %d", k, at, last)
		}
		last = at
		n++
		return nil
	}))
	if n != 200 {
		t.Errorf("fired %d timers, want 200", n)
	}
}

// testTimersConformance checks the behaviour every state.Timers shares.
// regOrder says that timers of equal timestamps fire in registration order
// (TimerService) rather than in key order within a key group (kv.Timers).
func testTimersConformance(t *testing.T, newTimers func() state.Timers[string, int64], regOrder bool) {
	ts := newTimers()
	var fired []firing
	record := func(kg int, k string, n int64, at int64) error {
		fired = append(fired, firing{kg, k, n, at})
		return nil
	}
	reg := func(k string, n, at int64) { ts.RegisterEventTime(kgOfString(k), k, n, at) }
	if _, ok := ts.NextEventTime(); ok {
		t.Error("NextEventTime of no timers")
	}
	reg("b", 0, 5)
	reg("c", 0, 3)
	reg("a", 0, 3)
	reg("a", 0, 3) // duplicate
	reg("a", 1, 3)
	reg("d", 0, 7)
	reg("e", 0, 9)
	ts.DeleteEventTime(kgOfString("e"), "e", 0, 9)
	ts.DeleteEventTime(kgOfString("e"), "e", 0, 99) // absent
	if ts.Len() != 5 {
		t.Errorf("Len = %d, want 5", ts.Len())
	}
	if next, ok := ts.NextEventTime(); !ok || next != 3 {
		t.Errorf("NextEventTime = %d, %v; want 3", next, ok)
	}
	mustNoErr(t, ts.AdvanceWatermark(4, record))
	got := firings(fired)
	if regOrder {
		if want := "c/0@3 a/0@3 a/1@3"; got != want {
			t.Errorf("fired %s, want %s", got, want)
		}
	} else {
		// Key order within a key group: a/0 before a/1 wherever c goes.
		if len(fired) != 3 || !slices.Contains(fired, firing{kgOfString("c"), "c", 0, 3}) ||
			slices.Index(fired, firing{kgOfString("a"), "a", 0, 3}) > slices.Index(fired, firing{kgOfString("a"), "a", 1, 3}) ||
			slices.Index(fired, firing{kgOfString("a"), "a", 0, 3}) < 0 {
			t.Errorf("fired %s, want c/0@3, a/0@3 and then a/1@3", got)
		}
	}
	for _, f := range fired {
		if f.kg != kgOfString(f.k) {
			t.Errorf("timer %v fired with key group %d", f, f.kg)
		}
	}
	if next, ok := ts.NextEventTime(); !ok || next != 5 {
		t.Errorf("NextEventTime = %d, %v; want 5", next, ok)
	}

	// fire may register timers; those at or before the watermark fire now.
	fired = nil
	mustNoErr(t, ts.AdvanceWatermark(7, func(kg int, k string, n, at int64) error {
		if k == "b" && n == 0 {
			ts.RegisterEventTime(kg, "b", 1, 6)
			ts.RegisterEventTime(kg, "b", 2, 20)
			ts.DeleteEventTime(kgOfString("d"), "d", 0, 7)
			ts.RegisterEventTime(kgOfString("d"), "d", 0, 7)
		}
		return record(kg, k, n, at)
	}))
	if got, want := firings(fired), "b/0@5 b/1@6 d/0@7"; got != want {
		t.Errorf("fired %s, want %s", got, want)
	}
	if ts.Len() != 1 {
		t.Errorf("Len = %d, want 1", ts.Len())
	}

	fired = nil
	mustNoErr(t, ts.AdvanceWatermark(20, record))
	if got, want := firings(fired), "b/2@20"; got != want {
		t.Errorf("fired %s, want %s", got, want)
	}

	// Timestamp order, negative timestamps included, within one key, and
	// across key groups with one timer each.
	for _, at := range []int64{40, -3, 25, -1 << 40, 33} {
		reg("k", 0, at)
	}
	fired = nil
	mustNoErr(t, ts.AdvanceWatermark(50, record))
	if got, want := firings(fired), "k/0@-1099511627776 k/0@-3 k/0@25 k/0@33 k/0@40"; got != want {
		t.Errorf("fired %s\nwant  %s", got, want)
	}
	var spread []string // keys of distinct key groups
	used := map[int]bool{}
	for i := 0; len(spread) < 5 && i < 1000; i++ {
		k := string(rune('A'+i%26)) + string(rune('A'+i/26))
		if kg := kgOfString(k); !used[kg] {
			used[kg] = true
			spread = append(spread, k)
		}
	}
	var want []firing
	for i, k := range spread {
		reg(k, 0, 100-int64(i))
		want = append(want, firing{kgOfString(k), k, 0, 100 - int64(i)})
	}
	slices.Reverse(want)
	fired = nil
	mustNoErr(t, ts.AdvanceWatermark(100, record))
	if got, want := firings(fired), firings(want); got != want {
		t.Errorf("fired %s\nwant  %s", got, want)
	}

	// A timer deleted by an earlier firing of the same advance does not fire;
	// one deleted and registered again fires once.
	kk := kgOfString("k")
	ts.RegisterEventTime(kk, "k", 1, 200)
	ts.RegisterEventTime(kk, "k", 2, 201)
	ts.RegisterEventTime(kk, "k", 3, 202)
	fired = nil
	mustNoErr(t, ts.AdvanceWatermark(300, func(kg int, k string, n, at int64) error {
		if n == 1 {
			ts.DeleteEventTime(kk, "k", 2, 201)
			ts.DeleteEventTime(kk, "k", 3, 202)
			ts.RegisterEventTime(kk, "k", 3, 202)
			ts.RegisterEventTime(kk, "k", 1, 200) // fired: registered anew, fires again
			ts.DeleteEventTime(kk, "k", 1, 200)   // and deleted again
		}
		return record(kg, k, n, at)
	}))
	if got, want := firings(fired), "k/1@200 k/3@202"; got != want {
		t.Errorf("fired %s, want %s", got, want)
	}
	if ts.Len() != 0 {
		t.Errorf("Len = %d, want 0", ts.Len())
	}

	// Heads: deleting the earliest timer uncovers the next one.
	ts.RegisterEventTime(kk, "k", 0, 10)
	ts.RegisterEventTime(kk, "k", 0, 20)
	ts.RegisterEventTime(kk, "k", 1, 10)
	if next, _ := ts.NextEventTime(); next != 10 {
		t.Errorf("NextEventTime = %d, want 10", next)
	}
	ts.DeleteEventTime(kk, "k", 0, 10)
	if next, _ := ts.NextEventTime(); next != 10 {
		t.Errorf("NextEventTime = %d, want 10 after deleting one of two", next)
	}
	ts.DeleteEventTime(kk, "k", 1, 10)
	if next, _ := ts.NextEventTime(); next != 20 {
		t.Errorf("NextEventTime = %d, want 20", next)
	}
	ts.RegisterEventTime(kk, "k", 0, 15)
	if next, _ := ts.NextEventTime(); next != 15 {
		t.Errorf("NextEventTime = %d, want 15", next)
	}
	ts.DeleteEventTime(kk, "k", 0, 15)
	ts.DeleteEventTime(kk, "k", 0, 20)
	if next, ok := ts.NextEventTime(); ok {
		t.Errorf("NextEventTime = %d with no timers", next)
	}

	// An error from fire stops the advance and is returned.
	reg("x", 0, 30)
	reg("y", 0, 31)
	boom := errors.New("boom")
	fired = nil
	err := ts.AdvanceWatermark(40, func(kg int, k string, n, at int64) error {
		_ = record(kg, k, n, at)
		return boom
	})
	if !errors.Is(err, boom) || firings(fired) != "x/0@30" {
		t.Errorf("AdvanceWatermark returned %v after firing %s, want boom after x/0@30", err, firings(fired))
	}
	if ts.Len() != 1 {
		t.Errorf("Len = %d after the error, want 1", ts.Len())
	}

	// Processing time is apart from event time.
	if _, ok := ts.NextProcessingTime(); ok {
		t.Error("NextProcessingTime with no processing-time timers")
	}
	pkg := kgOfString("p")
	ts.RegisterProcessingTime(pkg, "p", 0, 100)
	ts.RegisterProcessingTime(pkg, "p", 0, 50)
	ts.RegisterProcessingTime(pkg, "p", 1, 50)
	ts.DeleteProcessingTime(pkg, "p", 0, 50)
	if next, ok := ts.NextProcessingTime(); !ok || next != 50 {
		t.Errorf("NextProcessingTime = %d, %v; want 50", next, ok)
	}
	if next, _ := ts.NextEventTime(); next != 31 {
		t.Errorf("NextEventTime = %d, want 31", next)
	}
	fired = nil
	mustNoErr(t, ts.AdvanceProcessingTime(99, record))
	if got, want := firings(fired), "p/1@50"; got != want {
		t.Errorf("processing time fired %s, want %s", got, want)
	}
	if next, _ := ts.NextProcessingTime(); next != 100 {
		t.Errorf("NextProcessingTime = %d, want 100", next)
	}
	fired = nil
	mustNoErr(t, ts.AdvanceWatermark(1000, record))
	if got := firings(fired); got != "y/0@31" {
		t.Errorf("fired %s, want y/0@31", got)
	}
	fired = nil
	mustNoErr(t, ts.AdvanceProcessingTime(1000, record))
	if got := firings(fired); got != "p/0@100" || ts.Len() != 0 {
		t.Errorf("fired %s, Len %d", got, ts.Len())
	}

	// Many timers in one key group: more than one batch of kv.Timers.
	for i := range int64(3000) {
		ts.RegisterEventTime(kk, "k", i%7, 5000+i)
	}
	fired = nil
	mustNoErr(t, ts.AdvanceWatermark(1<<40, record))
	if len(fired) != 3000 || !slices.IsSortedFunc(fired, func(a, b firing) int { return int(a.ts - b.ts) }) || ts.Len() != 0 {
		t.Errorf("fired %d timers (sorted: %v), Len %d", len(fired), slices.IsSortedFunc(fired, func(a, b firing) int { return int(a.ts - b.ts) }), ts.Len())
	}
}

// testBytesTimersLazy checks that kv.Timers read what the backend holds
// when they need it: a service made before a restore sees the restored
// timers.
func testBytesTimersLazy(t *testing.T, b state.BytesBackend, newBytes func() *kv.Timers[string, int64]) {
	early := newBytes() // made before the "restore"
	// The restore writes the same table through another service: simulate it
	// with a second service of the same name.
	writer := sameTable(t, b, early)
	keys := keysIn(all, 20)
	for i, k := range keys {
		writer.RegisterEventTime(kgOfString(k), k, 0, int64(100-i))
		writer.RegisterProcessingTime(kgOfString(k), k, 0, int64(1000+i))
	}
	if next, ok := early.NextEventTime(); !ok || next != int64(100-len(keys)+1) {
		t.Errorf("NextEventTime = %d, %v after restore; want %d", next, ok, 100-len(keys)+1)
	}
	if next, ok := early.NextProcessingTime(); !ok || next != 1000 {
		t.Errorf("NextProcessingTime = %d, %v after restore; want 1000", next, ok)
	}
	if early.Len() != 2*len(keys) {
		t.Errorf("Len = %d, want %d", early.Len(), 2*len(keys))
	}
	// Drop a key group behind its back, as a rescale does, then Invalidate.
	kg := kgOfString(keys[len(keys)-1])
	dropped := 0
	for _, k := range keys {
		if kgOfString(k) == kg {
			dropped++
		}
	}
	b.DeletePrefix([]byte{byte(kg >> 8), byte(kg)})
	if _, ok := b.(kv.CacheHost); !ok {
		early.Invalidate(nil) // a CacheHost tells it
	}
	if early.Len() != 2*(len(keys)-dropped) {
		t.Errorf("Len = %d after drop, want %d", early.Len(), 2*(len(keys)-dropped))
	}
	var fired []firing
	mustNoErr(t, early.AdvanceWatermark(1<<40, func(kg int, k string, n, at int64) error {
		fired = append(fired, firing{kg, k, n, at})
		return nil
	}))
	if len(fired) != len(keys)-dropped {
		t.Errorf("fired %d timers, want %d", len(fired), len(keys)-dropped)
	}
	for _, f := range fired {
		if f.kg == kg {
			t.Errorf("dropped timer %v fired", f)
		}
	}
	if _, ok := writer.NextEventTime(); ok {
		// writer's heads were loaded before early fired: stale by design
		// until invalidated.
		writer.Invalidate(nil)
		if next, ok := writer.NextEventTime(); ok {
			t.Errorf("NextEventTime = %d after all fired", next)
		}
	}
}

// testBytesTimersFlushDuringFire fires timers whose writes were held back
// while fire makes the host flush them (as a scan of other state does): the
// fired timers must be gone from the backend, not only from the buffer, or
// a service reading the table later (after a restore) fires them again.
func testBytesTimersFlushDuringFire(t *testing.T, b state.BytesBackend, newBytes func() *kv.Timers[string, int64]) {
	ts := newBytes()
	keys := keysIn(all, 50)
	for i, k := range keys {
		ts.RegisterEventTime(kgOfString(k), k, int64(i), 10)
	}
	n := 0
	mustNoErr(t, ts.AdvanceWatermark(100, func(int, string, int64, int64) error {
		n++
		b.Scan(nil, func(_, _ []byte) bool { return false }) // flushes every cache of a CacheHost
		return nil
	}))
	if n != len(keys) {
		t.Fatalf("fired %d timers, want %d", n, len(keys))
	}
	b.Scan(nil, func(_, _ []byte) bool { return false })
	later := sameTable(t, b, ts)
	if next, ok := later.NextEventTime(); ok {
		t.Errorf("a service reading the table after all timers fired finds one at %d", next)
	}
}

// sameTable returns a second kv.Timers on the table of ts.
func sameTable(t *testing.T, b state.BytesBackend, ts *kv.Timers[string, int64]) *kv.Timers[string, int64] {
	t.Helper()
	w, err := state.NewBytesTimers[string, int64](b, ts.Name(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// testBytesTimersHeldBack mixes timers in the backend with timers whose
// writes a CacheHost's kv.Timers holds back, across more than one batch.
func testBytesTimersHeldBack(t *testing.T, ts *kv.Timers[string, int64]) {
	kk := kgOfString("k")
	for i := range int64(3000) {
		ts.RegisterEventTime(kk, "k", i%7, 5000+i)
	}
	if ts.Len() != 3000 { // Len writes everything to the backend
		t.Fatalf("Len = %d, want 3000", ts.Len())
	}
	for i := range int64(100) {
		ts.RegisterEventTime(kk, "k", 100+i, 5000+30*i)
		ts.DeleteEventTime(kk, "k", (30*i)%7, 5000+30*i)
	}
	ts.RegisterEventTime(kk, "k", 0, 5000) // deleted above, registered again
	if next, _ := ts.NextEventTime(); next != 5000 {
		t.Errorf("NextEventTime = %d, want 5000", next)
	}
	var fired []firing
	seen := map[firing]bool{}
	mustNoErr(t, ts.AdvanceWatermark(1<<40, func(kg int, k string, n, at int64) error {
		f := firing{kg, k, n, at}
		if seen[f] {
			t.Errorf("%v fired twice", f)
		}
		seen[f] = true
		fired = append(fired, f)
		return nil
	}))
	if want := 3000 + 100 - 100 + 1; len(fired) != want {
		t.Errorf("fired %d timers, want %d", len(fired), want)
	}
	if !slices.IsSortedFunc(fired, func(a, b firing) int { return int(a.ts - b.ts) }) {
		t.Error("timers fired out of timestamp order")
	}
	for i := range int64(100) {
		if i > 0 && seen[firing{kk, "k", (30 * i) % 7, 5000 + 30*i}] {
			t.Errorf("deleted timer at %d fired", 5000+30*i)
		}
	}
	if ts.Len() != 0 {
		t.Errorf("Len = %d, want 0", ts.Len())
	}
	if _, ok := ts.NextEventTime(); ok {
		t.Error("NextEventTime after all fired")
	}
}

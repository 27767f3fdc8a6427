package statetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state"
)

type firing struct {
	kg int
	k  string
	n  int64
	ts int64
}

func (f firing) String() string { return fmt.Sprintf("%s/%d@%d", f.k, f.n, f.ts) }

func firings(fs []firing) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = f.String()
	}
	return strings.Join(s, " ")
}

// testTimers runs timers with the key groups of the backend under test: the
// timer service keeps its own state, and is snapshotted with the tables.
func testTimers(t *testing.T, nb NewBackend) {
	b := nb(t, all, maxP)
	defer b.Close()
	ts := state.NewTimerService[string, int64](b.KeyGroups(), nil, nil)
	var fired []firing
	record := func(kg int, k string, n int64, at int64) error {
		fired = append(fired, firing{kg, k, n, at})
		return nil
	}
	reg := func(k string, n, at int64) { ts.RegisterEventTime(kgOfString(k), k, n, at) }
	reg("b", 0, 5)
	reg("a", 0, 3)
	reg("c", 0, 3)
	reg("a", 0, 3) // duplicate: no-op, keeps its place
	reg("a", 1, 3)
	reg("d", 0, 7)
	reg("e", 0, 9)
	ts.DeleteEventTime(kgOfString("e"), "e", 0, 9)
	ts.DeleteEventTime(kgOfString("e"), "e", 0, 99) // absent
	if ts.Len() != 5 {
		t.Errorf("Len = %d, want 5", ts.Len())
	}
	if next, ok := ts.NextEventTime(); !ok || next != 3 {
		t.Errorf("NextEventTime = %d, %v", next, ok)
	}
	mustNoErr(t, ts.AdvanceWatermark(4, record))
	if got, want := firings(fired), "a/0@3 c/0@3 a/1@3"; got != want {
		t.Errorf("fired %s, want %s (timestamp, then registration order)", got, want)
	}
	for _, f := range fired {
		if f.kg != kgOfString(f.k) {
			t.Errorf("timer %v fired with key group %d", f, f.kg)
		}
	}

	// fire may register timers; those at or before the watermark fire now.
	fired = nil
	mustNoErr(t, ts.AdvanceWatermark(7, func(kg int, k string, n, at int64) error {
		if k == "b" && n == 0 {
			ts.RegisterEventTime(kg, "b", 1, 6)  // at or before 7: fires in this call
			ts.RegisterEventTime(kg, "b", 2, 20) // later
			ts.DeleteEventTime(kgOfString("d"), "d", 0, 7)
			ts.RegisterEventTime(kgOfString("d"), "d", 0, 7) // re-registered: fires
		}
		return record(kg, k, n, at)
	}))
	if got, want := firings(fired), "b/0@5 b/1@6 d/0@7"; got != want {
		t.Errorf("fired %s, want %s", got, want)
	}
	if ts.Len() != 1 {
		t.Errorf("Len = %d, want 1", ts.Len())
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
	if !errors.Is(err, boom) || len(fired) != 1 {
		t.Errorf("AdvanceWatermark returned %v after %d firings, want boom after 1", err, len(fired))
	}

	// Processing time.
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
	fired = nil
	mustNoErr(t, ts.AdvanceProcessingTime(99, record))
	if got, want := firings(fired), "p/1@50"; got != want {
		t.Errorf("processing time fired %s, want %s", got, want)
	}
	if next, _ := ts.NextProcessingTime(); next != 100 {
		t.Errorf("NextProcessingTime = %d, want 100", next)
	}
	fired = nil
	mustNoErr(t, ts.AdvanceWatermark(1000, record)) // event time does not fire processing timers
	if got := firings(fired); got != "x/0@30 y/0@31" {
		t.Errorf("fired %s", got)
	}

	t.Run("Snapshot", func(t *testing.T) { testTimerSnapshot(t, nb) })
	t.Run("Compaction", func(t *testing.T) {
		ts := state.NewTimerService[string, int64](b.KeyGroups(), nil, nil)
		for i := range int64(1000) {
			reg := kgOfString("k")
			ts.RegisterEventTime(reg, "k", 0, 1000+i)
			ts.DeleteEventTime(reg, "k", 0, 1000+i)
		}
		ts.RegisterEventTime(kgOfString("k"), "k", 0, 5)
		fired = nil
		mustNoErr(t, ts.AdvanceWatermark(1<<40, record))
		if got := firings(fired); got != "k/0@5" || ts.Len() != 0 {
			t.Errorf("fired %s, Len %d", got, ts.Len())
		}
	})
}

func testTimerSnapshot(t *testing.T, nb NewBackend) {
	src := state.NewTimerService[string, int64](all, nil, nil)
	keys := keysIn(all, 30)
	for i, k := range keys {
		kg := kgOfString(k)
		src.RegisterEventTime(kg, k, int64(i%3), int64(i%4))
		src.RegisterProcessingTime(kg, k, 0, int64(100+i%5))
	}
	src.DeleteEventTime(kgOfString(keys[0]), keys[0], 0, 0)
	blobs := make([][]byte, maxP)
	for kg := range maxP {
		blobs[kg] = src.AppendKeyGroup(nil, kg)
		if again := src.AppendKeyGroup(nil, kg); !slices.Equal(again, blobs[kg]) {
			t.Errorf("key group %d: snapshot is not deterministic", kg)
		}
	}
	drain := func(s *state.TimerService[string, int64]) (ev, proc string) {
		var e, p []firing
		mustNoErr(t, s.AdvanceWatermark(1<<40, func(kg int, k string, n, at int64) error {
			e = append(e, firing{kg, k, n, at})
			return nil
		}))
		mustNoErr(t, s.AdvanceProcessingTime(1<<40, func(kg int, k string, n, at int64) error {
			p = append(p, firing{kg, k, n, at})
			return nil
		}))
		return firings(e), firings(p)
	}
	// Restore into two subtasks that split the key groups, and into one
	// that owns them all; firing order matches the original's.
	whole := state.NewTimerService[string, int64](all, nil, nil)
	for kg := range maxP {
		mustNoErr(t, whole.RestoreKeyGroup(kg, blobs[kg]))
	}
	if whole.Len() != src.Len() {
		t.Errorf("restored %d timers, had %d", whole.Len(), src.Len())
	}
	wantE, wantP := drain(src)
	gotE, gotP := drain(whole)
	if gotE != wantE || gotP != wantP {
		t.Errorf("restored timers fire\n%s\n%s\nwant\n%s\n%s", gotE, gotP, wantE, wantP)
	}
	half := state.NewTimerService[string, int64](state.KeyGroupRange{Start: 0, End: maxP / 2}, nil, nil)
	for kg := range maxP / 2 {
		mustNoErr(t, half.RestoreKeyGroup(kg, blobs[kg]))
	}
	half.DropKeyGroup(0)
	n := 0
	for _, k := range keys {
		if kg := kgOfString(k); kg > 0 && kg < maxP/2 {
			n += 2
			if k == keys[0] {
				n--
			}
		}
	}
	if half.Len() != n {
		t.Errorf("half restore holds %d timers, want %d", half.Len(), n)
	}
	if err := half.RestoreKeyGroup(1, blobs[1][:len(blobs[1])-1]); err == nil && len(blobs[1]) > 1 {
		t.Error("restoring a truncated snapshot succeeded")
	}
}

package statetest

import (
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

// testTimers runs what is particular to the heap TimerService, which keeps
// its own state and is snapshotted with the tables; testTimerImpls runs the
// behaviour every state.Timers shares.
func testTimers(t *testing.T, nb NewBackend) {
	b := nb(t, all, maxP)
	defer b.Close()
	var fired []firing
	record := func(kg int, k string, n int64, at int64) error {
		fired = append(fired, firing{kg, k, n, at})
		return nil
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

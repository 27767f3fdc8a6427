package ops

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops/opstest"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// TestRegularJoinDataDriven runs the scripts in jointestdata, which drive
// the regular join. They live apart from testdata and reltestdata, whose
// walkers know other commands. Rewrite the expected output with
//
//	go test ./internal/ops -run TestRegularJoinDataDriven -rewrite
//
// and read the diff: expected outputs are derived from the semantics, not
// from what the code prints.
//
// Commands:
//
//	new-join [kind=inner|left|right|full|semi|anti] [on=lt|ge] [unique=left|right|both]
//	         [insert-only=left|right|both] [expire=left|right|both] [expiry-step=MS]
//	         [ttl=MS] [unsorted]
//	input [batch]
//	rows KEY...
//	state
//	snapshot
//	restore
//
// on=lt joins rows of a key only if the left value is below the right one,
// on=ge only if it is at or above it. expire=left makes left rows expire
// (RegularJoinLogic.LeftExpiry) at their value: a left row v=10 is dropped
// once the watermark reaches 10; expire=right does the same for right
// rows. A key's timer is set at the earliest expiry of its rows rounded
// up to a multiple of expiry-step (1 unless given). state then counts the
// expiry timers too. snapshot takes a
// snapshot of the operator (as a checkpoint does); restore builds the
// operator of the last new-join again from it, on a fresh harness (whose
// watermark is the initial one again).
// unique declares inputs unique on the join key; insert-only says that
// inputs are insert-only. A record line is "left|right KEY TS v=V [KIND]",
// a change of kind KIND (+I when absent) of the row (KEY, V); result rows
// print as "KEY L|R", "-" for a missing side (a semi or anti join's
// results are left rows: "KEY L|-"). Within one step, changes print
// sorted (the rows of a key are visited in no particular order), unless
// unsorted keeps their order (for updates, -U then +U). rows
// prints, for each key, the rows each side keeps in state, as
// "KEY: left [V×N ...] right [...]" (×N for a row kept N times, and its
// number of matches where the join keeps it). After an input, a line
// "retractions-without-state N" reports a change of that count.
func TestRegularJoinDataDriven(t *testing.T) {
	datadriven.Walk(t, "jointestdata", func(t *testing.T, path string) {
		var h *opstest.Harness
		var j *RegularJoin[string, opstest.Record, opstest.Record, string]
		var created *datadriven.TestData
		var snap *runtime.OperatorSnapshot
		absent := int64(0)
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "new-join", "restore":
				if td.Cmd == "new-join" {
					// The walker reuses td for the next directives.
					c := *td
					created, snap = &c, nil
				} else if snap == nil {
					td.Fatalf(t, "restore before snapshot")
				}
				var err error
				if h, j, err = newJoinScriptHarness(created, snap); err != nil {
					return "error: " + err.Error() + "\n"
				}
				absent = 0
				return "ok\n"
			}
			if h == nil {
				td.Fatalf(t, "%s before new-join", td.Cmd)
			}
			switch td.Cmd {
			case "input":
				out := h.Run(td.Input, td.HasArg("batch"))
				if n := h.Context().Metrics.RetractionsWithoutState.Load(); n != absent {
					absent = n
					out = strings.TrimSuffix(out, "ok\n") + fmt.Sprintf("retractions-without-state %d\n", n)
				}
				return out
			case "state":
				return h.State() + "\n"
			case "snapshot":
				encode, err := j.SnapshotStateAsync(1)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				if snap, err = encode(); err != nil {
					return "error: " + err.Error() + "\n"
				}
				return "ok\n"
			case "rows":
				var out strings.Builder
				for _, arg := range td.CmdArgs {
					fmt.Fprintf(&out, "%s: %s\n", arg.Key, j.rowsOf(arg.Key))
				}
				return out.String()
			}
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		})
	})
}

func newJoinScriptHarness(td *datadriven.TestData, restored *runtime.OperatorSnapshot) (*opstest.Harness, *RegularJoin[string, opstest.Record, opstest.Record, string], error) {
	a := argsOf(td)
	for k := range a {
		switch k {
		case "kind", "on", "unique", "insert-only", "expire", "expiry-step", "ttl", "unsorted":
		default:
			return nil, nil, fmt.Errorf("unknown argument %q", k)
		}
	}
	logic := RegularJoinLogic[opstest.Record, opstest.Record, string]{Output: joinPair}
	switch a["kind"] {
	case "", "inner":
	case "left":
		logic.LeftOuter = true
	case "right":
		logic.RightOuter = true
	case "full":
		logic.LeftOuter, logic.RightOuter = true, true
	case "semi":
		logic.Semi = true
	case "anti":
		logic.Anti = true
	default:
		return nil, nil, fmt.Errorf("kind=%s: want inner, left, right, full, semi or anti", a["kind"])
	}
	switch a["on"] {
	case "":
	case "lt":
		logic.On = func(l, r opstest.Record) bool { return l.Val < r.Val }
	case "ge":
		logic.On = func(l, r opstest.Record) bool { return l.Val >= r.Val }
	default:
		return nil, nil, fmt.Errorf("on=%s: want lt or ge", a["on"])
	}
	sides := func(key string) (left, right bool, err error) {
		switch a[key] {
		case "":
			return false, false, nil
		case "left":
			return true, false, nil
		case "right":
			return false, true, nil
		case "both":
			return true, true, nil
		}
		return false, false, fmt.Errorf("%s=%s: want left, right or both", key, a[key])
	}
	var err error
	if logic.LeftUnique, logic.RightUnique, err = sides("unique"); err != nil {
		return nil, nil, err
	}
	if logic.LeftInsertOnly, logic.RightInsertOnly, err = sides("insert-only"); err != nil {
		return nil, nil, err
	}
	expireLeft, expireRight, err := sides("expire")
	if err != nil {
		return nil, nil, err
	}
	if expireLeft {
		logic.LeftExpiry = func(r opstest.Record) int64 { return r.Val }
	}
	if expireRight {
		logic.RightExpiry = func(r opstest.Record) int64 { return r.Val }
	}
	ms, err := a.int("ttl", 0)
	if err != nil {
		return nil, nil, err
	}
	logic.TTL = time.Duration(ms) * time.Millisecond
	h := opstest.New("join")
	h.Context().Restored = restored
	h.SortTies = !a.has("unsorted")
	opstest.Output[changelog.Change[string]](h, "", nil)
	spec := EitherKeySpec(joinRecordKey(), joinRecordKey())
	j, err := NewRegularJoin(h.Context(), spec, h.Backend, logic, h.Outputs())
	if err != nil {
		return nil, nil, err
	}
	if err := h.Start(joinChangeInputs(TwoInputs(j))); err != nil {
		return nil, nil, err
	}
	if j.timers != nil {
		h.Timers = func() int { return j.timers.Len() + j.liveExpiryTimers() }
	}
	if j.expiryStep, err = a.int("expiry-step", 1); err != nil || j.expiryStep <= 0 {
		return nil, nil, fmt.Errorf("expiry-step=%s: want a positive number of ms", a["expiry-step"])
	}
	return h, j, nil
}

// rowsOf renders the rows both sides keep in the state of key.
func (j *RegularJoin[K, A, B, O]) rowsOf(key K) string {
	j.setKeyGroup(state.KeyGroupOf(j.spec.Hash(key), j.maxP), key)
	if j.unique != nil {
		j.unique.load()
	} else {
		j.loadKey()
		defer j.releaseKey()
	}
	return "left " + renderRows(j.left.set.all()) + " right " + renderRows(j.right.set.all())
}

// renderRows renders the rows of one side of a key's state, by value.
func renderRows[X comparable](rows []sideRow[X]) string {
	var parts []string
	for _, r := range rows {
		v := any(r.row)
		if rec, ok := v.(opstest.Record); ok {
			v = rec.Val
		}
		p := fmt.Sprint(v)
		if r.st.N != 1 {
			p += fmt.Sprintf("×%d", r.st.N)
		}
		if r.st.Matches != 0 {
			p += fmt.Sprintf(" (%d matches)", r.st.Matches)
		}
		parts = append(parts, p)
	}
	slices.Sort(parts)
	return "[" + strings.Join(parts, ", ") + "]"
}

// liveExpiryTimers counts the timers of the expiry index that are the
// timers of their keys, once each.
func (j *RegularJoin[K, A, B, O]) liveExpiryTimers() int {
	live := make(map[expiryKey[K]]int64)
	for at, b := range j.expiry.buckets {
		for _, e := range b.keys {
			j.setKey(e.kg, e.k)
			if j.loadKey() && j.cur.hasTimer && j.cur.timer == at {
				live[e] = at
			}
			j.releaseKey()
		}
	}
	return len(live)
}

package plan

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/state/codec"
	"github.com/eddystream/eddy/sql/types"
)

// TestWindowDistinctAccumulators checks the accumulators of DISTINCT calls
// in window aggregations: Add and Merge leave the accumulators they read
// as they were (a pane is merged into every window it is in, and a
// snapshot may hold it), a merge counts a value of both sides once, and an
// accumulator encoded and decoded by the state's codec (a checkpoint)
// goes on counting where it was.
func TestWindowDistinctAccumulators(t *testing.T) {
	pre := types.MustRowType(types.F("x", types.BigInt()), types.F("s", types.String()), types.F("f", types.Boolean()))
	calls := []*aggCall{
		{Name: "COUNT", Distinct: true, Arg: 0, Filter: -1, ArgType: types.BigInt(), T: types.BigInt().NotNull(), text: "COUNT(DISTINCT x)"},
		{Name: "SUM", Distinct: true, Arg: 0, Filter: 2, ArgType: types.BigInt(), T: types.BigInt(), text: "SUM(DISTINCT x) FILTER (WHERE f)"},
		{Name: "COUNT", Distinct: true, Arg: 1, Filter: -1, ArgType: types.String(), T: types.BigInt().NotNull(), text: "COUNT(DISTINCT s)"},
		{Name: "COUNT", Star: true, Arg: -1, Filter: -1, T: types.BigInt().NotNull(), text: "COUNT(*)"},
	}
	f, err := newSQLAgg(calls, pre, false)
	if err != nil {
		t.Fatal(err)
	}
	a := newWindowDistinctAgg(f)
	w := types.NewRowWriter(pre, types.NewArena(0))
	row := func(x int64, s string, filter bool) Rec {
		w.Reset()
		if x < 0 {
			w.SetNull(0)
		} else {
			w.SetInt64(0, x)
		}
		w.SetString(1, s)
		w.SetBool(2, filter)
		return changelog.InsertOf(w.Finish())
	}
	result := func(acc windowAcc) string {
		return types.FormatRow(f.rt, types.NewKeyEncoder(f.rt, seq(f.rt.Len())...).KeyRow(a.Result(acc)))
	}
	add := func(acc windowAcc, rows ...Rec) windowAcc {
		for _, r := range rows {
			acc = a.AddInPlace(acc, r, nil, 0)
		}
		return acc
	}

	// Two panes sharing the values 2 and "b"; NULL is not counted.
	p1 := add(a.Create(), row(1, "a", true), row(2, "b", false), row(2, "b", true), row(-1, "a", true))
	p2 := add(a.Create(), row(2, "b", true), row(3, "c", true), row(3, "c", false))
	if got, want := result(p1), "+I[2, 3, 2, 4]"; got != want {
		t.Fatalf("pane 1: %s, want %s", got, want)
	}
	// A window over both panes, as the window operator merges them: the
	// panes stay as they were.
	merge := func(accs ...windowAcc) windowAcc {
		acc := a.Create()
		for _, x := range accs {
			acc = a.Merge(acc, x)
		}
		return acc
	}
	if got, want := result(merge(p1, p2)), "+I[3, 6, 3, 7]"; got != want {
		t.Fatalf("panes 1 and 2: %s, want %s", got, want)
	}
	if got, want := result(merge(p2, p1)), "+I[3, 6, 3, 7]"; got != want {
		t.Fatalf("panes 2 and 1: %s, want %s", got, want)
	}
	if got, want := result(p1), "+I[2, 3, 2, 4]"; got != want {
		t.Fatalf("pane 1 after the merges: %s, want %s", got, want)
	}
	if got, want := result(p2), "+I[2, 5, 2, 3]"; got != want {
		t.Fatalf("pane 2 after the merges: %s, want %s", got, want)
	}
	// Add leaves the accumulator it reads as it was.
	if got, want := result(a.Add(p2, row(9, "z", true))), "+I[3, 14, 3, 4]"; got != want {
		t.Fatalf("pane 2 with 9: %s, want %s", got, want)
	}
	if got, want := result(p2), "+I[2, 5, 2, 3]"; got != want {
		t.Fatalf("pane 2 after Add: %s, want %s", got, want)
	}
	// Panes made by Add (whose sets are copies it owns) merged as the
	// window operator merges them stay as they were too.
	q1 := a.Add(a.Create(), row(1, "a", true))
	q2 := a.Add(a.Create(), row(3, "c", true))
	if got, want := result(merge(q1, q2)), "+I[2, 4, 2, 2]"; got != want {
		t.Fatalf("panes made by Add: %s, want %s", got, want)
	}
	if got, want := result(merge(q1, q2)), "+I[2, 4, 2, 2]"; got != want {
		t.Fatalf("panes made by Add, merged again (the first merge changed a pane): %s, want %s", got, want)
	}

	// A session (the merge of others, whose sets it owns), encoded and
	// decoded (checkpointed and restored), goes on from where it was.
	c, err := codec.Default[windowAcc]()
	if err != nil {
		t.Fatal(err)
	}
	session := merge(merge(p1), p2)
	restored, _, err := c.Decode(c.Append(nil, session))
	if err != nil {
		t.Fatal(err)
	}
	for _, acc := range []windowAcc{session, restored} {
		acc = a.Merge(merge(acc), add(a.Create(), row(1, "a", true), row(4, "d", true)))
		if got, want := result(acc), "+I[4, 10, 4, 9]"; got != want {
			t.Fatalf("the session and 1, 4: %s, want %s", got, want)
		}
	}

	// Nothing is taken back.
	defer func() {
		if r := recover(); r == nil || fmt.Sprint(r) == "" {
			t.Fatal("RetractInPlace did not fail")
		}
	}()
	a.RetractInPlace(p1, row(1, "a", true), nil, 0)
}

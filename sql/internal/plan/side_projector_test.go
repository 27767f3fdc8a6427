package plan

import (
	"testing"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// TestSideProjectorMemo checks that the projection of a synchronous
// lookup source's result is computed once per result slice: the same
// slice gives the same rows, a new slice (the source changed the key's
// rows) is projected again, and a full memo starts afresh.
func TestSideProjectorMemo(t *testing.T) {
	in := types.MustRowType(types.F("k", types.BigInt()), types.F("v", types.String()))
	out := types.MustRowType(types.F("v", types.String()))
	p, err := newProjector(out, []expr.Expr{&expr.Column{Name: "v", Index: 1, T: types.String()}})
	if err != nil {
		t.Fatal(err)
	}
	sp := &sideProjector{projector: p}
	row := func(k int64, v string) types.Row {
		w := types.NewRowWriter(in, types.NewArena(0))
		w.SetInt64(0, k)
		w.SetString(1, v)
		return w.Finish()
	}
	old := []types.Row{row(1, "old"), row(1, "older")}
	a := sp.projectMemo(old)
	b := sp.projectMemo(old)
	if len(a) != 2 || a[0].String(0) != "old" || a[1].String(0) != "older" {
		t.Fatalf("projected %v", a)
	}
	if &a[0] != &b[0] {
		t.Error("the same result was projected twice")
	}
	fresh := []types.Row{row(1, "new")}
	if c := sp.projectMemo(fresh); len(c) != 1 || c[0].String(0) != "new" {
		t.Fatalf("a new result of the key projected to %v; want [new]", c)
	}
	if c := sp.projectMemo(old[:1]); len(c) != 1 || c[0].String(0) != "old" {
		t.Fatalf("a shorter result from the same row projected to %v; want [old]", c)
	}
	if c := sp.projectMemo(nil); c != nil {
		t.Fatalf("an empty result projected to %v", c)
	}
	for i := 0; i < maxSideMemo; i++ {
		sp.projectMemo([]types.Row{row(int64(i), "x")})
	}
	if n := len(sp.memo); n > maxSideMemo {
		t.Errorf("the memo holds %d results; at most %d", n, maxSideMemo)
	}
}

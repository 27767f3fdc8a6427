package plan

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/sql/types"
)

// mapViews are views in Go maps, for the tests of the functions that keep
// views (agg.Views, with the intMarker and restoredViews extensions).
type mapViews struct {
	ints     map[int]map[int64]int64
	strs     map[int]map[string]int64
	restored bool
	// retracts makes InsertOnly false: the input takes rows back.
	retracts bool
}

func newMapViews() *mapViews {
	return &mapViews{ints: map[int]map[int64]int64{}, strs: map[int]map[string]int64{}}
}

func (v *mapViews) InsertOnly() bool { return !v.retracts }
func (v *mapViews) Restored() bool   { return v.restored }

func (v *mapViews) Count(view int, value string) int64 { return v.strs[view][value] }
func (v *mapViews) CountInt(view int, value int64) int64 {
	return v.ints[view][value]
}

func (v *mapViews) Add(view int, value string, delta int64) (before, after int64) {
	return addCount(v.strs, view, value, delta)
}

func (v *mapViews) AddInt(view int, value int64, delta int64) (before, after int64) {
	return addCount(v.ints, view, value, delta)
}

// addCount adds delta to the count of value in view of views, never below
// zero, and returns the count before and after.
func addCount[K comparable](views map[int]map[K]int64, view int, value K, delta int64) (before, after int64) {
	if views[view] == nil {
		views[view] = map[K]int64{}
	}
	before = views[view][value]
	after = max(before+delta, 0)
	if after == 0 {
		delete(views[view], value)
	} else {
		views[view][value] = after
	}
	return before, after
}

func (v *mapViews) MarkInt(view int, value int64, bits int64) int64 {
	before := v.ints[view][value]
	if bits&^before != 0 {
		v.AddInt(view, value, bits&^before)
	}
	return before
}

func (v *mapViews) Range(view int, fn func(string, int64) bool) {
	var keys []string
	for k := range v.strs[view] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn(k, v.strs[view][k]) {
			return
		}
	}
}

func (v *mapViews) RangeInt(view int, fn func(int64, int64) bool) {
	var keys []int64
	for k := range v.ints[view] {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		if !fn(k, v.ints[view][k]) {
			return
		}
	}
}

// plainViews hides the extensions of mapViews: views that neither mark
// integers nor tell whether they were restored.
type plainViews struct{ agg.Views }

// TestSharedDistinctViewsRestoreOldLayout checks the views that DISTINCT
// calls of one argument share (the planner gives such calls one column of
// the pre-projection): a group aggregation restored from the views of a
// plan that gave every call a column, and so a view, of its own goes on
// counting each distinct value once per call, as the older plan and a run
// of the new one from the start do, and as a brute-force count says.
func TestSharedDistinctViewsRestoreOldLayout(t *testing.T) {
	type spec struct {
		name          string
		distinct      bool
		arg, filter   string // "" for none
		star          bool
		argT, resultT types.Type
	}
	bi := types.BigInt()
	specs := []spec{
		{name: "COUNT", star: true, resultT: bi.NotNull()},
		{name: "COUNT", distinct: true, arg: "b", argT: bi, resultT: bi.NotNull()},
		{name: "COUNT", distinct: true, arg: "b", filter: "lo", argT: bi, resultT: bi.NotNull()},
		{name: "MAX", arg: "p", argT: bi, resultT: bi},
		{name: "COUNT", distinct: true, arg: "b", filter: "hi", argT: bi, resultT: bi.NotNull()},
		{name: "COUNT", distinct: true, arg: "s", filter: "lo", argT: types.String(), resultT: bi.NotNull()},
		{name: "SUM", distinct: true, arg: "b", filter: "hi", argT: bi, resultT: bi},
		{name: "COUNT", distinct: true, arg: "s", argT: types.String(), resultT: bi.NotNull()},
		{name: "COUNT", distinct: true, arg: "a", filter: "lo", argT: bi, resultT: bi.NotNull()},
	}
	colType := map[string]types.Type{"b": bi, "a": bi, "s": types.String(), "p": bi, "lo": types.Boolean(), "hi": types.Boolean()}
	// build returns the function over a pre-projection that gives every
	// call's argument and filter a column of its own (shared false, as
	// older plans did) or one column per expression, and the names of the
	// columns.
	build := func(shared bool) (*sqlAgg, []string) {
		var cols []string
		col := func(name string) int {
			if shared {
				for i, c := range cols {
					if c == name {
						return i
					}
				}
			}
			cols = append(cols, name)
			return len(cols) - 1
		}
		var calls []*aggCall
		for _, s := range specs {
			c := &aggCall{Name: s.name, Star: s.star, Distinct: s.distinct, Arg: -1, Filter: -1, ArgType: s.argT, T: s.resultT, text: fmt.Sprintf("%s(%v %s) FILTER %s", s.name, s.distinct, s.arg, s.filter)}
			if s.arg != "" {
				c.Arg = col(s.arg)
			}
			if s.filter != "" {
				c.Filter = col(s.filter)
			}
			calls = append(calls, c)
		}
		fs := make([]types.Field, len(cols))
		for i, c := range cols {
			fs[i] = types.F(fmt.Sprintf("c%d", i), colType[c])
		}
		f, err := newSQLAgg(calls, types.MustRowType(fs...), false)
		if err != nil {
			t.Fatal(err)
		}
		return f, cols
	}
	type rec struct {
		b, a, p int64
		s       string
		nullB   bool
	}
	row := func(f *sqlAgg, cols []string, r rec) types.Row {
		w := types.NewRowWriter(f.pre, types.NewArena(0))
		for i, c := range cols {
			switch c {
			case "b":
				if r.nullB {
					w.SetNull(i)
				} else {
					w.SetInt64(i, r.b)
				}
			case "a":
				w.SetInt64(i, r.a)
			case "p":
				w.SetInt64(i, r.p)
			case "s":
				w.SetString(i, r.s)
			case "lo":
				w.SetBool(i, r.p < 5)
			case "hi":
				w.SetBool(i, r.p >= 5)
			}
		}
		return w.Finish()
	}
	result := func(f *sqlAgg, acc Acc) string {
		return types.FormatRow(f.rt, types.NewKeyEncoder(f.rt, seq(f.rt.Len())...).KeyRow(f.Result(acc)))
	}
	// brute counts the distinct values of the COUNT(DISTINCT) calls.
	brute := func(recs []rec) []int64 {
		var out []int64
		for _, s := range specs {
			if s.name != "COUNT" || !s.distinct {
				continue
			}
			seen := map[string]bool{}
			for _, r := range recs {
				if s.filter == "lo" && r.p >= 5 || s.filter == "hi" && r.p < 5 || s.arg == "b" && r.nullB {
					continue
				}
				seen[fmt.Sprint(map[string]any{"b": r.b, "a": r.a, "s": r.s}[s.arg])] = true
			}
			out = append(out, int64(len(seen)))
		}
		return out
	}

	oldF, oldCols := build(false)
	newF, newCols := build(true)
	if len(newF.groups) != 3 || newF.views != len(oldF.groups)+2 {
		t.Fatalf("%d shared views in %d views, want 3 in %d (the older plan's %d and 2 new)", len(newF.groups), newF.views, len(oldF.groups)+2, len(oldF.groups))
	}
	// The older plan's views: one per DISTINCT call, in call order.
	next := 0
	for i, s := range specs {
		if sl := oldF.slots[i]; s.distinct {
			if sl.view != next || sl.bit != 1 {
				t.Fatalf("call %d of the older plan: view %d, bit %d, want view %d, bit 1", i, sl.view, sl.bit, next)
			}
			next++
		}
	}
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 60; iter++ {
		n := 1 + rng.Intn(200)
		recs := make([]rec, n)
		for i := range recs {
			recs[i] = rec{b: rng.Int63n(12), a: rng.Int63n(7), p: rng.Int63n(10), s: string(rune('a' + rng.Intn(9))), nullB: rng.Intn(10) == 0}
		}
		split := rng.Intn(n + 1)
		// run folds recs into acc with f from the views v, recording the
		// results.
		run := func(f *sqlAgg, cols []string, acc Acc, v agg.Views, recs []rec, out []string) (Acc, []string) {
			for _, r := range recs {
				acc = f.AddInPlace(acc, row(f, cols, r), v, 0)
				out = append(out, result(f, acc))
			}
			return acc, out
		}
		oldAcc, want := run(oldF, oldCols, oldF.Create(), newMapViews(), recs, nil)
		// The older plan counts right.
		res := types.NewKeyEncoder(oldF.rt, seq(oldF.rt.Len())...).KeyRow(oldF.Result(oldAcc))
		k := 0
		exp := brute(recs)
		for i, s := range specs {
			if s.name == "COUNT" && s.distinct {
				if got := res.Int64(i); got != exp[k] {
					t.Fatalf("iteration %d: call %d (COUNT(DISTINCT %s) FILTER %q) counts %d, want %d", iter, i, s.arg, s.filter, got, exp[k])
				}
				k++
			}
		}
		check := func(what string, got []string) {
			t.Helper()
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("iteration %d, %s: after row %d (split at %d): %s, want %s", iter, what, i, split, got[i], want[i])
				}
			}
		}
		_, fresh := run(newF, newCols, newF.Create(), newMapViews(), recs, nil)
		check("the new plan from the start", fresh)
		for _, variant := range []string{"marking", "plain", "touch"} {
			v := newMapViews()
			acc, out := run(oldF, oldCols, oldF.Create(), v, recs[:split], nil)
			v.restored = true
			f := newF
			if variant == "touch" {
				f, _ = build(true)
				f.touch = true
			}
			var views agg.Views = v
			if variant == "plain" {
				views = plainViews{v}
			}
			_, out = run(f, newCols, acc, views, recs[split:], out)
			check("restored from the older plan's views, "+variant, out)
		}
	}
}

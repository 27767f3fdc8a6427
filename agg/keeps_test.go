package agg

import (
	"maps"
	"math"
	"math/rand"
	"slices"
	"testing"
)

// TestExtremumKeepsResult checks Min's and Max's KeepsResult against their
// results before and after each input: it says true exactly for the inputs
// that leave the result as it is (NaN among the floats).
func TestExtremumKeepsResult(t *testing.T) {
	id := func(f float64) float64 { return f }
	for _, c := range []struct {
		name string
		f    Function[float64, Optional[float64], float64]
	}{{"Min", Min(id)}, {"Max", Max(id)}} {
		k, ok := c.f.(ResultKeeper[float64, Optional[float64]])
		if !ok {
			t.Fatalf("%s is no ResultKeeper", c.name)
		}
		rng := rand.New(rand.NewSource(3))
		for iter := 0; iter < 50; iter++ {
			acc := c.f.Create()
			for n := 0; n < 30; n++ {
				in := float64(rng.Intn(9) - 4)
				if rng.Intn(10) == 0 {
					in = math.NaN()
				}
				keeps := k.KeepsResult(acc, in)
				before, valid := c.f.Result(acc), acc.Valid
				acc = c.f.Add(acc, in)
				after := c.f.Result(acc)
				same := valid && (before == after || math.IsNaN(before) && math.IsNaN(after))
				if keeps != same {
					t.Fatalf("%s: KeepsResult(%v, %v) = %v, but the result went from %v to %v", c.name, before, in, keeps, before, after)
				}
			}
		}
	}
}

// TestExtremumRetractKeepsResult checks MinRetract's and MaxRetract's
// KeepsResult over inputs that are added and taken back: before each
// addition, it says true exactly when the result stays as it is. Integers
// are counted in integer views, strings in string views.
func TestExtremumRetractKeepsResult(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	ints := func(x int) int64 { return int64(x) }
	strs := func(x int) string { return string(rune('a' + x)) }
	checkRetract(t, rng, "MinRetract(int)", MinRetract(ints))
	checkRetract(t, rng, "MaxRetract(int)", MaxRetract(ints))
	checkRetract(t, rng, "MinRetract(string)", MinRetract(strs))
	checkRetract(t, rng, "MaxRetract(string)", MaxRetract(strs))
}

func checkRetract[V comparable](t *testing.T, rng *rand.Rand, name string, f ViewFunction[int, Optional[V], V]) {
	t.Helper()
	k, ok := f.(ResultKeeper[int, Optional[V]])
	if !ok {
		t.Fatalf("%s is no ResultKeeper", name)
	}
	for iter := 0; iter < 50; iter++ {
		v := newTestViews()
		acc := f.Create()
		var held []int
		for n := 0; n < 40; n++ {
			if len(held) > 0 && rng.Intn(3) == 0 {
				j := rng.Intn(len(held))
				acc = f.RetractWith(acc, held[j], v, 0)
				held = append(held[:j], held[j+1:]...)
				continue
			}
			in := rng.Intn(9)
			keeps := k.KeepsResult(acc, in)
			before, valid := f.Result(acc), acc.Valid
			acc = f.AddWith(acc, in, v, 0)
			held = append(held, in)
			if same := valid && f.Result(acc) == before; keeps != same {
				t.Fatalf("%s: KeepsResult(%v, %v) = %v, but the result went from %v to %v", name, before, in, keeps, before, f.Result(acc))
			}
		}
	}
}

// testViews are Views in maps.
type testViews struct {
	strs map[int]map[string]int64
	ints map[int]map[int64]int64
}

func newTestViews() *testViews {
	return &testViews{strs: map[int]map[string]int64{}, ints: map[int]map[int64]int64{}}
}

func addCount[V comparable](m map[V]int64, value V, delta int64) (before, after int64) {
	before = m[value]
	after = before + delta
	if after == 0 {
		delete(m, value)
	} else {
		m[value] = after
	}
	return before, after
}

func (v *testViews) Add(view int, value string, delta int64) (int64, int64) {
	if v.strs[view] == nil {
		v.strs[view] = map[string]int64{}
	}
	return addCount(v.strs[view], value, delta)
}

func (v *testViews) AddInt(view int, value int64, delta int64) (int64, int64) {
	if v.ints[view] == nil {
		v.ints[view] = map[int64]int64{}
	}
	return addCount(v.ints[view], value, delta)
}

func (v *testViews) Range(view int, fn func(string, int64) bool) {
	for _, s := range slices.Sorted(maps.Keys(v.strs[view])) {
		if !fn(s, v.strs[view][s]) {
			return
		}
	}
}

func (v *testViews) RangeInt(view int, fn func(int64, int64) bool) {
	for _, x := range slices.Sorted(maps.Keys(v.ints[view])) {
		if !fn(x, v.ints[view][x]) {
			return
		}
	}
}

func (v *testViews) Count(view int, value string) int64   { return v.strs[view][value] }
func (v *testViews) CountInt(view int, value int64) int64 { return v.ints[view][value] }
func (v *testViews) InsertOnly() bool                     { return false }

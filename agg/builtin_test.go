package agg_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/eddystream/eddy/agg"
)

// apply folds ins into one accumulator, and also into two that are merged,
// and checks both give the same result.
func apply[IN, ACC, OUT comparable](t *testing.T, f agg.Function[IN, ACC, OUT], ins ...IN) OUT {
	t.Helper()
	acc := f.Create()
	for _, in := range ins {
		acc = f.Add(acc, in)
	}
	for split := range len(ins) + 1 {
		a, b := f.Create(), f.Create()
		for _, in := range ins[:split] {
			a = f.Add(a, in)
		}
		for _, in := range ins[split:] {
			b = f.Add(b, in)
		}
		if got, want := f.Result(f.Merge(a, b)), f.Result(acc); got != want {
			t.Errorf("merging at %d gives %v, adding all gives %v", split, got, want)
		}
	}
	return f.Result(acc)
}

type bid struct {
	Item  string
	Price int64
}

var bids = []bid{{"a", 5}, {"b", 9}, {"c", -2}, {"d", 9}}

func TestBuiltins(t *testing.T) {
	price := func(b bid) int64 { return b.Price }
	if got := apply(t, agg.Count[bid](), bids...); got != 4 {
		t.Errorf("Count = %d", got)
	}
	if got := apply(t, agg.Count[bid]()); got != 0 {
		t.Errorf("Count of nothing = %d", got)
	}
	if got := apply(t, agg.Sum(price), bids...); got != 21 {
		t.Errorf("Sum = %d", got)
	}
	if got := apply(t, agg.Min(price), bids...); got != -2 {
		t.Errorf("Min = %d", got)
	}
	if got := apply(t, agg.Max(price), bids...); got != 9 {
		t.Errorf("Max = %d", got)
	}
	if got := apply(t, agg.Max(func(b bid) string { return b.Item }), bids...); got != "d" {
		t.Errorf("Max of strings = %q", got)
	}
	if got := apply(t, agg.Min(price)); got != 0 {
		t.Errorf("Min of nothing = %d", got)
	}
	if got := apply(t, agg.Avg(func(b bid) float64 { return float64(b.Price) }), bids...); got != 5.25 {
		t.Errorf("Avg = %v", got)
	}
	if got := apply(t, agg.Avg(func(b bid) float64 { return 1 })); got != 0 || math.IsNaN(got) {
		t.Errorf("Avg of nothing = %v", got)
	}
	longest := agg.Reduce(func(a, b string) string {
		if len(b) > len(a) {
			return b
		}
		return a
	})
	if got := apply(t, longest, "ab", "abc", "x", "xyz"); got != "abc" {
		t.Errorf("Reduce = %q", got)
	}
	if got := apply(t, longest); got != "" {
		t.Errorf("Reduce of nothing = %q", got)
	}
}

func TestOf(t *testing.T) {
	distinct := agg.Of(
		func() string { return "" },
		func(acc string, in byte) string { return acc + string(in) },
		func(a, b string) string { return a + b },
		func(acc string) int { return len(acc) },
	)
	if got := distinct.Result(distinct.Add(distinct.Add(distinct.Create(), 'x'), 'y')); got != 2 {
		t.Errorf("Of: %d", got)
	}
}

func ExampleSum() {
	f := agg.Sum(func(b bid) int64 { return b.Price })
	acc := f.Create()
	for _, b := range bids {
		acc = f.Add(acc, b)
	}
	fmt.Println(f.Result(acc))
	// Output: 21
}

func ExampleOf() {
	// The range (max - min) of prices, with a struct accumulator.
	type minMax struct{ Min, Max, N int64 }
	spread := agg.Of(
		func() minMax { return minMax{} },
		func(acc minMax, b bid) minMax {
			if acc.N == 0 || b.Price < acc.Min {
				acc.Min = b.Price
			}
			if acc.N == 0 || b.Price > acc.Max {
				acc.Max = b.Price
			}
			acc.N++
			return acc
		},
		func(a, b minMax) minMax {
			switch {
			case a.N == 0:
				return b
			case b.N == 0:
				return a
			}
			return minMax{min(a.Min, b.Min), max(a.Max, b.Max), a.N + b.N}
		},
		func(acc minMax) int64 { return acc.Max - acc.Min },
	)
	acc := spread.Create()
	for _, b := range bids {
		acc = spread.Add(acc, b)
	}
	fmt.Println(spread.Result(acc))
	// Output: 11
}

func ExampleAvg() {
	f := agg.Avg(func(b bid) float64 { return float64(b.Price) })
	left := f.Add(f.Add(f.Create(), bids[0]), bids[1])
	right := f.Add(f.Add(f.Create(), bids[2]), bids[3])
	fmt.Println(f.Result(f.Merge(left, right)))
	// Output: 5.25
}

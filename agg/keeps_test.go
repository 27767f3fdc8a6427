package agg

import (
	"math"
	"math/rand"
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

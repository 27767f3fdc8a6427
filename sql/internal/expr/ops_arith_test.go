package expr

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/eddystream/eddy/sql/types"
)

// TestModByConst compares MOD by a constant with Go's % over the edges of
// its fast range and random values in and out of it.
func TestModByConst(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	divisors := []int64{2, 3, 7, 10, 123, 1000, 65535, 65536, 1<<31 - 1, 1 << 31, 1<<32 - 1}
	for k := 0; k < 50; k++ {
		divisors = append(divisors, 2+r.Int64N(1<<32-2))
	}
	values := []int64{0, 1, 2, 122, 123, 124, 1<<31 - 1, 1 << 31, 1<<32 - 2, 1<<32 - 1, 1 << 32, 1<<32 + 1, -1, -123, math.MaxInt64, math.MinInt64}
	for k := 0; k < 2000; k++ {
		values = append(values, r.Int64N(1<<32), r.Int64(), -r.Int64N(1<<32))
	}
	for _, d := range divisors {
		for _, v := range values {
			f := modByConst(func(types.Row) (int64, bool) { return v, false }, d)
			if got, null := f(types.Row{}); null || got != v%d {
				t.Fatalf("MOD(%d, %d) = %d (null %v), want %d", v, d, got, null, v%d)
			}
		}
	}
	f := modByConst(func(types.Row) (int64, bool) { return 0, true }, 7)
	if _, null := f(types.Row{}); !null {
		t.Fatal("MOD(NULL, 7) is not NULL")
	}
}

package nexmark

import (
	"math"
	"strconv"
	"testing"
)

func TestIntnIsUniform(t *testing.T) {
	r := eventRand(12345)
	for _, n := range []uint64{1, 2, 3, 13, 26, 111, 1010, 10_000, 1 << 40} {
		const draws = 200_000
		buckets := make([]float64, min(n, 16))
		for range draws {
			v := r.intn(n)
			if v >= n {
				t.Fatalf("intn(%d) = %d", n, v)
			}
			buckets[v*uint64(len(buckets))/n]++
		}
		b := uint64(len(buckets))
		for i, c := range buckets {
			// Values v with v*b/n == i: ceil((i+1)n/b) - ceil(i*n/b).
			lo, hi := (uint64(i)*n+b-1)/b, ((uint64(i)+1)*n+b-1)/b
			within(t, "intn bucket "+strconv.Itoa(i)+" of n="+strconv.FormatUint(n, 10), c/draws, float64(hi-lo)/float64(n), 0.006)
		}
	}
}

func TestFreshIgnoresBuffer(t *testing.T) {
	a, b := eventRand(7), eventRand(7)
	a.intn(3)
	b.intn(3)
	a.fresh(5)
	b.fresh(1 << 50)
	for range 10 {
		if a.intn(1000) != b.intn(1000) {
			t.Fatal("values after fresh depend on its bound")
		}
	}
}

func TestFloat64Range(t *testing.T) {
	r := eventRand(1)
	var sum float64
	for range 100_000 {
		f := r.float64()
		if f < 0 || f >= 1 {
			t.Fatalf("float64() = %v", f)
		}
		sum += f
	}
	if math.Abs(sum/100_000-0.5) > 0.005 {
		t.Fatalf("mean of float64() = %v", sum/100_000)
	}
}

func TestEventStreamsDiffer(t *testing.T) {
	seen := map[uint64]int64{}
	for id := int64(0); id < 100_000; id++ {
		r := eventRand(id)
		v := r.next()
		if other, dup := seen[v]; dup {
			t.Fatalf("events %d and %d start with the same draw", other, id)
		}
		seen[v] = id
	}
}

package sketch_test

import (
	"fmt"

	"github.com/eddystream/eddy/sketch"
)

func ExampleHyperLogLog() {
	h := sketch.NewHyperLogLog(14) // 2^14 registers, about 0.8% error
	for i := 0; i < 100000; i++ {
		h.AddString(fmt.Sprintf("user-%d", i%25000)) // 25,000 distinct users
	}
	other := sketch.NewHyperLogLog(14)
	for i := 20000; i < 30000; i++ {
		other.AddString(fmt.Sprintf("user-%d", i))
	}
	if err := h.Merge(other); err != nil {
		panic(err)
	}
	est := float64(h.Estimate())
	fmt.Printf("about 30000 distinct: %v\n", est > 29000 && est < 31000)
	// Output: about 30000 distinct: true
}

func ExampleMoments() {
	var m sketch.Moments
	for _, x := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		m.Add(x)
	}
	fmt.Printf("n=%d mean=%g variance=%g sample variance=%.4f stddev=%g\n",
		m.Count(), m.Mean(), m.Variance(), m.SampleVariance(), m.StdDev())
	m.Remove(9)
	fmt.Printf("after removing 9: n=%d mean=%.4f\n", m.Count(), m.Mean())
	// Output:
	// n=8 mean=5 variance=4 sample variance=4.5714 stddev=2
	// after removing 9: n=7 mean=4.4286
}

func ExampleTriestImpr() {
	// Two 4-cliques joined by an edge: 8 triangles. With a budget of 8 of
	// the 13 edges the estimate is no longer exact, but it is unbiased.
	edges := [][2]uint64{
		{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3},
		{3, 4},
		{4, 5}, {4, 6}, {4, 7}, {5, 6}, {5, 7}, {6, 7},
	}
	est := sketch.NewTriestImpr(8, 42)
	for _, e := range edges {
		est.Add(e[0], e[1])
	}
	fmt.Printf("global %.2f\n", est.Global())
	for _, v := range est.TopLocal(3) {
		fmt.Printf("vertex %d: %.2f\n", v.Vertex, v.Estimate)
	}
	exact := sketch.NewTriestImpr(len(edges), 42)
	for _, e := range edges {
		exact.Add(e[0], e[1])
	}
	fmt.Printf("with M ≥ edges: global %.0f, local(0) %.0f\n", exact.Global(), exact.Local(0))
	// Output:
	// global 12.29
	// vertex 7: 6.68
	// vertex 6: 6.32
	// vertex 4: 5.93
	// with M ≥ edges: global 8, local(0) 3
}

package sketch

import (
	"encoding"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
	"time"
)

// TestTriestImprKarate checks the spec §1.8 oracle for TRIEST-IMPR: the
// mean is within 4 standard errors of 45, the variance is below BASE's
// closed-form variance and within 15% of the simulated values of the
// specification, and the MAPE falls as M grows.
func TestTriestImprKarate(t *testing.T) {
	const runs = 20000
	mk := triestVariants[1].make
	specVar := map[int]float64{20: 279, 30: 103, 40: 46.5, 60: 9.7}
	prevMAPE := math.Inf(1)
	for _, m := range []int{20, 30, 40, 60} {
		xs := karateEstimates(mk, m, runs)
		mean, v := meanVar(xs)
		base := closedFormBaseVariance(45, 151, 839, 78, float64(m))
		mp := mape(xs, 45)
		t.Logf("IMPR M=%d: mean %.2f var %.1f (BASE %.1f) MAPE %.3f", m, mean, v, base, mp)
		if se := math.Sqrt(v / runs); math.Abs(mean-45) >= 4*se {
			t.Errorf("M=%d: mean %.3f is more than 4 standard errors (%.3f) from 45", m, mean, se)
		}
		if v >= base {
			t.Errorf("M=%d: IMPR variance %.1f not below BASE variance %.1f", m, v, base)
		}
		if math.Abs(v-specVar[m]) > 0.15*specVar[m] {
			t.Errorf("M=%d: IMPR variance %.1f not within 15%% of the specification's %.1f", m, v, specVar[m])
		}
		if mp >= prevMAPE {
			t.Errorf("M=%d: MAPE %.3f did not fall (previous %.3f)", m, mp, prevMAPE)
		}
		prevMAPE = mp
	}
}

func TestTriestImprRoundTrip(t *testing.T) {
	edges := powerLawClusterGraph(400, 4, 0.5, 12)
	triestRoundTrip(t, NewTriestImpr(300, 5), NewTriestImpr(6, 0),
		func() encoding.BinaryUnmarshaler { return NewTriestImpr(6, 0) }, edges)
}

// The generated 1M-edge graph and its exact triangle count, built once.
var (
	bigGraphOnce  sync.Once
	bigGraph      [][2]uint64
	bigGraphExact triangleCount
)

// loadBigGraph returns a Holme–Kim graph of 200,000 vertices with 5 edges
// per new vertex (999,985 edges) and triad probability 0.5, and its exact
// triangle counts.
func loadBigGraph() ([][2]uint64, triangleCount) {
	bigGraphOnce.Do(func() {
		bigGraph = powerLawClusterGraph(200000, 5, 0.5, 2016)
		bigGraphExact = exactTriangles(bigGraph, false)
	})
	return bigGraph, bigGraphExact
}

var (
	benchGraphOnce sync.Once
	benchGraphData [][2]uint64
)

// benchGraph is a smaller generated stream for the per-update benchmarks.
func benchGraph() [][2]uint64 {
	benchGraphOnce.Do(func() { benchGraphData = powerLawClusterGraph(50000, 5, 0.5, 99) })
	return benchGraphData
}

func BenchmarkTriestImprAdd(b *testing.B) {
	edges := benchGraph()
	est := NewTriestImpr(50000, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(edges) == 0 && i > 0 {
			est = NewTriestImpr(50000, uint64(i))
		}
		e := edges[i%len(edges)]
		est.Add(e[0], e[1])
	}
}

// BenchmarkTriestImpr1M streams the generated 1M-edge graph through
// TRIEST-IMPR at several budgets and reports the relative error of the
// global estimate against the exact count, and edges per second. Run with
//
//	go test -run '^$' -bench TriestImpr1M -benchtime 1x ./sketch/
func BenchmarkTriestImpr1M(b *testing.B) {
	edges, exact := loadBigGraph()
	for _, m := range []int{10000, 50000, 200000} {
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) {
			var errSum float64
			for i := 0; i < b.N; i++ {
				est := NewTriestImpr(m, uint64(i)+1)
				for _, e := range edges {
					est.Add(e[0], e[1])
				}
				errSum += relErr(est.Global(), float64(exact.global))
			}
			b.ReportMetric(errSum/float64(b.N), "relerr")
			b.ReportMetric(float64(len(edges))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}

// TestTriestImprLargeGraph prints a table of TRIEST-IMPR error and time on
// the 1M-edge graph over several seeds. It is slow (about a minute) and runs
// only when SKETCH_LARGE=1 is set.
func TestTriestImprLargeGraph(t *testing.T) {
	if os.Getenv("SKETCH_LARGE") != "1" {
		t.Skip("set SKETCH_LARGE=1 to run the 1M-edge TRIEST-IMPR table")
	}
	start := time.Now()
	edges, exact := loadBigGraph()
	t.Logf("graph: %d edges, %d triangles, generated and counted exactly in %v",
		len(edges), exact.global, time.Since(start).Round(time.Millisecond))
	const seeds = 3
	t.Logf("%8s %10s %10s %10s %12s %12s", "M", "mean err", "max err", "local top", "s/run", "edges/s")
	for _, m := range []int{10000, 50000, 200000} {
		var sum, worst, topErr, secs float64
		for s := uint64(1); s <= seeds; s++ {
			est := NewTriestImpr(m, s)
			t0 := time.Now()
			for _, e := range edges {
				est.Add(e[0], e[1])
			}
			secs += time.Since(t0).Seconds()
			r := relErr(est.Global(), float64(exact.global))
			sum += r
			worst = math.Max(worst, r)
			// Relative error of the local estimate of the 10 exact top
			// vertices, averaged.
			topErr += topLocalError(est, exact, 10)
		}
		t.Logf("%8d %9.3f%% %9.3f%% %9.3f%% %12.2f %12.0f", m, 100*sum/seeds, 100*worst, 100*topErr/seeds,
			secs/seeds, float64(len(edges))*seeds/secs)
	}
}

// topLocalError averages the relative error of the local estimates of the
// k vertices with the most triangles.
func topLocalError(est *TriestImpr, exact triangleCount, k int) float64 {
	type vc struct {
		v uint64
		c int64
	}
	var top []vc
	for v, c := range exact.local {
		top = append(top, vc{v, c})
	}
	for i := 0; i < k && i < len(top); i++ { // partial selection sort
		best := i
		for j := i + 1; j < len(top); j++ {
			if top[j].c > top[best].c || (top[j].c == top[best].c && top[j].v < top[best].v) {
				best = j
			}
		}
		top[i], top[best] = top[best], top[i]
	}
	s := 0.0
	for _, x := range top[:k] {
		s += relErr(est.Local(x.v), float64(x.c))
	}
	return s / float64(k)
}

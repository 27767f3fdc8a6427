package sketch

import (
	"encoding"
	"math"
	"testing"
)

// closedFormBaseVariance is the exact variance of TRIEST-BASE from spec
// §1.2 for t > M.
func closedFormBaseVariance(tri, r, w, t, m float64) float64 {
	xi := triestXi(uint64(t), int(m))
	return tri*(xi-1) +
		2*r*(xi*(m-3)*(m-4)/((t-3)*(t-4))-1) +
		2*w*(xi*(m-3)*(m-4)*(m-5)/((t-3)*(t-4)*(t-5))-1)
}

// TestTriestBaseKarate checks the spec §1.8 statistical oracle: 20,000
// seeded runs per M; the mean is within 4 standard errors of 45, the sample
// variance within 10% of the closed form, and the MAPE falls as M grows.
func TestTriestBaseKarate(t *testing.T) {
	const runs = 20000
	mk := triestVariants[0].make
	prevMAPE := math.Inf(1)
	for _, m := range []int{20, 30, 40, 60} {
		xs := karateEstimates(mk, m, runs)
		mean, v := meanVar(xs)
		cf := closedFormBaseVariance(45, 151, 839, 78, float64(m))
		mp := mape(xs, 45)
		t.Logf("BASE M=%d: mean %.2f var %.1f (closed form %.1f) MAPE %.3f", m, mean, v, cf, mp)
		if se := math.Sqrt(v / runs); math.Abs(mean-45) >= 4*se {
			t.Errorf("M=%d: mean %.3f is more than 4 standard errors (%.3f) from 45", m, mean, se)
		}
		if math.Abs(v-cf) > 0.10*cf {
			t.Errorf("M=%d: variance %.1f not within 10%% of closed form %.1f", m, v, cf)
		}
		if mp >= prevMAPE {
			t.Errorf("M=%d: MAPE %.3f did not fall (previous %.3f)", m, mp, prevMAPE)
		}
		prevMAPE = mp
	}
}

func TestTriestBaseRoundTrip(t *testing.T) {
	edges := powerLawClusterGraph(400, 4, 0.5, 11)
	triestRoundTrip(t, NewTriestBase(300, 5), NewTriestBase(6, 0),
		func() encoding.BinaryUnmarshaler { return NewTriestBase(6, 0) }, edges)
}

func BenchmarkTriestBaseAdd(b *testing.B) {
	edges := benchGraph()
	est := NewTriestBase(50000, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(edges) == 0 && i > 0 {
			est = NewTriestBase(50000, uint64(i))
		}
		e := edges[i%len(edges)]
		est.Add(e[0], e[1])
	}
}

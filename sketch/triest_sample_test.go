package sketch

import (
	"encoding"
	"math"
	"testing"
)

// triestEstimator is the interface the three TRIEST variants share in tests.
type triestEstimator interface {
	Add(u, v uint64)
	Global() float64
	Local(u uint64) float64
	TopLocal(k int) []VertexEstimate
	Time() uint64
	SampleSize() int
	Rejected() uint64
	MarshalBinary() ([]byte, error)
}

var triestVariants = []struct {
	name string
	make func(m int, seed uint64) triestEstimator
}{
	{"base", func(m int, seed uint64) triestEstimator { return NewTriestBase(m, seed) }},
	{"impr", func(m int, seed uint64) triestEstimator { return NewTriestImpr(m, seed) }},
	{"fd", func(m int, seed uint64) triestEstimator { return NewTriestFD(m, seed) }},
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestTriestScaleOracles(t *testing.T) {
	cases := []struct {
		name string
		got  float64
		want float64
	}{
		{"xi(78,20)", triestXi(78, 20), 66.733333333},
		{"xi(78,40)", triestXi(78, 40), 7.7},
		{"eta(78,20)", triestEta(78, 20), 15.4},
		{"eta(78,40)", triestEta(78, 40), 3.751282051},
		{"xi(1000,100)", triestXi(1000, 100), 1027.625231},
		{"eta(1000,100)", triestEta(1000, 100), 100.7072727},
		{"eta(M+1)", triestEta(21, 20), 1},
		{"xi(t<=M)", triestXi(20, 20), 1},
		{"kappa(3,10,10)", triestKappa(3, 10, 10), 0.4195804196},
		{"kappa(4,6,8)", triestKappa(4, 6, 8), 0.8666666667},
		{"kappa(5,20,6)", triestKappa(5, 20, 6), 0.069848},
		{"kappa(no deletions)", triestKappa(50, 0, 20), 1},
	}
	for _, c := range cases {
		if !near(c.got, c.want, 1e-6) {
			t.Errorf("%s = %.10g, want %.10g", c.name, c.got, c.want)
		}
	}
}

func TestTriestK4(t *testing.T) {
	k4 := [][2]uint64{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}
	for _, v := range triestVariants {
		est := v.make(6, 1)
		for _, e := range k4 {
			est.Add(e[0], e[1])
		}
		if g := est.Global(); g != 4 {
			t.Errorf("%s: global = %v, want 4", v.name, g)
		}
		for u := uint64(0); u < 4; u++ {
			if l := est.Local(u); l != 3 {
				t.Errorf("%s: local(%d) = %v, want 3", v.name, u, l)
			}
		}
		if l := est.Local(99); l != 0 {
			t.Errorf("%s: local(99) = %v, want 0", v.name, l)
		}
	}
}

// While t ≤ M every variant is exact, globally and per vertex.
func TestTriestExactWithinBudget(t *testing.T) {
	edges := powerLawClusterGraph(300, 4, 0.6, 7)
	for _, v := range triestVariants {
		est := v.make(len(edges), 3)
		for i, e := range edges {
			est.Add(e[0], e[1])
			if i%97 != 0 && i != len(edges)-1 {
				continue
			}
			want := exactTriangles(edges[:i+1], false)
			if g := est.Global(); g != float64(want.global) {
				t.Fatalf("%s after %d edges: global = %v, want %d", v.name, i+1, g, want.global)
			}
			for u, c := range want.local {
				if l := est.Local(u); l != float64(c) {
					t.Fatalf("%s after %d edges: local(%d) = %v, want %d", v.name, i+1, u, l, c)
				}
			}
		}
		top := est.TopLocal(5)
		if len(top) != 5 {
			t.Fatalf("%s: TopLocal(5) returned %d entries", v.name, len(top))
		}
		for i := 1; i < len(top); i++ {
			if top[i].Estimate > top[i-1].Estimate ||
				(top[i].Estimate == top[i-1].Estimate && top[i].Vertex < top[i-1].Vertex) {
				t.Fatalf("%s: TopLocal not ordered: %v", v.name, top)
			}
		}
		want := exactTriangles(edges, false)
		var best int64
		for _, c := range want.local {
			best = max(best, c)
		}
		if top[0].Estimate != float64(best) || est.Local(top[0].Vertex) != top[0].Estimate {
			t.Errorf("%s: top vertex %v, want count %d", v.name, top[0], best)
		}
	}
}

func TestTriestSelfLoopsAndRepeats(t *testing.T) {
	for _, v := range triestVariants {
		est := v.make(10, 1)
		est.Add(1, 1) // self-loop: ignored
		est.Add(1, 2)
		est.Add(2, 1) // repeat of a sampled edge, reversed: rejected
		est.Add(2, 3)
		est.Add(3, 1)
		if est.Time() != 3 || est.Rejected() != 1 || est.SampleSize() != 3 {
			t.Errorf("%s: t=%d rejected=%d |S|=%d, want 3, 1, 3", v.name, est.Time(), est.Rejected(), est.SampleSize())
		}
		if est.Global() != 1 {
			t.Errorf("%s: global = %v, want 1", v.name, est.Global())
		}
		if got := est.TopLocal(0); got != nil {
			t.Errorf("%s: TopLocal(0) = %v", v.name, got)
		}
	}
}

func TestTriestBudgetPanics(t *testing.T) {
	for _, v := range triestVariants {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: budget 5 did not panic", v.name)
				}
			}()
			v.make(5, 0)
		}()
	}
}

// The karate-club oracle data: 45 triangles, r = 151 pairs sharing an edge
// and w = 839 pairs sharing none.
func TestKarateGraphFacts(t *testing.T) {
	if len(karateEdges) != 78 {
		t.Fatalf("karate graph has %d edges, want 78", len(karateEdges))
	}
	tc := exactTriangles(karateEdges, true)
	if tc.global != 45 {
		t.Fatalf("karate graph has %d triangles, want 45", tc.global)
	}
	r, w := karatePairs(tc.triangles)
	if r != 151 || w != 839 {
		t.Errorf("karate pairs r=%d w=%d, want 151 and 839", r, w)
	}
}

// karatePairs counts unordered pairs of distinct triangles that share an
// edge (r) and that share none (w).
func karatePairs(tris [][3]uint64) (r, w int) {
	edgesOf := func(x [3]uint64) [3]triEdge {
		a, _ := normEdge(x[0], x[1])
		b, _ := normEdge(x[0], x[2])
		c, _ := normEdge(x[1], x[2])
		return [3]triEdge{a, b, c}
	}
	for i := range tris {
		ei := edgesOf(tris[i])
		for j := i + 1; j < len(tris); j++ {
			shared := false
			for _, a := range ei {
				for _, b := range edgesOf(tris[j]) {
					shared = shared || a == b
				}
			}
			if shared {
				r++
			} else {
				w++
			}
		}
	}
	return r, w
}

// karateEstimates runs one variant over the karate stream runs times with
// seeds derived from run and M and returns the final global estimates.
func karateEstimates(mk func(m int, seed uint64) triestEstimator, m, runs int) []float64 {
	out := make([]float64, runs)
	for i := range out {
		est := mk(m, uint64(i)*0x9e3779b97f4a7c15+uint64(m))
		for _, e := range karateEdges {
			est.Add(e[0], e[1])
		}
		out[i] = est.Global()
	}
	return out
}

func mape(xs []float64, truth float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += relErr(x, truth)
	}
	return s / float64(len(xs))
}

// triestCodec is a TRIEST estimator that can also be decoded.
type triestCodec interface {
	triestEstimator
	UnmarshalBinary([]byte) error
}

// triestRoundTrip feeds the first half of a stream, round-trips the
// estimator through MarshalBinary/UnmarshalBinary, feeds the second half to
// both and checks that they agree exactly. It also runs the shared decoder
// error checks on the encoding.
func triestRoundTrip(t *testing.T, orig, restored triestCodec, fresh func() encoding.BinaryUnmarshaler, edges [][2]uint64) {
	t.Helper()
	half := len(edges) / 2
	for _, e := range edges[:half] {
		orig.Add(e[0], e[1])
	}
	blob, err := orig.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := restored.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	blob2, _ := restored.MarshalBinary()
	if string(blob) != string(blob2) {
		t.Fatal("re-encoding a decoded estimator changed the bytes")
	}
	for _, e := range edges[half:] {
		orig.Add(e[0], e[1])
		restored.Add(e[0], e[1])
	}
	if orig.Global() != restored.Global() || orig.Time() != restored.Time() {
		t.Fatalf("after round trip: global %v vs %v", orig.Global(), restored.Global())
	}
	a, b := orig.TopLocal(10), restored.TopLocal(10)
	if len(a) != len(b) {
		t.Fatalf("after round trip: TopLocal lengths %d vs %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("after round trip: TopLocal differs: %v vs %v", a, b)
		}
	}
	checkDecodeErrors(t, blob, fresh)
}

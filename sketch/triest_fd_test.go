package sketch

import (
	"encoding"
	"math"
	"testing"
)

// karateDynamicStream is spec §1.8's fully dynamic stream: insert the 78
// edges, delete edges[0::3] (26 deletions), re-insert the first 10 of them.
// The final graph has 62 edges and 29 triangles.
func karateDynamicStream() (ops []bool, edges [][2]uint64) {
	for _, e := range karateEdges {
		ops, edges = append(ops, true), append(edges, e)
	}
	var deleted [][2]uint64
	for i := 0; i < len(karateEdges); i += 3 {
		deleted = append(deleted, karateEdges[i])
		ops, edges = append(ops, false), append(edges, karateEdges[i])
	}
	for _, e := range deleted[:10] {
		ops, edges = append(ops, true), append(edges, e)
	}
	return ops, edges
}

func TestKarateDynamicFacts(t *testing.T) {
	ops, edges := karateDynamicStream()
	present := map[[2]uint64]bool{}
	for i, e := range edges {
		if ops[i] {
			present[e] = true
		} else {
			delete(present, e)
		}
	}
	var final [][2]uint64
	for _, e := range karateEdges {
		if present[e] {
			final = append(final, e)
		}
	}
	if len(final) != 62 {
		t.Fatalf("final graph has %d edges, want 62", len(final))
	}
	if got := exactTriangles(final, false).global; got != 29 {
		t.Fatalf("final graph has %d triangles, want 29", got)
	}
}

// TestTriestFDKarate checks the spec §1.8 fully dynamic oracle: the mean is
// within 4 standard errors of 29 at M = 30 and 40 (20,000 runs each), the
// per-run standard deviation is within 15% of the specification's values,
// and the mean final sample size at M = 40 is 31.79.
func TestTriestFDKarate(t *testing.T) {
	ops, edges := karateDynamicStream()
	specSD := map[int]float64{20: 47, 30: 25, 40: 16, 60: 7.3}
	for _, c := range []struct{ m, runs int }{{20, 5000}, {30, 20000}, {40, 20000}, {60, 5000}} {
		xs := make([]float64, c.runs)
		var size Moments
		for r := range xs {
			f := NewTriestFD(c.m, uint64(r)*0x9e3779b97f4a7c15+uint64(c.m))
			for i, e := range edges {
				if ops[i] {
					f.Add(e[0], e[1])
				} else {
					f.Remove(e[0], e[1])
				}
			}
			if f.Edges() != 62 || f.Rejected() != 0 {
				t.Fatalf("s = %d, rejected = %d; want 62 and 0", f.Edges(), f.Rejected())
			}
			xs[r] = f.Global()
			size.Add(float64(f.SampleSize()))
		}
		mean, v := meanVar(xs)
		sd := math.Sqrt(v)
		t.Logf("FD M=%d: mean %.3f sd %.2f (spec %.1f) mean |S| %.2f", c.m, mean, sd, specSD[c.m], size.Mean())
		if se := sd / math.Sqrt(float64(c.runs)); math.Abs(mean-29) >= 4*se {
			t.Errorf("M=%d: mean %.3f is more than 4 standard errors (%.3f) from 29", c.m, mean, se)
		}
		if math.Abs(sd-specSD[c.m]) > 0.15*specSD[c.m] {
			t.Errorf("M=%d: sd %.2f not within 15%% of %.1f", c.m, sd, specSD[c.m])
		}
		if c.m == 40 && math.Abs(size.Mean()-31.79) > 0.1 {
			t.Errorf("M=40: mean final sample size %.3f, want 31.79", size.Mean())
		}
	}
}

// With deletions but a budget larger than the stream the sample is the
// graph, so local and global estimates are exact up to κ's correction.
func TestTriestFDDeletesSampledEdges(t *testing.T) {
	f := NewTriestFD(10, 1)
	k4 := [][2]uint64{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}
	for _, e := range k4 {
		f.Add(e[0], e[1])
	}
	f.Remove(3, 2) // reversed endpoints are the same edge
	if f.Edges() != 5 || f.SampleSize() != 5 {
		t.Fatalf("s=%d |S|=%d, want 5 and 5", f.Edges(), f.SampleSize())
	}
	// Two triangles remain: {0,1,2} and {0,1,3}; κ(5, 1, 10) = 1.
	if g := f.Global(); g != 2 {
		t.Errorf("global = %v, want 2", g)
	}
	if l := f.Local(0); l != 2 {
		t.Errorf("local(0) = %v, want 2", l)
	}
	if l := f.Local(2); l != 1 {
		t.Errorf("local(2) = %v, want 1", l)
	}
	// The next insertion compensates the sampled deletion (d_i = 1, d_o = 0).
	f.Add(2, 3)
	if f.Global() != 4 || f.di != 0 {
		t.Errorf("after re-insertion: global %v, d_i %d; want 4 and 0", f.Global(), f.di)
	}
	empty := NewTriestFD(6, 1)
	empty.Remove(1, 2)
	if empty.Rejected() != 1 || empty.Time() != 0 {
		t.Errorf("deletion from an empty graph: rejected %d, t %d", empty.Rejected(), empty.Time())
	}
}

func TestTriestFDRoundTrip(t *testing.T) {
	edges := powerLawClusterGraph(400, 4, 0.5, 13)
	orig, restored := NewTriestFD(300, 5), NewTriestFD(6, 0)
	// Delete some edges first so that d_i and d_o are part of the state.
	for _, e := range edges[:200] {
		orig.Add(e[0], e[1])
	}
	for i := 0; i < 200; i += 3 {
		orig.Remove(edges[i][0], edges[i][1])
	}
	triestRoundTrip(t, orig, restored, func() encoding.BinaryUnmarshaler { return NewTriestFD(6, 0) }, edges[200:])
}

func BenchmarkTriestFDAdd(b *testing.B) {
	edges := benchGraph()
	est := NewTriestFD(50000, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(edges) == 0 && i > 0 {
			est = NewTriestFD(50000, uint64(i))
		}
		e := edges[i%len(edges)]
		est.Add(e[0], e[1])
	}
}

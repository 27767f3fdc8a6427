package sketch

import (
	"fmt"
	"math"
)

// TriestFD is TRIEST-FD, the fully dynamic variant of TRIEST: it accepts
// edge insertions and deletions and keeps at most M edges using random
// pairing (Gemulla, Lehner and Haas 2006). It tracks s, the current number
// of edges, and d_i and d_o, the deletions not yet compensated of edges
// that were in and out of the sample. While d_i + d_o = 0 an insertion
// enters a full sample with probability M/s (s, not t, exactly as the
// specification requires; M/t biases the estimate down); otherwise it
// compensates an earlier deletion: it enters with probability
// d_i/(d_i + d_o) and decrements d_i, or else decrements d_o.
//
// The estimate is ρ = (τ/κ)·s(s−1)(s−2)/(|S|(|S|−1)(|S|−2)), and 0 while
// |S| < 3, where κ = 1 − Σ_{j=0..2} C(s,j)·C(d,ω−j)/C(s+d,ω), with
// d = d_i + d_o and ω = min{M, s+d}, is the probability that |S| ≥ 3. With
// no deletions and s ≤ M, κ = 1 and the estimate is exact.
//
// Edges are normalised to (min, max) and self-loops are ignored. The model
// forbids inserting a present edge or deleting an absent one: an insertion
// of a sampled edge and a deletion while the graph is empty are rejected
// and counted by Rejected; other violations cannot be detected within the
// memory budget. TRIEST samples do not merge.
type TriestFD struct {
	triestCore[int64]
	s      uint64
	di, do uint64
}

// NewTriestFD returns an empty TRIEST-FD estimator with a budget of m edges
// whose random choices derive from seed. It panics if m < 6.
func NewTriestFD(m int, seed uint64) *TriestFD {
	return &TriestFD{triestCore: newTriestCore[int64]("TriestFD", m, seed)}
}

// Add processes the insertion of the undirected edge {u, v}.
func (f *TriestFD) Add(u, v uint64) {
	e, ok := normEdge(u, v)
	if !ok {
		return
	}
	if f.smp.contains(e) {
		f.rejected++
		return
	}
	f.t++
	f.s++
	if f.di+f.do == 0 {
		if f.smp.len() >= f.m {
			if !f.rng.coin(uint64(f.m), f.s) {
				return
			}
			old := f.smp.removeAt(int(f.rng.intn(uint64(f.smp.len()))))
			f.c.update(&f.smp, old, -1)
		}
	} else if f.rng.coin(f.di, f.di+f.do) {
		f.di--
	} else {
		f.do--
		return
	}
	f.smp.add(e)
	f.c.update(&f.smp, e, 1)
}

// Remove processes the deletion of the undirected edge {u, v}.
func (f *TriestFD) Remove(u, v uint64) {
	e, ok := normEdge(u, v)
	if !ok {
		return
	}
	if f.s == 0 {
		f.rejected++
		return
	}
	f.t++
	f.s--
	if f.smp.remove(e) {
		f.c.update(&f.smp, e, -1)
		f.di++
	} else {
		f.do++
	}
}

// lnChoose returns ln C(n, k) for 0 ≤ k ≤ n.
func lnChoose(n, k uint64) float64 {
	a, _ := math.Lgamma(float64(n) + 1)
	b, _ := math.Lgamma(float64(k) + 1)
	c, _ := math.Lgamma(float64(n-k) + 1)
	return a - b - c
}

// triestKappa is κ = Pr[|S| ≥ 3] = 1 − Σ_{j=0..2} C(s,j)·C(d,ω−j)/C(s+d,ω)
// with ω = min{M, s+d}.
func triestKappa(s, d uint64, m int) float64 {
	omega := min(uint64(m), s+d)
	sum := 0.0
	for j := uint64(0); j <= 2; j++ {
		if j > s || j > omega || omega-j > d {
			continue
		}
		sum += math.Exp(lnChoose(s, j) + lnChoose(d, omega-j) - lnChoose(s+d, omega))
	}
	return 1 - sum
}

// scale returns the factor that turns sample counters into estimates.
func (f *TriestFD) scale() float64 {
	k := uint64(f.smp.len())
	if k < 3 {
		return 0
	}
	if f.di+f.do == 0 && f.s == k {
		return 1 // the sample is the whole graph
	}
	fs, fk := float64(f.s), float64(k)
	return fs * (fs - 1) * (fs - 2) / (fk * (fk - 1) * (fk - 2)) / triestKappa(f.s, f.di+f.do, f.m)
}

// Global returns the estimated number of triangles in the current graph.
func (f *TriestFD) Global() float64 {
	if f.c.global == 0 {
		return 0
	}
	return f.scale() * float64(f.c.global)
}

// Local returns the estimated number of triangles of the current graph that
// contain vertex u.
func (f *TriestFD) Local(u uint64) float64 {
	x := f.c.local[u]
	if x == 0 {
		return 0
	}
	return f.scale() * float64(x)
}

// TopLocal returns the k vertices with the largest local estimates, largest
// first, ties broken by smaller vertex id.
func (f *TriestFD) TopLocal(k int) []VertexEstimate { return topLocal(&f.c, k, f.scale()) }

// Edges returns s, the current number of edges in the graph.
func (f *TriestFD) Edges() uint64 { return f.s }

// MarshalBinary encodes the estimator, including its sample and random
// state; it implements encoding.BinaryMarshaler.
func (f *TriestFD) MarshalBinary() ([]byte, error) {
	return f.marshal(tagTriestFD, 48, func(e *encoder) {
		e.uvarint(f.s)
		e.uvarint(f.di)
		e.uvarint(f.do)
	}, (*encoder).varint), nil
}

// UnmarshalBinary restores an estimator written by MarshalBinary; it
// implements encoding.BinaryUnmarshaler. On error f is unchanged.
func (f *TriestFD) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "TriestFD", triestVersion, tagTriestFD)
	var s, di, do uint64
	c := unmarshalTriest(d, func(d *decoder) {
		s, di, do = d.uvarint(), d.uvarint(), d.uvarint()
	}, (*decoder).varint)
	if d.err == nil && uint64(c.smp.len()) > s {
		d.fail("sample of %d edges exceeds the %d edges of the graph", c.smp.len(), s)
	}
	if err := d.finish(); err != nil {
		return err
	}
	*f = TriestFD{triestCore: c, s: s, di: di, do: do}
	return nil
}

// String returns a short description of the estimator's state.
func (f *TriestFD) String() string {
	return fmt.Sprintf("TriestFD(M=%d, t=%d, s=%d, d_i=%d, d_o=%d, |S|=%d, τ=%d)",
		f.m, f.t, f.s, f.di, f.do, f.smp.len(), f.c.global)
}

package sketch

import (
	"fmt"
	"math"
)

// TriestImpr is TRIEST-IMPR, the lower-variance insertion-only variant of
// TRIEST. It differs from TriestBase in three ways: the counters are
// updated for every arriving edge, before the sampling decision, against
// the sample as it was; they are never decremented on eviction; and each
// increment is weighted by η(t) = max{1, (t−1)(t−2)/(M(M−1))}. τ and τ_u are
// then unbiased estimates as they stand, exact while t ≤ M.
//
// Self-loops are ignored and repeats are handled as in TriestBase. TRIEST
// samples do not merge.
type TriestImpr struct {
	triestCore[float64]
}

// NewTriestImpr returns an empty TRIEST-IMPR estimator with a budget of m
// edges whose random choices derive from seed. It panics if m < 6.
func NewTriestImpr(m int, seed uint64) *TriestImpr {
	return &TriestImpr{newTriestCore[float64]("TriestImpr", m, seed)}
}

// triestEta is η(t) = max{1, (t−1)(t−2)/(M(M−1))}.
func triestEta(t uint64, m int) float64 {
	ft, fm := float64(t), float64(m)
	return math.Max(1, (ft-1)*(ft-2)/(fm*(fm-1)))
}

// Add processes the insertion of the undirected edge {u, v}.
func (p *TriestImpr) Add(u, v uint64) {
	e, ok := normEdge(u, v)
	if !ok {
		return
	}
	if p.smp.contains(e) {
		p.rejected++
		return
	}
	p.t++
	p.c.update(&p.smp, e, triestEta(p.t, p.m))
	if p.t > uint64(p.m) {
		if !p.rng.coin(uint64(p.m), p.t) {
			return
		}
		p.smp.removeAt(int(p.rng.intn(uint64(p.smp.len()))))
	}
	p.smp.add(e)
}

// Global returns the estimated number of triangles in the graph so far.
func (p *TriestImpr) Global() float64 { return p.c.global }

// Local returns the estimated number of triangles that contain vertex u.
func (p *TriestImpr) Local(u uint64) float64 { return p.c.local[u] }

// TopLocal returns the k vertices with the largest local estimates, largest
// first, ties broken by smaller vertex id.
func (p *TriestImpr) TopLocal(k int) []VertexEstimate { return topLocal(&p.c, k, 1) }

// MarshalBinary encodes the estimator, including its sample and random
// state; it implements encoding.BinaryMarshaler.
func (p *TriestImpr) MarshalBinary() ([]byte, error) {
	return p.marshal(tagTriestImpr, 32, nil, (*encoder).f64), nil
}

// UnmarshalBinary restores an estimator written by MarshalBinary; it
// implements encoding.BinaryUnmarshaler. On error p is unchanged.
func (p *TriestImpr) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "TriestImpr", triestVersion, tagTriestImpr)
	c := unmarshalTriest(d, nil, (*decoder).f64)
	if d.err == nil && uint64(c.smp.len()) != min(c.t, uint64(c.m)) {
		d.fail("sample of %d edges after %d insertions with budget %d", c.smp.len(), c.t, c.m)
	}
	if err := d.finish(); err != nil {
		return err
	}
	*p = TriestImpr{c}
	return nil
}

// String returns a short description of the estimator's state.
func (p *TriestImpr) String() string {
	return fmt.Sprintf("TriestImpr(M=%d, t=%d, |S|=%d, τ=%.6g)", p.m, p.t, p.smp.len(), p.c.global)
}

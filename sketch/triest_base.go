package sketch

import (
	"fmt"
	"math"
)

// TriestBase is TRIEST-BASE: it estimates the global and local triangle
// counts of an insertion-only stream of undirected edges while storing at
// most M edges. The sample S is a uniform reservoir of the edges seen; the
// counters τ and τ_u are the exact triangle counts of the sample graph and
// are scaled by ξ(t) = max{1, t(t−1)(t−2)/(M(M−1)(M−2))}, which makes the
// estimates unbiased, and exact while t ≤ M.
//
// Edges are normalised to (min, max); self-loops are ignored. The model
// forbids inserting an edge twice: a repeated edge that is still in the
// sample is rejected and counted by Rejected, which includes every repeat
// while t ≤ M; a repeat of an edge not in the sample cannot be detected
// within the memory budget and is processed as a new edge. TRIEST samples
// do not merge.
type TriestBase struct {
	triestCore[int64]
}

// NewTriestBase returns an empty TRIEST-BASE estimator with a budget of m
// edges whose random choices derive from seed. It panics if m < 6.
func NewTriestBase(m int, seed uint64) *TriestBase {
	return &TriestBase{newTriestCore[int64]("TriestBase", m, seed)}
}

// Add processes the insertion of the undirected edge {u, v}.
func (b *TriestBase) Add(u, v uint64) {
	e, ok := normEdge(u, v)
	if !ok {
		return
	}
	if b.smp.contains(e) {
		b.rejected++
		return
	}
	b.t++
	if b.t > uint64(b.m) {
		if !b.rng.coin(uint64(b.m), b.t) {
			return
		}
		old := b.smp.removeAt(int(b.rng.intn(uint64(b.smp.len()))))
		b.c.update(&b.smp, old, -1)
	}
	b.smp.add(e)
	b.c.update(&b.smp, e, 1)
}

// triestXi is ξ(t) = max{1, t(t−1)(t−2)/(M(M−1)(M−2))}.
func triestXi(t uint64, m int) float64 {
	ft, fm := float64(t), float64(m)
	return math.Max(1, ft*(ft-1)*(ft-2)/(fm*(fm-1)*(fm-2)))
}

// Global returns the estimated number of triangles in the graph so far.
func (b *TriestBase) Global() float64 { return triestXi(b.t, b.m) * float64(b.c.global) }

// Local returns the estimated number of triangles that contain vertex u.
func (b *TriestBase) Local(u uint64) float64 {
	return triestXi(b.t, b.m) * float64(b.c.local[u])
}

// TopLocal returns the k vertices with the largest local estimates, largest
// first, ties broken by smaller vertex id.
func (b *TriestBase) TopLocal(k int) []VertexEstimate {
	return topLocal(&b.c, k, triestXi(b.t, b.m))
}

// MarshalBinary encodes the estimator, including its sample and random
// state; it implements encoding.BinaryMarshaler.
func (b *TriestBase) MarshalBinary() ([]byte, error) {
	return b.marshal(tagTriestBase, 32, nil, (*encoder).varint), nil
}

// UnmarshalBinary restores an estimator written by MarshalBinary; it
// implements encoding.BinaryUnmarshaler. On error b is unchanged.
func (b *TriestBase) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "TriestBase", triestVersion, tagTriestBase)
	c := unmarshalTriest(d, nil, (*decoder).varint)
	if d.err == nil && uint64(c.smp.len()) != min(c.t, uint64(c.m)) {
		d.fail("sample of %d edges after %d insertions with budget %d", c.smp.len(), c.t, c.m)
	}
	if err := d.finish(); err != nil {
		return err
	}
	*b = TriestBase{c}
	return nil
}

// String returns a short description of the estimator's state.
func (b *TriestBase) String() string {
	return fmt.Sprintf("TriestBase(M=%d, t=%d, |S|=%d, τ=%d)", b.m, b.t, b.smp.len(), b.c.global)
}

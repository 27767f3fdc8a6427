package sketch

import (
	"fmt"
	"slices"
	"sort"
)

// This file holds the parts shared by the three TRIEST estimators (De
// Stefani, Epasto, Riondato and Upfal, KDD 2016): their common state and
// accessors (triestCore), the edge sample with O(1) uniform eviction, the
// sample graph's adjacency sets, the triangle counters, and the encoding.

const triestVersion = 1

// triestCore is the state every TRIEST estimator has: the budget M, the
// time t, the rejected operations, the random source, the sample and the
// counters (int64 for BASE and FD, float64 for IMPR's weighted ones).
type triestCore[N int64 | float64] struct {
	m        int
	t        uint64
	rejected uint64
	rng      splitMix64
	smp      edgeSample
	c        triCounters[N]
}

func newTriestCore[N int64 | float64](kind string, m int, seed uint64) triestCore[N] {
	checkTriestBudget(kind, m)
	return triestCore[N]{m: m, rng: newSplitMix64(seed), smp: newEdgeSample(m), c: newTriCounters[N]()}
}

// Budget returns M, the maximum number of sampled edges.
func (c *triestCore[N]) Budget() int { return c.m }

// Time returns t, the number of operations processed.
func (c *triestCore[N]) Time() uint64 { return c.t }

// SampleSize returns the number of edges in the sample.
func (c *triestCore[N]) SampleSize() int { return c.smp.len() }

// Rejected returns the number of operations rejected: repeats of a sampled
// edge and, for TriestFD, deletions from an empty graph.
func (c *triestCore[N]) Rejected() uint64 { return c.rejected }

// marshal encodes the estimator: M and t, what extra writes (the state
// of its variant), the rejected count, the random state, then the sample
// and the counters (put writes one counter).
func (c *triestCore[N]) marshal(tag byte, size int, extra func(e *encoder), put func(e *encoder, x N)) []byte {
	e := newEncoder(triestVersion, tag, size+12*c.smp.len())
	e.count(c.m)
	e.uvarint(c.t)
	if extra != nil {
		extra(e)
	}
	e.uvarint(c.rejected)
	e.rng(c.rng)
	encodeTriest(e, &c.smp, &c.c, func(x N) { put(e, x) })
	return e.bytes()
}

// unmarshal decodes what marshal wrote into a new core; extra reads the
// variant's state and check validates the decoded core. Errors are in d.
func unmarshalTriest[N int64 | float64](d *decoder, extra func(d *decoder), get func(d *decoder) N) triestCore[N] {
	m := d.uvarint()
	t := d.uvarint()
	if extra != nil {
		extra(d)
	}
	rej := d.uvarint()
	rng := d.rng()
	if d.err == nil && (m < 6 || m > 1<<40) {
		d.fail("budget %d", m)
	}
	if d.err != nil {
		return triestCore[N]{}
	}
	smp, c := decodeTriest(d, int(m), func() N { return get(d) })
	return triestCore[N]{m: int(m), t: t, rejected: rej, rng: rng, smp: smp, c: c}
}

// VertexEstimate is a vertex with its estimated local triangle count.
type VertexEstimate struct {
	Vertex   uint64  // vertex id
	Estimate float64 // estimated number of triangles containing Vertex
}

type triEdge struct{ u, v uint64 } // u < v

// normEdge orders an edge's endpoints; ok is false for a self-loop.
func normEdge(u, v uint64) (triEdge, bool) {
	switch {
	case u < v:
		return triEdge{u, v}, true
	case v < u:
		return triEdge{v, u}, true
	default:
		return triEdge{}, false
	}
}

// edgeSample is the sample S: an edge array with an index map for O(1)
// uniform eviction by swap-with-last, and neighbour sets for the
// intersections N^S_u ∩ N^S_v.
type edgeSample struct {
	edges []triEdge
	pos   map[triEdge]int
	adj   map[uint64]*nbrSet
	free  []*nbrSet // recycled neighbour sets
}

// nbrSet is a vertex's neighbour set in the sample graph: a plain slice,
// scanned linearly while small, plus a position index once it grows past
// nbrIndexAt entries.
type nbrSet struct {
	list []uint64
	idx  map[uint64]int32
}

const nbrIndexAt = 16

func (n *nbrSet) find(x uint64) int {
	if n.idx != nil {
		if i, ok := n.idx[x]; ok {
			return int(i)
		}
		return -1
	}
	for i, y := range n.list {
		if y == x {
			return i
		}
	}
	return -1
}

func (n *nbrSet) add(x uint64) {
	n.list = append(n.list, x)
	if n.idx != nil {
		n.idx[x] = int32(len(n.list) - 1)
	} else if len(n.list) > nbrIndexAt {
		n.idx = make(map[uint64]int32, 2*len(n.list))
		for i, y := range n.list {
			n.idx[y] = int32(i)
		}
	}
}

func (n *nbrSet) remove(x uint64) {
	i := n.find(x)
	if i < 0 {
		return
	}
	last := len(n.list) - 1
	if i != last {
		n.list[i] = n.list[last]
		if n.idx != nil {
			n.idx[n.list[i]] = int32(i)
		}
	}
	n.list = n.list[:last]
	if n.idx != nil {
		delete(n.idx, x)
		if len(n.list) < nbrIndexAt/2 {
			n.idx = nil
		}
	}
}

func newEdgeSample(m int) edgeSample {
	hint := min(m, 1<<16)
	return edgeSample{edges: make([]triEdge, 0, hint), pos: make(map[triEdge]int, hint),
		adj: make(map[uint64]*nbrSet, hint)}
}

func (s *edgeSample) len() int { return len(s.edges) }

func (s *edgeSample) contains(e triEdge) bool {
	_, ok := s.pos[e]
	return ok
}

func (s *edgeSample) add(e triEdge) {
	s.pos[e] = len(s.edges)
	s.edges = append(s.edges, e)
	s.link(e.u, e.v)
	s.link(e.v, e.u)
}

func (s *edgeSample) link(a, b uint64) {
	n := s.adj[a]
	if n == nil {
		if k := len(s.free); k > 0 {
			n, s.free = s.free[k-1], s.free[:k-1]
		} else {
			n = &nbrSet{list: make([]uint64, 0, 4)}
		}
		s.adj[a] = n
	}
	n.add(b)
}

func (s *edgeSample) unlink(a, b uint64) {
	n := s.adj[a]
	n.remove(b)
	if len(n.list) == 0 {
		delete(s.adj, a)
		if cap(n.list) <= 64 {
			s.free = append(s.free, n)
		}
	}
}

// removeAt removes the edge at index i by swapping the last edge into its
// place, and returns it.
func (s *edgeSample) removeAt(i int) triEdge {
	e := s.edges[i]
	last := len(s.edges) - 1
	if i != last {
		moved := s.edges[last]
		s.edges[i] = moved
		s.pos[moved] = i
	}
	s.edges = s.edges[:last]
	delete(s.pos, e)
	s.unlink(e.u, e.v)
	s.unlink(e.v, e.u)
	return e
}

func (s *edgeSample) remove(e triEdge) bool {
	i, ok := s.pos[e]
	if ok {
		s.removeAt(i)
	}
	return ok
}

// forCommon calls fn for each common neighbour of u and v in the sample,
// iterating over the smaller neighbourhood and probing the larger.
func (s *edgeSample) forCommon(u, v uint64, fn func(c uint64)) {
	nu, nv := s.adj[u], s.adj[v]
	if nu == nil || nv == nil {
		return
	}
	if len(nu.list) > len(nv.list) {
		nu, nv = nv, nu
	}
	for _, c := range nu.list {
		if nv.find(c) >= 0 {
			fn(c)
		}
	}
}

// triCounters holds τ and the non-zero local counters τ_c.
type triCounters[N int64 | float64] struct {
	global N
	local  map[uint64]N
}

func newTriCounters[N int64 | float64]() triCounters[N] {
	return triCounters[N]{local: make(map[uint64]N)}
}

func (c *triCounters[N]) bump(x uint64, d N) {
	v := c.local[x] + d
	if v == 0 {
		delete(c.local, x)
	} else {
		c.local[x] = v
	}
}

// update is UpdateCounters(sign·weight, (u,v)) over the current sample.
func (c *triCounters[N]) update(s *edgeSample, e triEdge, d N) {
	s.forCommon(e.u, e.v, func(x uint64) {
		c.global += d
		c.bump(x, d)
		c.bump(e.u, d)
		c.bump(e.v, d)
	})
}

// topLocal returns the k vertices with the largest local counters, scaled
// by scale, ordered by estimate descending and then vertex ascending.
func topLocal[N int64 | float64](c *triCounters[N], k int, scale float64) []VertexEstimate {
	if k <= 0 {
		return nil
	}
	all := make([]VertexEstimate, 0, len(c.local))
	for v, x := range c.local {
		all = append(all, VertexEstimate{Vertex: v, Estimate: float64(x)})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Estimate != all[j].Estimate {
			return all[i].Estimate > all[j].Estimate
		}
		return all[i].Vertex < all[j].Vertex
	})
	if len(all) > k {
		all = all[:k]
	}
	for i := range all {
		all[i].Estimate *= scale
	}
	return all
}

func checkTriestBudget(kind string, m int) {
	if m < 6 {
		panic(fmt.Sprintf("sketch: %s needs a memory budget of at least 6 edges, got %d", kind, m))
	}
}

// encodeSample writes the sample edges in array order (which fixes future
// evictions) and the counters with vertices in ascending order.
func encodeTriest[N int64 | float64](e *encoder, s *edgeSample, c *triCounters[N], put func(N)) {
	e.count(len(s.edges))
	for _, x := range s.edges {
		e.uvarint(x.u)
		e.uvarint(x.v - x.u)
	}
	put(c.global)
	keys := make([]uint64, 0, len(c.local))
	for k := range c.local {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.count(len(keys))
	for _, k := range keys {
		e.uvarint(k)
		put(c.local[k])
	}
}

func decodeTriest[N int64 | float64](d *decoder, m int, get func() N) (edgeSample, triCounters[N]) {
	n := d.count(2)
	if d.err == nil && n > m {
		d.fail("sample of %d edges exceeds budget %d", n, m)
	}
	s := newEdgeSample(m)
	for i := 0; i < n && d.err == nil; i++ {
		u := d.uvarint()
		dv := d.uvarint()
		e := triEdge{u, u + dv}
		if d.err == nil && (dv == 0 || e.v < u || s.contains(e)) {
			d.fail("sample edge %d (%d,%d) is a self-loop, overflows or repeats", i, u, u+dv)
		}
		if d.err == nil {
			s.add(e)
		}
	}
	c := newTriCounters[N]()
	c.global = get()
	nl := d.count(2)
	var prev uint64
	for i := 0; i < nl && d.err == nil; i++ {
		k := d.uvarint()
		v := get()
		if d.err == nil && ((i > 0 && k <= prev) || v == 0) {
			d.fail("local counter %d for vertex %d out of order or zero", i, k)
		}
		c.local[k] = v
		prev = k
	}
	return s, c
}

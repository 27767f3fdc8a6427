package sketch

import (
	"math"
	"slices"
)

// Test helpers for the TRIEST tests and benchmarks: the karate-club stream
// of the specification, a deterministic power-law cluster graph generator
// and an exact triangle counter.

// karateEdges is networkx.karate_club_graph() in networkx edge order (spec
// §1.8): 78 edges, 45 triangles.
var karateEdges = [][2]uint64{
	{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}, {0, 8}, {0, 10}, {0, 11}, {0, 12}, {0, 13}, {0, 17}, {0, 19}, {0, 21}, {0, 31},
	{1, 2}, {1, 3}, {1, 7}, {1, 13}, {1, 17}, {1, 19}, {1, 21}, {1, 30}, {2, 3}, {2, 7}, {2, 8}, {2, 9}, {2, 13}, {2, 27}, {2, 28}, {2, 32},
	{3, 7}, {3, 12}, {3, 13}, {4, 6}, {4, 10}, {5, 6}, {5, 10}, {5, 16}, {6, 16}, {8, 30}, {8, 32}, {8, 33}, {9, 33}, {13, 33}, {14, 32},
	{14, 33}, {15, 32}, {15, 33}, {18, 32}, {18, 33}, {19, 33}, {20, 32}, {20, 33}, {22, 32}, {22, 33}, {23, 25}, {23, 27}, {23, 29},
	{23, 32}, {23, 33}, {24, 25}, {24, 27}, {24, 31}, {25, 31}, {26, 29}, {26, 33}, {27, 33}, {28, 31}, {28, 33}, {29, 32}, {29, 33},
	{30, 32}, {30, 33}, {31, 32}, {31, 33}, {32, 33},
}

// triangleCount holds exact global and local triangle counts.
type triangleCount struct {
	global    int64
	local     map[uint64]int64
	triangles [][3]uint64
}

// exactTriangles counts the triangles of a simple undirected graph by
// orienting each edge from lower to higher (degree, id) and intersecting
// sorted forward neighbour lists: O(m^1.5). It lists the triangles only when
// list is true.
func exactTriangles(edges [][2]uint64, list bool) triangleCount {
	deg := map[uint64]int{}
	for _, e := range edges {
		deg[e[0]]++
		deg[e[1]]++
	}
	less := func(a, b uint64) bool {
		if deg[a] != deg[b] {
			return deg[a] < deg[b]
		}
		return a < b
	}
	fwd := map[uint64][]uint64{}
	for _, e := range edges {
		a, b := e[0], e[1]
		if !less(a, b) {
			a, b = b, a
		}
		fwd[a] = append(fwd[a], b)
	}
	for _, l := range fwd {
		slices.Sort(l)
	}
	res := triangleCount{local: map[uint64]int64{}}
	for a, la := range fwd {
		for _, b := range la {
			lb := fwd[b]
			i, j := 0, 0
			for i < len(la) && j < len(lb) {
				switch {
				case la[i] < lb[j]:
					i++
				case la[i] > lb[j]:
					j++
				default:
					c := la[i]
					res.global++
					res.local[a]++
					res.local[b]++
					res.local[c]++
					if list {
						res.triangles = append(res.triangles, [3]uint64{a, b, c})
					}
					i++
					j++
				}
			}
		}
	}
	return res
}

// powerLawClusterGraph generates a Holme–Kim graph (Barabási–Albert
// preferential attachment with triad formation): it starts from a clique of
// m+1 vertices, and every new vertex links to m distinct earlier vertices,
// the first by preferential attachment and each further one, with
// probability p, to a neighbour of the previous target (closing a
// triangle), otherwise by preferential attachment again. Edges come in
// generation order; the result is deterministic in seed.
func powerLawClusterGraph(n, m int, p float64, seed uint64) [][2]uint64 {
	rng := newSplitMix64(seed)
	edges := make([][2]uint64, 0, n*m)
	adj := make([][]uint64, n)
	ends := make([]uint64, 0, 2*n*m) // each vertex once per incident edge
	addEdge := func(a, b uint64) {
		edges = append(edges, [2]uint64{a, b})
		adj[a] = append(adj[a], b)
		adj[b] = append(adj[b], a)
		ends = append(ends, a, b)
	}
	for a := 0; a <= m; a++ {
		for b := a + 1; b <= m; b++ {
			addEdge(uint64(a), uint64(b))
		}
	}
	chosen := make(map[uint64]bool, m)
	for v := uint64(m + 1); v < uint64(n); v++ {
		clear(chosen)
		t := ends[rng.intn(uint64(len(ends)))]
		chosen[t] = true
		addEdge(v, t)
		for len(chosen) < m {
			if rng.float64() < p {
				nb := adj[t]
				w := nb[rng.intn(uint64(len(nb)))]
				if w != v && !chosen[w] {
					chosen[w] = true
					addEdge(v, w)
					t = w
					continue
				}
			}
			w := ends[rng.intn(uint64(len(ends)))]
			if w != v && !chosen[w] {
				chosen[w] = true
				addEdge(v, w)
				t = w
			}
		}
	}
	return edges
}

// relErr returns |est − truth| / truth.
func relErr(est, truth float64) float64 { return math.Abs(est-truth) / truth }

// meanVar returns the mean and the unbiased sample variance of xs.
func meanVar(xs []float64) (mean, variance float64) {
	var m Moments
	for _, x := range xs {
		m.Add(x)
	}
	return m.Mean(), m.SampleVariance()
}

package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/eddystream/eddy/sketch"
)

const (
	karate   = "testdata/karate.txt"
	karateFD = "testdata/karate_fd.txt"
)

// readOps reads an edge file the simple way, for the exact counts.
func readOps(t *testing.T, path string) [][3]uint64 { // {del, u, v}
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ops [][3]uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		var del uint64
		if len(fs) == 3 {
			if fs[0] == "-" {
				del = 1
			}
			fs = fs[1:]
		}
		u, err1 := strconv.ParseUint(fs[0], 10, 64)
		v, err2 := strconv.ParseUint(fs[1], 10, 64)
		if err1 != nil || err2 != nil || len(fs) != 2 {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		ops = append(ops, [3]uint64{del, u, v})
	}
	return ops
}

// exact applies ops to a graph and counts its edges and its triangles,
// globally and per vertex.
func exact(ops [][3]uint64) (edges int, global int, local map[uint64]int) {
	adj := map[uint64]map[uint64]bool{}
	for _, op := range ops {
		u, v := op[1], op[2]
		for _, p := range [][2]uint64{{u, v}, {v, u}} {
			if adj[p[0]] == nil {
				adj[p[0]] = map[uint64]bool{}
			}
			if op[0] == 1 {
				delete(adj[p[0]], p[1])
			} else {
				adj[p[0]][p[1]] = true
			}
		}
	}
	local = map[uint64]int{}
	for u, nu := range adj {
		for v := range nu {
			if v <= u {
				continue
			}
			edges++
			for w := range adj[v] {
				if w > v && nu[w] {
					global++
					local[u]++
					local[v]++
					local[w]++
				}
			}
		}
	}
	return edges, global, local
}

// topExact returns the k largest local counts as TopLocal orders them.
func topExact(local map[uint64]int, k int) []sketch.VertexEstimate {
	var out []sketch.VertexEstimate
	for v, n := range local {
		out = append(out, sketch.VertexEstimate{Vertex: v, Estimate: float64(n)})
	}
	slices.SortFunc(out, func(a, b sketch.VertexEstimate) int {
		if a.Estimate != b.Estimate {
			if a.Estimate > b.Estimate {
				return -1
			}
			return 1
		}
		return int(a.Vertex) - int(b.Vertex)
	})
	return out[:min(k, len(out))]
}

// The test data are what their comments say.
func TestTestdata(t *testing.T) {
	ops := readOps(t, karate)
	if n, g, _ := exact(ops); len(ops) != 78 || n != 78 || g != 45 {
		t.Fatalf("%s: %d lines, %d edges, %d triangles; want 78, 78, 45", karate, len(ops), n, g)
	}
	ops = readOps(t, karateFD)
	if n, g, _ := exact(ops); len(ops) != 114 || n != 62 || g != 29 {
		t.Fatalf("%s: %d lines, %d edges, %d triangles; want 114, 62, 29", karateFD, len(ops), n, g)
	}
}

func runJob(t *testing.T, cfg config) (Result, string) {
	t.Helper()
	var out strings.Builder
	res, err := run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	return res, out.String()
}

// With a budget of at least the number of edges every variant is exact.
func TestExactWithinBudget(t *testing.T) {
	_, _, local := exact(readOps(t, karate))
	for _, variant := range []string{"base", "impr", "fd"} {
		for _, m := range []int{78, 1000} {
			res, out := runJob(t, config{File: karate, M: m, Variant: variant, Seed: 3, Every: 20, Top: 5})
			f := res.Final
			if !f.Final || f.Edges != 78 || f.Global != 45 {
				t.Errorf("%s M=%d: final report %+v, want 45 triangles after 78 edges", variant, m, f)
			}
			if want := topExact(local, 5); !slices.Equal(f.Top, want) {
				t.Errorf("%s M=%d: top local %v, want %v", variant, m, f.Top, want)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 4 || !strings.HasPrefix(lines[0], "after 20 edges:") || !strings.HasPrefix(lines[3], "final: after 78 edges: 45.0 triangles; top local: 0 (18.0) 33 (15.0)") {
				t.Errorf("%s M=%d: output\n%s", variant, m, out)
			}
			if len(res.DeadLetters) != 0 {
				t.Errorf("%s: dead letters %v", variant, res.DeadLetters)
			}
		}
	}
}

// TRIEST-FD on the fully dynamic stream is exact while the graph fits.
func TestFullyDynamic(t *testing.T) {
	_, _, local := exact(readOps(t, karateFD))
	for _, m := range []int{78, 200} {
		res, _ := runJob(t, config{File: karateFD, M: m, Variant: "fd", Seed: 1, Top: 3})
		if f := res.Final; f.Edges != 114 || f.Global != 29 || !slices.Equal(f.Top, topExact(local, 3)) {
			t.Errorf("M=%d: final %+v, want 29 triangles after 114 elements, top %v", m, f, topExact(local, 3))
		}
	}
	// Below the budget it is an estimate, reproducible from the seed.
	a, outA := runJob(t, config{File: karateFD, M: 40, Variant: "fd", Seed: 7, Every: 10, Top: 3})
	b, outB := runJob(t, config{File: karateFD, M: 40, Variant: "fd", Seed: 7, Every: 10, Top: 3})
	if outA != outB || a.Final.Global != b.Final.Global {
		t.Errorf("two runs with seed 7 differ:\n%s\n%s", outA, outB)
	}
	// Deletions need the fd variant: elsewhere they are dead letters.
	res, out := runJob(t, config{File: karateFD, M: 200, Variant: "impr", Seed: 1})
	if len(res.DeadLetters) != 26 || !strings.Contains(out, "26 malformed lines set aside") {
		t.Errorf("impr on a dynamic stream: %d dead letters\n%s", len(res.DeadLetters), out)
	}
}

func TestMalformedLines(t *testing.T) {
	data, err := os.ReadFile(karate)
	if err != nil {
		t.Fatal(err)
	}
	bad := "1 x\n\n  # an indented comment\n7\n1 2 3\n+ 4 5 6\n* 1 2\n100\t\t101\n"
	path := filepath.Join(t.TempDir(), "edges.txt")
	if err := os.WriteFile(path, append([]byte(bad), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	res, out := runJob(t, config{File: path, M: 100, Variant: "base", Seed: 1, Top: 1})
	// 100-101 is a new edge, in no triangle.
	if f := res.Final; f.Edges != 79 || f.Global != 45 {
		t.Errorf("final %+v, want 45 triangles after 79 edges", f)
	}
	var locs []string
	for _, d := range res.DeadLetters {
		locs = append(locs, strings.TrimPrefix(d.Location, path))
	}
	slices.Sort(locs)
	if want := []string{":1", ":4", ":5", ":6", ":7"}; !slices.Equal(locs, want) {
		t.Errorf("dead letters at %v, want %v\n%s", locs, want, out)
	}
	if !strings.Contains(out, "5 malformed lines set aside") {
		t.Errorf("output:\n%s", out)
	}
}

func TestEmptyInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(path, []byte("# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, out := runJob(t, config{File: path, M: 10, Variant: "impr", Top: 3})
	if res.Final.Edges != 0 || res.Final.Global != 0 || out != "final: after 0 edges: 0.0 triangles\n" {
		t.Errorf("final %+v, output %q", res.Final, out)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []config{
		{M: 100, Variant: "base"},
		{File: karate, M: 5, Variant: "base"},
		{File: karate, M: 100, Variant: "exact"},
		{File: karate, M: 100, Variant: "fd", Every: -1},
		{File: karate, M: 100, Variant: "fd", Top: -1},
	} {
		if _, err := run(context.Background(), cfg, &strings.Builder{}); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	if _, err := run(context.Background(), config{File: "testdata/missing.txt", M: 100, Variant: "base"}, &strings.Builder{}); err == nil {
		t.Error("a missing file: no error")
	}
}

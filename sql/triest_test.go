package sql_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql"
)

// The TRIEST tests compare the estimates of TABLE(TRIEST(...)) with the
// triangles of the graph counted by brute force: equal while the graph has
// at most the budget's edges, close with a fixed seed on larger graphs.

// graph is an undirected simple graph.
type graph map[[2]int64]bool

func edgeKey(u, v int64) [2]int64 {
	if u > v {
		u, v = v, u
	}
	return [2]int64{u, v}
}

// randomGraph draws m distinct edges between n vertices.
func randomGraph(rng *rand.Rand, n, m int) ([][2]int64, graph) {
	g := graph{}
	var order [][2]int64
	for len(order) < m {
		u, v := rng.Int64N(int64(n)), rng.Int64N(int64(n))
		if u == v || g[edgeKey(u, v)] {
			continue
		}
		g[edgeKey(u, v)] = true
		order = append(order, [2]int64{u, v})
	}
	return order, g
}

// triangles counts the triangles of g, and those of each vertex.
func (g graph) triangles() (int, map[int64]int) {
	adj := map[int64]map[int64]bool{}
	for e := range g {
		for i := 0; i < 2; i++ {
			if adj[e[i]] == nil {
				adj[e[i]] = map[int64]bool{}
			}
			adj[e[i]][e[1-i]] = true
		}
	}
	total, local := 0, map[int64]int{}
	for e := range g {
		for w := range adj[e[0]] {
			if w > e[1] && adj[e[1]][w] {
				total++
				local[e[0]]++
				local[e[1]]++
				local[w]++
			}
		}
	}
	return total, local
}

// triestRun runs a TRIEST query over the edge lines (src|dst, with a
// leading change kind for a changelog) at parallelism p and returns the
// changes of its output.
func triestRun(t *testing.T, lines []string, mode changelog.Mode, call string, p int) []string {
	t.Helper()
	f := newRowsFactory()
	f.tables["edges"] = rowsTable{lines: lines, mode: mode}
	cols := "edges BIGINT, triangles DOUBLE"
	if strings.Contains(call, "LOCAL") {
		cols = "vertex BIGINT, triangles DOUBLE"
	}
	joinRun(t, f, fmt.Sprintf(`
CREATE TABLE edges (src BIGINT, dst BIGINT) WITH ('connector' = 'rows', 'id' = 'edges');
CREATE TABLE out (%s) WITH ('connector' = 'rows', 'id' = 'out');
INSERT INTO out SELECT * FROM TABLE(%s);
`, cols, call), p)
	return f.out["out"]
}

func edgeLines(edges [][2]int64) []string {
	var out []string
	for _, e := range edges {
		out = append(out, fmt.Sprintf("%d|%d", e[0], e[1]))
	}
	return out
}

// globalOf returns the single row of a global TRIEST output, its changelog
// applied: the edges and the triangles.
func globalOf(t *testing.T, changes []string) (int64, float64) {
	t.Helper()
	final := joinFinalTable(t, changes)
	if len(final) != 1 {
		t.Fatalf("the global estimate is %d rows, want 1: %v", len(final), final)
	}
	for r := range final {
		f := strings.Split(strings.Trim(r, "[]"), ", ")
		n, _ := strconv.ParseInt(f[0], 10, 64)
		tri, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatalf("row %s", r)
		}
		return n, tri
	}
	return 0, 0
}

func TestTriestExactWithinBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	order, g := randomGraph(rng, 60, 400)
	want, local := g.triangles()
	if want < 20 {
		t.Fatalf("the graph has %d triangles: the test needs more", want)
	}
	// Every edge twice more, as self-loops and with a NULL end: skipped.
	lines := append(edgeLines(order), "7|7", "null|3", "3|null")
	for _, mode := range []string{"base", "improved", "fully-dynamic"} {
		for _, p := range []int{1, 2} {
			n, tri := globalOf(t, triestRun(t, lines, changelog.InsertOnly,
				fmt.Sprintf("TRIEST(TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst), 400, MODE => '%s')", mode), p))
			if n != int64(len(order)) || tri != float64(want) {
				t.Errorf("%s at parallelism %d: %d edges and %v triangles, want %d and %d", mode, p, n, tri, len(order), want)
			}
		}
	}
	// The local estimates of the top 10 vertices: largest first, ties by
	// smaller vertex.
	type vt struct {
		v int64
		n int
	}
	var all []vt
	for v, n := range local {
		all = append(all, vt{v, n})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].n != all[j].n {
			return all[i].n > all[j].n
		}
		return all[i].v < all[j].v
	})
	var wantTop []string
	for _, x := range all[:10] {
		wantTop = append(wantTop, fmt.Sprintf("[%d, %d.0]", x.v, x.n))
	}
	sort.Strings(wantTop)
	for _, every := range []int{1, 37} {
		changes := triestRun(t, lines, changelog.InsertOnly,
			fmt.Sprintf("TRIEST(TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst), BUDGET => 1000, LOCAL => 10, EVERY => %d)", every), 2)
		var got []string
		for r, n := range joinFinalTable(t, changes) {
			for ; n > 0; n-- {
				got = append(got, r)
			}
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(wantTop, " ") {
			t.Errorf("local top 10, every %d edges: got %v, want %v", every, got, wantTop)
		}
	}
}

// TestTriestFullyDynamic reads a changelog of edges, inserted, updated and
// deleted: the estimate is of the graph that remains.
func TestTriestFullyDynamic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	order, g := randomGraph(rng, 50, 400)
	var lines []string
	for _, e := range order {
		lines = append(lines, fmt.Sprintf("+I|%d|%d", e[0], e[1]))
	}
	// Delete every third edge, move every fifth to a fresh pair.
	for i, e := range order {
		switch {
		case i%3 == 0:
			lines = append(lines, fmt.Sprintf("-D|%d|%d", e[0], e[1]))
			delete(g, edgeKey(e[0], e[1]))
		case i%5 == 0:
			u, v := int64(100+i), e[1]
			lines = append(lines, fmt.Sprintf("-U|%d|%d", e[0], e[1]), fmt.Sprintf("+U|%d|%d", u, v))
			delete(g, edgeKey(e[0], e[1]))
			g[edgeKey(u, v)] = true
		}
	}
	want, _ := g.triangles()
	if want < 10 {
		t.Fatalf("%d triangles remain: the test needs more", want)
	}
	for _, call := range []string{
		"TRIEST(TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst), 1000)",
		"TRIEST(TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst), 1000, MODE => 'fully-dynamic', EVERY => 100)",
	} {
		n, tri := globalOf(t, triestRun(t, lines, changelog.Retract, call, 1))
		if n != int64(len(g)) || tri != float64(want) {
			t.Errorf("%s: %d edges and %v triangles, want %d and %d", call, n, tri, len(g), want)
		}
	}
}

// TestTriestBeyondBudget estimates the triangles of a graph of 6000 edges
// with a budget of 2000: within 15% of the count for every mode with the
// seeds tried, whether the edges come in one order (parallelism 1) or
// interleaved from two source splits (the first seed).
func TestTriestBeyondBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	order, g := randomGraph(rng, 300, 6000)
	want, _ := g.triangles()
	lines := edgeLines(order)
	for _, mode := range []string{"base", "improved", "fully-dynamic"} {
		for seed := 1; seed <= 3; seed++ {
			call := fmt.Sprintf("TRIEST(TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst), 2000, '%s', EVERY => 50, SEED => %d)", mode, seed)
			for p := 1; p <= 2 && (p == 1 || seed == 1); p++ {
				_, tri := globalOf(t, triestRun(t, lines, changelog.InsertOnly, call, p))
				if e := math.Abs(tri-float64(want)) / float64(want); e > 0.15 {
					t.Errorf("%s at parallelism %d: %v triangles, want %d within 15%% (error %.1f%%)", call, p, tri, want, 100*e)
				}
			}
		}
	}
}

// TestTriestResumesFromCheckpoint fails a TRIEST job once and restarts it
// from its last checkpoint: its final estimate is that of a run without
// failures, so the sample, counters and random state were restored.
func TestTriestResumesFromCheckpoint(t *testing.T) {
	const n = 20000
	script := fmt.Sprintf(`
CREATE FUNCTION fail_once AS 'test.FailOnce';
CREATE TABLE gen (id BIGINT) WITH (
  'connector' = 'datagen', 'rows-per-second' = '100000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d');
CREATE VIEW edges AS SELECT fail_once(id) / 400 AS src, id %% 400 AS dst FROM gen
  WHERE id / 400 < id %% 400 AND MOD(id / 400 * 31 + id %% 400 * 17, 7) = 0;
CREATE TABLE out (edges BIGINT, triangles DOUBLE) WITH ('connector' = 'collect');
INSERT INTO out SELECT * FROM TABLE(TRIEST(TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst), 500));
`, n-1)
	last := func(lines []string) string {
		if len(lines) == 0 {
			t.Fatal("no output")
		}
		return lines[len(lines)-1]
	}
	failOnce.at.Store(-1)
	clean, _ := runWith(t, script, eddy.WithParallelism(1))
	failOnce.seen.Store(0)
	failOnce.fired.Store(false)
	edges := 0 // the rows of the view, each of which calls fail_once
	for id := 0; id < n; id++ {
		if a, b := id/400, id%400; a < b && (a*31+b*17)%7 == 0 {
			edges++
		}
	}
	failOnce.at.Store(int64(edges * 3 / 4))
	failed, env := runWith(t, script, eddy.WithParallelism(1), eddy.WithCheckpointing(5*time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.FixedDelayRestart(2, 10*time.Millisecond)))
	if !failOnce.fired.Load() || env.Restarts() != 1 {
		t.Fatalf("the injected failure fired %v, the job restarted %d times; want one failure and one restart", failOnce.fired.Load(), env.Restarts())
	}
	if a, b := last(clean), last(failed); a != b || !strings.HasPrefix(a, "+U[") {
		t.Fatalf("the final estimate is %s after a restart, %s without failures", b, a)
	}
}

// TestTriestErrors checks the errors of bad TRIEST calls.
func TestTriestErrors(t *testing.T) {
	f := newRowsFactory()
	f.tables["edges"] = rowsTable{mode: changelog.InsertOnly}
	for _, c := range []struct{ call, want string }{
		{"TRIEST(TABLE edges, DESCRIPTOR(name), DESCRIPTOR(dst))", "TRIEST's vertices are integers, but name is"},
		{"TRIEST(TABLE edges, DESCRIPTOR(nope), DESCRIPTOR(dst))", "edges has no column nope"},
		{"TRIEST(TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst), 5)", "an integer from 6"},
		{"TRIEST(TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst), MODE => 'exact')", "'base', 'improved' or 'fully-dynamic'"},
		{"TRIEST(TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst), SIZE => 10)", "TRIEST has no parameter SIZE"},
		{"TRIEST(TABLE changes, DESCRIPTOR(src), DESCRIPTOR(dst), MODE => 'base')", "takes insertions only"},
		{"TRIEST(DESCRIPTOR(src), DESCRIPTOR(dst))", "the first argument of TRIEST is the edge table"},
	} {
		s := newSession(f)
		_, err := s.Execute(`
CREATE TABLE edges (src BIGINT, dst BIGINT, name STRING) WITH ('connector' = 'rows', 'id' = 'edges');
CREATE TABLE counts (src BIGINT, dst BIGINT) WITH ('connector' = 'rows', 'id' = 'edges');
CREATE VIEW changes AS SELECT src, COUNT(*) AS dst FROM counts GROUP BY src;
SELECT * FROM TABLE(` + c.call + `);`)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.call, err, c.want)
		}
	}
}

// newSession returns a session with the 'rows' connector of f.
func newSession(f *rowsFactory) *sql.Session {
	reg := registry(&collectSink{})
	reg.Register(f)
	return sql.NewSession(sql.WithConnectors(reg))
}

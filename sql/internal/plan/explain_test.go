package plan

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestExplainParallelism runs the data-driven files of testdata/explain
// with the directives of TestPlan: the parallelism EXPLAIN shows for every
// operator, from SET 'parallelism.default', the script's default and the
// operators the engine pins.
func TestExplainParallelism(t *testing.T) {
	datadriven.Walk(t, "testdata/explain", runPlanFile)
}

// TestExplainScriptParallelism checks that EXPLAIN shows the Script's
// Parallelism when no SET gives one, and the SET's when one does.
func TestExplainScriptParallelism(t *testing.T) {
	s := &Script{Cat: NewCatalog(nil), Parallelism: 3}
	rs, err := s.Exec(`CREATE TABLE g (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
EXPLAIN SELECT k, COUNT(*) FROM g GROUP BY k;`)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(rs[len(rs)-1].Text), "\n")
	if len(lines) < 3 {
		t.Fatalf("EXPLAIN gave %q, want a plan of the aggregation over the scan", lines)
	}
	for _, l := range lines[1:] {
		if !strings.HasSuffix(l, ", parallelism=3") {
			t.Errorf("EXPLAIN with Script.Parallelism 3: line %q does not end in parallelism=3", l)
		}
	}
	if _, err := s.Exec(`SET 'parallelism.default' = '2';`); err != nil {
		t.Fatal(err)
	}
	if p, err := s.DefaultParallelism(); err != nil || p != 2 {
		t.Errorf("DefaultParallelism after SET 'parallelism.default' = '2': %d, %v; want 2", p, err)
	}
}

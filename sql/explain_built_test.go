package sql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql"
)

// TestExplainShowsBuiltSources checks EXPLAIN against the job built from
// the same script: the scans it shows (each reused one once) are the
// sources the job opens, with source and sub-plan reuse on and off. With
// reuse on, a statement set reading different fields of one table opens
// one source, and a join read by one projection shows only the columns it
// keeps.
func TestExplainShowsBuiltSources(t *testing.T) {
	join := `
CREATE TABLE t1 (auction BIGINT, seller BIGINT) WITH ('connector' = 'tables', 'name' = 't1');
CREATE VIEW auction AS SELECT auction.id, auction.seller, auction.extra FROM datagen WHERE event_type = 1;
INSERT INTO t1 SELECT B.auction, A.seller FROM bid B JOIN auction A ON B.auction = A.id;
`
	cases := append(reuseCases, struct{ name, ddlColumn, script string }{"a join read by one projection", "", join})
	for _, c := range cases {
		ddl := fmt.Sprintf(reuseDDL, c.ddlColumn)
		for _, reuse := range []bool{true, false} {
			script := ddl + c.script
			if !reuse {
				script = reuseOff + script
			}
			plan := reuseExplain(t, script)
			scans := strings.Count(plan, "TableSourceScan(")
			s := sql.NewSession(sql.WithConnectors((&tablesEnv{base: t.TempDir()}).registry()))
			if _, err := s.Execute(script); err != nil {
				t.Fatal(err)
			}
			env := eddy.NewEnvironment(eddy.WithParallelism(1))
			if err := s.Build(env); err != nil {
				t.Fatal(err)
			}
			graph, err := env.Plan()
			if err != nil {
				t.Fatal(err)
			}
			sources := 0 // the chains that begin with a source
			for _, line := range strings.Split(graph, "\n") {
				if strings.HasPrefix(line, "Source: ") {
					sources++
				}
			}
			if sources != scans {
				t.Errorf("%s (reuse %v): EXPLAIN shows %d scans, the job opens %d sources\n%s\n%s", c.name, reuse, scans, sources, plan, graph)
			}
			if reuse && strings.Contains(c.name, "different fields") && scans != 1 {
				t.Errorf("%s: %d scans of one table, want one\n%s", c.name, scans, plan)
			}
			if strings.Contains(c.name, "join") && !strings.Contains(plan, "select=[`auction`, `id`, `seller`]") {
				t.Errorf("%s: the join keeps other columns than those read\n%s", c.name, plan)
			}
		}
	}
}

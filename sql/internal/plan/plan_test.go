package plan

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	_ "github.com/eddystream/eddy/connectors/all"
)

// planDirs are the directories of data-driven plan tests that TestPlan
// runs (testdata/join has a driver of its own, join_test.go).
var planDirs = []string{"testdata/rank", "testdata/window", "testdata/show"}

// TestPlan runs the data-driven files of planDirs. Each file is a session
// of its own (a fresh catalog), and its directives are
//
//	exec     run the statements of the input; print what they show (SHOW,
//	         DESCRIBE, EXPLAIN), "ok" if nothing, or the error
//	explain  plan the query or INSERT of the input and print its plan
//	reset    start a fresh catalog
func TestPlan(t *testing.T) {
	for _, dir := range planDirs {
		datadriven.Walk(t, dir, runPlanFile)
	}
}

func runPlanFile(t *testing.T, path string) {
	s := &Script{Cat: NewCatalog(nil)}
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "reset":
			s = &Script{Cat: NewCatalog(nil)}
			return ""
		case "exec", "explain":
			src := d.Input
			if d.Cmd == "explain" {
				src = "EXPLAIN " + src
			}
			rs, err := s.Exec(src)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			var b strings.Builder
			for _, r := range rs {
				b.WriteString(r.Text)
			}
			if b.Len() == 0 {
				return "ok\n"
			}
			return b.String()
		}
		t.Fatalf("%s: unknown directive %s", d.Pos, d.Cmd)
		return ""
	})
}

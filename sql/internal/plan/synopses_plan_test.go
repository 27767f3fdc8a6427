package plan

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestSynopsesPlans runs the data-driven plan tests of the approximate
// aggregates, TRIEST and LATE_ROWS (testdata/synopses), with the
// directives of TestPlan.
func TestSynopsesPlans(t *testing.T) {
	datadriven.Walk(t, "testdata/synopses", runPlanFile)
}

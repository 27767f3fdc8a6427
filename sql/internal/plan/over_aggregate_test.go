package plan

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestOverPlans runs the data-driven files of testdata/over with the
// driver of TestPlan (runPlanFile): plans of OVER aggregations and the
// errors of the windows eddy refuses.
func TestOverPlans(t *testing.T) {
	datadriven.Walk(t, "testdata/over", runPlanFile)
}

package plan

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestSubqueryPlans runs the scripts of testdata/subquery (subqueries
// planned as semi, anti and left joins, INTERSECT and EXCEPT) with the
// driver of TestPlan.
func TestSubqueryPlans(t *testing.T) {
	datadriven.Walk(t, "testdata/subquery", runPlanFile)
}

package plan

import (
	"math"
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/types"
)

// TestRowtimeOf reads the rowtime of rows from a column of milliseconds,
// of microseconds, and from an expression: the milliseconds, and the
// smallest timestamp for NULL.
func TestRowtimeOf(t *testing.T) {
	rt := types.MustRowType(types.F("ms", types.TimestampType(3)), types.F("us", types.TimestampType(6)), types.F("ltz", types.TimestampLTZType(3)))
	w := types.NewRowWriter(rt, types.NewArena(0))
	w.SetTimestampMillis(0, 1500)
	w.SetTimestamp(1, types.Timestamp{Millis: 2500, NanoOfMilli: 7000})
	w.SetTimestampMillis(2, 3500)
	full := w.Finish()
	empty := w.Finish() // every field NULL
	col := func(i int) expr.Expr { return &expr.Column{Index: i, Name: rt.Field(i).Name, T: rt.FieldType(i)} }
	b, _ := expr.Builtins().Lookup("COALESCE")
	coalesce, err := expr.NewCall(b, col(2), col(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		e          expr.Expr
		full, null int64
	}{
		{col(0), 1500, math.MinInt64},
		{col(1), 2500, math.MinInt64},
		{col(2), 3500, math.MinInt64},
		{coalesce, 3500, math.MinInt64},
	} {
		f, err := rowtimeOf(tc.e)
		if err != nil {
			t.Fatalf("%s: %v", tc.e, err)
		}
		if got := f(Rec{Kind: changelog.Insert, Row: full}); got != tc.full {
			t.Errorf("%s of a row: %d, want %d", tc.e, got, tc.full)
		}
		if got := f(Rec{Kind: changelog.Insert, Row: empty}); got != tc.null {
			t.Errorf("%s of NULL: %d, want %d", tc.e, got, tc.null)
		}
	}
}

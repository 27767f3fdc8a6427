package nexmark_test

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql/types"
)

// filterTable is a nexmark table as the reference's DDL declares it, with
// the event's time as a physical column.
func filterTable() *connector.Table {
	return &connector.Table{Schema: types.MustRowType(
		types.F("event_type", types.Int()),
		types.F("person", types.MustParseType("ROW<id BIGINT, name VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>")),
		types.F("auction", types.MustParseType("ROW<id BIGINT, seller BIGINT, category BIGINT, `dateTime` TIMESTAMP(3)>")),
		types.F("bid", types.MustParseType("ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>")),
		types.F("dateTime", types.MustParseType("TIMESTAMP(3)")),
	)}
}

// openFilterTable opens the source of tbl, a quarter of the conformance
// suite's events.
func openFilterTable(t testing.TB, tbl *connector.Table) connector.Source[connector.TableRecord] {
	src, err := connector.OpenTableSource(connector.Default, "nexmark", map[string]string{
		"events.num": fmt.Sprint(conformanceEvents / 4), "first-event.rate": "10000000", "next-event.rate": "10000000",
	}, tbl)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestTableFilterConformance runs the filter check of the conformance
// suite on the source of a nexmark table: the predicates on the event type
// and the comparisons of BIGINT fields with a constant are accepted, the
// others left to the planner.
func TestTableFilterConformance(t *testing.T) {
	tbl := filterTable()
	pred := func(path []int, op connector.CompareOp, v any) connector.Predicate {
		return connector.Predicate{Path: path, Op: op, Value: v}
	}
	connectortest.RunFilter(t, connectortest.FilterCase{
		Open:    func(t testing.TB) connector.Source[connector.TableRecord] { return openFilterTable(t, tbl) },
		RowType: tbl.RowType(),
		Filters: [][]connector.Predicate{
			{pred([]int{0}, connector.OpEqual, int32(2))},
			{pred([]int{0}, connector.OpEqual, int32(1)), pred([]int{3, 2}, connector.OpGreater, int64(1000))},
			{pred([]int{0}, connector.OpLess, int32(2)), pred([]int{0}, connector.OpNotEqual, int32(0))},
			{pred([]int{0}, connector.OpGreaterOrEqual, int32(1)), pred([]int{1}, connector.OpIsNotNull, nil)},
			{pred([]int{3}, connector.OpIsNotNull, nil), pred([]int{2, 1}, connector.OpIsNull, nil), pred([]int{0}, connector.OpLessOrEqual, int32(5))},
			{pred([]int{4}, connector.OpGreater, types.Timestamp{}), pred([]int{0}, connector.OpIsNull, nil)},
			{pred([]int{3, 2}, connector.OpLess, int64(5000))},
			{pred([]int{2, 2}, connector.OpEqual, int64(10)), pred([]int{3, 3}, connector.OpEqual, "Google")},
			{pred([]int{3, 2}, connector.OpGreaterOrEqual, int64(1000000)), pred([]int{3, 2}, connector.OpLessOrEqual, int64(5000000)), pred([]int{3, 4}, connector.OpGreater, types.Timestamp{})},
			{pred([]int{3, 0}, connector.OpNotEqual, int64(1000)), pred([]int{1, 0}, connector.OpGreater, int64(1000))},
		},
		Accept:      [][]int{{0}, {0, 1}, {0, 1}, {0, 1}, {0, 1, 2}, {1}, {0}, {0}, {0, 1}, {0, 1}},
		Projections: [][][]int{{{3, 0}, {3, 2}, {4}}, {{0}, {2}, {1, 1}}},
		Checkpoints: true,
	})
}

// TestTableNotNullConformance checks the fields the source of a nexmark
// table filtered to bids reports never NULL: event_type, the time, the bid
// and its fields (RunFilter checks the claims of the other filters).
func TestTableNotNullConformance(t *testing.T) {
	tbl := filterTable()
	connectortest.RunNotNull(t, connectortest.NotNullCase{
		Open: func(t testing.TB) connector.Source[connector.TableRecord] {
			bids, accepted := openFilterTable(t, tbl).(connector.FilterableSource).ApplyFilters([]connector.Predicate{{Path: []int{0}, Op: connector.OpEqual, Value: int32(2)}})
			if len(accepted) != 1 {
				t.Fatalf("the source accepted %v of the filter event_type = 2", accepted)
			}
			return bids
		},
		RowType: tbl.RowType(),
		NotNull: [][]int{{0}, {3}, {3, 0}, {3, 3}, {3, 5}, {4}},
	})
}

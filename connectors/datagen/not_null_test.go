package datagen_test

import (
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	_ "github.com/eddystream/eddy/connectors/datagen"
	"github.com/eddystream/eddy/sql/types"
)

// TestNotNullConformance checks the columns a datagen source reports
// never NULL: those without a null rate, and not one with a null rate.
func TestNotNullConformance(t *testing.T) {
	tbl := &connector.Table{Schema: types.MustRowType(
		types.F("id", types.BigInt()),
		types.F("maybe", types.BigInt()),
		types.F("name", types.MustParseType("VARCHAR")),
		types.F("nested", types.MustParseType("ROW<a INT, b VARCHAR>")),
	)}
	open := func(t testing.TB) connector.Source[connector.TableRecord] {
		src, err := connector.OpenTableSource(connector.Default, "datagen", map[string]string{
			"number-of-rows": "2000", "fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "2000",
			"fields.maybe.null-rate": "0.5",
		}, tbl)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	connectortest.RunNotNull(t, connectortest.NotNullCase{Open: open, RowType: tbl.RowType(), NotNull: [][]int{{0}, {2}, {3}}})
	if open(t).(connector.NotNullSource).NotNull([]int{1}) {
		t.Error("the source reports the column with 'fields.maybe.null-rate' = '0.5' never NULL")
	}
}

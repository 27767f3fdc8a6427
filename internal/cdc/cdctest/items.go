package cdctest

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql/types"
)

// ItemsTable is the SQL table of the items table of SourceConformance.
var ItemsTable = &connector.Table{
	Schema: types.MustRowType(
		types.F("id", types.BigInt().NotNull()),
		types.F("name", types.String()),
		types.F("price", types.DecimalType(10, 2)),
		types.F("ts", types.TimestampType(3)),
	),
	PrimaryKey: []int{0},
}

// ItemRow returns item i as SQL values and as the text of its fields.
func ItemRow(i int) (sqlValues string, fields []string) {
	name := fmt.Sprintf("item-%d", i)
	price := fmt.Sprintf("%d.%02d", i%1000, i%100)
	ts := fmt.Sprintf("2024-01-%02d %02d:%02d:%02d.%03d", 1+i%28, i%24, i%60, (i/60)%60, i%1000)
	return fmt.Sprintf("(%d, '%s', %s, '%s')", i, name, price, ts), []string{fmt.Sprint(i), name, price, ts}
}

// InsertItems inserts items lo..hi into table in transactions of per rows.
func InsertItems(t testing.TB, c Conn, table string, lo, hi, per int) {
	t.Helper()
	InsertRows(t, c, table, lo, hi, per, func(i int) string {
		v, _ := ItemRow(i)
		return v
	})
}

// ItemsCase is a connector under the conformance suite, for
// SourceConformance.
type ItemsCase struct {
	// Connector is the connector under the suite.
	Connector Connector
	// Create creates an empty items table of its own (id BIGINT PRIMARY
	// KEY, name VARCHAR(64), price DECIMAL(10,2), ts of milliseconds) and
	// returns a connection that writes it, its name, and the options of a
	// source of it.
	Create func(t testing.TB) (c Conn, table string, options map[string]string)
	// RestoreOnce says that the server keeps the source's position too, so
	// that a savepoint can be restored once (connectortest.SourceCase).
	RestoreOnce bool
}

// SourceConformance runs the connector conformance suite on a table of
// 3000 items read in chunks of 400, to which 600 items are added in
// transactions of 50 while the jobs run: every row must be read exactly
// once, through checkpoints, failures and rescales, whether it was in the
// snapshot or came from the stream.
func SourceConformance(t *testing.T, ic ItemsCase) {
	const initial, added = 3000, 600
	rt := ItemsTable.Schema
	var want []connector.TableRecord
	for i := 1; i <= initial+added; i++ {
		_, f := ItemRow(i)
		want = append(want, Record(t, rt, changelog.Insert, f...))
	}
	connectortest.RunSource(t, connectortest.SourceCase[connector.TableRecord]{
		Open: func(t testing.TB) (connector.Source[connector.TableRecord], func()) {
			c, table, options := ic.Create(t)
			InsertItems(t, c, table, 1, initial, 500)
			src := ic.Connector.OpenSource(t, Options(options, "scan.incremental.snapshot.chunk.size", "400"), ItemsTable)
			return src, func() { InsertItems(t, c, table, initial+1, initial+added, 50) }
		},
		Want:        want,
		Unbounded:   true,
		RestoreOnce: ic.RestoreOnce,
		Key:         RecordKey(rt),
	})
}

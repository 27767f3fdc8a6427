package postgrescdc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/sql/types"
)

var itemsTable = &connector.Table{
	Schema: types.MustRowType(
		types.F("id", types.BigInt().NotNull()),
		types.F("name", types.String()),
		types.F("price", types.DecimalType(10, 2)),
		types.F("ts", types.TimestampType(3)),
	),
	PrimaryKey: []int{0},
}

func itemRow(i int) (sqlValues string, fields []string) {
	name := fmt.Sprintf("item-%d", i)
	price := fmt.Sprintf("%d.%02d", i%1000, i%100)
	ts := fmt.Sprintf("2024-01-%02d %02d:%02d:%02d.%03d", 1+i%28, i%24, i%60, (i/60)%60, i%1000)
	return fmt.Sprintf("(%d, '%s', %s, '%s')", i, name, price, ts), []string{fmt.Sprint(i), name, price, ts}
}

// TestSourceConformance runs the connector conformance suite on a table
// of 3000 rows read in chunks of 400, to which 600 rows are added in
// transactions of 50 while the jobs run: every row must be read exactly
// once, through checkpoints, failures and rescales, whether it was in the
// snapshot or came from the slot.
func TestSourceConformance(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	const initial, added = 3000, 600
	rt := itemsTable.Schema
	var want []connector.TableRecord
	for i := 1; i <= initial+added; i++ {
		_, f := itemRow(i)
		want = append(want, record(t, rt, changelog.Insert, f...))
	}
	connectortest.RunSource(t, connectortest.SourceCase[connector.TableRecord]{
		Open: func(t testing.TB) (connector.Source[connector.TableRecord], func()) {
			schema, slot := s.newSchema(admin)
			run(t, admin, "CREATE TABLE "+schema+".items (id BIGINT PRIMARY KEY, name VARCHAR(64), price NUMERIC(10,2), ts TIMESTAMP(3))",
				"ALTER TABLE "+schema+".items REPLICA IDENTITY FULL")
			insert(t, admin, schema, 1, initial, 500)
			src := openSource(t, s.options(schema, "items", slot, "scan.incremental.snapshot.chunk.size", "400"), itemsTable)
			return src, func() { insert(t, admin, schema, initial+1, initial+added, 50) }
		},
		Want:      want,
		Unbounded: true,
		Key:       recordKey(rt),
	})
}

// insert inserts items lo..hi in transactions of per rows.
func insert(t testing.TB, c *pgconn.PgConn, schema string, lo, hi, per int) {
	t.Helper()
	for i := lo; i <= hi; i += per {
		var vals []string
		for j := i; j <= min(i+per-1, hi); j++ {
			v, _ := itemRow(j)
			vals = append(vals, v)
		}
		run(t, c, "INSERT INTO "+schema+".items VALUES "+strings.Join(vals, ", "))
	}
}

package postgrescdc

import (
	"testing"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestSQLChangelogAggregate declares a postgres-cdc table in SQL, with
// metadata columns, and aggregates it: the result follows inserts, updates
// that move rows between groups, and deletes, with retractions, and ends
// equal to the same aggregate computed by the server.
func TestSQLChangelogAggregate(t *testing.T) {
	s := startServer(t)
	cdctest.SQLChangelogAggregate(t, cdctest.AggregateCase{
		Conn: s.conn(),
		Create: []string{"CREATE SCHEMA shop",
			"CREATE TABLE shop.orders (order_id INT PRIMARY KEY, customer VARCHAR(32), price NUMERIC(10,2), paid BOOLEAN)",
			"ALTER TABLE shop.orders REPLICA IDENTITY FULL"},
		Connector: postgresCDC,
		Options:   s.options("shop", "orders", "orders_slot", "scan.incremental.snapshot.chunk.size", "50"),
		Metadata:  [][2]string{{"db", "database_name"}, {"sch", "schema_name"}, {"tbl", "table_name"}},
		Values:    []string{"postgres", "shop", "orders"},
	})
}

package mysqlcdc

import (
	"testing"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestSQLChangelogAggregate declares a mysql-cdc table in SQL, with
// metadata columns, and aggregates it: the result follows inserts, updates
// that move rows between groups, and deletes, with retractions, and ends
// equal to the same aggregate computed by the server.
func TestSQLChangelogAggregate(t *testing.T) {
	s := startServer(t)
	cdctest.SQLChangelogAggregate(t, cdctest.AggregateCase{
		Conn: s.conn(),
		Create: []string{"CREATE DATABASE shop",
			"CREATE TABLE shop.orders (order_id INT PRIMARY KEY, customer VARCHAR(32), price DECIMAL(10,2), paid TINYINT(1))"},
		Connector: mysqlCDC,
		Options:   s.options("shop", "orders", "server-id", "5500-5510", "scan.incremental.snapshot.chunk.size", "50"),
		Metadata:  [][2]string{{"db", "database_name"}, {"tbl", "table_name"}},
		Values:    []string{"shop", "orders"},
	})
}

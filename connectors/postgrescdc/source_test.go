package postgrescdc

import (
	"testing"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestSourceConformance runs the connector conformance suite on a table
// of 3000 rows read in chunks of 400, to which 600 rows are added while
// the jobs run: every row must be read exactly once, through checkpoints,
// failures and rescales, whether it was in the snapshot or came from the
// slot.
func TestSourceConformance(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	cdctest.SourceConformance(t, cdctest.ItemsCase{
		Connector: postgresCDC,
		Create: func(t testing.TB) (cdctest.Conn, string, map[string]string) {
			schema, slot := s.newSchema(admin)
			admin.Exec(t, "CREATE TABLE "+schema+".items (id BIGINT PRIMARY KEY, name VARCHAR(64), price NUMERIC(10,2), ts TIMESTAMP(3))",
				"ALTER TABLE "+schema+".items REPLICA IDENTITY FULL")
			return admin, schema + ".items", s.options(schema, "items", slot)
		},
		// The slot's confirmed_flush_lsn moves on with the checkpoints of
		// a job restored from a savepoint: a second restore of it fails,
		// as it should.
		RestoreOnce: true,
	})
}

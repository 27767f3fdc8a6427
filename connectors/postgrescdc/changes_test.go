package postgrescdc

import (
	"testing"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestChangesUnderLoad mirrors a table that a concurrent load inserts
// into, updates (primary keys too) and deletes from while the source reads
// its snapshot at parallelism 2 and then its slot, with failures injected
// downstream: at the end the changelog, applied as a multiset, equals the
// table row for row.
func TestChangesUnderLoad(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	schema, slot := s.newSchema(admin)
	const rows = 4000
	createAccounts(t, admin, schema, rows)
	cdctest.ChangesUnderLoad(t, cdctest.LoadCase{
		Connector: postgresCDC,
		Admin:     admin,
		Load:      s.conn(),
		Table:     schema + ".accounts",
		Rows:      rows,
		Source:    openSource(t, s.options(schema, "accounts", slot, "scan.incremental.snapshot.chunk.size", "300"), accountsTable),
	})
}

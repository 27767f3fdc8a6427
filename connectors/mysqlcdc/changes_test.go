package mysqlcdc

import (
	"testing"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestChangesUnderLoad mirrors a table that a concurrent load inserts
// into, updates (primary keys too) and deletes from while the source reads
// its snapshot and then its binlog, with failures injected downstream:
// at the end the changelog, applied as a multiset, equals the table row
// for row.
func TestChangesUnderLoad(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	db := s.newDatabase(admin)
	const rows = 4000
	createAccounts(t, admin, db, rows)
	cdctest.ChangesUnderLoad(t, cdctest.LoadCase{
		Connector: mysqlCDC,
		Admin:     admin,
		Load:      s.conn(),
		Table:     db + ".accounts",
		Rows:      rows,
		Source:    openSource(t, s.options(db, "accounts", "scan.incremental.snapshot.chunk.size", "300"), accountsTable),
	})
}

package mysqlcdc

import (
	"testing"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestXATransactionRefused stops the job at an XA transaction that
// changes a captured table: its rows are in the binary log from XA PREPARE
// on, and this one rolls back, so reading them would emit a row that never
// was.
func TestXATransactionRefused(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "CREATE TABLE "+db+".accounts "+cdctest.AccountsColumns,
		"XA START 'x1'", "INSERT INTO "+db+".accounts VALUES (9, 9, 'xa')", "XA END 'x1'", "XA PREPARE 'x1'", "XA ROLLBACK 'x1'",
		"INSERT INTO "+db+".accounts VALUES (1, 1, 'real')")
	err := runFails(t, s.options(db, "accounts", "scan.startup.mode", "earliest-offset"), accountsTable)
	cdctest.WantError(t, err, "XA transaction", db+".accounts")
}

package postgrescdc

import (
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/sql/types"
)

// TestGeneratedColumns reads a table with a stored generated column between
// its other columns: pgoutput leaves generated columns out of its relations
// and rows, and the source reads the other columns from the snapshot and
// the slot alike. A SQL table that declares the generated column is refused
// with the reason.
func TestGeneratedColumns(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	run(t, c, "CREATE TABLE "+schema+".accounts (id INT PRIMARY KEY, balance BIGINT, doubled BIGINT GENERATED ALWAYS AS (balance * 2) STORED, note VARCHAR(32))",
		"ALTER TABLE "+schema+".accounts REPLICA IDENTITY FULL",
		"INSERT INTO "+schema+".accounts (id, balance, note) VALUES (1, 10, 'a'), (2, 20, 'b')")
	got := startupRun(t, s.options(schema, "accounts", slot), nil, func() {
		run(t, c, "INSERT INTO "+schema+".accounts (id, balance, note) VALUES (3, 30, 'c')",
			"UPDATE "+schema+".accounts SET balance = 11 WHERE id = 1",
			"DELETE FROM "+schema+".accounts WHERE id = 2")
	}, 6)
	cdctest.WantKeys(t, got, "+I|1|10|a", "+I|2|20|b", "+I|3|30|c", "+U|1|11|a", "-D|2|20|b", "-U|1|10|a")

	tab := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int()), types.F("doubled", types.BigInt()))}
	cdctest.WantError(t, runFails(t, s.options(schema, "accounts", slot), tab), `column "doubled"`, schema+".accounts", "generated", "leave it out")
}

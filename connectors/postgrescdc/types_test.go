package postgrescdc

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestTypes reads rows of every PostgreSQL type the source maps, once from
// the snapshot and once from the slot: the two must give the same values,
// and those values must be the server's.
func TestTypes(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	c.Exec(t, "CREATE TYPE "+schema+".mood AS ENUM ('sad', 'ok', 'happy')",
		`CREATE TABLE `+schema+`.t (id INT PRIMARY KEY, si SMALLINT, i INTEGER, bi BIGINT, nu NUMERIC(30, 10), r REAL,
		d DOUBLE PRECISION, b BOOLEAN, ch CHAR(5), vc VARCHAR(20), tx TEXT, bt BYTEA, dt DATE, tm TIME(6), ts TIMESTAMP(6),
		tz TIMESTAMPTZ(6), js JSON, jb JSONB, u UUID, en `+schema+`.mood)`,
		"ALTER TABLE "+schema+".t REPLICA IDENTITY FULL")
	cdctest.Types(t, cdctest.TypesCase{
		Conn:  c,
		Table: schema + ".t",
		Values: `-32768, 2147483647, -9223372036854775808, 12345678901234567890.0123456789, 1.1, -2.25e-10, true, 'ab',
		'héllo ✓', 'long text', '\x00ff10', '2024-02-29', '12:34:56.789012', '2024-02-29 23:59:58.123456',
		'2024-03-01 10:00:00.5+02', '{"k": [1, 2]}', '{"k": [1, 2]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'happy'`,
		Script: fmt.Sprintf(`
CREATE TABLE t (
  id INT, si SMALLINT, i INT, bi BIGINT, nu DECIMAL(30, 10), r FLOAT, d DOUBLE, b BOOLEAN, ch STRING, vc STRING,
  tx STRING, bt BYTES, dt DATE, tm TIME(6), ts TIMESTAMP(6), tz TIMESTAMP_LTZ(6), js STRING, jb STRING, u STRING, en STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (%s);
SELECT * FROM t;
`, postgresCDC.With(s.options(schema, "t", slot))),
		Want: "+I 1 | -32768 | 2147483647 | -9223372036854775808 | 12345678901234567890.0123456789 | 1.1 | -2.25E-10 | TRUE | " +
			"ab    | héllo ✓ | long text | \x00\ufffd\x10 | 2024-02-29 | 12:34:56.789012 | 2024-02-29 23:59:58.123456 | " +
			`2024-03-01 08:00:00.500000 | {"k": [1, 2]} | {"k": [1, 2]} | a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 | happy`,
		Columns: 19,
		Stream:  "stream",
	})
}

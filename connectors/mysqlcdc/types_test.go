package mysqlcdc

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy/internal/cdc/cdctest"
)

// TestTypes reads rows of every MySQL type the source maps, once from the
// snapshot and once from the binlog: the two must give the same values,
// and those values must be the server's.
func TestTypes(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	c.Exec(t, "CREATE DATABASE typ CHARACTER SET utf8mb4", `CREATE TABLE typ.t (id INT PRIMARY KEY, ti TINYINT, su SMALLINT UNSIGNED, mi MEDIUMINT, iu INT UNSIGNED,
		bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, de DECIMAL(30, 10), ch CHAR(5), vc VARCHAR(20), tx TEXT, bl BLOB,
		bi BINARY(4), en ENUM('red', 'green', 'blue'), st SET('a', 'b', 'c'), bt BIT(10), js JSON, dt DATE,
		tm TIME(3), dtm DATETIME(6), ts TIMESTAMP(3) NULL, yr YEAR, bo TINYINT(1))`)
	cdctest.Types(t, cdctest.TypesCase{
		Conn:  c,
		Table: "typ.t",
		Values: `-128, 65535, -8388608, 4294967295, 18446744073709551615, 1.5, -2.25e-10,
		12345678901234567890.0123456789, 'ab', 'héllo ✓', 'long text', X'00FF10', X'61626364', 'green', 'a,c', b'1000000001',
		'{"k": [1, 2]}', '2024-02-29', '12:34:56.789', '2024-02-29 23:59:58.123456', '2024-03-01 10:00:00.500', 2024, 1`,
		Script: fmt.Sprintf(`
CREATE TABLE t (
  id INT, ti TINYINT, su INT, mi INT, iu BIGINT, bu DECIMAL(20, 0), f FLOAT, d DOUBLE, de DECIMAL(30, 10),
  ch STRING, vc STRING, tx STRING, bl BYTES, bi BYTES, en STRING, st STRING, bt BIGINT, js STRING, dt DATE,
  tm TIME(3), dtm TIMESTAMP(6), ts TIMESTAMP_LTZ(3), yr INT, bo BOOLEAN,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (%s);
SELECT * FROM t;
`, mysqlCDC.With(s.options("typ", "t", "server-id", "5600-5610"))),
		Want: "+I 1 | -128 | 65535 | -8388608 | 4294967295 | 18446744073709551615 | 1.5 | -2.25E-10 | " +
			"12345678901234567890.0123456789 | ab | héllo ✓ | long text | \x00\ufffd\x10 | abcd | green | a,c | 513 | " +
			`{"k": [1, 2]} | 2024-02-29 | 12:34:56.789 | 2024-02-29 23:59:58.123456 | 2024-03-01 10:00:00.500 | 2024 | TRUE`,
		Columns: 23,
		Stream:  "binlog",
	})
}

// TestZeroDatesFromServer reads zero dates from the snapshot and the
// binlog with 'jdbc.properties.zeroDateTimeBehavior' = 'ROUND': as
// 0001-01-01 into DATE and TIMESTAMP columns, as the server's text into a
// STRING column.
func TestZeroDatesFromServer(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	c.Exec(t, "CREATE DATABASE zd", "SET SESSION sql_mode = ''", "CREATE TABLE zd.t (id INT PRIMARY KEY, d DATE, dt DATETIME(3), ds DATE)")
	cdctest.Types(t, cdctest.TypesCase{
		Conn:   c,
		Table:  "zd.t",
		Values: `'0000-00-00', '0000-00-00 00:00:00', '0000-00-00'`,
		Script: fmt.Sprintf(`
CREATE TABLE t (id INT, d DATE, dt TIMESTAMP(3), ds STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (%s);
SELECT * FROM t;
`, mysqlCDC.With(s.options("zd", "t", "server-id", "5620-5630", "jdbc.properties.zeroDateTimeBehavior", "ROUND"))),
		Want:    "+I 1 | 0001-01-01 | 0001-01-01 00:00:00.000 | 0000-00-00",
		Columns: 3,
		Stream:  "binlog",
	})
}

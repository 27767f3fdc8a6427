package mysqlcdc

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/sql/types"
)

// wideColumns are columns of every type the source reads, in the forms
// the binary log writes differently (long CHARs, unsigned integers,
// fractional seconds, JSON).
const wideColumns = `(id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, bo TINYINT(1), si SMALLINT, su SMALLINT UNSIGNED,
	mi MEDIUMINT, mu MEDIUMINT UNSIGNED, ii INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED, yr YEAR, b1 BIT(1), b10 BIT(10),
	de DECIMAL(30, 10), nu NUMERIC(5, 2), dbig DECIMAL(65, 0), f FLOAT, f74 FLOAT(7, 4), d DOUBLE, r REAL,
	ch CHAR(5), chl CHAR(255) CHARACTER SET utf8mb4, lat VARCHAR(5) CHARACTER SET latin1, vc VARCHAR(20),
	vcl VARCHAR(1000) CHARACTER SET utf8mb4, tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT,
	en ENUM('red', 'green'), st SET('a', 'b', 'c'), js JSON, bn BINARY(4), vb VARBINARY(8), tb TINYBLOB, bl BLOB,
	mb MEDIUMBLOB, lb LONGBLOB, dt DATE, tm TIME, tm3 TIME(3), dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP NULL,
	ts3 TIMESTAMP(3) NULL)`

// wideRow is a row of wideColumns but its id.
const wideRow = `-1, 255, 1, -2, 65535, -3, 16777215, 4294967295, -4, 18446744073709551615, 2024, b'1', b'1000000001',
	1.5, 2.25, 12345678901234567890, 1.5, 1.25, 2.5, 3.5, 'ab', 'long', 'é', 'v', 'vl', 'tt', 'tx', 'mt', 'lt', 'green',
	'a,c', '{"k": 1}', X'01020304', X'0506', X'07', X'08', X'09', X'0A', '2024-02-29', '12:34:56', '12:34:56.789',
	'2024-02-29 23:59:58', '2024-02-29 23:59:58.123456', '2024-03-01 10:00:00', '2024-03-01 10:00:00.500'`

// tableMapOf returns the table map of the first rows event of db.table in
// the binary log from its start.
func tableMapOf(t *testing.T, s *server, db, table string) *replication.TableMapEvent {
	t.Helper()
	cfg := &config{host: s.Host, port: s.Port, user: "root"}
	first := strings.Split(s.conn().Query(t, "SHOW BINARY LOGS")[0], "|")[0]
	st, err := cfg.openStream(6499, "mariadb", position{File: first, Pos: 4}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		ev, _, _, err := st.next(ctx)
		if err != nil || ev == nil {
			t.Fatalf("the binary log holds no rows of %s.%s: %v", db, table, err)
		}
		if e, ok := ev.Event.(*replication.RowsEvent); ok && string(e.Table.Schema) == db && string(e.Table.Table) == table {
			return e.Table
		}
	}
}

// idTable is a SQL table of the id of a table.
var idTable = &connector.Table{Schema: types.MustRowType(types.F("id", types.Int().NotNull())), PrimaryKey: []int{0}}

// TestTableMapOfEveryType checks the table map of a table of every type
// the source reads against the table as the source describes it, on a
// server that logs no column names and on one that logs them
// (binlog_row_metadata = FULL): they fit, and the rows of the table are
// read by a SQL table's source and a pipeline's. A table whose columns
// differ in type, or in name where the server logs names, does not fit.
func TestTableMapOfEveryType(t *testing.T) {
	for _, metadata := range []string{"", "FULL"} {
		t.Run("binlog_row_metadata="+metadata, func(t *testing.T) {
			var extra []string
			if metadata != "" {
				extra = append(extra, "--binlog-row-metadata="+metadata)
			}
			s := startServer(t, extra...)
			c := s.conn()
			db := s.newDatabase(c)
			c.Exec(t, "CREATE TABLE "+db+".wide "+wideColumns, "INSERT INTO "+db+".wide VALUES (1, "+wideRow+")")
			tm := tableMapOf(t, s, db, "wide")
			if names := len(tm.ColumnName) > 0; names != (metadata == "FULL") {
				t.Fatalf("the server logs column names: %v", names)
			}
			held := &tableInfo{db: db, name: "wide", chunkKey: -1}
			if err := pipelineConfig(t, s, db).describe(c.Conn, held, nil); err != nil {
				t.Fatal(err)
			}
			if !tableMapFits(held, tm) {
				t.Fatalf("the table map (%s) does not fit the table (%s)", tableMapColumns(tm), heldColumns(held))
			}
			for i := range held.cols {
				other := *held
				other.cols = append([]column(nil), held.cols...)
				j := (i + 1) % len(held.cols)
				other.cols[i].dataType = held.cols[j].dataType
				if loggedAs(&held.cols[j], tm.ColumnType[i], tm.ColumnMeta[i]) {
					continue // logged as the same type: the two cannot be told apart
				}
				if tableMapFits(&other, tm) {
					t.Errorf("column %s as a %s fits the table map", held.cols[i].name, held.cols[j].dataType)
				}
			}
			renamed := *held
			renamed.cols = append([]column(nil), held.cols...)
			renamed.cols[3].name = "other"
			if tableMapFits(&renamed, tm) != (metadata != "FULL") {
				t.Errorf("a renamed column fits the table map: %v", tableMapFits(&renamed, tm))
			}
			fewer := *held
			fewer.cols = held.cols[:len(held.cols)-1]
			if tableMapFits(&fewer, tm) {
				t.Error("a table of fewer columns fits the table map")
			}

			// The sources read the table's rows from the binary log.
			p := runHistory(t, s, db, "6500-6510", "")
			p.waitFor(t, "+I DB.wide[1, ")
			c.Exec(t, "INSERT INTO "+db+".wide VALUES (2, "+wideRow+")", "UPDATE "+db+".wide SET ti = 5 WHERE id = 2")
			p.waitFor(t, "+I DB.wide[2, ", "+U DB.wide[2, 5, ")
			p.run.Stop()
			j := job(openSource(t, s.options(db, "wide", "server-id", "6520-6530"), idTable))
			j.Parallelism, j.Checkpoints, j.Timeout = 1, 20*time.Millisecond, 60*time.Second
			got := cdctest.Read(t, j, cdctest.Reading{Schema: idTable.Schema, Settle: 500 * time.Millisecond, N: 3, During: func() {
				c.Exec(t, "INSERT INTO "+db+".wide VALUES (3, "+wideRow+")")
			}})
			cdctest.WantKeys(t, got, "+I|1", "+I|2", "+I|3")
		})
	}
}

// TestPipelineSourceRefusesRowsOfAnotherSchema restores a pipeline from a
// savepoint taken before a statement the source does not apply (a column
// added INVISIBLE, which the parser does not read) and a later change of
// the same table: the source describes the table after the first, as the
// server has it after the second, and the rows written in between do not
// fit it. It fails, saying where and how, rather than read them with the
// wrong columns: by their types, and, where the server logs column names,
// by their names.
func TestPipelineSourceRefusesRowsOfAnotherSchema(t *testing.T) {
	for _, c := range []struct {
		name, metadata, later string
		want                  []string
	}{
		{"type", "", "ALTER TABLE a MODIFY y VARCHAR(10)", []string{"(int, int, int)", "y varchar(10)"}},
		{"name", "FULL", "ALTER TABLE a RENAME COLUMN y TO z", []string{"(id int, x int, y int)", "z int(11)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var extra []string
			if c.metadata != "" {
				extra = append(extra, "--binlog-row-metadata="+c.metadata)
			}
			s := startServer(t, extra...)
			admin := s.conn()
			db := s.newDatabase(admin)
			admin.Exec(t, "USE "+db, "CREATE TABLE a (id INT PRIMARY KEY, x INT)", "INSERT INTO a VALUES (1, 10)")
			sp := stoppedAt(t, s, admin, db, "6540-6550", []string{"+I DB.a[1, 10]"}, "+I DB.a[5, 50]", "INSERT INTO a VALUES (5, 50)")
			admin.Exec(t, "ALTER TABLE a ADD COLUMN y INT INVISIBLE", "INSERT INTO a (id, x, y) VALUES (2, 20, 200)", c.later)
			h := runHistory(t, s, db, "6540-6550", sp)
			err := h.run.Wait()
			if err == nil {
				t.Fatalf("the pipeline read the rows:\n%s", strings.Join(h.sink.got(db), "\n"))
			}
			cdctest.WantError(t, err, append([]string{"table " + db + ".a", "at binlog binlog.", "did not follow", "tables.exclude"}, c.want...)...)
			for _, l := range h.sink.got(db) {
				if strings.HasPrefix(l, "+I DB.a[2,") {
					t.Errorf("a row was read with the wrong columns: %s", l)
				}
			}
		})
	}
}

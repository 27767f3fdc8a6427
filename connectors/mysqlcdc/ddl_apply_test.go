package mysqlcdc

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/eddystream/eddy/pipeline"
)

// pipelineConfig returns the configuration of a pipeline's source of
// every table of db.
func pipelineConfig(t *testing.T, s *server, db string, extra ...string) *config {
	t.Helper()
	f, _ := pipeline.Sources.Connector("mysql")
	o := map[string]string{"hostname": s.Host, "port": fmt.Sprint(s.Port), "username": "root", "tables": db + `.\.*`, "server-id": "6200-6210"}
	for i := 0; i+1 < len(extra); i += 2 {
		o[extra[i]] = extra[i+1]
	}
	spec := f.Spec()
	opts, err := spec.Validate(o)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewPipelineSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	return src.cfg
}

// queryEvents reads the statements of the binary log from where it ends
// now, as the source reads them.
type queryEvents struct {
	t  *testing.T
	st *stream
}

func newQueryEvents(t *testing.T, s *server, cfg *config) *queryEvents {
	t.Helper()
	end, err := binlogEnd(s.conn().Conn, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	st, err := cfg.openStream(6299, "mariadb", position{File: end.File, Pos: end.Pos}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.close)
	return &queryEvents{t: t, st: st}
}

// next returns the next QUERY event whose statement is q (the server
// writes DROP TABLE its own way).
func (qe *queryEvents) next(q string) *replication.QueryEvent {
	qe.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		ev, _, _, err := qe.st.next(ctx)
		if err != nil || ev == nil {
			qe.t.Fatalf("the binary log does not hold %q: %v", q, err)
		}
		e, ok := ev.Event.(*replication.QueryEvent)
		if !ok {
			continue
		}
		if logged := strings.TrimSpace(string(e.Query)); logged == q || strings.HasPrefix(q, "DROP TABLE") && strings.HasPrefix(logged, "DROP TABLE") {
			return e
		}
	}
}

// TestAppliedTablesMatchTheServer runs statements that change tables, and
// applies each, as the binary log holds it, to the tables the source
// holds: every table it leaves is as the server describes it then,
// column for column (names, types, COLUMN_TYPE, nullability, character
// sets and collations, the values of ENUM and SET), with the same primary
// key and default collation; the source asks the server only for the default collation of a created table's database.
func TestAppliedTablesMatchTheServer(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "ALTER DATABASE "+db+" CHARACTER SET latin1", "USE "+db)
	cfg := pipelineConfig(t, s, db)
	b := &binlogReader[pipeline.Event]{r: &reader[pipeline.Event]{cfg: cfg, tables: map[string]*tableInfo{}}}
	events := newQueryEvents(t, s, cfg)
	steps := []string{
		"CREATE TABLE t1 (id INT NOT NULL, a INT, PRIMARY KEY (id))",
		"ALTER TABLE t1 ADD COLUMN b INT UNSIGNED ZEROFILL, ADD c TINYINT(1), ADD d BOOLEAN, ADD e BOOL NOT NULL, ADD f SERIAL",
		"ALTER TABLE t1 ADD COLUMN g FLOAT, ADD h FLOAT(7,4), ADD i FLOAT(30), ADD j REAL, ADD k DOUBLE PRECISION, ADD l DECIMAL, ADD m NUMERIC(8,2), ADD n DEC(5), ADD fl FLOAT(10), ADD fx FIXED(6,1), ADD dd2 DOUBLE(10,3) UNSIGNED",
		"ALTER TABLE t1 ADD COLUMN o CHAR, ADD p VARCHAR(10) CHARACTER SET utf8mb4, ADD q TEXT COLLATE latin1_bin, ADD s BLOB, ADD u BINARY, ADD v VARBINARY(5), ADD w CHAR(5) BINARY",
		`ALTER TABLE t1 ADD COLUMN z ENUM('a','b''c','d\\e') NOT NULL, ADD aa SET('x','y'), ADD bb BIT, ADD cc BIT(10), ADD dd JSON, ADD ee DATE, ADD ff TIME(3), ADD gg DATETIME, ADD hh TIMESTAMP(6) NULL, ADD ii YEAR, ADD jj YEAR(4)`,
		"ALTER TABLE t1 ADD kk LONGTEXT, ADD ll MEDIUMBLOB, ADD mm TINYTEXT, ADD nn LONG VARCHAR, ADD pp VARCHAR(3) CHARSET utf8 COLLATE utf8_bin, ADD qq INTEGER(5), ADD rr MIDDLEINT, ADD ss INT1, ADD tt INT8, ADD uu TINYINT UNSIGNED, ADD vv SMALLINT, ADD ww MEDIUMINT UNSIGNED, ADD xx BIGINT",
		"ALTER TABLE t1 ADD ts2 TIMESTAMP, ADD ts3 TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, ADD dt2 DATETIME(6), ADD ch2 CHAR(10) CHARACTER SET utf8mb4, ADD e2 ENUM('p') CHARACTER SET utf8mb4, ADD v3 VARCHAR(5) CHARACTER SET binary, ADD tx3 TEXT CHARACTER SET binary, ADD n2 NUMERIC",
		"ALTER TABLE t1 ADD COLUMN first1 INT FIRST, ADD COLUMN after1 VARCHAR(4) AFTER a, ADD COLUMN (multi1 INT, multi2 TEXT)",
		"ALTER TABLE t1 MODIFY a BIGINT NOT NULL FIRST, CHANGE b b2 VARCHAR(3) AFTER c2, RENAME COLUMN c TO c2, ALTER COLUMN d SET DEFAULT 1, ALTER COLUMN e DROP DEFAULT, DROP COLUMN g, DROP hh",
		"ALTER TABLE t1 MODIFY COLUMN p VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_general_ci NULL, CHANGE COLUMN q q TEXT",
		"ALTER TABLE t1 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin, ADD COLUMN after_charset VARCHAR(5), ENGINE=InnoDB, COMMENT='c', AUTO_INCREMENT=50",
		"ALTER TABLE t1 ADD INDEX ia (a), ADD UNIQUE KEY ub (b2), ADD KEY (c2)",
		"ALTER TABLE t1 DROP INDEX ia, ALGORITHM=INPLACE, LOCK=NONE",
		"ALTER ONLINE TABLE t1 ADD COLUMN online1 INT",
		"ALTER TABLE t1\n  ADD COLUMN lines1 INT,\n  ADD COLUMN lines2 ENUM('x',\n    'y')",
		"ALTER TABLE IF EXISTS t1 ADD COLUMN IF NOT EXISTS online1 INT, ADD COLUMN IF NOT EXISTS ifne INT, DROP COLUMN IF EXISTS nosuch, MODIFY COLUMN IF EXISTS nosuch2 INT",
		"CREATE TABLE t2 (a INT NOT NULL, b VARCHAR(8), c DECIMAL(9,3) UNSIGNED, PRIMARY KEY (a)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci",
		"ALTER TABLE t2 DROP PRIMARY KEY, ADD PRIMARY KEY (a, b)",
		"ALTER TABLE t2 CHANGE b bb VARCHAR(8) NOT NULL FIRST",
		"ALTER TABLE t2 DROP PRIMARY KEY, ADD CONSTRAINT PRIMARY KEY (c)",
		"CREATE TABLE t3 (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, t TIMESTAMP, created DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3), js JSON, st SET('a','b') NOT NULL DEFAULT 'a') DEFAULT CHARSET=utf8mb4",
		"ALTER TABLE t3 ADD n INT UNIQUE",
		"CREATE TABLE t4 LIKE t2",
		"ALTER TABLE t1 RENAME TO t5",
		"RENAME TABLE t5 TO tmp, t2 TO t5, tmp TO t2",
		"ALTER TABLE t4 ADD COLUMN moved INT, RENAME TO t6",
		"CREATE OR REPLACE TABLE t6 (k VARCHAR(5) PRIMARY KEY, v TEXT)",
		"DROP TABLE t3, t6",
	}
	for _, q := range steps {
		c.Exec(t, q)
		e := events.next(q)
		st := parseQueryStatus(e.StatusVars)
		if !st.known || st.clientCollation < 0 {
			t.Fatalf("%q: the status of its QUERY event (%x) is not read: %+v", q, e.StatusVars, st)
		}
		edit := b.applyDDL(c.Conn, string(e.Schema), string(e.Query), st)
		if edit.why != "" {
			t.Fatalf("%q is not applied: %s", q, edit.why)
		}
		for _, n := range edit.names {
			id := n[0] + "." + n[1]
			d := edit.tables[id]
			if d == nil {
				delete(b.r.tables, id)
				continue
			}
			now := d.table()
			if err := cfg.finish(now, nil, 1); err != nil {
				t.Fatalf("%q: %v", q, err)
			}
			b.r.tables[id] = now
		}
		tables := c.Query(t, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '"+db+"'")
		if len(tables) != len(b.r.tables) {
			t.Fatalf("after %q the server has the tables %v, the source holds %d", q, tables, len(b.r.tables))
		}
		for _, name := range tables {
			held := b.r.tables[db+"."+name]
			if held == nil {
				t.Fatalf("after %q the source does not hold table %s", q, name)
			}
			want := &tableInfo{db: db, name: name, chunkKey: -1}
			if err := cfg.describe(c.Conn, want, nil); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < max(len(held.cols), len(want.cols)); i++ {
				var h, w column
				if i < len(held.cols) {
					h = held.cols[i]
				}
				if i < len(want.cols) {
					w = want.cols[i]
				}
				if !reflect.DeepEqual(h, w) {
					t.Errorf("after %q column %d of %s is\n%+v, the server describes it as\n%+v", q, i, name, h, w)
				}
			}
			if !reflect.DeepEqual(held.pk, want.pk) || held.collation != want.collation {
				t.Errorf("after %q table %s has the primary key %v and default collation %s, the server's has %v and %s",
					q, name, held.pk, held.collation, want.pk, want.collation)
			}
			if held.schema.String() != want.schema.String() {
				t.Errorf("after %q table %s has the schema %s, the server's gives %s", q, name, held.schema, want.schema)
			}
		}
	}
}

// TestStatementsNotApplied checks that statements the source cannot apply
// with certainty are left to a description of the table from the server.
func TestStatementsNotApplied(t *testing.T) {
	held := &tableInfo{db: "shop", name: "orders", cols: []column{{name: "id", dataType: "int", columnType: "int(11)", notNull: true}}, pk: []int{0}, collation: "latin1_swedish_ci"}
	tables, err := pipeline.ParseSelector(`shop.\.*`)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config{pipeline: true, tables: tables}
	b := &binlogReader[pipeline.Event]{r: &reader[pipeline.Event]{cfg: cfg, tables: map[string]*tableInfo{"shop.orders": held},
		facts: &serverFacts{mariaDB: true, intWidths: true, explicitTimestamps: true,
			charsetOf: map[string]string{"latin1_swedish_ci": "latin1", "latin1_bin": "latin1", "utf8mb4_general_ci": "utf8mb4"}, defaultCollation: map[string]string{"latin1": "latin1_swedish_ci", "utf8mb4": "utf8mb4_general_ci"},
			collationByID: map[int]string{8: "latin1_swedish_ci", 45: "utf8mb4_general_ci"}}}}
	ok := queryStatus{known: true, clientCollation: 45, explicitTimestamps: -1}
	for _, c := range []struct {
		q   string
		st  queryStatus
		why string
	}{
		{"ALTER TABLE orders ADD x INT INVISIBLE", ok, "parser"},
		{"ALTER TABLE orders ADD x INET6", ok, "parser"},
		{"ALTER TABLE orders ADD x NCHAR(3)", ok, "national"},
		{"ALTER TABLE orders ADD x NATIONAL VARCHAR(3)", ok, "national"},
		{"ALTER TABLE orders ADD x TEXT(100)", ok, "length"},
		{"ALTER TABLE orders ADD x INT AS (id + 1) VIRTUAL", ok, "generated"},
		{"ALTER TABLE orders CONVERT TO CHARACTER SET utf8mb4", ok, "converts"},
		{"ALTER TABLE orders ADD id INT", ok, "two columns"},
		{"ALTER TABLE orders DROP COLUMN nosuch", ok, "does not have"},
		{"ALTER TABLE orders DROP COLUMN id", ok, "primary key"},
		{"ALTER TABLE orders ADD x INT AFTER nosuch", ok, "does not have"},
		{"ALTER TABLE orders ADD PRIMARY KEY (id)", ok, "second primary key"},
		{"ALTER TABLE other ADD x INT", ok, "does not hold"},
		{"ALTER TABLE orders ADD x VARCHAR(3) CHARACTER SET ucs2", ok, "character set"},
		{"ALTER TABLE orders ADD x DATE", queryStatus{known: true, sqlMode: 1 << 9, clientCollation: 45}, "sql_mode"},
		{"ALTER TABLE orders ADD x INT", queryStatus{clientCollation: 45}, "sql_mode"},
		{"ALTER TABLE orders ADD x ENUM('é')", queryStatus{known: true, clientCollation: 8}, "UTF-8"},
		{"CREATE TABLE orders (id INT PRIMARY KEY)", ok, "holds"},
		{"CREATE TABLE t2 AS SELECT 1 AS id", ok, "query"},
		{"CREATE TABLE t2 LIKE nosuch", ok, "does not hold"},
		{"DROP TEMPORARY TABLE orders", ok, "temporary"},
	} {
		if e := b.applyDDL(nil, "shop", c.q, c.st); !strings.Contains(e.why, c.why) {
			t.Errorf("%q: applied, or not for the reason expected (%q): %q", c.q, c.why, e.why)
		}
	}
	// And some that are.
	for _, q := range []string{
		"ALTER TABLE orders ADD x ENUM('é')",
		"ALTER TABLE `shop`.`orders` ADD COLUMN `select` INT",
		"/* a tool's comment */ ALTER TABLE orders ADD x INT",
		"ALTER IGNORE TABLE orders ADD x INT",
		"DROP TABLE IF EXISTS orders /* generated by server */",
	} {
		if e := b.applyDDL(nil, "shop", q, ok); e.why != "" {
			t.Errorf("%q is not applied: %s", q, e.why)
		}
	}
}

// TestQueryStatus reads the sql_mode, the client's collation and MySQL's
// explicit_defaults_for_timestamp among the status variables of a QUERY
// event, stepping over the others, and stops at one it does not know.
func TestQueryStatus(t *testing.T) {
	vars := []byte{
		qFlags2, 0, 0, 0, 0,
		qSQLMode, 4, 0, 0, 0, 0, 0, 0, 0,
		qCatalogNZ, 3, 's', 't', 'd',
		qAutoIncrement, 1, 0, 1, 0,
		qCharset, 45, 0, 45, 0, 8, 0,
		qTimeZone, 3, 'U', 'T', 'C',
		qInvoker, 1, 'u', 1, 'h',
		qUpdatedDBNames, 2, 'a', 0, 'b', 0,
		qMicroseconds, 1, 2, 3,
		qExplicitDefaults, 0,
		200, 1, 2, 3,
	}
	st := parseQueryStatus(vars)
	if !st.known || st.sqlMode != 4 || st.clientCollation != 45 || st.explicitTimestamps != 0 {
		t.Errorf("read %+v", st)
	}
	if st := parseQueryStatus(vars[:10]); st.known || st.clientCollation != -1 {
		t.Errorf("a truncated sql_mode is read: %+v", st)
	}
}

// TestBinlogSplitKeepsTableCollations: a pipeline's binlog split carries
// its tables' default collations, which a split written without them
// (before the source kept them) lacks.
func TestBinlogSplitKeepsTableCollations(t *testing.T) {
	held := &tableInfo{db: "shop", name: "orders", cols: []column{{name: "id", dataType: "int", columnType: "int(11)", notNull: true}},
		pk: []int{0}, collation: "latin1_swedish_ci"}
	held.toRow = make([]int, 1)
	if err := (&config{}).pipelineTable(held, 3); err != nil {
		t.Fatal(err)
	}
	split := encodeBinlogSplit(&binlogSplit{pos: position{File: "binlog.000001", Pos: 4}, tables: []*tableInfo{held}})
	_, got, err := decodeSplit(split)
	if err != nil || len(got.tables) != 1 || got.tables[0].collation != "latin1_swedish_ci" || got.tables[0].version != 3 {
		t.Fatalf("decoded %+v (%v)", got, err)
	}
	old := split
	old.State = old.State[:len(old.State)-len("latin1_swedish_ci")-1]
	if _, got, err = decodeSplit(old); err != nil || len(got.tables) != 1 || got.tables[0].collation != "" || got.tables[0].version != 3 {
		t.Fatalf("decoded a split without collations as %+v (%v)", got, err)
	}
}

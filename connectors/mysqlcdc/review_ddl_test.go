package mysqlcdc

import (
	"reflect"
	"strings"
	"testing"

	"github.com/eddystream/eddy/pipeline"
)

// applyAndCompare runs each statement on the server and applies it, as the
// binary log holds it, to the tables the source holds, then compares
// every table of db with the server's description of it. A statement the
// source does not apply fails the test where mustApply is set; otherwise
// the source's table is described from the server, as the source does.
func applyAndCompare(t *testing.T, s *server, c *conn, db string, mustApply bool, steps ...string) {
	t.Helper()
	cfg := pipelineConfig(t, s, db)
	b := &binlogReader[pipeline.Event]{r: &reader[pipeline.Event]{cfg: cfg, tables: map[string]*tableInfo{}}}
	events := newQueryEvents(t, s, cfg)
	for _, q := range steps {
		c.Exec(t, q)
		if strings.HasPrefix(q, "SET ") {
			continue
		}
		e := events.next(q)
		edit := b.applyDDL(c.Conn, string(e.Schema), string(e.Query), parseQueryStatus(e.StatusVars))
		if edit.why != "" {
			if mustApply {
				t.Fatalf("%q is not applied: %s", q, edit.why)
			}
			t.Logf("%q is not applied: %s", q, edit.why)
			_, names, _ := ddlTables(string(e.Schema), string(e.Query))
			for _, n := range names {
				d := &tableInfo{db: n[0], name: n[1], chunkKey: -1}
				if err := cfg.describeAt(c.Conn, d, 1); err != nil {
					t.Fatal(err)
				}
				if len(d.cols) == 0 {
					delete(b.r.tables, n[0]+"."+n[1])
				} else {
					b.r.tables[n[0]+"."+n[1]] = d
				}
			}
			continue
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
		for _, name := range c.Query(t, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '"+db+"'") {
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
		}
	}
}

// TestAlterRenamesKeyColumnsAtOnce swaps the names of columns of the
// primary key in one statement: the key's columns take their new names
// all at once, as the server renames them.
func TestAlterRenamesKeyColumnsAtOnce(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "USE "+db)
	applyAndCompare(t, s, c, db, true,
		"CREATE TABLE swap (id INT NOT NULL, a INT NOT NULL, b INT, PRIMARY KEY (id, a))",
		"ALTER TABLE swap RENAME COLUMN id TO a, RENAME COLUMN a TO id",
		"ALTER TABLE swap CHANGE id a INT, CHANGE a id BIGINT",
		"ALTER TABLE swap CHANGE ID b INT, CHANGE b Id INT FIRST",
	)
}

// TestAlterPlacesColumnsAfterPlacedOnes places columns after columns that
// a later clause of the same statement places elsewhere: a column placed
// anew stays where it was until its own clause moves it, as the server
// keeps it, and the statement is applied rather than the table described
// from the server.
func TestAlterPlacesColumnsAfterPlacedOnes(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "USE "+db)
	applyAndCompare(t, s, c, db, true,
		"CREATE TABLE p (id INT PRIMARY KEY, a INT, b INT, c INT, d INT)",
		"ALTER TABLE p MODIFY a INT AFTER b, MODIFY b INT AFTER c",
		"ALTER TABLE p ADD x INT AFTER d, MODIFY d INT AFTER a",
		"ALTER TABLE p CHANGE a a2 INT AFTER id, ADD y INT AFTER A2, MODIFY id BIGINT AFTER y",
		"ALTER TABLE p ADD z INT AFTER c2, CHANGE c c2 INT FIRST, RENAME COLUMN x TO x2",
	)
}

// TestRestoredTablesKeepEnumMemberCase describes a table whose ENUM and
// SET members are not lower case, and restores it from a binlog split:
// its members are read as the server declares them, as before the
// checkpoint.
func TestRestoredTablesKeepEnumMemberCase(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "CREATE TABLE "+db+".colors (id INT PRIMARY KEY, c ENUM('Red','GREEN','blue'), s SET('X','y'))")
	cfg := pipelineConfig(t, s, db)
	held := &tableInfo{db: db, name: "colors", chunkKey: -1}
	if err := cfg.describe(c.Conn, held, nil); err != nil {
		t.Fatal(err)
	}
	_, got, err := decodeSplit(encodeBinlogSplit(&binlogSplit{pos: position{File: "binlog.000001", Pos: 4}, tables: []*tableInfo{held}}))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]string{nil, {"Red", "GREEN", "blue"}, {"X", "y"}} {
		if !reflect.DeepEqual(held.cols[i].values, want) || !reflect.DeepEqual(got.tables[0].cols[i].values, want) {
			t.Errorf("column %s has the members %q, and %q once restored; want %q", held.cols[i].name, held.cols[i].values, got.tables[0].cols[i].values, want)
		}
	}
}

// TestStatementsAfterLineComments runs statements that start with line
// comments (-- and #), which the server logs with them: they are known as
// statements that change tables, and applied.
func TestStatementsAfterLineComments(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "USE "+db)
	steps := []string{
		"-- a migration\nCREATE TABLE lc (id INT PRIMARY KEY)",
		"-- add a column\r\n-- and another\nALTER TABLE lc ADD x INT",
		"# a hash comment\nALTER TABLE lc ADD y INT",
		"/* block */ --\tline\n  ALTER TABLE lc ADD z INT",
	}
	for _, q := range steps {
		if verb, names, ok := ddlTables(db, q); !ok || verb == "" || len(names) != 1 || names[0] != [2]string{db, "lc"} {
			t.Errorf("%q is read as %q of %v (%v)", q, verb, names, ok)
		}
	}
	applyAndCompare(t, s, c, db, true, steps...)
}

// TestEnumMembersWithEscapes declares ENUM and SET members that hold a
// line break, a carriage return, a backslash and a quote: the server
// shows them escaped in COLUMN_TYPE, and the source reads them as they
// are, whether it describes the table or applies the statement.
func TestEnumMembersWithEscapes(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "USE "+db)
	q := `CREATE TABLE esc (id INT PRIMARY KEY, e ENUM('a\nb', 'c\rd', 'e\\f', 'g''h', 'i\Zj'), s SET('x\ny', 'z'))`
	applyAndCompare(t, s, c, db, true, q)
	cfg := pipelineConfig(t, s, db)
	described := &tableInfo{db: db, name: "esc", chunkKey: -1}
	if err := cfg.describe(c.Conn, described, nil); err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]string{nil, {"a\nb", "c\rd", `e\f`, "g'h", "i\x1aj"}, {"x\ny", "z"}} {
		if got := described.cols[i].values; !reflect.DeepEqual(got, want) {
			t.Errorf("column %s (%s) has the members %q, want %q", described.cols[i].name, described.cols[i].columnType, got, want)
		}
	}
}

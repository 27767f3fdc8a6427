package mysqlcdc

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
)

// TestCompareKeys checks the comparisons of chunk keys on values whose
// order the server's documentation gives.
func TestCompareKeys(t *testing.T) {
	for _, c := range []struct {
		o    keyOrder
		a, b string
		want int
	}{
		{orderInteger, "-5", "3", -1},
		{orderInteger, "10", "9", 1},
		{orderDecimal, "-1.500", "-1.400", -1},
		{orderDecimal, "10.000", "9.999", 1},
		{orderDecimal, "0.000", "-0.000", 0},
		{orderDecimal, "-0.001", "0.000", -1},
		{orderDecimal, "002.50", "2.5", 0},
		{orderText, "2020-01-02 03:04:05.100", "2020-01-02 03:04:05.099", 1},
		{orderText, "0000-00-00 00:00:00", "1000-01-01 00:00:00", -1},
		{orderBytes, "a", "a ", -1},
		{orderBytes, "a\x00", "a", 1},
		{orderBytes, "\xff", "\x00\x01", 1},
		{orderPadSpace, "a", "a ", 0},
		{orderPadSpace, "a", "a\t", 1},
		{orderPadSpace, "a \t", "a", -1},
		{orderPadSpace, "a  b", "a", 1},
		{orderPadSpace, "", " ", 0},
		{orderPadSpace, "\t", "", -1},
		{orderPadSpace, "B", "a", -1},
		{orderPadSpace, "é", "z", 1}, // code points: U+00E9 > U+007A
		{orderPadSpace, "\U0001F600", "\uFFFD", 1},
	} {
		if got := compareKeys(c.o, c.a, c.b); got != c.want {
			t.Errorf("compareKeys(%d, %q, %q) = %d, want %d", c.o, c.a, c.b, got, c.want)
		}
		if got := compareKeys(c.o, c.b, c.a); got != -c.want {
			t.Errorf("compareKeys(%d, %q, %q) = %d, want %d", c.o, c.b, c.a, got, -c.want)
		}
	}
}

// TestKeyOrders checks which columns the source splits on, and how it
// orders them.
func TestKeyOrders(t *testing.T) {
	for _, c := range []struct {
		col  column
		want keyOrder
	}{
		{column{dataType: "bigint"}, orderInteger},
		{column{dataType: "decimal"}, orderDecimal},
		{column{dataType: "datetime"}, orderText},
		{column{dataType: "timestamp"}, orderText},
		{column{dataType: "binary"}, orderBytes},
		{column{dataType: "varbinary"}, orderBytes},
		{column{dataType: "varchar", collation: "utf8mb4_bin"}, orderPadSpace},
		{column{dataType: "char", collation: "latin1_bin"}, orderPadSpace},
		{column{dataType: "varchar", collation: "utf8mb4_nopad_bin"}, orderBytes},
		{column{dataType: "varchar", collation: "utf8mb4_0900_bin"}, orderBytes},
		{column{dataType: "char", collation: "utf8mb4_nopad_bin"}, orderNone},
		{column{dataType: "varchar", collation: "utf8mb4_general_ci"}, orderNone},
		{column{dataType: "char", collation: "utf8mb4_unicode_ci"}, orderNone},
		{column{dataType: "varchar", collation: "utf16_bin"}, orderNone},
		{column{dataType: "varchar", collation: "utf8mb4_uca1400_ai_ci"}, orderNone},
		{column{dataType: "enum"}, orderNone},
		{column{dataType: "time"}, orderNone},
		{column{dataType: "double"}, orderNone},
	} {
		if got := c.col.keyOrder(); got != c.want {
			t.Errorf("%s %s: order %d, want %d", c.col.dataType, c.col.collation, got, c.want)
		}
	}
}

// TestKeyOrderIsTheServers compares, for each type and collation the
// source splits on, every pair of tricky values as the binary log gives
// them, and each value of the binary log with each as a chunk bound reads
// it, with the source's comparison, and the server's comparison of the
// same stored values: they must agree. Then it splits the values into
// small chunks: each value of the binary log is in the chunk the server
// reads it in, and no other.
func TestKeyOrderIsTheServers(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	strs := []string{"", " ", "  ", "a", "a ", "a  ", "a\t", "a\x01", "A", "b", "ab", "a b", "B", "\t", "\x01",
		"é", "E", "z", "Z", "~", "ä", "ÿ"}
	utf8 := append(strs, "中", "中 ", "\U0001F600", "\uFFFD", "ｚ", "ß", "ss")
	hexes := func(vals []string) []string {
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = fmt.Sprintf("X'%x'", v)
		}
		return out
	}
	latin1 := make([]string, len(strs))
	for i, v := range strs {
		var b []byte
		for _, r := range v {
			b = append(b, byte(r)) // é, ä and ÿ are latin1's E9, E4 and FF
		}
		latin1[i] = fmt.Sprintf("X'%x'", b)
	}
	cases := []struct{ typ, collation string }{
		{"VARCHAR(8) CHARACTER SET utf8mb4", "utf8mb4_bin"},
		{"CHAR(8) CHARACTER SET utf8mb4", "utf8mb4_bin"},
		{"VARCHAR(8) CHARACTER SET utf8mb4", "utf8mb4_nopad_bin"},
		{"VARCHAR(8) CHARACTER SET utf8mb3", "utf8mb3_bin"},
		{"VARCHAR(8) CHARACTER SET latin1", "latin1_bin"},
		{"CHAR(8) CHARACTER SET latin1", "latin1_bin"},
		{"VARCHAR(8) CHARACTER SET latin1", "latin1_nopad_bin"},
		{"VARBINARY(8)", ""},
		{"BINARY(4)", ""},
		{"DECIMAL(8,3)", ""},
		{"DATETIME(3)", ""},
		{"DATE", ""},
		{"TIMESTAMP(2)", ""},
	}
	for i, k := range cases {
		name := fmt.Sprintf("k%d", i)
		decl := k.typ
		if k.collation != "" {
			decl += " COLLATE " + k.collation
		}
		var vals []string
		switch {
		case strings.Contains(k.typ, "latin1"):
			vals = latin1
		case strings.Contains(k.typ, "utf8mb3"):
			vals = hexes(strs)
		case strings.Contains(k.typ, "CHAR"):
			vals = hexes(utf8)
		case strings.Contains(k.typ, "BINARY"):
			vals = append(hexes(strs), "X'00'", "X'0000'", "X'61000000'", "X'6100'", "X'ffffffff'", "X'00000001'")
		case strings.HasPrefix(k.typ, "DECIMAL"):
			vals = []string{"0", "-0.001", "0.001", "-1.5", "-1.25", "1.5", "10", "9.999", "-10", "-9.999", "99999.999", "-99999.999"}
		case strings.HasPrefix(k.typ, "DATE"), strings.HasPrefix(k.typ, "TIMESTAMP"):
			vals = []string{"'2020-01-02 03:04:05.1'", "'2020-01-02 03:04:05.09'", "'2020-01-02 03:04:05'", "'1999-12-31 23:59:59.99'",
				"'2020-01-02'", "'2038-01-19 03:14:07'", "'1970-01-01 00:00:01'", "'2020-10-25 01:30:00'"}
			if !strings.HasPrefix(k.typ, "TIMESTAMP") {
				vals = append(vals, "'0000-00-00'", "'1000-01-01'", "'9999-12-31 23:59:59'")
			}
		}
		c.Exec(t, "CREATE TABLE "+db+"."+name+" (id INT PRIMARY KEY, k "+decl+")")
		var rows []string
		for j, v := range vals {
			rows = append(rows, fmt.Sprintf("(%d, %s)", j, v))
		}
		c.Exec(t, "SET sql_mode = ''", "SET time_zone = '+00:00'", "INSERT INTO "+db+"."+name+" VALUES "+strings.Join(rows, ", "))
		t.Run(k.typ+" "+k.collation, func(t *testing.T) {
			ti := describeTable(t, c, db, name, "k")
			col := &ti.cols[ti.chunkKey]
			o := col.keyOrder()
			if o == orderNone {
				t.Fatalf("%s %s is not split on", k.typ, k.collation)
			}
			got := binlogRows(t, s, db, name, len(vals))
			// The values as the snapshot reads chunk bounds.
			bounds := map[string]string{}
			for _, line := range c.Query(t, "SELECT id, "+keySelect(o, "k")+" FROM "+db+"."+name) {
				id, v, _ := strings.Cut(line, "|")
				bounds[id] = keyBound(o, v)
			}
			server := c.Query(t, "SELECT a.id, b.id, a.k < b.k, a.k = b.k FROM "+db+"."+name+" a JOIN "+db+"."+name+" b")
			if len(server) != len(vals)*len(vals) {
				t.Fatalf("the server compared %d pairs, want %d", len(server), len(vals)*len(vals))
			}
			for _, line := range server {
				f := strings.Split(line, "|")
				a, b := got[f[0]], got[f[1]]
				want := 1
				switch {
				case f[2] == "1":
					want = -1
				case f[3] == "1":
					want = 0
				}
				if cmp := compareKeys(o, valueText(col, a), valueText(col, b)); cmp != want {
					t.Errorf("%q against %q: %d, the server says %d", a, b, cmp, want)
				}
				if cmp := compareKeys(o, valueText(col, a), bounds[f[1]]); cmp != want {
					t.Errorf("%q against the bound %q: %d, the server says %d", a, bounds[f[1]], cmp, want)
				}
			}
			// Chunks of one to three rows: every value is a bound or
			// next to one. A row of the binary log is in the chunk whose
			// query reads it.
			for size := 1; size <= 3; size++ {
				chunks, err := (&config{chunkSize: size}).splitTable(c.Conn, ti)
				if err != nil {
					t.Fatal(err)
				}
				if len(chunks) < len(vals)/(size+2) {
					t.Fatalf("%d values in chunks of %d are split into %d chunks", len(vals), size, len(chunks))
				}
				for _, ch := range chunks {
					read := map[string]bool{}
					for _, line := range c.Query(t, chunkQuery(ti, ch)) {
						id, _, _ := strings.Cut(line, "|")
						read[id] = true
					}
					for id, v := range got {
						if in := inChunk(ti, ch, rowImage{nil, v}); in != read[id] {
							t.Errorf("chunk [%q, %q) of %d: %q is in it: %v, the server reads it: %v", ch.start, ch.end, size, v, in, read[id])
						}
					}
				}
			}
		})
	}
}

// describeTable reads the description of db.table as the source reads
// it, split on column key.
func describeTable(t *testing.T, c *conn, db, table, key string) *tableInfo {
	t.Helper()
	ti := &tableInfo{db: db, name: table, chunkKey: -1}
	cfg := &config{chunkKey: key}
	if err := cfg.describe(c.Conn, ti, nil); err != nil {
		t.Fatal(err)
	}
	return ti
}

// binlogRows returns the values of column k of the n rows inserted into
// db.table, by the text of their id, as the binary log gives them.
func binlogRows(t *testing.T, s *server, db, table string, n int) map[string]any {
	t.Helper()
	cfg := &config{host: s.Host, port: s.Port, user: "root"}
	first := s.conn().Query(t, "SHOW BINARY LOGS")[0]
	st, err := cfg.openStream(uint32(6000+len(table)), "mariadb", position{File: strings.Split(first, "|")[0], Pos: 4}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	out := map[string]any{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(out) < n {
		ev, _, _, err := st.next(ctx)
		if err != nil || ev == nil {
			t.Fatalf("the binary log gave %d rows of %s.%s, want %d: %v", len(out), db, table, n, err)
		}
		if e, ok := ev.Event.(*replication.RowsEvent); ok && string(e.Table.Schema) == db && string(e.Table.Table) == table {
			for _, row := range e.Rows {
				id, _ := row[0].(int32)
				out[strconv.Itoa(int(id))] = row[1]
			}
		}
	}
	return out
}

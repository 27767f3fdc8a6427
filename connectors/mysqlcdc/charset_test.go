package mysqlcdc

import (
	"encoding/hex"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/sql/types"
)

// utf8Literal is the SQL literal of s as a utf8mb4 string, whatever the
// session's character set: the server converts it to the character set of
// the column it goes into.
func utf8Literal(s string) string { return "_utf8mb4 X'" + hex.EncodeToString([]byte(s)) + "'" }

// charsetColumns are the text columns of the tables of TestCharsets, with
// the value each row holds: utf8mb4 and utf8mb3 text outside latin1
// (the euro sign, Polish, CJK, an emoji, a combining accent), latin1 text
// of its upper half and of the bytes 0x80-0x9F, which MySQL's latin1 reads
// as Windows-1252 (with U+0081, U+008D, U+008F, U+0090 and U+009D where
// Windows-1252 has none), ENUMs of both, and ASCII.
var charsetColumns = []struct{ name, decl, value string }{
	{"vc", "VARCHAR(40) CHARACTER SET utf8mb4", "€ ł 漢字 😀 e\u0301 ñ"},
	{"ch", "CHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", "ł漢😀é"},
	{"tx", "TEXT CHARACTER SET utf8mb4", "Zażółć gęślą jaźń — 日本語 🇵🇱 a\u030a"},
	{"m3", "VARCHAR(20) CHARACTER SET utf8mb3", "ł漢字€ü"},
	{"l1", "VARCHAR(20) CHARACTER SET latin1", "é ÿ € ß"},
	{"l1c", "CHAR(10) CHARACTER SET latin1", "é€ÿ\u0081Œ"},
	{"l1t", "TEXT CHARACTER SET latin1", "€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ ¡¿ÀÆÐ×Þßàæðþÿ"},
	{"en", "ENUM('é', 'ł', '€') CHARACTER SET utf8mb4", "ł"},
	{"en1", "ENUM('é', '€') CHARACTER SET latin1", "€"},
	{"ac", "VARCHAR(10) CHARACTER SET ascii", "plain"},
}

// charsetTable is the SQL table of TestCharsets: the key, a number and
// the text columns.
var charsetTable = func() *connector.Table {
	fields := []types.Field{types.F("k", types.String().NotNull()), types.F("n", types.Int())}
	for _, c := range charsetColumns {
		fields = append(fields, types.F(c.name, types.String()))
	}
	return &connector.Table{Schema: types.MustRowType(fields...), PrimaryKey: []int{0}}
}()

// TestCharsets reads text of utf8mb4, utf8mb3, latin1 and ascii columns,
// and string keys of utf8mb4 and latin1 that the snapshot splits chunks
// on, from the snapshot (with every row updated while a chunk is read) and
// from the binary log: every value must be the Go string inserted, code
// point for code point, and the changelog must mirror the table, each row
// once.
func TestCharsets(t *testing.T) {
	s := startServer(t)
	admin := s.conn()
	keyCases := []struct {
		name, decl string
		keys       []string
	}{
		{"utf8mb4_bin", "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
			[]string{"a", "é", "ÿ", "€", "ł", "漢字", "😀", "e\u0301", "ß", "z"}},
		{"latin1_bin", "VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_bin",
			[]string{"a", "é", "ÿ", "€", "Œ", "\u0081", "ß", "z", "Ÿ", "×"}},
	}
	for _, kc := range keyCases {
		t.Run(kc.name, func(t *testing.T) {
			db := s.newDatabase(admin)
			table := db + ".t"
			decl := []string{"k " + kc.decl + " PRIMARY KEY", "n INT"}
			for _, c := range charsetColumns {
				decl = append(decl, c.name+" "+c.decl)
			}
			admin.Exec(t, "CREATE TABLE "+table+" ("+strings.Join(decl, ", ")+") DEFAULT CHARACTER SET latin1")
			want := map[string]int{}
			insert := func(c *conn, key string, n int) {
				vals := []string{utf8Literal(key), fmt.Sprint(n)}
				row := []string{key, fmt.Sprint(n)}
				for _, col := range charsetColumns {
					vals = append(vals, utf8Literal(col.value))
					row = append(row, col.value)
				}
				c.Exec(t, "INSERT INTO "+table+" VALUES ("+strings.Join(vals, ", ")+")")
				want[strings.Join(row, "|")]++
			}
			for i, k := range kc.keys {
				insert(admin, k+"0", i)
			}
			// The server holds the text inserted, as utf8mb4.
			for _, col := range charsetColumns {
				got := admin.Query(t, "SELECT DISTINCT HEX(CONVERT("+col.name+" USING utf8mb4)) FROM "+table)
				if w := strings.ToUpper(hex.EncodeToString([]byte(col.value))); len(got) != 1 || got[0] != w {
					t.Fatalf("column %s holds %v, want %s", col.name, got, w)
				}
			}
			// While the first chunk is read, every row changes: the changes
			// of the rows of the chunk are applied to the rows it read.
			during := changeAtChunkQuery(t, s.conn(), table, "UPDATE "+table+" SET n = n + 100")
			src := openSource(t, s.options(db, "t", "scan.incremental.snapshot.chunk.size", "3"), charsetTable)
			j := job(src)
			j.Checkpoints, j.Timeout = 20*time.Millisecond, 2*time.Minute
			r := j.Start(t)
			want = map[string]int{}
			for i, k := range kc.keys {
				row := []string{k + "0", fmt.Sprint(i + 100)}
				for _, col := range charsetColumns {
					row = append(row, col.value)
				}
				want[strings.Join(row, "|")]++
			}
			got := cdctest.WaitMirror(t, r, charsetTable.Schema, want)
			during.check(t)
			if !maps.Equal(got, want) {
				t.Fatalf("the snapshot does not mirror the table:\n%s", cdctest.DiffCounts(got, want))
			}
			// From the binary log: inserts, an update of a key, a delete.
			for i, k := range kc.keys {
				insert(admin, k+"1", 200+i)
			}
			admin.Exec(t, "UPDATE "+table+" SET k = "+utf8Literal(kc.keys[3]+"2")+" WHERE k = "+utf8Literal(kc.keys[3]+"0"),
				"DELETE FROM "+table+" WHERE k = "+utf8Literal(kc.keys[4]+"0"))
			old := func(k string, n int) string {
				row := []string{k, fmt.Sprint(n)}
				for _, col := range charsetColumns {
					row = append(row, col.value)
				}
				return strings.Join(row, "|")
			}
			delete(want, old(kc.keys[3]+"0", 103))
			delete(want, old(kc.keys[4]+"0", 104))
			want[old(kc.keys[3]+"2", 103)]++
			got = cdctest.WaitMirror(t, r, charsetTable.Schema, want)
			r.Stop()
			if !maps.Equal(got, want) {
				t.Fatalf("the binary log's changes do not mirror the table:\n%s", cdctest.DiffCounts(got, want))
			}
		})
	}
}

// TestDecodingIsTheServers decodes every byte of latin1 and ascii as the
// server converts it to utf8mb4.
func TestDecodingIsTheServers(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	for _, cs := range []string{"latin1", "ascii"} {
		sel := make([]string, 256)
		for b := range sel {
			sel[b] = fmt.Sprintf("HEX(CONVERT(_%s X'%02X' USING utf8mb4))", cs, b)
		}
		rows := c.Query(t, "SELECT "+strings.Join(sel, ", "))
		if len(rows) != 1 {
			t.Fatalf("%s: %d rows", cs, len(rows))
		}
		server := strings.Split(rows[0], "|")
		col := &column{name: "c", charset: cs}
		for b, want := range server {
			got, err := decodeText(col, string([]byte{byte(b)}))
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.ToUpper(hex.EncodeToString([]byte(got))); g != want {
				t.Errorf("%s byte %02X: decoded as %s (%q), the server converts it to %s", cs, b, g, got, want)
			}
		}
	}
}

// TestUndecodedCharset refuses a column of a character set the source
// does not decode, naming it and its character set, and reads the table
// when the SQL table leaves the column out.
func TestUndecodedCharset(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t, "CREATE TABLE "+db+".t (id INT PRIMARY KEY, name VARCHAR(20) CHARACTER SET cp1250, note VARCHAR(20) CHARACTER SET utf8mb4)",
		"INSERT INTO "+db+".t VALUES (1, "+utf8Literal("Łódź")+", "+utf8Literal("Łódź")+")")
	all := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("name", types.String()),
		types.F("note", types.String())), PrimaryKey: []int{0}}
	err := runFails(t, s.options(db, "t"), all)
	cdctest.WantError(t, err, `column "name" of table `+db+".t", "character set cp1250", "CHARACTER SET utf8mb4", "leave it out")
	some := &connector.Table{Schema: types.MustRowType(types.F("id", types.Int().NotNull()), types.F("note", types.String())), PrimaryKey: []int{0}}
	j := job(openSource(t, s.options(db, "t"), some))
	j.Checkpoints, j.Timeout = 20*time.Millisecond, time.Minute
	r := j.Start(t)
	got := cdctest.WaitMirror(t, r, some.Schema, map[string]int{"1|Łódź": 1})
	r.Stop()
	if !maps.Equal(got, map[string]int{"1|Łódź": 1}) {
		t.Fatalf("the changelog holds %v", got)
	}
}

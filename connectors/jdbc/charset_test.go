package jdbc_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql/types"
)

// TestMySQLCharsets writes text outside latin1 (the euro sign, Polish,
// CJK, an emoji, a combining accent) into utf8mb4 columns and text of
// latin1's Windows-1252 range into a latin1 column of MariaDB, whose
// server character set is latin1: the server must hold the text written,
// and a scan and a lookup by a text key must read it back, code point for
// code point.
func TestMySQLCharsets(t *testing.T) {
	m := testservers.StartMariaDB(t)
	conn, err := client.Connect(m.Addr(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, q := range []string{"CREATE DATABASE cs CHARACTER SET latin1",
		"CREATE TABLE cs.t (id INT PRIMARY KEY, u VARCHAR(40) CHARACTER SET utf8mb4, tx TEXT CHARACTER SET utf8mb4, l1 VARCHAR(40) CHARACTER SET latin1)"} {
		if _, err := conn.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rt := types.MustRowType(types.F("id", types.Int().NotNull()), types.F("u", types.String()),
		types.F("tx", types.String()), types.F("l1", types.String()))
	tab := &connector.Table{Schema: rt, PrimaryKey: []int{0}}
	rows := [][]string{
		{"1", "€ ł 漢字 😀 e\u0301", "Zażółć gęślą jaźń — 日本語 🇵🇱", "é ÿ € Œ ‰ ß"},
		{"2", "ñ", "a\u030a", "\u0081\u008d\u008f\u0090\u009d ¡¿×"},
	}
	sink, err := connector.OpenTableSink(connector.Default, "jdbc", map[string]string{
		"url": fmt.Sprintf("jdbc:mysql://%s:%d/cs", m.Host, m.Port), "table-name": "t", "username": "root", "password": "",
	}, tab)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	rw := types.NewRowWriter(rt, types.NewArena(256))
	var recs []connector.TableRecord
	for _, r := range rows {
		for i, f := range r {
			if err := rw.ParseText(i, f, nil); err != nil {
				t.Fatal(err)
			}
		}
		recs = append(recs, connector.TableRecord{Kind: changelog.Insert, Row: rw.Finish().Clone()})
	}
	if err := w.Write(recs, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// What the server holds, as utf8mb4 whatever the session's character
	// set.
	for _, r := range rows {
		res, err := conn.Execute("SELECT HEX(CONVERT(u USING utf8mb4)), HEX(CONVERT(tx USING utf8mb4)), HEX(CONVERT(l1 USING utf8mb4)) FROM cs.t WHERE id = " + r[0])
		if err != nil {
			t.Fatal(err)
		}
		if res.RowNumber() != 1 {
			t.Fatalf("row %s: %d rows", r[0], res.RowNumber())
		}
		for j := 0; j < 3; j++ {
			got, _ := res.GetString(0, j)
			if want := strings.ToUpper(hex.EncodeToString([]byte(r[j+1]))); got != want {
				t.Errorf("row %s column %d: the server holds %s, want %s (%q)", r[0], j+1, got, want, r[j+1])
			}
		}
		res.Close()
	}
	var want []string
	for _, r := range rows {
		want = append(want, strings.Join(r, "|"))
	}
	db := database{name: "mariadb", user: "root", mysql: true, url: fmt.Sprintf("jdbc:mysql://%s:%d/cs", m.Host, m.Port)}
	src, err := openSource(t, db, "t", tab)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, src, 1)
	if err != nil {
		t.Fatal(err)
	}
	var scanned []string
	for _, r := range got {
		scanned = append(scanned, joinFields(rt, r.Row))
	}
	slices.Sort(scanned)
	if !slices.Equal(scanned, want) {
		t.Errorf("scan:\n got %q\nwant %q", scanned, want)
	}
	// A lookup by the utf8mb4 column and one by the latin1 column.
	ls, ok := connector.TableLookup(src)
	if !ok {
		t.Fatal("the jdbc source does not look rows up")
	}
	for _, col := range []int{1, 3} {
		f, err := ls.NewLookup([]int{col})
		if err != nil {
			t.Fatal(err)
		}
		kt := types.MustRowType(rt.Field(col))
		for _, r := range rows {
			k, err := types.BuildRow(kt, types.NewArena(64), r[col])
			if err != nil {
				t.Fatal(err)
			}
			found, err := f(context.Background(), k)
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != 1 || joinFields(rt, found[0]) != strings.Join(r, "|") {
				var texts []string
				for _, x := range found {
					texts = append(texts, joinFields(rt, x))
				}
				t.Errorf("lookup of %q by column %s: got %q, want %q", r[col], rt.Field(col).Name, texts, strings.Join(r, "|"))
			}
		}
	}
}

// TestMySQLTextOutsideCharset writes text a latin1 column cannot hold
// into MariaDB, in strict mode: the write fails, naming the column, and
// the table holds nothing altered.
func TestMySQLTextOutsideCharset(t *testing.T) {
	m := testservers.StartMariaDB(t)
	conn, err := client.Connect(m.Addr(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, q := range []string{"CREATE DATABASE cs", "CREATE TABLE cs.t (id INT PRIMARY KEY, l1 VARCHAR(40) CHARACTER SET latin1)"} {
		if _, err := conn.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rt := types.MustRowType(types.F("id", types.Int().NotNull()), types.F("l1", types.String()))
	sink, err := connector.OpenTableSink(connector.Default, "jdbc", map[string]string{
		"url": fmt.Sprintf("jdbc:mysql://%s:%d/cs", m.Host, m.Port), "table-name": "t", "username": "root", "password": "",
		"sink.max-retries": "0", "sink.delivery-guarantee": "at-least-once",
	}, &connector.Table{Schema: rt, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	row, err := types.BuildRow(rt, types.NewArena(64), int32(1), "漢字 €")
	if err != nil {
		t.Fatal(err)
	}
	err = w.Write([]connector.TableRecord{{Kind: changelog.Insert, Row: row}}, nil)
	if err == nil {
		err = w.Flush()
	}
	if err == nil || !strings.Contains(err.Error(), "l1") {
		t.Errorf("writing text latin1 cannot hold: got error %v, want one naming column l1", err)
	}
	res, err := conn.Execute("SELECT COUNT(*) FROM cs.t")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if n, _ := res.GetInt(0, 0); n != 0 {
		t.Errorf("the table holds %d rows", n)
	}
}

// joinFields renders a row's fields as text separated by '|'.
func joinFields(rt *types.RowType, row types.Row) string {
	var b []byte
	for i := 0; i < rt.Len(); i++ {
		if i > 0 {
			b = append(b, '|')
		}
		b = types.AppendText(b, rt, row, i, nil)
	}
	return string(b)
}

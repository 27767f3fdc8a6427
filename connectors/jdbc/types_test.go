package jdbc

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql/types"
)

// TestPostgresTypes writes a row of every kind of value goValue converts,
// into a PostgreSQL table whose column names need quoting (a dot, a quote),
// and reads it back.
func TestPostgresTypes(t *testing.T) {
	p := testservers.StartPostgres(t)
	conn, err := pgx.Connect(context.Background(), p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `CREATE TABLE typed (id INT PRIMARY KEY, "a.b" SMALLINT, "q""t" BIGINT,
		f REAL, d DOUBLE PRECISION, dt DATE, tm TIME(3), ts TIMESTAMP(3), tz TIMESTAMPTZ(3), bs BYTEA, s TEXT)`); err != nil {
		t.Fatal(err)
	}
	rt := types.MustRowType(
		types.F("id", types.Int().NotNull()), types.F("a.b", types.SmallInt()), types.F(`q"t`, types.BigInt()),
		types.F("f", types.Float()), types.F("d", types.Double()), types.F("dt", types.DateType()),
		types.F("tm", types.TimeType(3)), types.F("ts", types.TimestampType(3)), types.F("tz", types.TimestampLTZType(3)),
		types.F("bs", types.Bytes()), types.F("s", types.String()),
	)
	sink, err := connector.OpenTableSink(connector.Default, "jdbc", map[string]string{
		"url": fmt.Sprintf("jdbc:postgresql://%s:%d/postgres?sslmode=disable", p.Host, p.Port), "table-name": "typed",
		"username": "postgres", "password": "",
	}, &connector.Table{Schema: rt, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rw := types.NewRowWriter(rt, types.NewArena(256))
	for i, f := range []string{"1", "-7", "9000000000", "1.5", "-2.25", "2024-02-29", "12:34:56.789", "2024-03-01 10:00:00.500",
		"2024-03-01 10:00:00.250", "abc", "héllo"} {
		if err := rw.ParseText(i, f, nil); err != nil {
			t.Fatal(err)
		}
	}
	rec := connector.TableRecord{Kind: changelog.Insert, Row: rw.Finish().Clone()}
	if err := w.Write([]connector.TableRecord{rec}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	r, err := conn.Query(context.Background(), `SELECT id::text, "a.b"::text, "q""t"::text, f::text, d::text, dt::text, tm::text,
		ts::text, (tz AT TIME ZONE 'UTC')::text, encode(bs, 'escape'), s FROM typed`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		vals := make([]string, 11)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := r.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join(vals, "|"))
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := "1|-7|9000000000|1.5|-2.25|2024-02-29|12:34:56.789|2024-03-01 10:00:00.5|2024-03-01 10:00:00.25|abc|héllo"
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestStatementQuoting quotes a column name with a dot as one identifier,
// and a table name 'schema.table' as two.
func TestStatementQuoting(t *testing.T) {
	cols := []string{"a.b", "x"}
	pg := newPostgres(&config{table: "s.t"}, cols, []int{1})
	if want := `INSERT INTO "s"."t" ("a.b", "x") VALUES ($1, $2)`; pg.st.insert != want {
		t.Errorf("PostgreSQL insert: got %s, want %s", pg.st.insert, want)
	}
	my := newMySQL(&config{table: "s.t"}, cols, []int{1})
	if want := "INSERT INTO `s`.`t` (`a.b`, `x`) VALUES (?, ?)"; my.st.insert != want {
		t.Errorf("MySQL insert: got %s, want %s", my.st.insert, want)
	}
}

// TestMySQLTimestampLTZ writes a TIMESTAMP_LTZ, an instant, into a MySQL
// TIMESTAMP column of a server whose time zone is not UTC: the column must
// hold the same instant.
func TestMySQLTimestampLTZ(t *testing.T) {
	m := testservers.StartMariaDB(t, "--default-time-zone=+02:00")
	conn, err := client.Connect(m.Addr(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"CREATE DATABASE tz", "CREATE TABLE tz.t (id INT PRIMARY KEY, at TIMESTAMP(3) NULL, dt DATETIME(3))"} {
		if _, err := conn.Execute(q); err != nil {
			t.Fatal(err)
		}
	}
	rt := types.MustRowType(types.F("id", types.Int().NotNull()), types.F("at", types.TimestampLTZType(3)),
		types.F("dt", types.TimestampType(3)))
	sink, err := connector.OpenTableSink(connector.Default, "jdbc", map[string]string{
		"url": fmt.Sprintf("jdbc:mysql://%s:%d/tz", m.Host, m.Port), "table-name": "t", "username": "root", "password": "",
	}, &connector.Table{Schema: rt, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rw := types.NewRowWriter(rt, types.NewArena(256))
	rw.SetValue(0, int64(1))
	rw.SetTimestampMillis(1, 1709287200500) // 2024-03-01 10:00:00.500 UTC
	if err := rw.ParseText(2, "2024-03-01 10:00:00.500", nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]connector.TableRecord{{Kind: changelog.Insert, Row: rw.Finish().Clone()}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := conn.Execute("SELECT CAST(UNIX_TIMESTAMP(at) AS CHAR), CAST(dt AS CHAR) FROM tz.t")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	at, _ := r.GetString(0, 0)
	dt, _ := r.GetString(0, 1)
	if at != "1709287200.500" || dt != "2024-03-01 10:00:00.500" {
		t.Errorf("got the instant %s and the wall clock %s, want 1709287200.500 and 2024-03-01 10:00:00.500", at, dt)
	}
}

// TestFlushByInterval writes a change and then nothing more: the
// at-least-once sink writes it once 'sink.buffer-flush.interval' has
// passed, without a checkpoint or another change to call it.
func TestFlushByInterval(t *testing.T) {
	p := testservers.StartPostgres(t)
	conn, err := pgx.Connect(context.Background(), p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "CREATE TABLE quiet (id INT PRIMARY KEY, name TEXT)"); err != nil {
		t.Fatal(err)
	}
	rt := types.MustRowType(types.F("id", types.Int().NotNull()), types.F("name", types.String()))
	sink, err := connector.OpenTableSink(connector.Default, "jdbc", map[string]string{
		"url": fmt.Sprintf("jdbc:postgresql://%s:%d/postgres?sslmode=disable", p.Host, p.Port), "table-name": "quiet",
		"username": "postgres", "password": "", "sink.buffer-flush.interval": "50 ms", "sink.delivery-guarantee": "at-least-once",
	}, &connector.Table{Schema: rt, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rw := types.NewRowWriter(rt, types.NewArena(256))
	rw.SetValue(0, int64(1))
	rw.SetString(1, "only")
	if err := w.Write([]connector.TableRecord{{Kind: changelog.Insert, Row: rw.Finish().Clone()}}, nil); err != nil {
		t.Fatal(err)
	}
	var n int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM quiet").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
	}
	t.Fatalf("the table holds %d rows 20 s after the change, want 1", n)
}

// TestPostgresDatabaseName writes into a database whose name needs quoting
// in a connection string (a space, a quote), URL-encoded in 'url'.
func TestPostgresDatabaseName(t *testing.T) {
	p := testservers.StartPostgres(t)
	conn, err := pgx.Connect(context.Background(), p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `CREATE DATABASE "my 'db"`); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = "my 'db"
	dbConn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer dbConn.Close(context.Background())
	if _, err := dbConn.Exec(context.Background(), "CREATE TABLE t (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	rt := types.MustRowType(types.F("id", types.Int().NotNull()))
	sink, err := connector.OpenTableSink(connector.Default, "jdbc", map[string]string{
		"url": fmt.Sprintf("jdbc:postgresql://%s:%d/my%%20%%27db?sslmode=disable", p.Host, p.Port), "table-name": "t",
		"username": "postgres", "password": "",
	}, &connector.Table{Schema: rt, PrimaryKey: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rw := types.NewRowWriter(rt, types.NewArena(64))
	rw.SetValue(0, int64(1))
	if err := w.Write([]connector.TableRecord{{Kind: changelog.Insert, Row: rw.Finish().Clone()}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := dbConn.QueryRow(context.Background(), "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the table holds %d rows (%v), want 1", n, err)
	}
}

package jdbc_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	_ "github.com/eddystream/eddy/connectors/jdbc"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

func TestMain(m *testing.M) { testservers.Main(m) }

var schema = types.MustRowType(
	types.F("id", types.Int().NotNull()),
	types.F("name", types.String()),
	types.F("amount", types.DecimalType(12, 2)),
	types.F("at", types.TimestampType(3)),
	types.F("flag", types.Boolean()),
)

// target is a database the sink writes into, for the tests.
type target struct {
	url  string
	user string
	// truth and falsity are TRUE and FALSE as rows gives them.
	truth, falsity string
	create         func(t testing.TB, table string, key bool)
	rows           func(t testing.TB, table string) [][]string // the table's rows as text
}

func postgresTarget(t *testing.T) target {
	p := testservers.StartPostgres(t)
	conn, err := pgx.Connect(context.Background(), p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return target{
		user: "postgres", truth: "true", falsity: "false",
		url: fmt.Sprintf("jdbc:postgresql://%s:%d/postgres?sslmode=disable", p.Host, p.Port),
		create: func(t testing.TB, table string, key bool) {
			pk := ""
			if key {
				pk = " PRIMARY KEY"
			}
			if _, err := conn.Exec(context.Background(), "CREATE TABLE "+table+" (id INT"+pk+", name TEXT, amount NUMERIC(12, 2), at TIMESTAMP(3), flag BOOLEAN)"); err != nil {
				t.Fatal(err)
			}
		},
		rows: func(t testing.TB, table string) [][]string {
			r, err := conn.Query(context.Background(), "SELECT id::text, name, amount::text, to_char(at, 'YYYY-MM-DD HH24:MI:SS.MS'), flag::text FROM "+table)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var out [][]string
			for r.Next() {
				vals := make([]*string, 5)
				args := make([]any, 5)
				for i := range vals {
					args[i] = &vals[i]
				}
				if err := r.Scan(args...); err != nil {
					t.Fatal(err)
				}
				out = append(out, texts(vals))
			}
			return out
		},
	}
}

func mysqlTarget(t *testing.T) target {
	m := testservers.StartMariaDB(t)
	conn, err := client.Connect(m.Addr(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Execute("CREATE DATABASE sinkdb"); err != nil {
		t.Fatal(err)
	}
	return target{
		user: "root", truth: "1", falsity: "0",
		url: fmt.Sprintf("jdbc:mysql://%s:%d/sinkdb", m.Host, m.Port),
		create: func(t testing.TB, table string, key bool) {
			pk := ""
			if key {
				pk = " PRIMARY KEY"
			}
			if _, err := conn.Execute("CREATE TABLE sinkdb." + table + " (id INT" + pk + ", name TEXT, amount DECIMAL(12, 2), at DATETIME(3), flag TINYINT(1))"); err != nil {
				t.Fatal(err)
			}
		},
		rows: func(t testing.TB, table string) [][]string {
			r, err := conn.Execute("SELECT CAST(id AS CHAR), name, CAST(amount AS CHAR), DATE_FORMAT(at, '%Y-%m-%d %H:%i:%s.%f'), CAST(flag AS CHAR) FROM sinkdb." + table)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var out [][]string
			for i := range r.Values {
				vals := make([]*string, 5)
				for j := range vals {
					if v := r.Values[i][j].Value(); v != nil {
						s := string(r.Values[i][j].AsString())
						if j == 3 {
							s = s[:len(s)-3] // microseconds to milliseconds
						}
						vals[j] = &s
					}
				}
				out = append(out, texts(vals))
			}
			return out
		},
	}
}

func texts(vals []*string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		if v == nil {
			out[i] = "NULL"
		} else {
			out[i] = *v
		}
	}
	return out
}

// row builds a record of schema from the text of its fields.
func row(t testing.TB, kind changelog.Kind, fields ...string) connector.TableRecord {
	t.Helper()
	return cdctest.Record(t, schema, kind, fields...)
}

// fieldsKey renders a record's fields, without its kind.
func fieldsKey(r connector.TableRecord) string {
	var b []byte
	for i := 0; i < schema.Len(); i++ {
		b = append(b, '|')
		b = types.AppendText(b, schema, r.Row, i, nil)
	}
	return string(b)
}

var tableSeq atomic.Int64

// changes is the suite's input: inserts, updates and deletes of 40 keys.
func changes(t testing.TB, upserts bool) []connector.TableRecord {
	var in []connector.TableRecord
	for i := 0; i < 240; i++ {
		id := i % 40
		kind := changelog.Insert
		if upserts && i >= 40 {
			kind = changelog.UpdateAfter
			if i%7 == 0 {
				kind = changelog.Delete
			}
		}
		name := fmt.Sprintf("n'%d\"%d", id, i) // quotes go through parameters
		if i%11 == 0 {
			name = "NULL"
		}
		in = append(in, row(t, kind, fmt.Sprint(id), name, fmt.Sprintf("%d.%02d", i*3, i%100),
			fmt.Sprintf("2024-05-%02d 10:%02d:%02d.%03d", 1+i%28, i%60, (i*7)%60, i%1000), fmt.Sprint(i%2 == 0)))
	}
	return in
}

func runSinkSuite(t *testing.T, tg target) {
	tab := &connector.Table{Schema: schema, PrimaryKey: []int{0}}
	open := func(key bool, guarantee string) func(t testing.TB) (connector.Sink[connector.TableRecord], func() []connector.TableRecord) {
		return func(t testing.TB) (connector.Sink[connector.TableRecord], func() []connector.TableRecord) {
			name := fmt.Sprintf("target%d", tableSeq.Add(1))
			tg.create(t, name, key)
			ct := tab
			if !key {
				ct = &connector.Table{Schema: schema}
			}
			sink, err := connector.OpenTableSink(connector.Default, "jdbc", map[string]string{
				"url": tg.url, "table-name": name, "username": tg.user, "password": "", "sink.buffer-flush.max-rows": "16",
				"sink.delivery-guarantee": guarantee,
			}, ct)
			if err != nil {
				t.Fatal(err)
			}
			return sink, func() []connector.TableRecord {
				var out []connector.TableRecord
				for _, f := range tg.rows(t, name) {
					out = append(out, row(t, changelog.Insert, f...))
				}
				return out
			}
		}
	}
	for _, g := range []string{"exactly-once", "at-least-once"} {
		t.Run("upsert "+g, func(t *testing.T) {
			connectortest.RunSink(t, connectortest.SinkCase[connector.TableRecord]{
				Open: open(true, g), Input: changes(t, true), Guarantee: connectortest.Upsert,
				UpsertKey: func(r connector.TableRecord) string { return string(types.AppendText(nil, schema, r.Row, 0, nil)) },
				Mode:      changelog.Upsert, Key: fieldsKey,
			})
		})
	}
	t.Run("append", func(t *testing.T) { appendRows(t, tg) })
}

// TestPostgresSink runs the sink conformance suite on PostgreSQL: upserts
// and deletes by key, and inserts into a table without one.
func TestPostgresSink(t *testing.T) { runSinkSuite(t, postgresTarget(t)) }

// TestMySQLSink runs the sink conformance suite on MariaDB.
func TestMySQLSink(t *testing.T) { runSinkSuite(t, mysqlTarget(t)) }

// appendRows writes rows into a table without a primary key through SQL:
// each row once, in a run without failures.
func appendRows(t *testing.T, tg target) {
	name := fmt.Sprintf("target%d", tableSeq.Add(1))
	tg.create(t, name, false)
	s := sql.NewSession(sql.WithParallelism(2))
	script := fmt.Sprintf(`
CREATE TABLE target (id INT, name STRING, amount DECIMAL(12, 2), at TIMESTAMP(3), flag BOOLEAN)
WITH ('connector' = 'jdbc', 'url' = '%s', 'table-name' = '%s', 'username' = '%s', 'sink.buffer-flush.max-rows' = '2', 'sink.delivery-guarantee' = 'at-least-once');
INSERT INTO target VALUES
  (1, 'a', 1.50, TIMESTAMP '2024-01-01 00:00:00.001', TRUE),
  (2, CAST(NULL AS STRING), 2.25, TIMESTAMP '2024-01-02 00:00:00.002', FALSE),
  (1, 'a', 1.50, TIMESTAMP '2024-01-01 00:00:00.001', TRUE);
`, tg.url, name, tg.user)
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(context.Background(), "append"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tg.rows(t, name) {
		got = append(got, strings.Join(r, "|"))
	}
	slices.Sort(got)
	want := []string{"1|a|1.50|2024-01-01 00:00:00.001|" + tg.truth, "1|a|1.50|2024-01-01 00:00:00.001|" + tg.truth, "2|NULL|2.25|2024-01-02 00:00:00.002|" + tg.falsity}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

package postgrescdc

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// typesScript declares the types table in SQL.
const typesScript = `
CREATE TABLE t (
  id INT, si SMALLINT, i INT, bi BIGINT, nu DECIMAL(30, 10), r FLOAT, d DOUBLE, b BOOLEAN, ch STRING, vc STRING,
  tx STRING, bt BYTES, dt DATE, tm TIME(6), ts TIMESTAMP(6), tz TIMESTAMP_LTZ(6), js STRING, jb STRING, u STRING, en STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'postgres-cdc',
  'hostname' = '%s', 'port' = '%d', 'username' = 'postgres', 'password' = '',
  'database-name' = 'postgres', 'schema-name' = '%s', 'table-name' = '%s', 'slot.name' = '%s'
);
SELECT * FROM t;
`

// TestTypes reads rows of every PostgreSQL type the source maps, once from
// the snapshot and once from the slot: the two must give the same values,
// and those values must be the server's.
func TestTypes(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	schema, slot := s.newSchema(c)
	run(t, c, "CREATE TYPE "+schema+".mood AS ENUM ('sad', 'ok', 'happy')",
		`CREATE TABLE `+schema+`.t (id INT PRIMARY KEY, si SMALLINT, i INTEGER, bi BIGINT, nu NUMERIC(30, 10), r REAL,
		d DOUBLE PRECISION, b BOOLEAN, ch CHAR(5), vc VARCHAR(20), tx TEXT, bt BYTEA, dt DATE, tm TIME(6), ts TIMESTAMP(6),
		tz TIMESTAMPTZ(6), js JSON, jb JSONB, u UUID, en `+schema+`.mood)`,
		"ALTER TABLE "+schema+".t REPLICA IDENTITY FULL")
	values := `-32768, 2147483647, -9223372036854775808, 12345678901234567890.0123456789, 1.1, -2.25e-10, true, 'ab',
		'héllo ✓', 'long text', '\x00ff10', '2024-02-29', '12:34:56.789012', '2024-02-29 23:59:58.123456',
		'2024-03-01 10:00:00.5+02', '{"k": [1, 2]}', '{"k": [1, 2]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'happy'`
	run(t, c, "INSERT INTO "+schema+".t VALUES (1, "+values+")", "INSERT INTO "+schema+".t (id) VALUES (2)")
	rows := make(chan string, 16)
	sess := sql.NewSession(sql.WithParallelism(1), sql.WithQueryOutput(func(_ int, rt *types.RowType) sql.QuerySink {
		return func(kind changelog.Kind, row types.Row) error {
			var b []string
			for i := 0; i < rt.Len(); i++ {
				b = append(b, string(types.AppendText(nil, rt, row, i, nil)))
			}
			rows <- kind.String() + " " + strings.Join(b, " | ")
			return nil
		}
	}))
	if _, err := sess.Execute(fmt.Sprintf(typesScript, s.Host, s.Port, schema, "t", slot)); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	if err := sess.Build(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "types") }()
	next := func() string {
		t.Helper()
		select {
		case r := <-rows:
			return r
		case err := <-done:
			t.Fatalf("the job ended: %v", err)
		case <-ctx.Done():
			t.Fatal("no row within a minute")
		}
		return ""
	}
	snap := map[string]string{}
	for i := 0; i < 2; i++ {
		r := next()
		snap[strings.SplitN(r, " | ", 2)[0]] = r
	}
	run(t, c, "INSERT INTO "+schema+".t VALUES (11, "+values+")", "INSERT INTO "+schema+".t (id) VALUES (12)")
	stream := map[string]string{}
	for i := 0; i < 2; i++ {
		r := next()
		stream[strings.SplitN(r, " | ", 2)[0]] = r
	}
	cancel()
	<-done
	want := "+I 1 | -32768 | 2147483647 | -9223372036854775808 | 12345678901234567890.0123456789 | 1.1 | -2.25E-10 | TRUE | " +
		"ab    | héllo ✓ | long text | \x00\ufffd\x10 | 2024-02-29 | 12:34:56.789012 | 2024-02-29 23:59:58.123456 | " +
		`2024-03-01 08:00:00.500000 | {"k": [1, 2]} | {"k": [1, 2]} | a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 | happy`
	if got := snap["+I 1"]; got != want {
		t.Errorf("snapshot row:\n got %q\nwant %q", got, want)
	}
	if got := strings.Replace(stream["+I 11"], "+I 11 ", "+I 1 ", 1); got != want {
		t.Errorf("stream row:\n got %q\nwant %q", got, want)
	}
	nulls := strings.Repeat(" | NULL", 19)
	if got := snap["+I 2"]; got != "+I 2"+nulls {
		t.Errorf("snapshot row of NULLs: %q", got)
	}
	if got := stream["+I 12"]; got != "+I 12"+nulls {
		t.Errorf("stream row of NULLs: %q", got)
	}
}

package mysqlcdc_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// TestTypes reads rows of every MySQL type the source maps, once from the
// snapshot and once from the binlog: the two must give the same values,
// and those values must be the server's.
func TestTypes(t *testing.T) {
	m := testservers.StartMariaDB(t)
	c, err := client.Connect(m.Addr(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run := func(q string) {
		t.Helper()
		if _, err := c.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	run("CREATE DATABASE typ")
	run(`CREATE TABLE typ.t (id INT PRIMARY KEY, ti TINYINT, su SMALLINT UNSIGNED, mi MEDIUMINT, iu INT UNSIGNED,
		bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, de DECIMAL(30, 10), ch CHAR(5), vc VARCHAR(20), tx TEXT, bl BLOB,
		bi BINARY(4), en ENUM('red', 'green', 'blue'), st SET('a', 'b', 'c'), bt BIT(10), js JSON, dt DATE,
		tm TIME(3), dtm DATETIME(6), ts TIMESTAMP(3) NULL, yr YEAR, bo TINYINT(1))`)
	values := `-128, 65535, -8388608, 4294967295, 18446744073709551615, 1.5, -2.25e-10,
		12345678901234567890.0123456789, 'ab', 'héllo ✓', 'long text', X'00FF10', X'61626364', 'green', 'a,c', b'1000000001',
		'{"k": [1, 2]}', '2024-02-29', '12:34:56.789', '2024-02-29 23:59:58.123456', '2024-03-01 10:00:00.500', 2024, 1`
	run("INSERT INTO typ.t VALUES (1, " + values + ")")
	run("INSERT INTO typ.t (id) VALUES (2)")
	script := fmt.Sprintf(`
CREATE TABLE t (
  id INT, ti TINYINT, su INT, mi INT, iu BIGINT, bu DECIMAL(20, 0), f FLOAT, d DOUBLE, de DECIMAL(30, 10),
  ch STRING, vc STRING, tx STRING, bl BYTES, bi BYTES, en STRING, st STRING, bt BIGINT, js STRING, dt DATE,
  tm TIME(3), dtm TIMESTAMP(6), ts TIMESTAMP_LTZ(3), yr INT, bo BOOLEAN,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'mysql-cdc',
  'hostname' = '%s', 'port' = '%d', 'username' = 'root', 'password' = '',
  'database-name' = 'typ', 'table-name' = 't', 'server-id' = '5600-5610'
);
SELECT * FROM t;
`, m.Host, m.Port)
	rows := make(chan string, 16)
	s := sql.NewSession(sql.WithParallelism(1), sql.WithQueryOutput(func(_ int, rt *types.RowType) sql.QuerySink {
		return func(kind changelog.Kind, row types.Row) error {
			var b []string
			for i := 0; i < rt.Len(); i++ {
				b = append(b, string(types.AppendText(nil, rt, row, i, nil)))
			}
			rows <- kind.String() + " " + strings.Join(b, " | ")
			return nil
		}
	}))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	if err := s.Build(env); err != nil {
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
	run("INSERT INTO typ.t VALUES (11, " + values + ")")
	run("INSERT INTO typ.t (id) VALUES (12)")
	bin := map[string]string{}
	for i := 0; i < 2; i++ {
		r := next()
		bin[strings.SplitN(r, " | ", 2)[0]] = r
	}
	cancel()
	<-done
	want := "+I 1 | -128 | 65535 | -8388608 | 4294967295 | 18446744073709551615 | 1.5 | -2.25E-10 | " +
		"12345678901234567890.0123456789 | ab | héllo ✓ | long text | \x00\ufffd\x10 | abcd | green | a,c | 513 | " +
		`{"k": [1, 2]} | 2024-02-29 | 12:34:56.789 | 2024-02-29 23:59:58.123456 | 2024-03-01 10:00:00.500 | 2024 | TRUE`
	if got := snap["+I 1"]; got != want {
		t.Errorf("snapshot row:\n got %q\nwant %q", got, want)
	}
	if got := strings.Replace(bin["+I 11"], "+I 11 ", "+I 1 ", 1); got != want {
		t.Errorf("binlog row:\n got %q\nwant %q", got, want)
	}
	nulls := " | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL"
	if got := snap["+I 2"]; got != "+I 2"+nulls {
		t.Errorf("snapshot row of NULLs: %q", got)
	}
	if got := bin["+I 12"]; got != "+I 12"+nulls {
		t.Errorf("binlog row of NULLs: %q", got)
	}
}

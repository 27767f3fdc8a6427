package jdbc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/internal/testservers"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// database is a server the source tests read, with a way to run
// statements on it.
type database struct {
	name  string
	url   string
	user  string
	mysql bool
	exec  func(t testing.TB, q string)
}

func postgresDB(t *testing.T) database {
	p := testservers.StartPostgres(t)
	conn, err := pgx.Connect(context.Background(), p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return database{
		name: "postgres", user: "postgres",
		url: fmt.Sprintf("jdbc:postgresql://%s:%d/postgres?sslmode=disable", p.Host, p.Port),
		exec: func(t testing.TB, q string) {
			t.Helper()
			if _, err := conn.Exec(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		},
	}
}

func mariaDB(t *testing.T) database {
	m := testservers.StartMariaDB(t)
	conn, err := client.Connect(m.Addr(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Execute("CREATE DATABASE src"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Execute("USE src"); err != nil {
		t.Fatal(err)
	}
	return database{
		name: "mariadb", user: "root", mysql: true,
		url: fmt.Sprintf("jdbc:mysql://%s:%d/src", m.Host, m.Port),
		exec: func(t testing.TB, q string) {
			t.Helper()
			if _, err := conn.Execute(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		},
	}
}

// itemSchema is the declared schema of the items table.
var itemSchema = types.MustRowType(
	types.F("id", types.Int().NotNull()),
	types.F("name", types.String()),
	types.F("amount", types.DecimalType(12, 2)),
	types.F("at", types.TimestampType(3)),
	types.F("grp", types.Int()),
)

// createItems creates and fills the table items with n rows and returns
// them as the source must emit them.
func createItems(t testing.TB, db database, table string, n int) []connector.TableRecord {
	ts := "TIMESTAMP(3)"
	if db.mysql {
		ts = "DATETIME(3)"
	}
	db.exec(t, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, name VARCHAR(40), amount DECIMAL(12, 2), at %s, grp INT)", table, ts))
	var want []connector.TableRecord
	var vals []string
	for i := 1; i <= n; i++ {
		f := []string{fmt.Sprint(i), fmt.Sprintf("n'%d", i), fmt.Sprintf("%d.%02d", i*3, i%100),
			fmt.Sprintf("2024-05-%02d 10:%02d:%02d.%03d", 1+i%28, i%60, (i*7)%60, i%1000), fmt.Sprint(i % 7)}
		lit := []string{f[0], "'" + strings.ReplaceAll(f[1], "'", "''") + "'", f[2], "'" + f[3] + "'", f[4]}
		if i%11 == 0 {
			f[1], lit[1] = "NULL", "NULL"
		}
		if i%13 == 0 {
			f[4], lit[4] = "NULL", "NULL"
		}
		vals = append(vals, "("+strings.Join(lit, ", ")+")")
		want = append(want, record(t, itemSchema, f...))
		if len(vals) == 500 || i == n {
			db.exec(t, "INSERT INTO "+table+" VALUES "+strings.Join(vals, ", "))
			vals = vals[:0]
		}
	}
	return want
}

// record builds an insertion of rt's fields from their text.
func record(t testing.TB, rt *types.RowType, fields ...string) connector.TableRecord {
	t.Helper()
	w := types.NewRowWriter(rt, types.NewArena(256))
	for i, f := range fields {
		if f == "NULL" {
			continue
		}
		if err := w.ParseText(i, f, nil); err != nil {
			t.Fatal(err)
		}
	}
	return connector.TableRecord{Kind: changelog.Insert, Row: w.Finish().Clone()}
}

func recordKey(rt *types.RowType) func(r connector.TableRecord) string {
	return func(r connector.TableRecord) string { return fmt.Sprintf("%v %v", r.Kind, types.RowValues(rt, r.Row)) }
}

func openSource(t testing.TB, db database, table string, tab *connector.Table, extra ...string) (connector.Source[connector.TableRecord], error) {
	opts := map[string]string{"url": db.url, "table-name": table, "username": db.user, "password": ""}
	for i := 0; i+1 < len(extra); i += 2 {
		opts[extra[i]] = extra[i+1]
	}
	return connector.OpenTableSource(connector.Default, "jdbc", opts, tab)
}

// runScanSuite runs the source conformance suite on scans of the items
// table: whole, partitioned, with a fetch size, and without a declared
// primary key (resumed by the number of rows emitted).
func runScanSuite(t *testing.T, db database) {
	want := createItems(t, db, "items", 1000)
	cases := []struct {
		name string
		tab  *connector.Table
		opts []string
	}{
		{"whole table", &connector.Table{Schema: itemSchema, PrimaryKey: []int{0}}, nil},
		{"partitioned", &connector.Table{Schema: itemSchema, PrimaryKey: []int{0}},
			[]string{"scan.partition.column", "id", "scan.partition.num", "5", "scan.partition.lower-bound", "1", "scan.partition.upper-bound", "1000"}},
		{"partitioned by a nullable column, fetch size 64", &connector.Table{Schema: itemSchema, PrimaryKey: []int{0}},
			[]string{"scan.partition.column", "amount", "scan.partition.num", "3", "scan.partition.lower-bound", "0", "scan.partition.upper-bound", "3000", "scan.fetch-size", "64"}},
		{"no primary key", &connector.Table{Schema: itemSchema}, []string{"scan.fetch-size", "100"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			connectortest.RunSource(t, connectortest.SourceCase[connector.TableRecord]{
				Open: func(t testing.TB) (connector.Source[connector.TableRecord], func()) {
					src, err := openSource(t, db, "items", c.tab, c.opts...)
					if err != nil {
						t.Fatal(err)
					}
					return src, nil
				},
				Want: want, Key: recordKey(itemSchema), PauseAfter: 400,
			})
		})
	}
}

// TestPostgresScan runs the source conformance suite on PostgreSQL.
func TestPostgresScan(t *testing.T) { runScanSuite(t, postgresDB(t)) }

// TestMySQLScan runs the source conformance suite on MariaDB.
func TestMySQLScan(t *testing.T) { runScanSuite(t, mariaDB(t)) }

// readAll reads a source in full at parallelism p.
func readAll(t testing.TB, src connector.Source[connector.TableRecord], p int) ([]connector.TableRecord, error) {
	var out []connector.TableRecord
	env := eddy.NewEnvironment(eddy.WithParallelism(p))
	st := eddy.FromSource(env, "jdbc", src, eddy.NoWatermarks[connector.TableRecord]())
	ch := make(chan connector.TableRecord, 1<<16)
	eddy.SinkTo(st, func(r connector.TableRecord) error { ch <- r; return nil })
	err := env.Execute(context.Background(), "scan")
	close(ch)
	for r := range ch {
		out = append(out, r)
	}
	return out, err
}

func keys(rt *types.RowType, rs []connector.TableRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = recordKey(rt)(r)
	}
	slices.Sort(out)
	return out
}

// TestScanPartitionBounds reads the rows whose partition column lies
// within the bounds, as Flink does: rows below, above or NULL are not
// read. Bounds of a TIMESTAMP column are timestamps.
func TestScanPartitionBounds(t *testing.T) {
	db := postgresDB(t)
	all := createItems(t, db, "items", 300)
	tab := &connector.Table{Schema: itemSchema, PrimaryKey: []int{0}}
	for _, c := range []struct {
		name string
		opts []string
		keep func(r connector.TableRecord) bool
	}{
		{"ids 101 to 200 in 7 splits", []string{"scan.partition.column", "id", "scan.partition.num", "7", "scan.partition.lower-bound", "101", "scan.partition.upper-bound", "200"},
			func(r connector.TableRecord) bool { id := r.Row.Int64(0); return id >= 101 && id <= 200 }},
		{"grp 2 to 4, more splits than values", []string{"scan.partition.column", "grp", "scan.partition.num", "10", "scan.partition.lower-bound", "2", "scan.partition.upper-bound", "4"},
			func(r connector.TableRecord) bool {
				return !r.Row.IsNull(4) && r.Row.Int64(4) >= 2 && r.Row.Int64(4) <= 4
			}},
		{"timestamps of May 10 to 19", []string{"scan.partition.column", "at", "scan.partition.num", "3", "scan.partition.lower-bound", "2024-05-10 00:00:00", "scan.partition.upper-bound", "2024-05-19 23:59:59.999"},
			func(r connector.TableRecord) bool {
				d := r.Row.Timestamp(3, 3).Date().String()
				return d >= "2024-05-10" && d <= "2024-05-19"
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, err := openSource(t, db, "items", tab, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, src, 2)
			if err != nil {
				t.Fatal(err)
			}
			var want []connector.TableRecord
			for _, r := range all {
				if c.keep(r) {
					want = append(want, r)
				}
			}
			if len(want) == 0 || !slices.Equal(keys(itemSchema, got), keys(itemSchema, want)) {
				t.Errorf("read %d rows, want %d", len(got), len(want))
			}
		})
	}
}

// TestScanProjectionAndFilters reads some columns only, and rows passing
// pushed-down filters, through SQL.
func TestScanProjectionAndFilters(t *testing.T) {
	for _, db := range []database{postgresDB(t), mariaDB(t)} {
		t.Run(db.name, func(t *testing.T) {
			all := createItems(t, db, "items", 200)
			src, err := openSource(t, db, "items", &connector.Table{Schema: itemSchema, PrimaryKey: []int{0}})
			if err != nil {
				t.Fatal(err)
			}
			fs, accepted := src.(connector.FilterableSource).ApplyFilters([]connector.Predicate{
				{Path: []int{4}, Op: connector.OpGreaterOrEqual, Value: int32(3)},
				{Path: []int{1}, Op: connector.OpIsNotNull},
				{Path: []int{1}, Op: connector.OpEqual, Value: "x"},
			})
			if !slices.Equal(accepted, []int{0, 1}) {
				t.Fatalf("accepted %v, want [0 1]", accepted)
			}
			narrow, ok := fs.(connector.ProjectableSource).ProjectFields([][]int{{2}, {4}})
			if !ok {
				t.Fatal("the source does not project to top-level columns")
			}
			got, err := readAll(t, narrow, 2)
			if err != nil {
				t.Fatal(err)
			}
			prt := types.MustRowType(types.F("amount", types.DecimalType(12, 2)), types.F("grp", types.Int()))
			var want []string
			for _, r := range all {
				if !r.Row.IsNull(4) && r.Row.Int64(4) >= 3 && !r.Row.IsNull(1) {
					want = append(want, fmt.Sprintf("%v %v", changelog.Insert, []types.Value{types.FieldValue(itemSchema, r.Row, 2), types.FieldValue(itemSchema, r.Row, 4)}))
				}
			}
			slices.Sort(want)
			if g := keys(prt, got); len(want) == 0 || !slices.Equal(g, want) {
				t.Errorf("read %d rows, want %d", len(g), len(want))
			}
		})
	}
}

// TestScanTypeMismatch refuses at start a column whose database type does
// not read as declared, naming the table, the column and both types.
func TestScanTypeMismatch(t *testing.T) {
	for _, db := range []database{postgresDB(t), mariaDB(t)} {
		t.Run(db.name, func(t *testing.T) {
			createItems(t, db, "items", 3)
			rt := types.MustRowType(types.F("id", types.Int()), types.F("name", types.Int()))
			src, err := openSource(t, db, "items", &connector.Table{Schema: rt})
			if err != nil {
				t.Fatal(err)
			}
			_, err = readAll(t, src, 1)
			if err == nil {
				t.Fatal("the scan read a VARCHAR column as INT")
			}
			dbType := "character varying(40)"
			if db.mysql {
				dbType = "varchar(40)"
			}
			for _, want := range []string{"table items", `column "name"`, dbType, "declared INT", "declare it as STRING"} {
				if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want)) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
		})
	}
}

// TestScanBadOptions checks the errors of partition options that do not
// go together, an unknown table and a wrong password (which the error
// does not show).
func TestScanBadOptions(t *testing.T) {
	tab := &connector.Table{Schema: itemSchema, PrimaryKey: []int{0}}
	part := func(kv ...string) map[string]string {
		m := map[string]string{"url": "jdbc:postgresql://127.0.0.1:1/db", "table-name": "items"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		opts     map[string]string
		key, msg string
	}{
		{part("scan.partition.column", "id", "scan.partition.num", "4"), "scan.partition.lower-bound", "all four"},
		{part("scan.partition.column", "id", "scan.partition.num", "4", "scan.partition.lower-bound", "10", "scan.partition.upper-bound", "5"),
			"scan.partition.lower-bound", "must not be larger than the upper bound"},
		{part("scan.partition.column", "name", "scan.partition.num", "4", "scan.partition.lower-bound", "1", "scan.partition.upper-bound", "5"),
			"scan.partition.column", "numeric, DATE or TIMESTAMP"},
		{part("scan.partition.column", "nope", "scan.partition.num", "4", "scan.partition.lower-bound", "1", "scan.partition.upper-bound", "5"),
			"scan.partition.column", "not a declared column"},
		{part("scan.partition.column", "at", "scan.partition.num", "4", "scan.partition.lower-bound", "soon", "scan.partition.upper-bound", "5"),
			"scan.partition.lower-bound", "not a timestamp"},
		{part("scan.partition.column", "id", "scan.partition.num", "0", "scan.partition.lower-bound", "1", "scan.partition.upper-bound", "5"),
			"scan.partition.num", "positive"},
		{part("lookup.cache", "PARTIAL"), "lookup.cache", "needs a bound"},
	} {
		_, err := connector.OpenTableSource(connector.Default, "jdbc", c.opts, tab)
		var oe *connector.OptionError
		if !errors.As(err, &oe) || oe.Key != c.key || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("options %v: got %v, want an error of option '%s' saying %q", c.opts, err, c.key, c.msg)
		}
	}

	db := mariaDB(t)
	db.exec(t, "CREATE USER 'reader'@'%' IDENTIFIED BY 'right-Secret-1'")
	db.exec(t, "GRANT SELECT ON src.* TO 'reader'@'%'")
	createItems(t, db, "items", 3)
	for _, c := range []struct {
		table, password, msg string
	}{
		{"missing", "right-Secret-1", "missing of mysql database src"},
		{"items", "wrong-Secret-2", "as user \"reader\""},
	} {
		src, err := connector.OpenTableSource(connector.Default, "jdbc", map[string]string{
			"url": db.url, "table-name": c.table, "username": "reader", "password": c.password}, tab)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readAll(t, src, 1)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("table %s: got %v, want an error saying %q", c.table, err, c.msg)
		}
		if err != nil && strings.Contains(err.Error(), "Secret") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// TestScanSQL reads a jdbc table with a SQL query into another jdbc
// table.
func TestScanSQL(t *testing.T) {
	db := postgresDB(t)
	createItems(t, db, "items", 500)
	db.exec(t, "CREATE TABLE totals (grp INT, n BIGINT, amount DECIMAL(20, 2))")
	db.exec(t, "CREATE TABLE expected AS SELECT grp, count(*) AS n, sum(amount) AS amount FROM items WHERE grp IS NOT NULL GROUP BY grp")
	script := fmt.Sprintf(`
CREATE TABLE items (id INT, name STRING, amount DECIMAL(12, 2), at TIMESTAMP(3), grp INT, PRIMARY KEY (id) NOT ENFORCED)
WITH ('connector' = 'jdbc', 'url' = '%[1]s', 'table-name' = 'items', 'username' = 'postgres',
      'scan.partition.column' = 'id', 'scan.partition.num' = '4', 'scan.partition.lower-bound' = '1', 'scan.partition.upper-bound' = '500');
CREATE TABLE totals (grp INT, n BIGINT, amount DECIMAL(20, 2), PRIMARY KEY (grp) NOT ENFORCED)
WITH ('connector' = 'jdbc', 'url' = '%[1]s', 'table-name' = 'totals', 'username' = 'postgres');
INSERT INTO totals SELECT grp, COUNT(*), SUM(amount) FROM items WHERE grp IS NOT NULL GROUP BY grp;
`, db.url)
	db.exec(t, "ALTER TABLE totals ADD PRIMARY KEY (grp)")
	runSQL(t, script, 2)
	db.exec(t, `DO $$ BEGIN
		IF (SELECT count(*) FROM (SELECT * FROM totals EXCEPT SELECT * FROM expected UNION ALL SELECT * FROM expected EXCEPT SELECT * FROM totals) d) > 0
		   OR (SELECT count(*) FROM totals) <> 7 THEN RAISE EXCEPTION 'totals differ from the expected ones'; END IF; END $$`)
}

func runSQL(t *testing.T, script string, p int) {
	t.Helper()
	s := sql.NewSession(sql.WithParallelism(p))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(p))
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(context.Background(), "sql"); err != nil {
		t.Fatal(err)
	}
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTypesRoundTrip writes rows of every type the sink converts through
// the sink and reads them back through the scan and a lookup: the same
// values, exact DECIMALs and timestamps to the microsecond included.
func TestTypesRoundTrip(t *testing.T) {
	rt := types.MustRowType(
		types.F("id", types.Int().NotNull()), types.F("s", types.SmallInt()), types.F("b", types.BigInt()),
		types.F("f", types.Float()), types.F("d", types.Double()), types.F("m", types.DecimalType(20, 6)),
		types.F("dt", types.DateType()), types.F("tm", types.TimeType(3)), types.F("ts", types.TimestampType(6)),
		types.F("tz", types.TimestampLTZType(3)), types.F("bs", types.Bytes()), types.F("st", types.String()),
		types.F("fl", types.Boolean()),
	)
	rows := [][]string{
		{"1", "-7", "9000000000", "1.5", "-2.25", "12345678901234.567891", "2024-02-29", "12:34:56.789", "2024-03-01 10:00:00.123456", "2024-03-01 10:00:00.250", "abc", "héllo 'q' \"dq\"", "true"},
		{"2", "32767", "-9223372036854775808", "0.1", "1e300", "-0.000001", "1900-01-01", "00:00:00", "1969-12-31 23:59:59.999999", "1971-01-01 00:00:00", "", "", "false"},
		{"3", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
	}
	ddl := map[bool]string{
		false: "CREATE TABLE typed (id INT PRIMARY KEY, s SMALLINT, b BIGINT, f REAL, d DOUBLE PRECISION, m NUMERIC(20, 6), dt DATE, tm TIME(3), ts TIMESTAMP(6), tz TIMESTAMPTZ(3), bs BYTEA, st TEXT, fl BOOLEAN)",
		true:  "CREATE TABLE typed (id INT PRIMARY KEY, s SMALLINT, b BIGINT, f FLOAT, d DOUBLE, m DECIMAL(20, 6), dt DATE, tm TIME(3), ts DATETIME(6), tz TIMESTAMP(3) NULL, bs VARBINARY(20), st TEXT, fl TINYINT(1))",
	}
	for _, db := range []database{postgresDB(t), mariaDB(t)} {
		t.Run(db.name, func(t *testing.T) {
			db.exec(t, ddl[db.mysql])
			tab := &connector.Table{Schema: rt, PrimaryKey: []int{0}}
			opts := map[string]string{"url": db.url, "table-name": "typed", "username": db.user, "password": "", "sink.delivery-guarantee": "at-least-once"}
			sink, err := connector.OpenTableSink(connector.Default, "jdbc", opts, tab)
			if err != nil {
				t.Fatal(err)
			}
			w, err := sink.NewWriter(nil)
			if err != nil {
				t.Fatal(err)
			}
			var want []connector.TableRecord
			for _, r := range rows {
				want = append(want, record(t, rt, r...))
			}
			if err := w.Write(want, nil); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			src, err := openSource(t, db, "typed", tab)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, src, 1)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := keys(rt, got), keys(rt, want); !slices.Equal(g, w) {
				t.Errorf("the scan read\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
			}
			ls, _ := connector.TableLookup(src)
			f, err := ls.NewLookup([]int{0})
			if err != nil {
				t.Fatal(err)
			}
			k, _ := types.BuildRow(types.MustRowType(types.F("id", types.Int())), types.NewArena(16), int32(1))
			found, err := f(context.Background(), k)
			if err != nil || len(found) != 1 || recordKey(rt)(connector.TableRecord{Kind: changelog.Insert, Row: found[0]}) != recordKey(rt)(want[0]) {
				t.Errorf("the lookup of id 1 found %d rows (%v), want %v", len(found), err, recordKey(rt)(want[0]))
			}
		})
	}
}

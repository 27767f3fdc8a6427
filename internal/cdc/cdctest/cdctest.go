// Package cdctest holds the test fixtures that the tests of the CDC
// connectors, mysql-cdc and postgres-cdc, share: records built and
// rendered as text, jobs of a source into a memory sink, failures injected
// into them, a changelog applied as a multiset, a random load, the source
// conformance and SQL cases that both connectors pass, and the
// measurements of their benchmarks.
//
// It is a normal package so that the tests of several packages can import
// it; nothing but tests does.
package cdctest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// Conn is a connection to a test server, as the fixtures use it.
type Conn interface {
	// Exec runs statements one after another, failing the test on an
	// error.
	Exec(t testing.TB, stmts ...string)
	// Tx runs statements in one transaction, failing the test on an
	// error.
	Tx(t testing.TB, stmts ...string)
	// Query returns the rows of a query as text, one string a row with
	// fields separated by '|' and NULL as "NULL".
	Query(t testing.TB, q string) []string
}

// AccountsColumns are the columns of the accounts table the tests of both
// connectors read, as CREATE TABLE declares them.
const AccountsColumns = "(id INT PRIMARY KEY, balance BIGINT, note VARCHAR(32))"

// AccountsTable is the SQL table of the accounts table.
var AccountsTable = &connector.Table{
	Schema: types.MustRowType(
		types.F("id", types.Int().NotNull()),
		types.F("balance", types.BigInt()),
		types.F("note", types.String()),
	),
	PrimaryKey: []int{0},
}

// FillAccounts inserts rows lo..hi, (i, 10*i, 'n<i>'), into the accounts
// table named table, in statements of 2000 rows.
func FillAccounts(t testing.TB, c Conn, table string, lo, hi int) {
	t.Helper()
	InsertRows(t, c, table, lo, hi, 2000, func(i int) string { return fmt.Sprintf("(%d, %d, 'n%d')", i, i*10, i) })
}

// InsertRows inserts rows lo..hi into table in statements of per rows,
// row giving the SQL values of each.
func InsertRows(t testing.TB, c Conn, table string, lo, hi, per int, row func(i int) string) {
	t.Helper()
	for i := lo; i <= hi; i += per {
		var vals []string
		for j := i; j <= min(i+per-1, hi); j++ {
			vals = append(vals, row(j))
		}
		c.Exec(t, "INSERT INTO "+table+" VALUES "+strings.Join(vals, ", "))
	}
}

// Options returns a copy of base with the pairs of extra (name, value,
// name, value, ...) set.
func Options(base map[string]string, extra ...string) map[string]string {
	o := maps.Clone(base)
	for i := 0; i+1 < len(extra); i += 2 {
		o[extra[i]] = extra[i+1]
	}
	return o
}

// OpenSource opens a source of the connector named name (such as
// "mysql-cdc") for a table with the given schema.
func OpenSource(t testing.TB, name string, options map[string]string, tab *connector.Table) connector.Source[connector.TableRecord] {
	t.Helper()
	src, err := connector.OpenTableSource(connector.Default, name, options, tab)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// RecordKey renders a record for multiset comparisons: its kind and the
// text of its fields, separated by '|'.
func RecordKey(rt *types.RowType) func(connector.TableRecord) string {
	return func(r connector.TableRecord) string {
		var b []byte
		b = append(b, r.Kind.String()...)
		for i := 0; i < rt.Len(); i++ {
			b = append(b, '|')
			b = types.AppendText(b, rt, r.Row, i, nil)
		}
		return string(b)
	}
}

// Keys returns the keys (RecordKey) of records, sorted.
func Keys(rt *types.RowType, records []connector.TableRecord) []string {
	key := RecordKey(rt)
	out := make([]string, 0, len(records))
	for _, r := range records {
		out = append(out, key(r))
	}
	slices.Sort(out)
	return out
}

// Record builds a record from the text of its fields, "NULL" for NULL.
func Record(t testing.TB, rt *types.RowType, kind changelog.Kind, fields ...string) connector.TableRecord {
	t.Helper()
	w := types.NewRowWriter(rt, types.NewArena(256))
	for i, f := range fields {
		if f == "NULL" {
			w.SetNull(i)
			continue
		}
		if err := w.ParseText(i, f, nil); err != nil {
			t.Fatal(err)
		}
	}
	return connector.TableRecord{Kind: kind, Row: w.Finish().Clone()}
}

// WantKeys fails t unless got, keys of records, are want.
func WantKeys(t testing.TB, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// WantError fails t unless err is an error whose text holds every one of
// parts.
func WantError(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not say %q", err, p)
		}
	}
}

// BadOption is an option set wrong, for BadOptions.
type BadOption struct {
	// Set are the options set over the base.
	Set map[string]string
	// Want are the parts the error must say.
	Want []string
}

// BadOptions opens a source of c with each case's options over base, and
// checks the error.
func (c Connector) BadOptions(t testing.TB, base map[string]string, tab *connector.Table, cases []BadOption) {
	t.Helper()
	for _, tc := range cases {
		o := maps.Clone(base)
		maps.Copy(o, tc.Set)
		_, err := connector.OpenTableSource(connector.Default, string(c), o, tab)
		WantError(t, err, tc.Want...)
	}
}

// Connector is a CDC connector under test, by its name (such as
// "mysql-cdc"); its methods are the fixtures that name it.
type Connector string

// OpenSource opens a source of c (OpenSource).
func (c Connector) OpenSource(t testing.TB, options map[string]string, tab *connector.Table) connector.Source[connector.TableRecord] {
	t.Helper()
	return OpenSource(t, string(c), options, tab)
}

// Job returns a job of src, a source of c, with the defaults of Job.
func (c Connector) Job(src connector.Source[connector.TableRecord]) Job {
	return Job{Connector: string(c), Source: src}
}

// RunFails runs a job of a source of c and returns its error (RunFails).
func (c Connector) RunFails(t testing.TB, options map[string]string, tab *connector.Table) error {
	t.Helper()
	return RunFails(t, string(c), options, tab)
}

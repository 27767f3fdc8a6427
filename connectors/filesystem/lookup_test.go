package filesystem

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// openLookup opens the filesystem table of schema and options and returns
// its lookup by the columns keys.
func openLookup(t *testing.T, table *connector.Table, options map[string]string, keys ...int) (*lookupTableSource, connector.LookupFunc) {
	t.Helper()
	src, err := connector.OpenTableSource(connector.Default, "filesystem", options, table)
	if err != nil {
		t.Fatal(err)
	}
	ls, ok := connector.TableLookup(src)
	if !ok {
		t.Fatal("a filesystem table's source does not look rows up")
	}
	f, err := ls.NewLookup(keys)
	if err != nil {
		t.Fatal(err)
	}
	return ls.(*lookupTableSource), f
}

// find looks key (boxed values of the key columns) up and returns the rows
// found, printed and sorted.
func find(t *testing.T, f connector.LookupFunc, rt *types.RowType, keys []int, key ...types.Value) []string {
	t.Helper()
	kt := rt.Project(keys...)
	w := types.NewRowWriter(kt, types.NewArena(0))
	for i, v := range key {
		if v == nil {
			w.SetNull(i)
		} else if err := w.SetValue(i, v); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := f(context.Background(), w.Finish())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, types.FormatRow(rt, r))
	}
	slices.Sort(out)
	return out
}

func wantRows(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

// TestLookupCSV looks rows of a CSV file up by one column and by another,
// as q13 of Nexmark looks its side input up: duplicate keys give every
// row, a missing key none, and rows with a NULL key are never found.
func TestLookupCSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "side_input.txt")
	writeFile(t, path, "0,zero\n1,one\n2,two\n\n2,deux\n,nobody\n")
	rt := types.MustRowType(types.F("key", types.BigInt()), types.F("value", types.String()))
	table := &connector.Table{Schema: rt}
	opts := map[string]string{"path": "file://" + path, "format": "csv"}
	_, byKey := openLookup(t, table, opts, 0)
	wantRows(t, "key 1", find(t, byKey, rt, []int{0}, int64(1)), "+I[1, one]")
	wantRows(t, "key 2", find(t, byKey, rt, []int{0}, int64(2)), "+I[2, deux]", "+I[2, two]")
	wantRows(t, "key 7", find(t, byKey, rt, []int{0}, int64(7)))
	wantRows(t, "key NULL", find(t, byKey, rt, []int{0}, nil))
	_, byValue := openLookup(t, table, opts, 1)
	wantRows(t, "value two", find(t, byValue, rt, []int{1}, "two"), "+I[2, two]")
	wantRows(t, "value nobody", find(t, byValue, rt, []int{1}, "nobody"), "+I[null, nobody]")
	_, byBoth := openLookup(t, table, opts, 1, 0)
	wantRows(t, "value, key", find(t, byBoth, rt, []int{1, 0}, "deux", int64(2)), "+I[2, deux]")
	wantRows(t, "value, wrong key", find(t, byBoth, rt, []int{1, 0}, "deux", int64(1)))

	// The same rows, read by many lookups at once.
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	_, fresh := openLookup(t, table, opts, 0)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kt := rt.Project(0)
			w := types.NewRowWriter(kt, types.NewArena(0))
			w.SetInt64(0, int64(i%3))
			rows, err := fresh(context.Background(), w.Finish())
			if err != nil || len(rows) == 0 {
				errs <- "concurrent lookup failed"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// TestLookupIntegerKeys looks rows up by a key of each integer type, which
// the lookup indexes by its value: negative and positive keys, the
// extremes of the type, a missing key and a NULL one.
func TestLookupIntegerKeys(t *testing.T) {
	for _, c := range []struct {
		typ      types.Type
		min, max int64
	}{{types.TinyInt(), -128, 127}, {types.SmallInt(), -32768, 32767}, {types.Int(), -2147483648, 2147483647}, {types.BigInt(), -9223372036854775808, 9223372036854775807}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "dim.csv")
		writeFile(t, path, fmt.Sprintf("%d,min\n-1,minus\n0,zero\n%d,max\n,nobody\n-1,again\n", c.min, c.max))
		rt := types.MustRowType(types.F("key", c.typ), types.F("value", types.String()))
		_, f := openLookup(t, &connector.Table{Schema: rt}, map[string]string{"path": "file://" + path, "format": "csv"}, 0)
		value := func(v int64) types.Value {
			switch c.typ.Kind() {
			case types.KindTinyInt:
				return int8(v)
			case types.KindSmallInt:
				return int16(v)
			case types.KindInt:
				return int32(v)
			}
			return v
		}
		wantRows(t, c.typ.String()+" min", find(t, f, rt, []int{0}, value(c.min)), fmt.Sprintf("+I[%d, min]", c.min))
		wantRows(t, c.typ.String()+" max", find(t, f, rt, []int{0}, value(c.max)), fmt.Sprintf("+I[%d, max]", c.max))
		wantRows(t, c.typ.String()+" -1", find(t, f, rt, []int{0}, value(-1)), "+I[-1, again]", "+I[-1, minus]")
		wantRows(t, c.typ.String()+" 5", find(t, f, rt, []int{0}, value(5)))
		wantRows(t, c.typ.String()+" NULL", find(t, f, rt, []int{0}, nil))
	}
}

// TestLookupPartitionedJSON looks rows of a partitioned directory of JSON
// files up by a partition column and a column of the files.
func TestLookupPartitionedJSON(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "dt=2024-03-01", "part-0.jsonl"), `{"id": 1, "name": "a"}`+"\n"+`{"id": 2, "name": "b"}`+"\n")
	writeFile(t, filepath.Join(dir, "dt=2024-03-02", "part-0.jsonl"), `{"id": 1, "name": "c"}`+"\n")
	writeFile(t, filepath.Join(dir, "dt=2024-03-02", "_SUCCESS"), "")
	writeFile(t, filepath.Join(dir, "dt=2024-03-02", ".part-1.inprogress"), `{"id": 1, "name": "hidden"}`+"\n")
	rt := types.MustRowType(types.F("id", types.BigInt()), types.F("name", types.String()), types.F("dt", types.String()))
	table := &connector.Table{Schema: rt, PartitionKeys: []int{2}}
	_, f := openLookup(t, table, map[string]string{"path": dir, "format": "json"}, 2, 0)
	wantRows(t, "dt 03-02, id 1", find(t, f, rt, []int{2, 0}, "2024-03-02", int64(1)), "+I[1, c, 2024-03-02]")
	wantRows(t, "dt 03-01, id 2", find(t, f, rt, []int{2, 0}, "2024-03-01", int64(2)), "+I[2, b, 2024-03-01]")
	wantRows(t, "dt 03-01, id 3", find(t, f, rt, []int{2, 0}, "2024-03-01", int64(3)))
}

// TestLookupChangelog looks rows of a Debezium changelog up: the rows are
// what the changes leave.
func TestLookupChangelog(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "changes.jsonl"), strings.Join([]string{
		`{"before": null, "after": {"id": 1, "name": "a"}, "op": "c"}`,
		`{"before": null, "after": {"id": 2, "name": "b"}, "op": "c"}`,
		`{"before": {"id": 1, "name": "a"}, "after": {"id": 1, "name": "a2"}, "op": "u"}`,
		`{"before": {"id": 2, "name": "b"}, "after": null, "op": "d"}`,
	}, "\n")+"\n")
	rt := types.MustRowType(types.F("id", types.BigInt()), types.F("name", types.String()))
	_, f := openLookup(t, &connector.Table{Schema: rt}, map[string]string{"path": dir, "format": "debezium-json"}, 0)
	wantRows(t, "id 1", find(t, f, rt, []int{0}, int64(1)), "+I[1, a2]")
	wantRows(t, "id 2 (deleted)", find(t, f, rt, []int{0}, int64(2)))
}

// TestLookupReload reloads the files when the rows are older than
// 'lookup.full-cache.periodic-reload.interval', and keeps them otherwise.
func TestLookupReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dim.csv")
	writeFile(t, path, "1,old\n")
	rt := types.MustRowType(types.F("k", types.BigInt()), types.F("v", types.String()))
	table := &connector.Table{Schema: rt}
	clock := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		name     string
		interval string
		want     string
	}{
		{"once", "", "+I[1, old]"},
		{"reloaded", "1 min", "+I[1, new]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeFile(t, path, "1,old\n")
			opts := map[string]string{"path": path, "format": "csv"}
			if c.interval != "" {
				opts["lookup.full-cache.periodic-reload.interval"] = c.interval
			}
			src, f := openLookup(t, table, opts, 0)
			now := clock
			src.now = func() time.Time { return now }
			wantRows(t, "first lookup", find(t, f, rt, []int{0}, int64(1)), "+I[1, old]")
			writeFile(t, path, "1,new\n")
			now = now.Add(59 * time.Second)
			wantRows(t, "within the interval", find(t, f, rt, []int{0}, int64(1)), "+I[1, old]")
			now = now.Add(time.Second)
			wantRows(t, "after the interval", find(t, f, rt, []int{0}, int64(1)), c.want)
		})
	}
}

// TestLookupErrors: a path without files fails when the lookup is made, a
// line that does not decode at the load naming its file and line, and an
// unknown cache kind at the options.
func TestLookupErrors(t *testing.T) {
	dir := t.TempDir()
	rt := types.MustRowType(types.F("k", types.BigInt()), types.F("v", types.String()))
	table := &connector.Table{Schema: rt}
	src, err := connector.OpenTableSource(connector.Default, "filesystem", map[string]string{"path": filepath.Join(dir, "missing.csv"), "format": "csv"}, table)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := connector.TableLookup(src)
	if _, err := ls.NewLookup([]int{0}); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("lookup of a missing file: got %v, want an error naming the file", err)
	}
	if _, err := ls.NewLookup([]int{5}); err == nil {
		t.Error("lookup by column 5 of a table of 2: no error")
	}

	path := filepath.Join(dir, "bad.csv")
	writeFile(t, path, "1,a\nx,b\n")
	_, f := openLookup(t, table, map[string]string{"path": path, "format": "csv"}, 0)
	w := types.NewRowWriter(rt.Project(0), types.NewArena(0))
	w.SetInt64(0, 1)
	if _, err := f(context.Background(), w.Finish()); err == nil || !strings.Contains(err.Error(), "bad.csv:2") {
		t.Errorf("lookup in a file with a bad line: got %v, want an error naming bad.csv:2", err)
	}

	_, err = connector.OpenTableSource(connector.Default, "filesystem", map[string]string{"path": path, "format": "csv", "lookup.cache": "PARTIAL"}, table)
	if err == nil || !strings.Contains(err.Error(), "lookup.cache") {
		t.Errorf("'lookup.cache' = 'PARTIAL': got %v, want an error naming the option", err)
	}
}

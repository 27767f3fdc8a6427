package sql_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/nexmark/queries"
	"github.com/eddystream/eddy/nexmark/reference"
	"github.com/eddystream/eddy/sql"
)

// The acceptance test of eddy's SQL: the SQL files of the Nexmark
// benchmark's reference (nexmark-flink/src/main/resources/queries: the DDL
// of the nexmark table, the views person, auction and bid, and q0.sql to
// q22.sql) run unmodified, their ${...} variables substituted as the
// reference's runner does, with only the blackhole sink swapped for a
// filesystem table in debezium-json, and give the final table the Go API's
// version of each query (package nexmark/queries, as `eddy nexmark --query
// qN --output jsonl` writes it) gives for the same events. The files are
// not part of eddy: the test runs when EDDY_NEXMARK_SQL_DIR names a
// directory that holds them.

// refEvents and refTPS are the workload of the test: 20 000 events at 1 000
// events per second of event time, so that they span 20 s and the 2 s
// hops and 10 s windows and sessions of q5, q7, q8 and q11 are several.
const (
	refEvents = 20_000
	refTPS    = 1_000
)

// refTable is the final table of a query: its column names and rows, each
// row its values in canonical text (see canonical) joined by a unit
// separator.
type refTable struct {
	cols []string
	rows map[string]int
}

func newRefTable() *refTable { return &refTable{rows: map[string]int{}} }

// apply adds (or, for a retraction, removes) a row of named values.
func (tb *refTable) apply(fields []jsonField, retract bool) error {
	names := make([]string, len(fields))
	vals := make([]string, len(fields))
	for i, f := range fields {
		names[i], vals[i] = f.name, canonical(f.raw)
	}
	if tb.cols == nil {
		tb.cols = names
	} else if !slices.Equal(tb.cols, names) {
		return fmt.Errorf("a row has the columns %v, the table %v", names, tb.cols)
	}
	key := strings.Join(vals, "\x1f")
	if !retract {
		tb.rows[key]++
		return nil
	}
	if tb.rows[key] == 0 {
		return fmt.Errorf("retraction of a row not in the table: %s", strings.ReplaceAll(key, "\x1f", ", "))
	}
	if tb.rows[key]--; tb.rows[key] == 0 {
		delete(tb.rows, key)
	}
	return nil
}

func (tb *refTable) size() int {
	n := 0
	for _, c := range tb.rows {
		n += c
	}
	return n
}

// jsonField is a field of a JSON object, in the object's order.
type jsonField struct {
	name string
	raw  json.RawMessage
}

// orderedObject decodes a JSON object keeping the order of its fields.
func orderedObject(raw []byte) ([]jsonField, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %s", raw)
	}
	var out []jsonField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, jsonField{name: tok.(string), raw: v})
	}
	return out, nil
}

// timestampLayouts are the texts of a TIMESTAMP(3) value: Flink's JSON and
// CSV formats write "2006-01-02 15:04:05.000" (timestamp-format.standard
// 'SQL'), the Go API's JSON RFC 3339 in UTC.
var timestampLayouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999"}

// canonical returns the text of a value that both sides compare: NULL for
// null; a number without trailing zeros after its point (DECIMAL(23, 3)
// 90.800 and 90.8 are one value: the scale is the column's type, not the
// value's); a timestamp as its milliseconds since the epoch in UTC (see
// timestampLayouts); any other string as it is, so that a number and a
// string of its digits are one value (q6 declares seller VARCHAR for
// the BIGINT of the Go API, and CSV has no numbers).
func canonical(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return "NULL"
	case strings.HasPrefix(s, `"`):
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return s
		}
		return canonicalText(str)
	}
	return canonicalNumber(s)
}

func canonicalText(s string) string {
	if len(s) >= 19 && s[4] == '-' && s[7] == '-' {
		for _, l := range timestampLayouts {
			if ts, err := time.Parse(l, s); err == nil {
				return "ts:" + strconv.FormatInt(ts.UnixMilli(), 10)
			}
		}
	}
	return s
}

func canonicalNumber(s string) string {
	if i := strings.IndexByte(s, '.'); i >= 0 && !strings.ContainsAny(s, "eE") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// visibleFiles lists the committed files below dir: not hidden (in
// progress, '.') nor markers ('_SUCCESS').
func visibleFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n := d.Name(); p != dir && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// debeziumTable materializes the changelog of a debezium-json filesystem
// table: op "c" (and "r") inserts its after, "d" deletes its before, "u"
// does both, as Flink's encoder and decoder read them.
func debeziumTable(t *testing.T, dir string) *refTable {
	t.Helper()
	tb := newRefTable()
	for _, f := range visibleFiles(t, dir) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var msg struct {
				Before, After json.RawMessage
				Op            string
			}
			if err := json.Unmarshal(line, &msg); err != nil {
				t.Fatalf("%s:%d: %v", f, n+1, err)
			}
			apply := func(raw json.RawMessage, retract bool) {
				fields, err := orderedObject(raw)
				if err == nil {
					err = tb.apply(fields, retract)
				}
				if err != nil {
					t.Fatalf("%s:%d: %v", f, n+1, err)
				}
			}
			switch msg.Op {
			case "c", "r":
				apply(msg.After, false)
			case "d":
				apply(msg.Before, true)
			case "u":
				apply(msg.Before, true)
				apply(msg.After, false)
			default:
				t.Fatalf("%s:%d: op %q", f, n+1, msg.Op)
			}
		}
	}
	return tb
}

// q10Table reads q10's partitioned CSV files: the columns of the files,
// then dt and hm from the partition directories.
func q10Table(t *testing.T, dir string) *refTable {
	t.Helper()
	cols := []string{"auction", "bidder", "price", "dateTime", "extra"}
	tb := newRefTable()
	for _, f := range visibleFiles(t, dir) {
		part := map[string]string{}
		rel, _ := filepath.Rel(dir, filepath.Dir(f))
		for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
			if k, v, ok := strings.Cut(seg, "="); ok {
				if u, err := url.PathUnescape(v); err == nil {
					v = u
				}
				part[k] = v
			}
		}
		file, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		r := csv.NewReader(file)
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var fields []jsonField
			for i, v := range append(rec, part["dt"], part["hm"]) {
				raw, _ := json.Marshal(v)
				name := "dt"
				switch {
				case i < len(cols):
					name = cols[i]
				case i > len(cols):
					name = "hm"
				}
				fields = append(fields, jsonField{name: name, raw: raw})
			}
			if err := tb.apply(fields, false); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
		file.Close()
	}
	return tb
}

// runReferenceSQL runs the reference's query q at parallelism p and
// returns its final table.
func runReferenceSQL(t *testing.T, dir, q string, p int, sideInput string) (*refTable, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	nexmarkDir := t.TempDir()
	vars := reference.Vars(reference.Workload{Events: refEvents, TPS: refTPS, NexmarkDir: nexmarkDir, FlinkHome: filepath.Dir(filepath.Dir(sideInput))})
	script, err := reference.Query(dir, q, vars)
	if err != nil {
		t.Fatal(err)
	}
	sink := fmt.Sprintf("'connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json'", out)
	s := sql.NewSession()
	if _, err := s.Execute(reference.ReplaceSink(script, sink)); err != nil {
		return nil, err
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(p))
	if err := s.Build(env); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := env.Execute(ctx, q); err != nil {
		return nil, err
	}
	if q == "q10" {
		return q10Table(t, filepath.Join(nexmarkDir, "data", "output", vars["SUBMIT_TIME"], "bid")), nil
	}
	return debeziumTable(t, out), nil
}

// runGoAPI runs the Go API's query q at parallelism p over the same events
// and returns its final table: its results as JSON objects, as `eddy
// nexmark --output jsonl` writes them, a changelog's "op" applied.
func runGoAPI(t *testing.T, q string, p int, sideInput string) *refTable {
	t.Helper()
	query, ok := queries.Lookup(q)
	if !ok {
		t.Fatalf("no Go API query %s", q)
	}
	cfg := nexmark.DefaultConfig()
	cfg.MaxEvents = refEvents
	cfg.FirstEventRate = refTPS
	env := eddy.NewEnvironment(eddy.WithParallelism(p))
	out, err := query.Build(env, cfg, queries.Options{Sink: queries.Collect, Dir: t.TempDir(), SideInput: sideInput})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Execute(context.Background(), "nexmark "+q); err != nil {
		t.Fatal(err)
	}
	tb := newRefTable()
	for _, r := range out.Results() {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		fields, err := orderedObject(b)
		if err != nil {
			t.Fatal(err)
		}
		retract := false
		if len(fields) > 0 && fields[0].name == "op" {
			var op string
			json.Unmarshal(fields[0].raw, &op)
			retract = op == "-U" || op == "-D"
			fields = fields[1:]
		}
		if err := tb.apply(fields, retract); err != nil {
			t.Fatalf("Go API %s: %v", q, err)
		}
	}
	return tb
}

// alignColumns returns the rows of goAPI in the order of the columns of
// ref by name, when both tables have the same column names in another
// order, and by position otherwise (the names of the reference's sinks
// are not always those of the values: q4's sink calls the category id,
// and the select list of q7 gives its sink's bidder the price).
func alignColumns(ref, goAPI *refTable) (*refTable, string) {
	if slices.Equal(ref.cols, goAPI.cols) || len(ref.cols) != len(goAPI.cols) {
		return goAPI, ""
	}
	perm := make([]int, len(ref.cols))
	for i, c := range ref.cols {
		j := slices.IndexFunc(goAPI.cols, func(g string) bool { return strings.EqualFold(g, c) })
		if j < 0 {
			return goAPI, fmt.Sprintf("columns by position: SQL %v, Go API %v", ref.cols, goAPI.cols)
		}
		perm[i] = j
	}
	out := &refTable{cols: ref.cols, rows: map[string]int{}}
	for row, n := range goAPI.rows {
		vals := strings.Split(row, "\x1f")
		re := make([]string, len(vals))
		for i, j := range perm {
			re[i] = vals[j]
		}
		out.rows[strings.Join(re, "\x1f")] += n
	}
	return out, fmt.Sprintf("columns by name: Go API %v", goAPI.cols)
}

// diffTables returns "" if the tables hold the same rows as often, and
// otherwise their sizes and the first row (in sorted order) that one of
// them holds more often than the other.
func diffTables(sqlT, goT *refTable) string {
	keys := map[string]bool{}
	for k := range sqlT.rows {
		keys[k] = true
	}
	for k := range goT.rows {
		keys[k] = true
	}
	sortedKeys := make([]string, 0, len(keys))
	for k := range keys {
		sortedKeys = append(sortedKeys, k)
	}
	slices.Sort(sortedKeys)
	differing := 0
	first := ""
	for _, k := range sortedKeys {
		if a, b := sqlT.rows[k], goT.rows[k]; a != b {
			differing++
			if first == "" {
				first = fmt.Sprintf("[%s] %d times in SQL, %d in the Go API", strings.ReplaceAll(k, "\x1f", ", "), a, b)
			}
		}
	}
	if differing == 0 {
		return ""
	}
	return fmt.Sprintf("%d rows in SQL, %d in the Go API, %d distinct rows differ; first: %s", sqlT.size(), goT.size(), differing, first)
}

// refExpectation is what the acceptance test expects of a query besides
// equal final tables.
type refExpectation struct {
	// skipCompare says why the final tables are not compared.
	skipCompare string
	// planError is the error the reference's own SQL gets (Flink's too).
	planError string
}

var refExpectations = map[string]refExpectation{
	// q6 filters on rownum in the WHERE of the SELECT that defines it, which
	// SQL does not allow: Flink's validator refuses it as eddy does ("TODO:
	// this query is not supported yet in Flink SQL", says the file).
	"q6":  {planError: "unknown column rownum"},
	"q12": {skipCompare: "processing-time windows: the rows depend on how fast the job runs"},
}

// TestNexmarkReferenceSQL runs the reference's SQL files when
// EDDY_NEXMARK_SQL_DIR names a directory holding them (they are not part
// of eddy), each at parallelism 1 and 2, and compares each query's final
// table with the Go API's for the same events. It logs a table of the
// results per query.
func TestNexmarkReferenceSQL(t *testing.T) {
	dir := os.Getenv("EDDY_NEXMARK_SQL_DIR")
	if dir == "" {
		t.Skip("EDDY_NEXMARK_SQL_DIR is not set")
	}
	flinkHome := t.TempDir()
	sideInput := filepath.Join(flinkHome, "data", "side_input.txt")
	if err := os.MkdirAll(filepath.Dir(sideInput), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := queries.WriteSideInput(sideInput, queries.SideInputRows); err != nil {
		t.Fatal(err)
	}
	var report []string
	for i := 0; i <= 22; i++ {
		q := "q" + strconv.Itoa(i)
		exp := refExpectations[q]
		for _, p := range []int{1, 2} {
			name := fmt.Sprintf("%s/p%d", q, p)
			t.Run(name, func(t *testing.T) {
				got, err := runReferenceSQL(t, dir, q, p, sideInput)
				switch {
				case exp.planError != "":
					if err == nil || !strings.Contains(err.Error(), exp.planError) {
						t.Errorf("got error %v, want one saying %q", err, exp.planError)
					}
					report = append(report, fmt.Sprintf("%-7s fails as expected: %s", name, firstLine(err)))
					return
				case err != nil:
					report = append(report, fmt.Sprintf("%-7s FAILS: %s", name, firstLine(err)))
					t.Fatal(err)
				case exp.skipCompare != "":
					report = append(report, fmt.Sprintf("%-7s runs (%d rows); not compared: %s", name, got.size(), exp.skipCompare))
					return
				}
				goTable := runGoAPI(t, q, p, sideInput)
				want, how := goTable, "columns by position"
				if d := diffTables(got, want); d != "" {
					// An INSERT fills its sink's columns by position, but
					// the names of the sink's columns need not be those of
					// the values the query selects: try them by name.
					want, how = alignColumns(got, goTable)
				}
				if d := diffTables(got, want); d != "" {
					report = append(report, fmt.Sprintf("%-7s DIFFERS: %s", name, d))
					t.Errorf("%s (SQL columns %v; %s)", d, got.cols, how)
					return
				}
				if got.size() == 0 {
					t.Errorf("the final table is empty; the comparison shows nothing")
				}
				report = append(report, fmt.Sprintf("%-7s equal (%d rows) %s", name, got.size(), how))
			})
		}
	}
	t.Logf("the reference's SQL against the Go API, %d events at %d events/s:\n%s", refEvents, refTPS, strings.Join(report, "\n"))
}

func firstLine(err error) string {
	if err == nil {
		return "no error"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

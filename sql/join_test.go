package sql_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// The join tests compare the final table of each join (its changelog
// applied) with the join computed by brute force over the input rows.

// rowsFactory is the connector 'rows': a source of the rows registered
// under its 'id' option (fields separated by |, NULL as null, a leading
// +I/-U/+U/-D for a changelog table), and a sink capturing the changes
// written under its 'id'.
type rowsFactory struct {
	mu     sync.Mutex
	tables map[string]rowsTable
	out    map[string][]string
}

type rowsTable struct {
	lines []string
	mode  changelog.Mode
}

func newRowsFactory() *rowsFactory {
	return &rowsFactory{tables: map[string]rowsTable{}, out: map[string][]string{}}
}

func (f *rowsFactory) Spec() connector.Spec {
	return connector.Spec{Name: "rows", Kind: connector.SourceKind | connector.SinkKind, Description: "test rows",
		Options: []connector.Option{{Key: "id", Type: connector.String, Required: true, Description: "the rows' name"}}}
}

func (f *rowsFactory) NewSource(ctx connector.Context) (any, error) {
	t, ok := f.tables[ctx.Options.String("id")]
	if !ok {
		return nil, fmt.Errorf("no rows %q", ctx.Options.String("id"))
	}
	var recs []connector.TableRecord
	rt := ctx.Table.RowType()
	for _, l := range t.lines {
		parts := strings.Split(l, "|")
		kind := changelog.Insert
		if t.mode != changelog.InsertOnly {
			k, err := changelog.ParseKind(parts[0])
			if err != nil {
				return nil, err
			}
			kind, parts = k, parts[1:]
		}
		w := types.NewRowWriter(rt, types.NewArena(0))
		for i, p := range parts {
			if p == "null" {
				w.SetNull(i)
			} else if err := w.ParseText(i, p, nil); err != nil {
				return nil, fmt.Errorf("%q: %w", l, err)
			}
		}
		recs = append(recs, connector.TableRecord{Kind: kind, Row: w.Finish()})
	}
	return &rowsSource{recs: recs, mode: t.mode}, nil
}

func (f *rowsFactory) NewSink(ctx connector.Context) (any, error) {
	return &rowsSink{f: f, id: ctx.Options.String("id"), rt: ctx.Table.Schema}, nil
}

// rowsSource emits its records: an append-only table split in one part per
// reader, a changelog in one part, in order.
type rowsSource struct {
	recs []connector.TableRecord
	mode changelog.Mode
}

func (s *rowsSource) ChangelogMode() changelog.Mode { return s.mode }

func (s *rowsSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(p int) ([]connector.Split, error) {
		if s.mode != changelog.InsertOnly {
			p = 1
		}
		var out []connector.Split
		for i := 0; i < p; i++ {
			lo, hi := len(s.recs)*i/p, len(s.recs)*(i+1)/p
			out = append(out, connector.Split{ID: fmt.Sprint(i), State: []byte(fmt.Sprintf("%d %d", lo, hi))})
		}
		return out, nil
	})
}

func (s *rowsSource) NewReader(connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	return &rowsReader{s: s}, nil
}

type rowsReader struct {
	s      *rowsSource
	splits []connector.Split
}

func (r *rowsReader) AddSplits(s []connector.Split) error {
	r.splits = append(r.splits, s...)
	return nil
}

func (r *rowsReader) Read(out connector.Output[connector.TableRecord]) error {
	for _, sp := range r.splits {
		var lo, hi int
		fmt.Sscanf(string(sp.State), "%d %d", &lo, &hi)
		so := out.Split(sp.ID)
		for _, rec := range r.s.recs[lo:hi] {
			so.Emit(rec)
		}
		so.Finish()
	}
	r.splits = nil
	return nil
}

func (r *rowsReader) SnapshotState(int64) ([]connector.Split, error) { return r.splits, nil }
func (r *rowsReader) Close() error                                   { return nil }

type rowsSink struct {
	f  *rowsFactory
	id string
	rt *types.RowType
}

func (s *rowsSink) ChangelogMode() changelog.Mode { return changelog.Retract }

func (s *rowsSink) NewWriter(connector.WriterContext) (connector.Writer[connector.TableRecord], error) {
	return s, nil
}

func (s *rowsSink) Write(rs []connector.TableRecord, _ []int64) error {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	for _, r := range rs {
		s.f.out[s.id] = append(s.f.out[s.id], types.FormatChange(r.Kind, s.rt, r.Row))
	}
	return nil
}
func (s *rowsSink) Flush() error { return nil }
func (s *rowsSink) Close() error { return nil }

// joinRun runs script with the 'rows' connector of f at parallelism p.
func joinRun(t *testing.T, f *rowsFactory, script string, p int) {
	t.Helper()
	reg := registry(&collectSink{})
	reg.Register(f)
	s := sql.NewSession(sql.WithConnectors(reg))
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

// joinFinalTable applies a changelog in print form: +I and +U add a row, -U
// and -D take one away. It fails on a retraction of a row not there.
func joinFinalTable(t *testing.T, lines []string) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, l := range lines {
		row := l[2:]
		switch l[:2] {
		case "+I", "+U":
			m[row]++
		case "-U", "-D":
			if m[row] == 0 {
				t.Fatalf("%s retracts a row that is not in the table", l)
			}
			m[row]--
			if m[row] == 0 {
				delete(m, row)
			}
		default:
			t.Fatalf("line %q", l)
		}
	}
	return m
}

func joinMultiset(rows []string) map[string]int {
	m := map[string]int{}
	for _, r := range rows {
		m[r]++
	}
	return m
}

// joinSameTable compares a join's final table with the expected rows.
func joinSameTable(t *testing.T, name string, got map[string]int, want []string) {
	t.Helper()
	w := joinMultiset(want)
	var diff []string
	for r, n := range w {
		if got[r] != n {
			diff = append(diff, fmt.Sprintf("%s: want %d, got %d", r, n, got[r]))
		}
	}
	for r, n := range got {
		if _, ok := w[r]; !ok {
			diff = append(diff, fmt.Sprintf("%s: want 0, got %d", r, n))
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		if len(diff) > 10 {
			diff = diff[:10]
		}
		t.Errorf("%s: %d rows, want %d; differences:\n%s", name, len(got), len(want), strings.Join(diff, "\n"))
	}
	if len(want) == 0 {
		t.Errorf("%s: the test expects no rows; make it expect some", name)
	}
}

// testRow is a row of the join tests' tables: id, k (nil for NULL), text
// and event time in milliseconds.
type testRow struct {
	id int64
	k  *int64
	s  string
	ts int64
}

func (r testRow) line() string {
	k := "null"
	if r.k != nil {
		k = fmt.Sprint(*r.k)
	}
	return fmt.Sprintf("%d|%s|%s|%s", r.id, k, r.s, types.Timestamp{Millis: r.ts}.Format(3))
}

// testRows makes n rows with keys in [0, keys) or NULL, at increasing
// times.
func joinTestRows(rng *rand.Rand, n, keys int, prefix string) []testRow {
	var out []testRow
	ts := int64(1_700_000_000_000)
	for i := 0; i < n; i++ {
		r := testRow{id: int64(i), s: fmt.Sprintf("%s%d", prefix, i), ts: ts}
		if rng.IntN(10) > 0 {
			k := int64(rng.IntN(keys))
			r.k = &k
		}
		ts += int64(rng.IntN(1500))
		out = append(out, r)
	}
	return out
}

func rowLines(rows []testRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.line())
	}
	return out
}

func nullText(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// joined renders an output row [l.id, l.k, r.id, r.k] with NULLs for a
// missing side.
func joined(l, r *testRow) string {
	var parts []string
	if l != nil {
		parts = append(parts, fmt.Sprint(l.id), nullText(l.k))
	} else {
		parts = append(parts, "null", "null")
	}
	if r != nil {
		parts = append(parts, fmt.Sprint(r.id), nullText(r.k))
	} else {
		parts = append(parts, "null", "null")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// bruteJoin joins ls and rs on equal non-NULL keys and on, keeping the
// unmatched rows of the outer sides.
func bruteJoin(ls, rs []testRow, kind eddy.JoinKind, on func(l, r testRow) bool) []string {
	var out []string
	rMatched := make([]bool, len(rs))
	for _, l := range ls {
		matched := false
		for j, r := range rs {
			if l.k != nil && r.k != nil && *l.k == *r.k && on(l, r) {
				out = append(out, joined(&l, &r))
				matched, rMatched[j] = true, true
			}
		}
		if !matched && (kind == eddy.LeftJoin || kind == eddy.FullJoin) {
			out = append(out, joined(&l, nil))
		}
	}
	if kind == eddy.RightJoin || kind == eddy.FullJoin {
		for j, r := range rs {
			if !rMatched[j] {
				out = append(out, joined(nil, &r))
			}
		}
	}
	return out
}

// replaceSuffix returns rows with suffix old replaced by new.
func replaceSuffix(rows []string, old, new string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		if strings.HasSuffix(r, old) {
			r = strings.TrimSuffix(r, old) + new
		}
		out[i] = r
	}
	return out
}

// keepSuffix returns the rows that end with suffix.
func keepSuffix(rows []string, suffix string) []string {
	var out []string
	for _, r := range rows {
		if strings.HasSuffix(r, suffix) {
			out = append(out, r)
		}
	}
	return out
}

const joinTablesDDL = `
CREATE TABLE L (id BIGINT, k BIGINT, s STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'rows', 'id' = 'L');
CREATE TABLE R (id BIGINT, k INT, s STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'rows', 'id' = 'R');
`

func joinSink(name string) string {
	return fmt.Sprintf("CREATE TABLE out_%s (lid BIGINT, lk BIGINT, rid BIGINT, rk BIGINT) WITH ('connector' = 'rows', 'id' = '%s');\n", name, name)
}

func TestRegularJoins(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ls, rs := joinTestRows(rng, 60, 8, "l"), joinTestRows(rng, 50, 8, "r")
	idLess := func(l, r testRow) bool { return l.id < r.id }
	all := func(l, r testRow) bool { return true }
	cases := []struct {
		name, query string
		want        []string
	}{
		{"inner", "SELECT L.id, L.k, R.id, R.k FROM L JOIN R ON L.k = R.k", bruteJoin(ls, rs, eddy.InnerJoin, all)},
		{"left", "SELECT L.id, L.k, R.id, R.k FROM L LEFT JOIN R ON L.k = R.k AND L.id < R.id", bruteJoin(ls, rs, eddy.LeftJoin, idLess)},
		{"right", "SELECT L.id, L.k, R.id, R.k FROM L RIGHT JOIN R ON L.k = R.k AND L.id < R.id", bruteJoin(ls, rs, eddy.RightJoin, idLess)},
		{"full", "SELECT L.id, L.k, R.id, R.k FROM L FULL OUTER JOIN R ON L.k = R.k AND L.id < R.id", bruteJoin(ls, rs, eddy.FullJoin, idLess)},
		{"comma", "SELECT L.id, L.k, R.id, R.k FROM L, R WHERE R.k = L.k AND R.id > 10 AND L.s <> R.s",
			bruteJoin(ls, rs, eddy.InnerJoin, func(l, r testRow) bool { return r.id > 10 })},
		{"using", "SELECT L.id, k, R.id, k FROM (SELECT id, k FROM L) L JOIN (SELECT id, k FROM R) R USING (k)", bruteJoin(ls, rs, eddy.InnerJoin, all)},
		// The projection over the join runs in it, the padded side's
		// columns NULL; a condition above the join stays a filter.
		{"left_coalesce", "SELECT L.id, L.k, COALESCE(R.id, -1), R.k FROM L LEFT JOIN R ON L.k = R.k AND L.id < R.id",
			replaceSuffix(bruteJoin(ls, rs, eddy.LeftJoin, idLess), "null, null]", "-1, null]")},
		{"left_unmatched", "SELECT L.id, L.k, R.id, R.k FROM L LEFT JOIN R ON L.k = R.k AND L.id < R.id WHERE R.id IS NULL",
			keepSuffix(bruteJoin(ls, rs, eddy.LeftJoin, idLess), "null, null]")},
		// Keys of one BIGINT column on both sides (R2's k is R's cast):
		// the join is keyed by their values, NULL keys dropped where the
		// side's unmatched rows are not kept (inner, and the inner side
		// of a LEFT JOIN); a FULL JOIN keys its nullable keys encoded.
		{"inner_int", "SELECT L.id, L.k, R2.id, R2.k FROM L JOIN R2 ON L.k = R2.k", bruteJoin(ls, rs, eddy.InnerJoin, all)},
		{"left_int", "SELECT L.id, L.k, R2.id, R2.k FROM L LEFT JOIN R2 ON L.k = R2.k AND L.id < R2.id", bruteJoin(ls, rs, eddy.LeftJoin, idLess)},
		{"right_int", "SELECT L.id, L.k, R2.id, R2.k FROM L RIGHT JOIN R2 ON L.k = R2.k", bruteJoin(ls, rs, eddy.RightJoin, all)},
		{"full_int", "SELECT L.id, L.k, R2.id, R2.k FROM L FULL JOIN R2 ON L.k = R2.k AND L.id < R2.id", bruteJoin(ls, rs, eddy.FullJoin, idLess)},
		// A view of a join read by two queries: the join runs once, with
		// the columns both read.
		{"view1", "SELECT lid, lk, rid, rk FROM J", bruteJoin(ls, rs, eddy.InnerJoin, all)},
		{"view2", "SELECT lid, lk, rid, rk FROM J WHERE rs <> ls", bruteJoin(ls, rs, eddy.InnerJoin, all)},
	}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			f := newRowsFactory()
			f.tables["L"] = rowsTable{lines: rowLines(ls), mode: changelog.InsertOnly}
			f.tables["R"] = rowsTable{lines: rowLines(rs), mode: changelog.InsertOnly}
			script := joinTablesDDL + "CREATE VIEW R2 AS SELECT id, CAST(k AS BIGINT) AS k FROM R;\n" + "CREATE VIEW J AS SELECT L.id AS lid, L.k AS lk, R.id AS rid, R.k AS rk, L.s AS ls, R.s AS rs FROM L JOIN R ON L.k = R.k;\n"
			for _, c := range cases {
				script += joinSink(c.name) + fmt.Sprintf("INSERT INTO out_%s %s;\n", c.name, c.query)
			}
			joinRun(t, f, script, p)
			for _, c := range cases {
				joinSameTable(t, c.name, joinFinalTable(t, f.out[c.name]), c.want)
			}
		})
	}
}

// TestJoinOfChangelogs joins a retract changelog and an upsert changelog
// (normalized before the join); the result is the join of their final
// tables.
func TestJoinOfChangelogs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ls, rs := joinTestRows(rng, 40, 5, "l"), joinTestRows(rng, 40, 5, "r")
	// L: every row inserted, some deleted, some updated to another key.
	var lChanges []string
	var lFinal []testRow
	for _, r := range ls {
		lChanges = append(lChanges, "+I|"+r.line())
	}
	for i, r := range ls {
		switch i % 4 {
		case 0:
			lChanges = append(lChanges, "-D|"+r.line())
		case 1:
			n := r
			k := int64(i % 3)
			n.k = &k
			lChanges = append(lChanges, "-U|"+r.line(), "+U|"+n.line())
			lFinal = append(lFinal, n)
		default:
			lFinal = append(lFinal, r)
		}
	}
	// R: an upsert stream keyed by id, each id written twice.
	var rChanges []string
	var rFinal []testRow
	for i, r := range rs {
		rChanges = append(rChanges, "+I|"+r.line())
		n := r
		k := int64((i * 7) % 5)
		n.k = &k
		if i%5 == 0 {
			rChanges = append(rChanges, "-D|"+r.line())
			continue
		}
		rChanges = append(rChanges, "+U|"+n.line())
		rFinal = append(rFinal, n)
	}
	ddl := `
CREATE TABLE L (id BIGINT, k BIGINT, s STRING, ts TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'L');
CREATE TABLE R (id BIGINT, k INT, s STRING, ts TIMESTAMP(3), PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'rows', 'id' = 'R');
`
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			f := newRowsFactory()
			f.tables["L"] = rowsTable{lines: lChanges, mode: changelog.Retract}
			f.tables["R"] = rowsTable{lines: rChanges, mode: changelog.Upsert}
			script := ddl + joinSink("inner") + "INSERT INTO out_inner SELECT L.id, L.k, R.id, R.k FROM L JOIN R ON L.k = R.k;\n" +
				joinSink("full") + "INSERT INTO out_full SELECT L.id, L.k, R.id, R.k FROM L FULL JOIN R ON L.k = R.k AND L.id <> R.id;\n"
			joinRun(t, f, script, p)
			joinSameTable(t, "inner", joinFinalTable(t, f.out["inner"]), bruteJoin(lFinal, rFinal, eddy.InnerJoin, func(l, r testRow) bool { return true }))
			joinSameTable(t, "full", joinFinalTable(t, f.out["full"]), bruteJoin(lFinal, rFinal, eddy.FullJoin, func(l, r testRow) bool { return l.id != r.id }))
		})
	}
}

// TestIntervalJoins runs interval joins (append-only output) and compares
// them with brute force: both inputs are in time order, so no row is late.
func TestIntervalJoins(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ls, rs := joinTestRows(rng, 80, 4, "l"), joinTestRows(rng, 80, 4, "r")
	cases := []struct {
		name, query string
		want        []string
	}{
		{"between", "SELECT L.id, L.k, R.id, R.k FROM L JOIN R ON L.k = R.k AND L.ts BETWEEN R.ts - INTERVAL '2' SECOND AND R.ts + INTERVAL '1' SECOND",
			bruteJoin(ls, rs, eddy.InnerJoin, func(l, r testRow) bool { return l.ts-r.ts >= -2000 && l.ts-r.ts <= 1000 })},
		{"where", "SELECT L.id, L.k, R.id, R.k FROM L, R WHERE L.k = R.k AND R.ts >= L.ts AND R.ts < L.ts + INTERVAL '3' SECOND AND L.id <> R.id",
			bruteJoin(ls, rs, eddy.InnerJoin, func(l, r testRow) bool { return r.ts >= l.ts && r.ts < l.ts+3000 && l.id != r.id })},
	}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			f := newRowsFactory()
			f.tables["L"] = rowsTable{lines: rowLines(ls), mode: changelog.InsertOnly}
			f.tables["R"] = rowsTable{lines: rowLines(rs), mode: changelog.InsertOnly}
			script := joinTablesDDL
			for _, c := range cases {
				script += joinSink(c.name) + fmt.Sprintf("INSERT INTO out_%s %s;\n", c.name, c.query)
			}
			joinRun(t, f, script, p)
			for _, c := range cases {
				for _, l := range f.out[c.name] {
					if !strings.HasPrefix(l, "+I") {
						t.Fatalf("%s: an interval join is append-only, got %s", c.name, l)
					}
				}
				joinSameTable(t, c.name, joinFinalTable(t, f.out[c.name]), c.want)
			}
		})
	}
}

// NewLookup looks rows of an append-only 'rows' table up by key, for
// lookup joins.
func (s *rowsSource) NewLookup(keys []int) (connector.LookupFunc, error) {
	return func(_ context.Context, key types.Row) ([]types.Row, error) {
		var out []types.Row
		for _, r := range s.recs {
			match := true
			for i, c := range keys {
				match = match && !r.Row.IsNull(c) && r.Row.Int64(c) == key.Int64(i)
			}
			if match {
				out = append(out, r.Row)
			}
		}
		return out, nil
	}, nil
}

// TestTemporalJoins joins orders with the version of a versioned table
// (an upsert changelog with a primary key and a rowtime) valid at each
// order's time, and with a lookup table at processing time.
func TestTemporalJoins(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	orders := joinTestRows(rng, 60, 4, "o")
	start := orders[0].ts - 3000
	type version struct {
		k, rate, ts int64
		deleted     bool
	}
	var versions []version
	var vLines []string
	ts := start
	for i := 0; i < 30; i++ {
		v := version{k: int64(rng.IntN(4)), rate: int64(100 + i), ts: ts}
		kind := "+U"
		if i < 4 {
			v.k, kind = int64(i), "+I"
		} else if rng.IntN(8) == 0 {
			v.deleted, kind = true, "-D"
		}
		versions = append(versions, v)
		vLines = append(vLines, fmt.Sprintf("%s|%d|%d|%s", kind, v.k, v.rate, types.Timestamp{Millis: v.ts}.Format(3)))
		ts += int64(rng.IntN(4000))
	}
	var want, wantLookup []string
	for _, o := range orders {
		if o.k == nil {
			continue
		}
		var cur *version
		for i, v := range versions {
			if v.k == *o.k && v.ts <= o.ts {
				cur = &versions[i]
			}
		}
		if cur != nil && !cur.deleted {
			want = append(want, fmt.Sprintf("[%d, %d, %d, %d]", o.id, *o.k, cur.rate, cur.k))
		}
	}
	dim := []string{"0|1000|x", "1|1001|y", "1|1011|z", "3|1003|w"}
	for _, o := range orders {
		if o.k == nil {
			continue
		}
		for _, d := range dim {
			var k, v int64
			fmt.Sscanf(strings.ReplaceAll(d, "|", " "), "%d %d", &k, &v)
			if k == *o.k {
				wantLookup = append(wantLookup, fmt.Sprintf("[%d, %d, %d, %d]", o.id, *o.k, v, k))
			}
		}
	}
	ddl := `
CREATE TABLE O (id BIGINT, k BIGINT, s STRING, ts TIMESTAMP(3), p AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'rows', 'id' = 'O');
CREATE TABLE V (k BIGINT, rate BIGINT, ts TIMESTAMP(3), PRIMARY KEY (k) NOT ENFORCED, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'rows', 'id' = 'V');
CREATE TABLE D (k BIGINT, v BIGINT, s STRING) WITH ('connector' = 'rows', 'id' = 'D');
`
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			f := newRowsFactory()
			f.tables["O"] = rowsTable{lines: rowLines(orders), mode: changelog.InsertOnly}
			f.tables["V"] = rowsTable{lines: vLines, mode: changelog.Upsert}
			f.tables["D"] = rowsTable{lines: dim, mode: changelog.InsertOnly}
			script := ddl + joinSink("temporal") + "INSERT INTO out_temporal SELECT O.id, O.k, V.rate, V.k FROM O JOIN V FOR SYSTEM_TIME AS OF O.ts ON O.k = V.k;\n" +
				joinSink("lookup") + "INSERT INTO out_lookup SELECT O.id, O.k, D.v, D.k FROM O JOIN D FOR SYSTEM_TIME AS OF O.p ON O.k = D.k;\n"
			joinRun(t, f, script, p)
			joinSameTable(t, "temporal", joinFinalTable(t, f.out["temporal"]), want)
			joinSameTable(t, "lookup", joinFinalTable(t, f.out["lookup"]), wantLookup)
		})
	}
}

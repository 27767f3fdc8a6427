package sql_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// The late rows tests read rows out of order from a source that emits one
// row at a time, so that the watermark follows every row, and check that
// every row is either counted in its window or written to the LATE_ROWS
// table, and that the rows there are those the watermark had passed.

// pacedFactory is the connector 'paced': a source of the rows registered
// under its 'id' option (fields separated by |), one split emitting one row
// a read.
type pacedFactory struct{ tables map[string][]string }

func (f *pacedFactory) Spec() connector.Spec {
	return connector.Spec{Name: "paced", Kind: connector.SourceKind, Description: "test rows, one a read",
		Options: []connector.Option{{Key: "id", Type: connector.String, Required: true, Description: "the rows' name"}}}
}

func (f *pacedFactory) NewSource(ctx connector.Context) (any, error) {
	lines, ok := f.tables[ctx.Options.String("id")]
	if !ok {
		return nil, fmt.Errorf("no rows %q", ctx.Options.String("id"))
	}
	rt := ctx.Table.RowType()
	var recs []connector.TableRecord
	for _, l := range lines {
		w := types.NewRowWriter(rt, types.NewArena(0))
		for i, p := range strings.Split(l, "|") {
			if err := w.ParseText(i, p, nil); err != nil {
				return nil, fmt.Errorf("%q: %w", l, err)
			}
		}
		recs = append(recs, connector.TableRecord{Kind: changelog.Insert, Row: w.Finish()})
	}
	return &pacedSource{recs: recs}, nil
}

type pacedSource struct{ recs []connector.TableRecord }

func (s *pacedSource) ChangelogMode() changelog.Mode { return changelog.InsertOnly }

func (s *pacedSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "0", State: []byte("0")}}, nil
	})
}

func (s *pacedSource) NewReader(connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	return &pacedReader{s: s}, nil
}

type pacedReader struct {
	s      *pacedSource
	splits []connector.Split
}

func (r *pacedReader) AddSplits(s []connector.Split) error {
	r.splits = append(r.splits, s...)
	return nil
}

// Read emits the next row of the first split, or finishes it.
func (r *pacedReader) Read(out connector.Output[connector.TableRecord]) error {
	if len(r.splits) == 0 {
		return nil
	}
	sp := &r.splits[0]
	pos, _ := strconv.Atoi(string(sp.State))
	so := out.Split(sp.ID)
	if pos == len(r.s.recs) {
		so.Finish()
		r.splits = r.splits[1:]
		return nil
	}
	so.Emit(r.s.recs[pos])
	sp.State = []byte(strconv.Itoa(pos + 1))
	return nil
}

func (r *pacedReader) SnapshotState(int64) ([]connector.Split, error) { return r.splits, nil }
func (r *pacedReader) Close() error                                   { return nil }

// lateRun runs script over the paced rows 'bids' at parallelism p and
// returns what the 'rows' tables received.
func lateRun(t *testing.T, bids []string, script string, p int) map[string][]string {
	t.Helper()
	rows := newRowsFactory()
	for _, id := range []string{"counts", "late", "wide", "narrow"} {
		rows.tables[id] = rowsTable{mode: changelog.InsertOnly}
	}
	reg := registry(&collectSink{})
	reg.Register(rows)
	reg.Register(&pacedFactory{tables: map[string][]string{"bids": bids}})
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
	return rows.out
}

// lateBid is a row of the test: an id, an auction and a time in ms.
type lateBid struct{ id, auction, ms int64 }

// lateBids draws n bids whose times go forward by up to 1.5 s a row, a
// third of them up to 15 s early, so that some miss their 10 s windows.
func lateBids(n int) ([]lateBid, []string) {
	rng := rand.New(rand.NewPCG(7, 8))
	var bids []lateBid
	var lines []string
	clock := int64(1_700_000_000_000)
	for i := 0; i < n; i++ {
		clock += rng.Int64N(1500)
		ms := clock
		if rng.IntN(3) == 0 {
			ms -= rng.Int64N(15000)
		}
		b := lateBid{id: int64(i), auction: int64(rng.IntN(3)), ms: ms}
		bids = append(bids, b)
		lines = append(lines, fmt.Sprintf("%d|%d|%s", b.id, b.auction, types.Timestamp{Millis: ms}.Format(3)))
	}
	return bids, lines
}

// lateOf returns the ids of the bids that arrive after the watermark
// (the largest time so far minus delay, minus 1 ms) has passed the end of
// their 10 s tumbling window.
func lateOf(bids []lateBid, delay int64) map[int64]bool {
	late := map[int64]bool{}
	wm := int64(-1 << 62)
	for _, b := range bids {
		end := b.ms - b.ms%10000 + 10000
		if end-1 <= wm {
			late[b.id] = true
		}
		wm = max(wm, b.ms-delay-1)
	}
	return late
}

const lateDDL = `
CREATE TABLE bids (id BIGINT, auction BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'paced', 'id' = 'bids');
CREATE TABLE counts (auction BIGINT, window_start TIMESTAMP(3), n BIGINT, ids BIGINT) WITH ('connector' = 'rows', 'id' = 'counts');
CREATE TABLE late_bids (id BIGINT, auction BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'late');
`

// parseLateRow parses an insertion of a late row (id, auction, ts).
func parseLateRow(t *testing.T, l string) lateBid {
	t.Helper()
	f := strings.Split(strings.Trim(strings.TrimPrefix(l, "+I"), "[]"), ", ")
	if !strings.HasPrefix(l, "+I[") || len(f) != 3 {
		t.Fatalf("late row %s: want an insertion of 3 columns", l)
	}
	id, err1 := strconv.ParseInt(f[0], 10, 64)
	auction, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("late row %s: want integers", l)
	}
	return lateBid{id: id, auction: auction, ms: printMillis(t, f[2])}
}

// checkLateRows checks that every bid is counted or late, once, and
// returns the ids of the late ones.
func checkLateRows(t *testing.T, what string, bids []lateBid, out map[string][]string) map[int64]bool {
	t.Helper()
	counted := int64(0)
	var idSum int64
	for _, l := range out["counts"] {
		if !strings.HasPrefix(l, "+I[") {
			t.Fatalf("%s: a window aggregation emitted %s", what, l)
		}
		f := strings.Split(strings.Trim(l[2:], "[]"), ", ")
		n, _ := strconv.ParseInt(f[2], 10, 64)
		s, _ := strconv.ParseInt(f[3], 10, 64)
		counted += n
		idSum += s
	}
	late := map[int64]bool{}
	byID := map[int64]lateBid{}
	for _, b := range bids {
		byID[b.id] = b
	}
	for _, l := range out["late"] {
		got := parseLateRow(t, l)
		if b, ok := byID[got.id]; !ok || got != b || late[b.id] {
			t.Fatalf("%s: late row %s is not a bid, or comes twice", what, l)
		}
		late[got.id] = true
		idSum += got.id
	}
	var allIDs int64
	for _, b := range bids {
		allIDs += b.id
	}
	if counted+int64(len(late)) != int64(len(bids)) || idSum != allIDs {
		t.Fatalf("%s: %d bids counted in windows and %d late, of %d: rows were lost", what, counted, len(late), len(bids))
	}
	return late
}

// TestLateRowsGoToTheirTable runs a TUMBLE aggregation with LATE_ROWS: at
// parallelism 1 the late rows are exactly those the watermark had passed;
// at parallelism 2, where the window operator's watermark may lag the
// source's, they are some of those, and no row is lost.
func TestLateRowsGoToTheirTable(t *testing.T) {
	bids, lines := lateBids(400)
	want := lateOf(bids, 2000)
	if len(want) < 20 {
		t.Fatalf("only %d late bids: the test needs more", len(want))
	}
	for _, q := range []struct{ name, sql string }{
		{"TUMBLE", `
INSERT INTO counts
SELECT /*+ LATE_ROWS('late_bids') */ auction, window_start, COUNT(*), SUM(id)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;`},
		{"legacy TUMBLE", `
INSERT INTO counts
SELECT /*+ LATE_ROWS(late_bids) */ auction, TUMBLE_START(ts, INTERVAL '10' SECOND), COUNT(*), SUM(id)
FROM bids
GROUP BY auction, TUMBLE(ts, INTERVAL '10' SECOND);`},
	} {
		for _, p := range []int{1, 2} {
			what := fmt.Sprintf("%s at parallelism %d", q.name, p)
			late := checkLateRows(t, what, bids, lateRun(t, lines, lateDDL+q.sql, p))
			for id := range late {
				if !want[id] {
					t.Errorf("%s: bid %d went to the late rows, but the watermark had not passed its window", what, id)
				}
			}
			if p == 1 && len(late) != len(want) {
				t.Errorf("%s: %d late rows, want %d", what, len(late), len(want))
			}
		}
	}
}

// TestLateRowsCastToTheTable writes the late rows of a filtered window
// aggregation into a table of other column types: the rows the WHERE keeps,
// cast as INSERT INTO casts.
func TestLateRowsCastToTheTable(t *testing.T) {
	bids, lines := lateBids(300)
	want := lateOf(bids, 2000)
	out := lateRun(t, lines, lateDDL+`
CREATE TABLE late_wide (id DECIMAL(20, 0), auction STRING, ts TIMESTAMP(6)) WITH ('connector' = 'rows', 'id' = 'wide');
INSERT INTO counts
SELECT /*+ LATE_ROWS('late_wide') */ auction, window_start, COUNT(*), SUM(id)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
WHERE auction <> 1
GROUP BY auction, window_start, window_end;`, 1)
	var got, wantRows []string
	for _, l := range out["wide"] {
		b := parseLateRow(t, l)
		got = append(got, fmt.Sprint(b))
	}
	for _, b := range bids {
		if want[b.id] && b.auction != 1 {
			wantRows = append(wantRows, fmt.Sprint(b))
		}
	}
	if len(wantRows) < 10 {
		t.Fatalf("only %d late rows pass the WHERE: the test needs more", len(wantRows))
	}
	sort.Strings(got)
	sort.Strings(wantRows)
	if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Fatalf("late rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
	}
}

// TestLateRowsErrors checks that LATE_ROWS is refused where no window
// aggregation would honour it, and names a table that can take the rows.
func TestLateRowsErrors(t *testing.T) {
	for _, c := range []struct{ query, want string }{
		{`SELECT /*+ LATE_ROWS('late_bids') */ id FROM bids`, "LATE_ROWS applies to a window aggregation"},
		{`SELECT /*+ LATE_ROWS('late_bids') */ auction, COUNT(*) FROM bids GROUP BY auction`, "LATE_ROWS applies to a window aggregation"},
		{`SELECT /*+ LATE_ROWS('nope') */ auction, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end`, "nope"},
		{`SELECT /*+ LATE_ROWS('v') */ auction, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end`, "a view"},
		{`SELECT /*+ LATE_ROWS('narrow') */ auction, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end`, "LATE_ROWS table narrow has 1 columns (id), but the rows of the window's input have 3"},
		{`SELECT /*+ LATE_ROWS('late_bids'), LATE_ROWS('late_bids') */ auction, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end`, "twice"},
		{`SELECT /*+ LATE_ROWS('a' = 'b') */ auction, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end`, "LATE_ROWS takes the name of the table"},
	} {
		reg := registry(&collectSink{})
		rows := newRowsFactory()
		for _, id := range []string{"counts", "late", "narrow"} {
			rows.tables[id] = rowsTable{mode: changelog.InsertOnly}
		}
		reg.Register(rows)
		reg.Register(&pacedFactory{tables: map[string][]string{"bids": nil}})
		s := sql.NewSession(sql.WithConnectors(reg))
		_, err := s.Execute(lateDDL + `
CREATE VIEW v AS SELECT * FROM late_bids;
CREATE TABLE narrow (id BIGINT) WITH ('connector' = 'rows', 'id' = 'narrow');
` + c.query + ";")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.query, err, c.want)
		}
	}
}

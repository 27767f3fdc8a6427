package sql_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// The window Top-N, deduplication and join tests compare what the window
// operators emit with the same computed by brute force over the input
// rows. Their table T is read by the connector 'steprows' from one split,
// one row per read, so that the watermark advances after every row: at
// parallelism 1 a row is late exactly when the watermark before it
// (the highest rowtime before it minus the delay, minus 1 ms) has passed
// its window's last millisecond, as the brute force computes.

// stepFactory is the connector 'steprows': a source of the rows registered
// in rows (parsed as the connector 'rows' does) read from one split, one
// row per read, with the split's position in checkpoints.
type stepFactory struct{ rows *rowsFactory }

func (f stepFactory) Spec() connector.Spec {
	return connector.Spec{Name: "steprows", Kind: connector.SourceKind, Description: "test rows, one per read",
		Options: []connector.Option{{Key: "id", Type: connector.String, Required: true, Description: "the rows' name"}}}
}

func (f stepFactory) NewSource(ctx connector.Context) (any, error) {
	s, err := f.rows.NewSource(ctx)
	if err != nil {
		return nil, err
	}
	return &stepSource{recs: s.(*rowsSource).recs}, nil
}

type stepSource struct{ recs []connector.TableRecord }

func (s *stepSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "all", State: []byte("0")}}, nil
	})
}

func (s *stepSource) NewReader(connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	return &stepReader{s: s}, nil
}

type stepReader struct {
	s      *stepSource
	splits []connector.Split
}

func (r *stepReader) AddSplits(s []connector.Split) error {
	r.splits = append(r.splits, s...)
	return nil
}

func (r *stepReader) Read(out connector.Output[connector.TableRecord]) error {
	if len(r.splits) == 0 {
		return nil
	}
	sp := &r.splits[0]
	pos, err := strconv.Atoi(string(sp.State))
	if err != nil {
		return err
	}
	so := out.Split(sp.ID)
	if pos < len(r.s.recs) {
		so.Emit(r.s.recs[pos])
		pos++
		sp.State = []byte(strconv.Itoa(pos))
	}
	if pos >= len(r.s.recs) {
		so.Finish()
		r.splits = r.splits[1:]
	}
	return nil
}

func (r *stepReader) SnapshotState(int64) ([]connector.Split, error) {
	return slices.Clone(r.splits), nil
}

func (r *stepReader) Close() error { return nil }

// windowRun runs script with the connectors 'rows' (sinks into f.out) and
// 'steprows' over f's tables, at parallelism p.
func windowRun(t *testing.T, f *rowsFactory, script string, opts ...eddy.Option) *eddy.Environment {
	t.Helper()
	reg := registry(&collectSink{})
	reg.Register(f)
	reg.Register(stepFactory{f})
	s := sql.NewSession(sql.WithConnectors(reg))
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(opts...)
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := env.Execute(ctx, "sql"); err != nil {
		t.Fatal(err)
	}
	return env
}

// wrow is a row of table T: id, key k, value v, side s ('l' or 'r' for
// the join tests) and rowtime ts in milliseconds.
type wrow struct {
	id, k, v, ts int64
	s            string
}

const windowTableDDL = `
CREATE TABLE T (id BIGINT, k BIGINT, v BIGINT, s STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'steprows', 'id' = 'T');
`

// windowDelay is the watermark delay of T, in milliseconds.
const windowDelay = 1000

// windowRows makes n rows 100 ms apart, each up to 900 ms out of order
// (within the watermark's delay, so never late), with distinct rowtimes;
// with late, every 15th row is 2 to 6 seconds older, late unless its window
// is still open.
func windowRows(rng *rand.Rand, n, keys int, late bool) []wrow {
	base := int64(1_700_000_000_000)
	seen := map[int64]bool{}
	var out []wrow
	for i := 0; i < n; i++ {
		var ts int64
		for {
			ts = base + int64(i)*100 - rng.Int64N(900)
			if late && i%15 == 14 {
				ts -= 2000 + rng.Int64N(4000)
			}
			if !seen[ts] {
				break
			}
		}
		seen[ts] = true
		s := "l"
		if rng.IntN(2) == 0 {
			s = "r"
		}
		out = append(out, wrow{id: int64(i), k: rng.Int64N(int64(keys)), v: rng.Int64N(20), ts: ts, s: s})
	}
	return out
}

func windowLines(rows []wrow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%d|%d|%d|%s|%s", r.id, r.k, r.v, r.s, types.Timestamp{Millis: r.ts}.Format(3)))
	}
	return out
}

// watermarksBefore returns the watermark each row of T meets at
// parallelism 1: the highest rowtime before it minus the delay, minus 1.
func watermarksBefore(rows []wrow) []int64 {
	out := make([]int64, len(rows))
	hi := int64(-1 << 62)
	for i, r := range rows {
		out[i] = hi - windowDelay - 1
		hi = max(hi, r.ts)
	}
	return out
}

// win is a window [start, end) in milliseconds.
type win struct{ start, end int64 }

// hopWindows are the windows of size and slide (milliseconds, size a
// multiple of slide, aligned to the epoch) that contain ts.
func hopWindows(ts, size, slide int64) []win {
	var out []win
	last := ts - ts%slide
	for s := last; s > ts-size; s -= slide {
		out = append(out, win{s, s + size})
	}
	return out
}

// windowed assigns the rows of T to their windows, leaving out a row in a
// window the watermark has passed when it arrives (if dropLate).
func windowed(rows []wrow, size, slide int64, dropLate bool) map[win][]wrow {
	wms := watermarksBefore(rows)
	out := map[win][]wrow{}
	for i, r := range rows {
		for _, w := range hopWindows(r.ts, size, slide) {
			if dropLate && w.end-1 <= wms[i] {
				continue
			}
			out[w] = append(out[w], r)
		}
	}
	return out
}

func windowRowCount(ws map[win][]wrow) int {
	n := 0
	for _, rs := range ws {
		n += len(rs)
	}
	return n
}

// tsText is a TIMESTAMP(3) in the print form.
func tsText(ms int64) string {
	rt := types.MustRowType(types.F("t", types.TimestampType(3)))
	w := types.NewRowWriter(rt, types.NewArena(0))
	w.SetTimestampMillis(0, ms)
	s := types.FormatRow(rt, w.Finish())
	return s[3 : len(s)-1]
}

// insertOnly returns the rows of an insert-only changelog, sorted, and
// fails on any other change.
func insertOnly(t *testing.T, name string, lines []string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "+I[") {
			t.Fatalf("%s: a window operator emits insertions only, got %s", name, l)
		}
		out = append(out, l[2:])
	}
	sort.Strings(out)
	return out
}

func sameRows(t *testing.T, name string, got, want []string) {
	t.Helper()
	sort.Strings(want)
	if len(want) == 0 {
		t.Fatalf("%s: the test expects no rows; make it expect some", name)
	}
	for i := 0; i < max(len(got), len(want)); i++ {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			t.Fatalf("%s: got %d rows, want %d; first difference at row %d: got %q, want %q", name, len(got), len(want), i, g, w)
		}
	}
}

// rankWindows is the brute-force window Top-N: per window and key, the
// rows numbered from to to in the order cmp, as [k, id, v, window_start,
// rn].
func rankWindows(ws map[win][]wrow, cmp func(a, b wrow) int, from, to int) []string {
	var out []string
	for w, rows := range ws {
		byKey := map[int64][]wrow{}
		for _, r := range rows {
			byKey[r.k] = append(byKey[r.k], r)
		}
		for _, rs := range byKey {
			slices.SortFunc(rs, cmp)
			for i := from - 1; i < min(to, len(rs)); i++ {
				out = append(out, fmt.Sprintf("[%d, %d, %d, %s, %d]", rs[i].k, rs[i].id, rs[i].v, tsText(w.start), i+1))
			}
		}
	}
	return out
}

func byValueDesc(a, b wrow) int {
	if a.v != b.v {
		return int(b.v - a.v)
	}
	return int(a.id - b.id)
}

// TestWindowRankAndDeduplicate runs window Top-Ns and deduplications over
// a window TVF and a window aggregation of T and compares them with brute
// force: at parallelism 1 with late rows (dropped), at parallelism 2 with
// rows out of order within the watermark's delay.
func TestWindowRankAndDeduplicate(t *testing.T) {
	for _, c := range []struct {
		p    int
		late bool
	}{{1, true}, {2, false}} {
		t.Run(fmt.Sprintf("p%d-late%v", c.p, c.late), func(t *testing.T) {
			rows := windowRows(rand.New(rand.NewPCG(7, uint64(c.p))), 400, 3, c.late)
			f := newRowsFactory()
			f.tables["T"] = rowsTable{lines: windowLines(rows), mode: changelog.InsertOnly}
			windowRun(t, f, windowTableDDL+`
CREATE TABLE top (k BIGINT, id BIGINT, v BIGINT, w TIMESTAMP(3), rn BIGINT) WITH ('connector' = 'rows', 'id' = 'top');
CREATE TABLE first (k BIGINT, id BIGINT, ts TIMESTAMP(3), w TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'first');
CREATE TABLE last (k BIGINT, id BIGINT, ts TIMESTAMP(3), w TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'last');
CREATE TABLE hot (k BIGINT, n BIGINT, total BIGINT, w TIMESTAMP(3), rn BIGINT) WITH ('connector' = 'rows', 'id' = 'hot');
INSERT INTO top SELECT k, id, v, window_start, rn FROM (
  SELECT k, id, v, window_start, window_end,
    ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY v DESC, id) AS rn
  FROM TABLE(HOP(TABLE T, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '2' SECOND)))
WHERE rn BETWEEN 2 AND 3;
INSERT INTO first SELECT k, id, ts, window_start FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k, window_start, window_end ORDER BY ts) AS rn
  FROM TABLE(TUMBLE(TABLE T, DESCRIPTOR(ts), INTERVAL '2' SECOND)))
WHERE rn = 1;
INSERT INTO last SELECT k, id, ts, window_start FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k, window_start, window_end ORDER BY ts DESC) AS rn
  FROM TABLE(TUMBLE(TABLE T, DESCRIPTOR(ts), INTERVAL '2' SECOND)))
WHERE rn <= 1;
INSERT INTO hot SELECT * FROM (
  SELECT k, n, total, window_start, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY n DESC, k) AS rn FROM (
    SELECT k, COUNT(*) AS n, SUM(v) AS total, window_start, window_end
    FROM TABLE(TUMBLE(TABLE T, DESCRIPTOR(ts), INTERVAL '2' SECOND))
    GROUP BY k, window_start, window_end))
WHERE rn <= 2;
`, eddy.WithParallelism(c.p))

			sameRows(t, "top", insertOnly(t, "top", f.out["top"]), rankWindows(windowed(rows, 2000, 1000, true), byValueDesc, 2, 3))

			tumbling := windowed(rows, 2000, 2000, true)
			var first, last []string
			for w, rs := range tumbling {
				lo, hi := map[int64]wrow{}, map[int64]wrow{}
				for _, r := range rs {
					if cur, ok := lo[r.k]; !ok || r.ts < cur.ts {
						lo[r.k] = r
					}
					if cur, ok := hi[r.k]; !ok || r.ts > cur.ts {
						hi[r.k] = r
					}
				}
				for k, r := range lo {
					first = append(first, fmt.Sprintf("[%d, %d, %s, %s]", k, r.id, tsText(r.ts), tsText(w.start)))
				}
				for k, r := range hi {
					last = append(last, fmt.Sprintf("[%d, %d, %s, %s]", k, r.id, tsText(r.ts), tsText(w.start)))
				}
			}
			sameRows(t, "first", insertOnly(t, "first", f.out["first"]), first)
			sameRows(t, "last", insertOnly(t, "last", f.out["last"]), last)

			var hot []string
			for w, rs := range tumbling {
				n, total := map[int64]int64{}, map[int64]int64{}
				for _, r := range rs {
					n[r.k]++
					total[r.k] += r.v
				}
				var keys []int64
				for k := range n {
					keys = append(keys, k)
				}
				slices.SortFunc(keys, func(a, b int64) int {
					if n[a] != n[b] {
						return int(n[b] - n[a])
					}
					return int(a - b)
				})
				for i, k := range keys[:min(2, len(keys))] {
					hot = append(hot, fmt.Sprintf("[%d, %d, %d, %s, %d]", k, n[k], total[k], tsText(w.start), i+1))
				}
			}
			sameRows(t, "hot", insertOnly(t, "hot", f.out["hot"]), hot)
			if dropped := windowRowCount(windowed(rows, 2000, 2000, false)) - windowRowCount(tumbling); c.late && dropped == 0 {
				t.Fatal("no row is late: the test does not check that late rows are dropped")
			}
		})
	}
}

// nexmarkMillis reads a TIMESTAMP(3) in the print form.
func nexmarkMillis(t *testing.T, s string) int64 {
	t.Helper()
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if tm, err := time.Parse(layout, s); err == nil {
			return tm.UnixMilli()
		}
	}
	t.Fatalf("bad timestamp %q", s)
	return 0
}

// TestNexmarkHotItems is the Nexmark hot items query over window
// functions: the bids of each auction per 50 ms window (a window
// aggregation), and the three auctions with the most bids in each window
// (a window Top-N), insert-only, against brute force at parallelism 1
// and 2.
func TestNexmarkHotItems(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			counts := map[int64]map[int64]int64{} // window start -> auction -> bids
			for _, b := range rankBids(t, p) {
				ms := nexmarkMillis(t, b.dateTime)
				start := ms - ms%50
				if counts[start] == nil {
					counts[start] = map[int64]int64{}
				}
				counts[start][b.auction]++
			}
			var want []string
			for start, byAuction := range counts {
				var auctions []int64
				for a := range byAuction {
					auctions = append(auctions, a)
				}
				slices.SortFunc(auctions, func(a, b int64) int {
					if byAuction[a] != byAuction[b] {
						return int(byAuction[b] - byAuction[a])
					}
					return int(a - b)
				})
				for i, a := range auctions[:min(3, len(auctions))] {
					want = append(want, fmt.Sprintf("[%d, %d, %s, %s, %d]", a, byAuction[a], tsText(start), tsText(start+50), i+1))
				}
			}
			lines := run(t, rankDDL+`
CREATE TABLE out (auction BIGINT, num BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), rn BIGINT) WITH ('connector' = 'collect');
INSERT INTO out SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY num DESC, auction) AS rn FROM (
    SELECT auction, COUNT(*) AS num, window_start, window_end
    FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '0.05' SECOND))
    GROUP BY auction, window_start, window_end))
WHERE rn <= 3;
`, p)
			sameRows(t, "hot items", insertOnly(t, "hot items", lines), want)
		})
	}
}

// TestNexmarkWindowTopBids keeps the two highest bids of each 100 ms
// window sliding by 50 ms, straight over the window TVF.
func TestNexmarkWindowTopBids(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			byWindow := map[int64][]bidRow{}
			for _, b := range rankBids(t, p) {
				ms := nexmarkMillis(t, b.dateTime)
				for _, w := range hopWindows(ms, 100, 50) {
					byWindow[w.start] = append(byWindow[w.start], b)
				}
			}
			var want []string
			for start, bs := range byWindow {
				slices.SortStableFunc(bs, byPriceDesc)
				for _, b := range bs[:min(2, len(bs))] {
					want = append(want, fmt.Sprintf("[%s, %s]", b, tsText(start)))
				}
			}
			lines := run(t, rankDDL+`
CREATE TABLE out (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3), window_start TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, bidder, price, dateTime, window_start FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC, dateTime, bidder) AS rn
  FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '0.05' SECOND, INTERVAL '0.1' SECOND)))
WHERE rn <= 2;
`, p)
			sameRows(t, "top bids", insertOnly(t, "top bids", lines), want)
		})
	}
}

// TestWindowRankRestoresFromCheckpoint fails a window Top-N over a window
// aggregation midway and restarts it from its last checkpoint: the
// filesystem table (json, which takes insertions only) holds exactly the
// rows of the brute force.
func TestWindowRankRestoresFromCheckpoint(t *testing.T) {
	rows := windowRows(rand.New(rand.NewPCG(11, 12)), 600, 4, false)
	f := newRowsFactory()
	f.tables["T"] = rowsTable{lines: windowLines(rows), mode: changelog.InsertOnly}
	out := t.TempDir()
	failOnce.seen.Store(0)
	failOnce.fired.Store(false)
	failOnce.at.Store(300)
	env := windowRun(t, f, windowTableDDL+fmt.Sprintf(`
CREATE FUNCTION fail_once AS 'test.FailOnce';
CREATE VIEW T2 AS SELECT id, k, fail_once(v) AS v, s, ts FROM T;
CREATE TABLE hot (k BIGINT, n BIGINT, total BIGINT, w TIMESTAMP(3), rn BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO hot SELECT * FROM (
  SELECT k, n, total, window_start, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC, k) AS rn FROM (
    SELECT k, COUNT(*) AS n, SUM(v) AS total, window_start, window_end
    FROM TABLE(TUMBLE(TABLE T2, DESCRIPTOR(ts), INTERVAL '2' SECOND))
    GROUP BY k, window_start, window_end))
WHERE rn <= 2;
`, out), eddy.WithParallelism(2), eddy.WithCheckpointing(5*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(2, 10*time.Millisecond)))
	if !failOnce.fired.Load() || env.Restarts() != 1 {
		t.Fatalf("the injected failure fired %v, the job restarted %d times; want one failure and one restart", failOnce.fired.Load(), env.Restarts())
	}
	var want []string
	for w, rs := range windowed(rows, 2000, 2000, false) {
		n, total := map[int64]int64{}, map[int64]int64{}
		for _, r := range rs {
			n[r.k]++
			total[r.k] += r.v
		}
		var keys []int64
		for k := range n {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b int64) int {
			if total[a] != total[b] {
				return int(total[b] - total[a])
			}
			return int(a - b)
		})
		for i, k := range keys[:min(2, len(keys))] {
			want = append(want, fmt.Sprintf("[%d, %d, %d, %s, %d]", k, n[k], total[k], tsText(w.start), i+1))
		}
	}
	got, _ := runWith(t, fmt.Sprintf(`
CREATE TABLE back (k BIGINT, n BIGINT, total BIGINT, w TIMESTAMP(3), rn BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE seen (k BIGINT, n BIGINT, total BIGINT, w TIMESTAMP(3), rn BIGINT) WITH ('connector' = 'collect');
INSERT INTO seen SELECT * FROM back;`, filepath.Clean(out)), eddy.WithParallelism(1))
	sameRows(t, "restored", insertOnly(t, "restored", got), want)
}

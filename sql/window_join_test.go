package sql_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// The window join tests join the rows of T with s = 'l' (left) and s =
// 'r' (right) in the same windows; see window_rank_test.go for T and how
// late rows are found. Both inputs of a join read T's one source, so that
// at parallelism 1 the join sees the watermark the brute force computes.

// windowJoinInputs are the left and right inputs over windows of size and
// slide (SQL intervals).
func windowJoinInputs(tvf string) (string, string) {
	in := func(side string) string {
		return fmt.Sprintf("(SELECT id, k, v, window_start, window_end FROM TABLE(%s) WHERE s = '%s')", tvf, side)
	}
	return in("l"), in("r")
}

// bruteWindowJoin joins the left and right rows of each window on equal k
// and on, keeping the unmatched rows of the outer sides, as [l.id, l.k,
// r.id, r.k, l.window_start, r.window_start].
func bruteWindowJoin(ws map[win][]wrow, kind eddy.JoinKind, on func(l, r wrow) bool) []string {
	var out []string
	side := func(r *wrow) string {
		if r == nil {
			return "null, null"
		}
		return fmt.Sprintf("%d, %d", r.id, r.k)
	}
	start := func(r *wrow, w win) string {
		if r == nil {
			return "null"
		}
		return tsText(w.start)
	}
	for w, rows := range ws {
		var ls, rs []wrow
		for _, r := range rows {
			if r.s == "l" {
				ls = append(ls, r)
			} else {
				rs = append(rs, r)
			}
		}
		matched := make([]bool, len(rs))
		for _, l := range ls {
			found := false
			for j, r := range rs {
				if l.k == r.k && on(l, r) {
					out = append(out, fmt.Sprintf("[%s, %s, %s, %s]", side(&l), side(&r), start(&l, w), start(&r, w)))
					found, matched[j] = true, true
				}
			}
			if !found && (kind == eddy.LeftJoin || kind == eddy.FullJoin) {
				out = append(out, fmt.Sprintf("[%s, %s, %s, %s]", side(&l), side(nil), start(&l, w), start(nil, w)))
			}
		}
		if kind == eddy.RightJoin || kind == eddy.FullJoin {
			for j, r := range rs {
				if !matched[j] {
					out = append(out, fmt.Sprintf("[%s, %s, %s, %s]", side(nil), side(&r), start(nil, w), start(&r, w)))
				}
			}
		}
	}
	return out
}

const windowJoinSinks = `
CREATE TABLE inner_t (lid BIGINT, lk BIGINT, rid BIGINT, rk BIGINT, lw TIMESTAMP(3), rw TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'inner');
CREATE TABLE left_t (lid BIGINT, lk BIGINT, rid BIGINT, rk BIGINT, lw TIMESTAMP(3), rw TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'left');
CREATE TABLE right_t (lid BIGINT, lk BIGINT, rid BIGINT, rk BIGINT, lw TIMESTAMP(3), rw TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'right');
CREATE TABLE full_t (lid BIGINT, lk BIGINT, rid BIGINT, rk BIGINT, lw TIMESTAMP(3), rw TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'full');
CREATE TABLE agg_t (k BIGINT, n BIGINT, total BIGINT, w TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'agg');
`

// TestWindowJoins runs INNER, LEFT, RIGHT and FULL window joins of window
// TVFs, and a FULL window join of two window aggregations, and compares
// them with brute force: at parallelism 1 with late rows (dropped), at
// parallelism 2 with rows out of order within the watermark's delay.
func TestWindowJoins(t *testing.T) {
	for _, c := range []struct {
		p    int
		late bool
	}{{1, true}, {2, false}} {
		t.Run(fmt.Sprintf("p%d-late%v", c.p, c.late), func(t *testing.T) {
			rows := windowRows(rand.New(rand.NewPCG(21, uint64(c.p))), 400, 4, c.late)
			f := newRowsFactory()
			f.tables["T"] = rowsTable{lines: windowLines(rows), mode: changelog.InsertOnly}
			tl, tr := windowJoinInputs("TUMBLE(TABLE T, DESCRIPTOR(ts), INTERVAL '2' SECOND)")
			hl, hr := windowJoinInputs("HOP(TABLE T, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '2' SECOND)")
			on := "ON L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end"
			sel := "SELECT L.id, L.k, R.id, R.k, L.window_start, R.window_start FROM "
			windowRun(t, f, windowTableDDL+windowJoinSinks+
				"INSERT INTO inner_t "+sel+hl+" L JOIN "+hr+" R "+on+";\n"+
				"INSERT INTO left_t "+sel+tl+" L LEFT JOIN "+tr+" R "+on+" AND L.v < R.v;\n"+
				"INSERT INTO right_t "+sel+tl+" L RIGHT JOIN "+tr+" R "+on+";\n"+
				"INSERT INTO full_t "+sel+tl+" L FULL JOIN "+tr+" R "+on+" AND L.id % 3 <> R.id % 3;\n"+`
INSERT INTO agg_t SELECT COALESCE(C.k, S.k), C.n, S.total, COALESCE(C.window_start, S.window_start) FROM (
  SELECT k, COUNT(*) AS n, window_start, window_end FROM TABLE(TUMBLE(TABLE T, DESCRIPTOR(ts), INTERVAL '2' SECOND))
  WHERE s = 'l' GROUP BY k, window_start, window_end) C
FULL JOIN (
  SELECT k, SUM(v) AS total, window_start, window_end FROM TABLE(TUMBLE(TABLE T, DESCRIPTOR(ts), INTERVAL '2' SECOND))
  WHERE s = 'r' GROUP BY k, window_start, window_end) S
ON C.k = S.k AND C.window_start = S.window_start AND C.window_end = S.window_end;
`, eddy.WithParallelism(c.p))
			tumbling, hopping := windowed(rows, 2000, 2000, true), windowed(rows, 2000, 1000, true)
			all := func(l, r wrow) bool { return true }
			sameRows(t, "inner", insertOnly(t, "inner", f.out["inner"]), bruteWindowJoin(hopping, eddy.InnerJoin, all))
			sameRows(t, "left", insertOnly(t, "left", f.out["left"]), bruteWindowJoin(tumbling, eddy.LeftJoin, func(l, r wrow) bool { return l.v < r.v }))
			sameRows(t, "right", insertOnly(t, "right", f.out["right"]), bruteWindowJoin(tumbling, eddy.RightJoin, all))
			sameRows(t, "full", insertOnly(t, "full", f.out["full"]), bruteWindowJoin(tumbling, eddy.FullJoin, func(l, r wrow) bool { return l.id%3 != r.id%3 }))

			type kw struct {
				k int64
				w win
			}
			n, total := map[kw]int64{}, map[kw]int64{}
			for w, rs := range tumbling {
				for _, r := range rs {
					if r.s == "l" {
						n[kw{r.k, w}]++
					} else {
						total[kw{r.k, w}] += r.v
					}
				}
			}
			var agg []string
			for x, c := range n {
				s, ok := total[x]
				st := "null"
				if ok {
					st = fmt.Sprint(s)
				}
				agg = append(agg, fmt.Sprintf("[%d, %d, %s, %s]", x.k, c, st, tsText(x.w.start)))
			}
			for x, s := range total {
				if _, ok := n[x]; !ok {
					agg = append(agg, fmt.Sprintf("[%d, null, %d, %s]", x.k, s, tsText(x.w.start)))
				}
			}
			sameRows(t, "agg", insertOnly(t, "agg", f.out["agg"]), agg)
		})
	}
}

// TestNexmarkWindowJoinOfAggregates joins two window aggregations of the
// Nexmark bids, as Nexmark's q5 and q7 compare per-window aggregates: the
// bids of each auction per 50 ms window LEFT JOIN the highest bid above a
// price of each auction in the window.
func TestNexmarkWindowJoinOfAggregates(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			type aw struct{ auction, start int64 }
			n, hi := map[aw]int64{}, map[aw]int64{}
			for _, b := range rankBids(t, p) {
				ms := nexmarkMillis(t, b.dateTime)
				x := aw{b.auction, ms - ms%50}
				n[x]++
				if b.price > 10_000_000 && b.price > hi[x] {
					hi[x] = b.price
				}
			}
			var want []string
			padded := 0
			for x, c := range n {
				m := "null"
				if v, ok := hi[x]; ok {
					m = fmt.Sprint(v)
				} else {
					padded++
				}
				want = append(want, fmt.Sprintf("[%d, %d, %s, %s]", x.auction, c, m, tsText(x.start)))
			}
			if padded == 0 || padded == len(n) {
				t.Fatalf("%d of %d rows are padded: change the price so that some are and some are not", padded, len(n))
			}
			lines := run(t, rankDDL+`
CREATE TABLE out (auction BIGINT, bids BIGINT, maxprice BIGINT, window_start TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT C.auction, C.bids, M.maxprice, C.window_start FROM (
  SELECT auction, COUNT(*) AS bids, window_start, window_end
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '0.05' SECOND))
  GROUP BY auction, window_start, window_end) C
LEFT JOIN (
  SELECT auction, MAX(price) AS maxprice, window_start, window_end
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '0.05' SECOND))
  WHERE price > 10000000
  GROUP BY auction, window_start, window_end) M
ON C.auction = M.auction AND C.window_start = M.window_start AND C.window_end = M.window_end;
`, p)
			sameRows(t, "joined aggregates", insertOnly(t, "joined aggregates", lines), want)
		})
	}
}

// TestWindowJoinRestoresFromCheckpoint fails a FULL window join midway and
// restarts it from its last checkpoint: the filesystem table (json, which
// takes insertions only) holds exactly the rows of the brute force.
func TestWindowJoinRestoresFromCheckpoint(t *testing.T) {
	rows := windowRows(rand.New(rand.NewPCG(31, 32)), 600, 5, false)
	f := newRowsFactory()
	f.tables["T"] = rowsTable{lines: windowLines(rows), mode: changelog.InsertOnly}
	out := t.TempDir()
	failOnce.seen.Store(0)
	failOnce.fired.Store(false)
	failOnce.at.Store(350)
	l, r := windowJoinInputs("TUMBLE(TABLE T2, DESCRIPTOR(ts), INTERVAL '2' SECOND)")
	env := windowRun(t, f, windowTableDDL+fmt.Sprintf(`
CREATE FUNCTION fail_once AS 'test.FailOnce';
CREATE VIEW T2 AS SELECT fail_once(id) AS id, k, v, s, ts FROM T;
CREATE TABLE joined (lid BIGINT, lk BIGINT, rid BIGINT, rk BIGINT, lw TIMESTAMP(3), rw TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO joined SELECT L.id, L.k, R.id, R.k, L.window_start, R.window_start FROM %s L FULL JOIN %s R
ON L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end;
`, out, l, r), eddy.WithParallelism(2), eddy.WithCheckpointing(5*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(2, 10*time.Millisecond)))
	if !failOnce.fired.Load() || env.Restarts() != 1 {
		t.Fatalf("the injected failure fired %v, the job restarted %d times; want one failure and one restart", failOnce.fired.Load(), env.Restarts())
	}
	got, _ := runWith(t, fmt.Sprintf(`
CREATE TABLE back (lid BIGINT, lk BIGINT, rid BIGINT, rk BIGINT, lw TIMESTAMP(3), rw TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE seen (lid BIGINT, lk BIGINT, rid BIGINT, rk BIGINT, lw TIMESTAMP(3), rw TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO seen SELECT * FROM back;`, out), eddy.WithParallelism(1))
	want := bruteWindowJoin(windowed(rows, 2000, 2000, false), eddy.FullJoin, func(l, r wrow) bool { return true })
	sameRows(t, "restored", insertOnly(t, "restored", got), want)
	if !strings.Contains(strings.Join(got, "\n"), "null") {
		t.Fatal("no row is padded: the test does not check the outer join's padding")
	}
}

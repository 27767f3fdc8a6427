package sql_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// TestCascadedWindowAggregate aggregates the windows of a window
// aggregation again, grouped by its window_start and window_end under
// other names (Flink's cascaded window aggregation), joins the two as
// Nexmark q5 does (a window join), and aggregates a cascade once more
// with a key, comparing each with brute force: at parallelism 1 with late
// rows (dropped by the first aggregation), and at parallelism 2.
func TestCascadedWindowAggregate(t *testing.T) {
	for _, c := range []struct {
		p    int
		late bool
	}{{1, true}, {2, false}} {
		t.Run(fmt.Sprintf("p%d-late%v", c.p, c.late), func(t *testing.T) {
			rows := windowRows(rand.New(rand.NewPCG(11, uint64(c.p))), 400, 5, c.late)
			f := newRowsFactory()
			f.tables["T"] = rowsTable{lines: windowLines(rows), mode: changelog.InsertOnly}
			env := windowRun(t, f, windowTableDDL+`
CREATE VIEW counts AS
SELECT k, COUNT(*) AS n, SUM(v) AS total, window_start AS ws, window_end AS we
FROM TABLE(HOP(TABLE T, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '2' SECOND))
GROUP BY k, window_start, window_end;
CREATE VIEW maxes AS
SELECT ws, we, MAX(n) AS maxn, COUNT(*) AS keys, SUM(total) AS total FROM counts GROUP BY ws, we;
CREATE TABLE perwindow (ws TIMESTAMP(3), we TIMESTAMP(3), maxn BIGINT, keys BIGINT, total BIGINT) WITH ('connector' = 'rows', 'id' = 'perwindow');
CREATE TABLE hottest (k BIGINT, n BIGINT, ws TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'hottest');
CREATE TABLE parity (odd BOOLEAN, total BIGINT, keys BIGINT, we TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'parity');
INSERT INTO perwindow SELECT * FROM maxes;
INSERT INTO hottest SELECT C.k, C.n, C.ws FROM counts C JOIN maxes M ON C.ws = M.ws AND C.we = M.we AND C.n >= M.maxn;
INSERT INTO parity SELECT odd, SUM(total), COUNT(*), we FROM (
  SELECT k % 2 = 1 AS odd, k, SUM(total) AS total, ws, we FROM counts GROUP BY k % 2 = 1, k, ws, we)
GROUP BY we, odd, ws;
`, eddy.WithParallelism(c.p))

			var perWindow, hottest, parity []string
			for w, rs := range windowed(rows, 2000, 1000, true) {
				n, total := map[int64]int64{}, map[int64]int64{}
				var sum int64
				for _, r := range rs {
					n[r.k]++
					total[r.k] += r.v
					sum += r.v
				}
				var maxn int64
				for _, x := range n {
					maxn = max(maxn, x)
				}
				perWindow = append(perWindow, fmt.Sprintf("[%s, %s, %d, %d, %d]", tsText(w.start), tsText(w.end), maxn, len(n), sum))
				odd := map[bool][2]int64{}
				for k, x := range n {
					if x == maxn {
						hottest = append(hottest, fmt.Sprintf("[%d, %d, %s]", k, x, tsText(w.start)))
					}
					o := odd[k%2 == 1]
					odd[k%2 == 1] = [2]int64{o[0] + total[k], o[1] + 1}
				}
				for o, v := range odd {
					parity = append(parity, fmt.Sprintf("[%v, %d, %d, %s]", o, v[0], v[1], tsText(w.end)))
				}
			}
			sameRows(t, "perwindow", insertOnly(t, "perwindow", f.out["perwindow"]), perWindow)
			sameRows(t, "hottest", insertOnly(t, "hottest", f.out["hottest"]), hottest)
			sameRows(t, "parity", insertOnly(t, "parity", f.out["parity"]), parity)
			if c.late && windowRowCount(windowed(rows, 2000, 1000, false)) == windowRowCount(windowed(rows, 2000, 1000, true)) {
				t.Fatal("no row is late: the test does not check that late rows are dropped")
			}
			for _, m := range env.Metrics() {
				if m.LateRecords > 0 && !c.late {
					t.Errorf("%s dropped %d rows as late", m.Name, m.LateRecords)
				}
			}
		})
	}
}

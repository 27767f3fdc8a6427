package sql_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
)

// The OVER aggregation tests compare the rows of OVER queries with the
// frames computed by brute force over the input rows.

// The input table T is read by the connector 'steprows'
// (window_rank_test.go): one split, one row per read, so that the
// watermark advances after every row and the rows of a partition arrive
// in order at any parallelism.

// overRow is a row of the OVER tests' input; v is NULL when null is set.
type overRow struct {
	id, k, v, ts int64
	null         bool
}

// overRows returns n rows of 4 partitions, 100 ms apart, each moved by a
// jitter in [lo, hi] ms and rounded to 100 ms, so that rows arrive out of
// order and rows of one partition share timestamps.
func overRows(rng *rand.Rand, n int, lo, hi int64) []overRow {
	base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	out := make([]overRow, n)
	for i := range out {
		jitter := lo + rng.Int64N(hi-lo+1)
		out[i] = overRow{id: int64(i), k: rng.Int64N(4), v: rng.Int64N(200) - 50,
			ts: base + (int64(i)*100+jitter)/100*100, null: rng.IntN(10) == 0}
	}
	return out
}

func overLines(rows []overRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		v := strconv.FormatInt(r.v, 10)
		if r.null {
			v = "null"
		}
		out[i] = fmt.Sprintf("%d|%d|%s|%s", r.id, r.k, v, types.Timestamp{Millis: r.ts}.Format(3))
	}
	return out
}

// overDelay is the watermark delay of the test table, in milliseconds.
const overDelay = 2000

const overDDL = `
CREATE TABLE T (id BIGINT, k BIGINT, v BIGINT, ts TIMESTAMP(3), p AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'steprows', 'id' = 'T');
`

// overCase is an OVER query of the tests and its frame.
type overCase struct {
	name, window string
	// rows counts the frame in rows; preceding is rows or ms, -1 for
	// UNBOUNDED; proc orders by arrival.
	rows      bool
	preceding int64
	proc      bool
}

var overCases = []overCase{
	{"rows3", "PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW", true, 3, false},
	{"range1s", "PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW", false, 1000, false},
	{"rowsunbounded", "PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW", true, -1, false},
	{"rangeunbounded", "PARTITION BY k ORDER BY ts", false, -1, false},
	{"procrows2", "PARTITION BY k ORDER BY p ROWS 2 PRECEDING", true, 2, true},
}

// overScript is the INSERT of every case into a 'rows' sink of its name,
// reading the table src.
func overScript(src string, cases []overCase) string {
	var b strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&b, "CREATE TABLE out_%s (id BIGINT, n BIGINT, nv BIGINT, s BIGINT, a BIGINT, lo BIGINT, hi BIGINT) WITH ('connector' = 'rows', 'id' = '%s');\n", c.name, c.name)
		fmt.Fprintf(&b, "INSERT INTO out_%s SELECT id, COUNT(*) OVER w, COUNT(v) OVER w, SUM(v) OVER w, AVG(v) OVER w, MIN(v) OVER w, MAX(v) OVER w FROM %s WINDOW w AS (%s);\n", c.name, src, c.window)
	}
	return b.String()
}

// bruteOver computes the rows of case c over in (in arrival order), and
// how many rows are late: a row is late on event time when its timestamp
// is at or before the watermark, which trails the highest timestamp before
// it by overDelay + 1 ms.
func bruteOver(in []overRow, c overCase) (want []string, late int) {
	var kept []overRow
	maxTS, seen := int64(0), false
	for _, r := range in {
		if !c.proc && seen && r.ts <= maxTS-overDelay-1 {
			late++
			continue
		}
		if !seen || r.ts > maxTS {
			maxTS, seen = r.ts, true
		}
		kept = append(kept, r)
	}
	parts := map[int64][]overRow{}
	for _, r := range kept {
		parts[r.k] = append(parts[r.k], r)
	}
	for _, rs := range parts {
		if !c.proc {
			slices.SortStableFunc(rs, func(a, b overRow) int { return int(a.ts - b.ts) })
		}
		for j, r := range rs {
			var frame []overRow
			for i, x := range rs {
				var in bool
				if c.rows {
					in = i <= j && (c.preceding < 0 || j-i <= int(c.preceding))
				} else {
					in = x.ts <= r.ts && (c.preceding < 0 || r.ts-x.ts <= c.preceding)
				}
				if in {
					frame = append(frame, x)
				}
			}
			want = append(want, overResult(r.id, frame))
		}
	}
	slices.Sort(want)
	return want, late
}

// overResult renders the row of id with COUNT(*), COUNT(v), SUM(v),
// AVG(v), MIN(v) and MAX(v) over frame.
func overResult(id int64, frame []overRow) string {
	var n, sum, lo, hi int64
	for _, x := range frame {
		if x.null {
			continue
		}
		if n == 0 || x.v < lo {
			lo = x.v
		}
		if n == 0 || x.v > hi {
			hi = x.v
		}
		n++
		sum += x.v
	}
	if n == 0 {
		return fmt.Sprintf("+I[%d, %d, 0, null, null, null, null]", id, len(frame))
	}
	return fmt.Sprintf("+I[%d, %d, %d, %d, %d, %d, %d]", id, len(frame), n, sum, sum/n, lo, hi)
}

// lateRecords sums the late records the OVER aggregations counted.
func lateRecords(env *eddy.Environment) int64 {
	var n int64
	for _, m := range env.Metrics() {
		if m.Name == "OverAggregate" {
			n += m.LateRecords
		}
	}
	return n
}

// TestOverAggregateMatchesBruteForce runs OVER queries with ROWS and RANGE
// frames, bounded and unbounded, on event and processing time, over rows
// that arrive out of order within the watermark's delay, and compares
// their rows with brute force at parallelism 1 and 2.
func TestOverAggregateMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	in := overRows(rng, 400, -900, 900)
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			f := newRowsFactory()
			f.tables["T"] = rowsTable{lines: overLines(in), mode: changelog.InsertOnly}
			env := windowRun(t, f, overDDL+overScript("T", overCases), eddy.WithParallelism(p))
			for _, c := range overCases {
				want, late := bruteOver(in, c)
				if late != 0 {
					t.Fatalf("%s: the input has %d late rows; want none", c.name, late)
				}
				if d := diffLines(sorted(f.out[c.name]), want); d != "" {
					t.Errorf("%s:\n%s", c.name, d)
				}
			}
			if n := lateRecords(env); n != 0 {
				t.Errorf("%d late records counted; want 0", n)
			}
		})
	}
}

// TestOverAggregateDropsLateRows runs the OVER queries over rows some of
// which arrive behind the watermark: on event time they are dropped and
// counted, on processing time they count. The source's watermark advances
// after every row and reaches the operators in order at parallelism 1.
func TestOverAggregateDropsLateRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	in := overRows(rng, 400, -4000, 900)
	f := newRowsFactory()
	f.tables["T"] = rowsTable{lines: overLines(in), mode: changelog.InsertOnly}
	env := windowRun(t, f, overDDL+overScript("T", overCases), eddy.WithParallelism(1))
	var wantLate int
	for _, c := range overCases {
		want, late := bruteOver(in, c)
		if !c.proc && late == 0 {
			t.Fatalf("%s: the input has no late rows", c.name)
		}
		wantLate += late
		if d := diffLines(sorted(f.out[c.name]), want); d != "" {
			t.Errorf("%s:\n%s", c.name, d)
		}
	}
	if n := lateRecords(env); n != int64(wantLate) {
		t.Errorf("%d late records counted; want %d", n, wantLate)
	}
}

// TestOverAggregateResumesFromCheckpoint fails the OVER queries midway and
// restarts them from their last checkpoint (rows waiting for the
// watermark, frames and timers in state), writing to filesystem tables,
// which commit exactly once: each holds the brute-force rows.
func TestOverAggregateResumesFromCheckpoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	in := overRows(rng, 2000, -900, 900)
	cases := overCases[:4] // on event time: the processing-time frames depend on the restart
	dirs := map[string]string{}
	var script strings.Builder
	script.WriteString(overDDL + `
CREATE FUNCTION fail_once AS 'test.FailOnce';
CREATE VIEW V AS SELECT fail_once(id) AS id, k, v, ts FROM T;
`)
	for _, c := range cases {
		dirs[c.name] = t.TempDir()
		fmt.Fprintf(&script, "CREATE TABLE out_%s (id BIGINT, n BIGINT, nv BIGINT, s BIGINT, a BIGINT, lo BIGINT, hi BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n", c.name, dirs[c.name])
		fmt.Fprintf(&script, "INSERT INTO out_%s SELECT id, COUNT(*) OVER w, COUNT(v) OVER w, SUM(v) OVER w, AVG(v) OVER w, MIN(v) OVER w, MAX(v) OVER w FROM V WINDOW w AS (%s);\n", c.name, c.window)
	}
	f := newRowsFactory()
	f.tables["T"] = rowsTable{lines: overLines(in), mode: changelog.InsertOnly}
	failOnce.seen.Store(0)
	failOnce.fired.Store(false)
	failOnce.at.Store(1200)
	defer failOnce.at.Store(-1)
	env := windowRun(t, f, script.String(), eddy.WithParallelism(2), eddy.WithCheckpointing(5*time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.FixedDelayRestart(2, 10*time.Millisecond)))
	if !failOnce.fired.Load() || env.Restarts() != 1 {
		t.Fatalf("the injected failure fired %v, the job restarted %d times; want one failure and one restart", failOnce.fired.Load(), env.Restarts())
	}
	if len(env.CheckpointStats()) == 0 {
		t.Fatalf("no checkpoint completed")
	}
	for _, c := range cases {
		got, _ := runWith(t, fmt.Sprintf(`
CREATE TABLE back (id BIGINT, n BIGINT, nv BIGINT, s BIGINT, a BIGINT, lo BIGINT, hi BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE seen (id BIGINT, n BIGINT, nv BIGINT, s BIGINT, a BIGINT, lo BIGINT, hi BIGINT) WITH ('connector' = 'collect');
INSERT INTO seen SELECT * FROM back;`, filepath.Clean(dirs[c.name])), eddy.WithParallelism(1))
		want, _ := bruteOver(in, c)
		if d := diffLines(sorted(got), want); d != "" {
			t.Errorf("%s:\n%s", c.name, d)
		}
	}
}

// nexmarkAuctionsDDL adds the auction view of the Nexmark table.
const nexmarkAuctionsDDL = `
CREATE VIEW auction AS
SELECT auction.id, auction.itemName, auction.initialBid, auction.reserve, dateTime, auction.expires, auction.seller, auction.category
FROM nexmark WHERE event_type = 1;
`

// TestNexmarkQ6Shape runs the OVER aggregation of the Nexmark suite's q6,
// the average of the last 11 prices per key, over the bids (an insert-only
// table), and checks that q6's own input, the winning bid of each auction
// (a top-1 that retracts), is refused with Flink's reason, naming the
// operator that updates.
func TestNexmarkQ6Shape(t *testing.T) {
	rows := bids(t, 1)
	type bid struct{ auction, price int64 }
	byAuction := map[int64][]int64{}
	var want []string
	for _, r := range rows {
		var b bid
		fmt.Sscan(r[0], &b.auction)
		fmt.Sscan(r[2], &b.price)
		ps := append(byAuction[b.auction], b.price)
		byAuction[b.auction] = ps
		frame := ps[max(0, len(ps)-11):]
		var sum int64
		for _, p := range frame {
			sum += p
		}
		want = append(want, fmt.Sprintf("+I[%d, %d, %d]", b.auction, b.price, sum/int64(len(frame))))
	}
	slices.Sort(want)
	got := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, price BIGINT, avg_price BIGINT) WITH ('connector' = 'collect');
INSERT INTO out
SELECT auction, price, AVG(price) OVER (PARTITION BY auction ORDER BY dateTime ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
FROM bid;
`, 1)
	if d := diffLines(sorted(got), want); d != "" {
		t.Fatal(d)
	}
	// At parallelism 2 bids of one auction and time may come from either
	// source subtask, in either order: each row's average is one of its
	// auction's prices' at most.
	prices := map[string][2]int64{}
	rows2 := bids(t, 2)
	for _, r := range rows2 {
		var p int64
		fmt.Sscan(r[2], &p)
		mm, ok := prices[r[0]]
		if !ok {
			mm = [2]int64{p, p}
		}
		prices[r[0]] = [2]int64{min(mm[0], p), max(mm[1], p)}
	}
	got2 := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, price BIGINT, avg_price BIGINT) WITH ('connector' = 'collect');
INSERT INTO out
SELECT auction, price, AVG(price) OVER (PARTITION BY auction ORDER BY dateTime ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
FROM bid;
`, 2)
	if len(got2) != len(rows2) {
		t.Fatalf("parallelism 2: %d rows for %d bids", len(got2), len(rows2))
	}
	for _, l := range got2 {
		f := strings.Split(strings.Trim(strings.TrimPrefix(l, "+I"), "[]"), ", ")
		var avg int64
		fmt.Sscan(f[2], &avg)
		if mm := prices[f[0]]; avg < mm[0] || avg > mm[1] {
			t.Fatalf("parallelism 2: %s: the average is not within the auction's prices [%d, %d]", l, mm[0], mm[1])
		}
	}

	err := planError(nexmarkDDL + nexmarkAuctionsDDL + `
CREATE TABLE nexmark_q6 (seller BIGINT, avg_price BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO nexmark_q6
SELECT Q.seller, AVG(Q.price) OVER (PARTITION BY Q.seller ORDER BY Q.dateTime ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
FROM (
    SELECT * FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY id, seller ORDER BY price DESC) AS rownum
        FROM (SELECT A.id, A.seller, B.price, B.dateTime
            FROM auction AS A, bid AS B
            WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires))
    WHERE rownum <= 1
) AS Q;
`)
	if err == nil || !strings.Contains(err.Error(), "OverAggregate doesn't support consuming update changes which is produced by node Rank(") {
		t.Fatalf("got %v, want Flink's refusal of an OVER aggregation over the updating Rank", err)
	}
}

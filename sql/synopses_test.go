package sql_test

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sketch"
)

// The synopsis tests compare APPROX_COUNT_DISTINCT and APPROX_PERCENTILE
// with the exact distinct counts and percentiles of the rows: equal while a
// group is small (a sparse HyperLogLog, a KLL sketch whose accuracy exceeds
// the group's rows, which holds every value), within the sketches' error
// bounds on large groups.

// exactPercentile is what APPROX_PERCENTILE returns while its sketch holds
// every value: the smallest value whose rank is at least p.
func exactPercentile(vals []float64, p float64) float64 {
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	if p == 0 {
		return s[0]
	}
	return s[int(math.Ceil(p*float64(len(s))))-1]
}

// groupStats are the values of a group of bids, for the brute force.
type groupStats struct {
	bidders map[string]bool
	prices  []float64
}

func (g *groupStats) add(bidder, price string) {
	if g.bidders == nil {
		g.bidders = map[string]bool{}
	}
	g.bidders[bidder] = true
	f, _ := strconv.ParseFloat(price, 64)
	g.prices = append(g.prices, f)
}

// values are the expected results of a group: its count, distinct
// bidders, median and 90th percentile of the prices.
func (g *groupStats) values() []float64 {
	return []float64{float64(len(g.prices)), float64(len(g.bidders)), exactPercentile(g.prices, 0.5), exactPercentile(g.prices, 0.9)}
}

// parseNumbers parses fields in the print form as numbers.
func parseNumbers(t *testing.T, fields []string) []float64 {
	t.Helper()
	out := make([]float64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("field %q of %v is not a number", f, fields)
		}
		out[i] = v
	}
	return out
}

// printMillis parses a TIMESTAMP(3) in the print form (seconds and
// fraction only when not zero) as epoch milliseconds.
func printMillis(t *testing.T, ts string) int64 {
	t.Helper()
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if v, err := time.Parse(layout, ts); err == nil {
			return v.UnixMilli()
		}
	}
	t.Fatalf("timestamp %q is not in the print form", ts)
	return 0
}

// sameGroups compares the groups a query gave with the brute force's.
func sameGroups(t *testing.T, what string, got map[string][]float64, want map[string]*groupStats) {
	t.Helper()
	if len(want) < 10 {
		t.Fatalf("%s: only %d groups: the test needs more", what, len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d groups, want %d", what, len(got), len(want))
	}
	for k, g := range want {
		if w := g.values(); fmt.Sprint(got[k]) != fmt.Sprint(w) {
			t.Fatalf("%s: group %s is %v, want %v (count, distinct bidders, median, 90th percentile)", what, k, got[k], w)
		}
	}
}

func TestApproxAggregatesInGroupBy(t *testing.T) {
	for _, p := range []int{1, 2} {
		want := map[string]*groupStats{}
		for _, r := range bids(t, p) {
			if want[r[0]] == nil {
				want[r[0]] = &groupStats{}
			}
			want[r[0]].add(r[1], r[2])
		}
		lines := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, n BIGINT, bidders BIGINT, median DOUBLE, p90 DOUBLE) WITH ('connector' = 'collect');
INSERT INTO out
SELECT auction, COUNT(*), APPROX_COUNT_DISTINCT(bidder), APPROX_PERCENTILE(price, 0.5, 1000), APPROX_PERCENTILE(price, 0.9, 1000)
FROM bid GROUP BY auction;
`, p)
		got := map[string][]float64{}
		for _, l := range finalTable(t, lines) {
			f := strings.Split(strings.Trim(l, "[]"), ", ")
			got[f[0]] = parseNumbers(t, f[1:])
		}
		sameGroups(t, fmt.Sprintf("GROUP BY at parallelism %d", p), got, want)
	}
}

func TestApproxAggregatesInWindows(t *testing.T) {
	for _, tc := range []struct {
		name, tvf string
		windows   func(ms int64) []int64 // the window starts of a bid
	}{
		{"TUMBLE", "TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '0.01' SECOND)", func(ms int64) []int64 { return []int64{ms / 10 * 10} }},
		// Windows of 20 ms every 10 ms: each bid is in two, made of panes
		// that the operator merges.
		{"HOP", "HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '0.01' SECOND, INTERVAL '0.02' SECOND)", func(ms int64) []int64 {
			s := ms / 10 * 10
			return []int64{s, s - 10}
		}},
	} {
		for _, p := range []int{1, 2} {
			want := map[string]*groupStats{}
			for _, r := range bids(t, p) {
				for _, start := range tc.windows(printMillis(t, r[4])) {
					k := fmt.Sprintf("%s@%d", r[0], start)
					if want[k] == nil {
						want[k] = &groupStats{}
					}
					want[k].add(r[1], r[2])
				}
			}
			lines := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, window_start TIMESTAMP(3), n BIGINT, bidders BIGINT, median DOUBLE, p90 DOUBLE) WITH ('connector' = 'collect');
INSERT INTO out
SELECT auction, window_start, COUNT(*), APPROX_COUNT_DISTINCT(bidder), APPROX_PERCENTILE(price, 0.5, 1000), APPROX_PERCENTILE(price, 0.9, 1000)
FROM TABLE(`+tc.tvf+`)
GROUP BY auction, window_start, window_end;
`, p)
			got := map[string][]float64{}
			for _, l := range lines {
				if !strings.HasPrefix(l, "+I[") {
					t.Fatalf("%s: a window aggregation emitted %s", tc.name, l)
				}
				f := strings.Split(strings.Trim(l[2:], "[]"), ", ")
				k := fmt.Sprintf("%s@%d", f[0], printMillis(t, f[1]))
				if got[k] != nil {
					t.Fatalf("%s: window %s twice", tc.name, k)
				}
				got[k] = parseNumbers(t, f[2:])
			}
			sameGroups(t, fmt.Sprintf("%s at parallelism %d", tc.name, p), got, want)
		}
	}
}

// genDDL is a table of the numbers 1..n (at most 1 << 20) with a rowtime
// of n milliseconds, from datagen.
func genDDL(n int) string {
	return fmt.Sprintf(`
CREATE TABLE gen (
  id BIGINT,
  ts AS TO_TIMESTAMP_LTZ(id, 3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'datagen', 'rows-per-second' = '100000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d'
);
`, n)
}

// TestApproxAggregatesOnLargeGroups checks the estimates of groups far
// larger than the sketches: 100000 distinct numbers a window, a dense
// HyperLogLog and a KLL sketch that compacts.
func TestApproxAggregatesOnLargeGroups(t *testing.T) {
	const n, size = 300000, 100000
	lines, _ := runWith(t, genDDL(n)+`
CREATE TABLE out (w TIMESTAMP_LTZ(3), rows_in BIGINT, ids BIGINT, halves BIGINT, median DOUBLE, p99 DOUBLE, median_fine DOUBLE) WITH ('connector' = 'collect');
INSERT INTO out
SELECT window_start, COUNT(*), APPROX_COUNT_DISTINCT(id), APPROX_COUNT_DISTINCT(id / 2, 12),
  APPROX_PERCENTILE(id, 0.5), APPROX_PERCENTILE(CAST(id AS DOUBLE), 0.99), APPROX_PERCENTILE(id, 0.5, 2000)
FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '100' SECOND))
GROUP BY window_start, window_end;
`, eddy.WithParallelism(2))
	if len(lines) < n/size {
		t.Fatalf("%d windows, want at least %d:\n%s", len(lines), n/size, strings.Join(lines, "\n"))
	}
	rankErr := func(k int) float64 { return 3 * sketch.KLLNormalizedRankError(k, false) }
	checked := 0
	for _, l := range lines {
		f := strings.Split(strings.Trim(l[2:], "[]"), ", ")
		rows, _ := strconv.Atoi(f[1])
		if rows != size {
			continue // the windows at the ends of the sequence
		}
		checked++
		ids, _ := strconv.ParseFloat(f[2], 64)
		halves, _ := strconv.ParseFloat(f[3], 64)
		// Three standard errors: 1.04/sqrt(2^p).
		if e := math.Abs(ids-size) / size; e > 3*1.04/math.Sqrt(1<<14) {
			t.Errorf("window %s: %v distinct ids, want %d (error %.2f%%)", f[0], ids, size, 100*e)
		}
		if e := math.Abs(halves-size/2) / (size / 2); e > 3*1.04/math.Sqrt(1<<12) {
			t.Errorf("window %s: %v distinct halves at precision 12, want %d (error %.2f%%)", f[0], halves, size/2, 100*e)
		}
		// The window's ids are consecutive, its milliseconds: a value's
		// rank is its distance from the window's start.
		first := float64(printMillis(t, strings.TrimSuffix(f[0], "Z")))
		for _, c := range []struct {
			col  int
			q    float64
			k    int
			name string
		}{{4, 0.5, 200, "median"}, {5, 0.99, 200, "99th percentile"}, {6, 0.5, 2000, "median at accuracy 2000"}} {
			v, _ := strconv.ParseFloat(f[c.col], 64)
			rank := (v - first + 1) / size
			if math.Abs(rank-c.q) > rankErr(c.k) {
				t.Errorf("window %s: the %s is %v, of rank %.4f, want %v within %.4f", f[0], c.name, v, rank, c.q, rankErr(c.k))
			}
		}
	}
	if checked < n/size-1 {
		t.Fatalf("only %d full windows of %d rows:\n%s", checked, size, strings.Join(lines, "\n"))
	}
}

// TestApproxAggregatesRefuseRetractions checks that the synopses, which
// cannot forget a value, are refused over a changelog that retracts rows,
// with an error naming the call.
func TestApproxAggregatesRefuseRetractions(t *testing.T) {
	for _, call := range []string{"APPROX_COUNT_DISTINCT(n)", "APPROX_PERCENTILE(n, 0.5)"} {
		err := planError(nexmarkDDL + `
CREATE TABLE out (x BIGINT) WITH ('connector' = 'collect');
INSERT INTO out
SELECT ` + call + ` FROM (SELECT auction, COUNT(*) AS n FROM bid GROUP BY auction);
`)
		if err == nil || !strings.Contains(err.Error(), call) || !strings.Contains(err.Error(), "cannot take rows back") {
			t.Errorf("%s over a GROUP BY: got %v, want an error naming it that says it cannot take rows back", call, err)
		}
	}
}

// TestApproxAggregateArgumentErrors checks the errors of bad constant
// arguments.
func TestApproxAggregateArgumentErrors(t *testing.T) {
	for _, c := range []struct{ call, want string }{
		{"APPROX_PERCENTILE(price)", "takes 2 to 3 arguments"},
		{"APPROX_PERCENTILE(price, 1.5)", "must be in [0, 1]"},
		{"APPROX_PERCENTILE(price, bidder)", "must be a numeric constant"},
		{"APPROX_PERCENTILE(price, 0.5, 4)", "an integer from 8 to 65535"},
		{"APPROX_PERCENTILE(channel, 0.5)", "takes a number"},
		{"APPROX_PERCENTILE(DISTINCT price, 0.5)", "DISTINCT"},
		{"APPROX_COUNT_DISTINCT(bidder, 30)", "an integer from 4 to 18"},
		{"APPROX_COUNT_DISTINCT(bidder, 10, 2)", "takes 1 to 2 arguments"},
		{"APPROX_COUNT_DISTINCT()", "takes 1 to 2 arguments"},
	} {
		err := planError(nexmarkDDL + `
CREATE TABLE out (x DOUBLE) WITH ('connector' = 'collect');
INSERT INTO out SELECT ` + c.call + ` FROM bid GROUP BY auction;
`)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.call, err, c.want)
		}
	}
}

// TestApproxAggregatesResumeFromCheckpoint fails a window aggregation with
// the synopses once and restarts it from its last checkpoint: the windows
// come out as in a run without failures, so the sketches were restored as
// they were, random state included (at parallelism 1, where the rows come
// in one order: the compactions of KLL depend on it). A window's 8000
// distinct ids make its HyperLogLog dense, its 8000 values make KLL
// compact.
func TestApproxAggregatesResumeFromCheckpoint(t *testing.T) {
	const n = 40000
	script := genDDL(n) + `
CREATE FUNCTION fail_once AS 'test.FailOnce';
CREATE TABLE out (w TIMESTAMP_LTZ(3), ids BIGINT, median DOUBLE) WITH ('connector' = 'collect');
INSERT INTO out
SELECT window_start, APPROX_COUNT_DISTINCT(fail_once(id)), APPROX_PERCENTILE(id % 7919, 0.5)
FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '8' SECOND))
GROUP BY window_start, window_end;
`
	failOnce.at.Store(-1)
	clean, _ := runWith(t, script, eddy.WithParallelism(1))
	failOnce.seen.Store(0)
	failOnce.fired.Store(false)
	failOnce.at.Store(n * 3 / 4)
	failed, env := runWith(t, script, eddy.WithParallelism(1), eddy.WithCheckpointing(5*time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.FixedDelayRestart(2, 10*time.Millisecond)))
	if !failOnce.fired.Load() || env.Restarts() != 1 {
		t.Fatalf("the injected failure fired %v, the job restarted %d times; want one failure and one restart", failOnce.fired.Load(), env.Restarts())
	}
	// The collect sink is not transactional: windows emitted before the
	// failure may come again, with the same values.
	if a, b := strings.Join(sorted(clean), "\n"), strings.Join(dedup(sorted(failed)), "\n"); a != b {
		t.Fatalf("the restarted job's windows differ from the clean run's:\nclean\n%s\nrestarted\n%s", a, b)
	}
}

func dedup(sorted []string) []string {
	var out []string
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// moments returns the population and sample variances and standard
// deviations of xs (NaN where undefined).
func moments(xs []float64) []float64 {
	n := float64(len(xs))
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / n
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	samp := math.NaN()
	if n > 1 {
		samp = ss / (n - 1)
	}
	return []float64{ss / n, samp, math.Sqrt(ss / n), math.Sqrt(samp)}
}

// closeTo compares the numbers of a row with want, relatively; "null" is
// NaN.
func closeTo(got []string, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i, g := range got {
		if g == "null" {
			if !math.IsNaN(want[i]) {
				return false
			}
			continue
		}
		v, err := strconv.ParseFloat(g, 64)
		if err != nil || math.Abs(v-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
			return false
		}
	}
	return true
}

// TestVarianceOverRetractions computes VAR_POP, VAR_SAMP, STDDEV_POP and
// STDDEV_SAMP over the changelog of a GROUP BY, whose counts are retracted
// as they grow: the result is the moments of the final counts.
func TestVarianceOverRetractions(t *testing.T) {
	for _, p := range []int{1, 2} {
		counts := map[string]float64{}
		for _, r := range bids(t, p) {
			counts[r[0]]++
		}
		byParity := map[string][]float64{}
		for a, n := range counts {
			k, _ := strconv.Atoi(a)
			parity := strconv.Itoa(k % 2)
			byParity[parity] = append(byParity[parity], n)
		}
		lines := run(t, nexmarkDDL+`
CREATE TABLE out (parity BIGINT, vp DOUBLE, vs DOUBLE, sp DOUBLE, ss DOUBLE) WITH ('connector' = 'collect');
INSERT INTO out
SELECT parity, VAR_POP(n), VAR_SAMP(n), STDDEV_POP(n), STDDEV_SAMP(n)
FROM (SELECT auction % 2 AS parity, auction, COUNT(*) AS n FROM bid GROUP BY auction)
GROUP BY parity;
`, p)
		final := finalTable(t, lines)
		if len(final) != len(byParity) {
			t.Fatalf("parallelism %d: %d groups, want %d: %v", p, len(final), len(byParity), final)
		}
		for _, l := range final {
			f := strings.Split(strings.Trim(l, "[]"), ", ")
			if want := moments(byParity[f[0]]); !closeTo(f[1:], want) {
				t.Errorf("parallelism %d: parity %s gives %v, want %v", p, f[0], f[1:], want)
			}
		}
	}
}

// TestVarianceInWindows computes the moments of the bids' prices per
// tumbling window, a group of one row giving a NULL sample variance.
func TestVarianceInWindows(t *testing.T) {
	for _, p := range []int{1, 2} {
		want := map[int64][]float64{}
		for _, r := range bids(t, p) {
			price, _ := strconv.ParseFloat(r[2], 64)
			start := printMillis(t, r[4]) / 10 * 10
			want[start] = append(want[start], price)
		}
		lines := run(t, nexmarkDDL+`
CREATE TABLE out (window_start TIMESTAMP(3), vp DOUBLE, vs DOUBLE, sp DOUBLE, ss DOUBLE) WITH ('connector' = 'collect');
INSERT INTO out
SELECT window_start, VAR_POP(price), VAR_SAMP(price), STDDEV_POP(price), STDDEV_SAMP(price)
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '0.01' SECOND))
GROUP BY window_start, window_end;
`, p)
		if len(lines) != len(want) {
			t.Fatalf("parallelism %d: %d windows, want %d", p, len(lines), len(want))
		}
		for _, l := range lines {
			f := strings.Split(strings.Trim(l[2:], "[]"), ", ")
			if w := moments(want[printMillis(t, f[0])]); !closeTo(f[1:], w) {
				t.Errorf("parallelism %d: window %s gives %v, want %v", p, f[0], f[1:], w)
			}
		}
	}
}

// TestWindowCountStarWithoutKeys plans a window aggregation whose only
// call reads no column (COUNT(*) with no key): its pre-projection has no
// columns.
func TestWindowCountStarWithoutKeys(t *testing.T) {
	lines, _ := runWith(t, genDDL(1000)+`
CREATE TABLE out (w TIMESTAMP_LTZ(3), n BIGINT) WITH ('connector' = 'collect');
INSERT INTO out
SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '0.5' SECOND))
GROUP BY window_start, window_end;
`, eddy.WithParallelism(1))
	want := []string{"+I[1970-01-01T00:00:00.500Z, 500]", "+I[1970-01-01T00:00:00Z, 499]", "+I[1970-01-01T00:00:01Z, 1]"}
	if got := sorted(lines); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %v, want %v", got, want)
	}
}

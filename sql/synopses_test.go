package sql_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
)

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

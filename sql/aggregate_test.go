package sql_test

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// finalTable applies a changelog in print form (+I[..], -U[..], +U[..],
// -D[..]) and returns the rows left, sorted.
func finalTable(t *testing.T, lines []string) []string {
	t.Helper()
	count := map[string]int{}
	for _, l := range lines {
		row := l[2:]
		switch l[:2] {
		case "+I", "+U":
			count[row]++
		case "-U", "-D":
			count[row]--
			if count[row] < 0 {
				t.Fatalf("retraction of a row not in the table: %s", l)
			}
		default:
			t.Fatalf("bad change %q", l)
		}
	}
	var out []string
	for r, n := range count {
		for ; n > 0; n-- {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// bids returns the (auction, bidder, price, channel, dateTime) of the bids
// of the test's Nexmark table at parallelism p (the generator spaces event
// times by parallelism, as the reference's does), through a plain query.
func bids(t *testing.T, p int) [][]string {
	lines := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, bidder, price, channel, dateTime FROM bid;
`, p)
	var out [][]string
	for _, l := range lines {
		out = append(out, strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "+I["), "]"), ", "))
	}
	return out
}

func TestGroupAggregateMatchesBruteForce(t *testing.T) {
	rows := bids(t, 1)
	type agg struct {
		n, sum, min, max int64
		bidders          map[string]bool
	}
	want := map[string]*agg{}
	for _, r := range rows {
		var price int64
		fmt.Sscan(r[2], &price)
		a := want[r[0]]
		if a == nil {
			a = &agg{min: price, max: price, bidders: map[string]bool{}}
			want[r[0]] = a
		}
		a.n++
		a.sum += price
		a.min, a.max = min(a.min, price), max(a.max, price)
		a.bidders[r[1]] = true
	}
	var wantRows []string
	for k, a := range want {
		if a.n > 1 {
			wantRows = append(wantRows, fmt.Sprintf("[%s, %d, %d, %d, %d, %d, %d]", k, a.n, a.sum, a.min, a.max, len(a.bidders), a.sum/a.n))
		}
	}
	sort.Strings(wantRows)
	for _, p := range []int{1, 2} {
		lines := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, n BIGINT, total BIGINT, lo BIGINT, hi BIGINT, bidders BIGINT, mean BIGINT) WITH ('connector' = 'collect');
INSERT INTO out
SELECT auction, COUNT(*), SUM(price), MIN(price), MAX(price), COUNT(DISTINCT bidder), AVG(price)
FROM bid GROUP BY auction HAVING COUNT(*) > 1;
`, p)
		got := finalTable(t, lines)
		if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
			t.Fatalf("parallelism %d: got %d rows, want %d\ngot  %v\nwant %v", p, len(got), len(wantRows), got, wantRows)
		}
	}
}

func TestTumbleWindowAggregateMatchesBruteForce(t *testing.T) {
	for _, p := range []int{1, 2} {
		want := map[string]int{}
		for _, r := range bids(t, p) {
			// Windows of 10 ms.
			start := millisOfSecond(r[4]) / 10 * 10
			want[fmt.Sprintf("%s|%d", r[0], start)]++
		}
		lines := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, num BIGINT, window_start TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out
SELECT auction, COUNT(*) AS num, window_start
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '0.01' SECOND))
GROUP BY auction, window_start, window_end;
`, p)
		got := map[string]int{}
		for _, l := range finalTable(t, lines) {
			f := strings.Split(strings.Trim(l, "[]"), ", ")
			ms := millisOfSecond(f[2])
			var n int
			fmt.Sscan(f[1], &n)
			got[fmt.Sprintf("%s|%d", f[0], ms)] += n
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("parallelism %d:\ngot  %v\nwant %v", p, got, want)
		}
	}
}

// millisOfSecond returns the milliseconds of a timestamp in the print
// form, yyyy-MM-ddTHH:mm[:ss[.fff]].
func millisOfSecond(ts string) int {
	i := strings.IndexByte(ts, '.')
	if i < 0 {
		return 0
	}
	frac := (ts[i+1:] + "000")[:3]
	ms, _ := strconv.Atoi(frac)
	return ms
}

// TestWindowTableFunctionRows reads a window TVF without aggregating it:
// every bid comes out once per window, with the window's bounds.
func TestWindowTableFunctionRows(t *testing.T) {
	for _, p := range []int{1, 2} {
		want := map[string]int{}
		for _, r := range bids(t, p) {
			start := millisOfSecond(r[4]) / 10 * 10
			want[fmt.Sprintf("%s|%s|%d", r[0], r[2], start)]++
		}
		lines := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, price BIGINT, window_start TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out
SELECT auction, price, window_start
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '0.01' SECOND));
`, p)
		got := map[string]int{}
		for _, l := range finalTable(t, lines) {
			f := strings.Split(strings.Trim(l, "[]"), ", ")
			got[fmt.Sprintf("%s|%s|%d", f[0], f[1], millisOfSecond(f[2]))]++
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("parallelism %d: %d distinct rows, want %d", p, len(got), len(want))
		}
	}
}

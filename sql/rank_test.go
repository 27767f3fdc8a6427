package sql_test

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
)

// rankDDL is the Nexmark source of the rank tests: more events than
// nexmarkDDL, so that partitions see rows pushed out of their top.
var rankDDL = strings.Replace(nexmarkDDL, "'events.num' = '1000'", "'events.num' = '4000'", 1)

// bidRow is a bid of the rank tests: auction, bidder, price and dateTime
// as their print text.
type bidRow struct {
	auction, bidder, price int64
	dateTime               string
}

func (b bidRow) String() string {
	return fmt.Sprintf("%d, %d, %d, %s", b.auction, b.bidder, b.price, b.dateTime)
}

// rankFinalTable applies a changelog in print form (+I and +U add a row, -U
// and -D remove one) and returns the rows of the final table, sorted.
func rankFinalTable(t *testing.T, lines []string) []string {
	t.Helper()
	count := map[string]int{}
	for _, l := range lines {
		kind, row := l[:2], l[3:len(l)-1]
		switch kind {
		case "+I", "+U":
			count[row]++
		case "-U", "-D":
			if count[row] == 0 {
				t.Fatalf("%s retracts a row that is not in the table", l)
			}
			count[row]--
		default:
			t.Fatalf("bad change %q", l)
		}
	}
	var out []string
	for row, n := range count {
		for range n {
			out = append(out, row)
		}
	}
	sort.Strings(out)
	return out
}

// rankBids returns the bids of rankDDL, read through a plain projection at
// parallelism p (the generator's timestamps depend on it).
func rankBids(t *testing.T, p int) []bidRow {
	t.Helper()
	lines := run(t, rankDDL+`
CREATE TABLE out (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, bidder, price, dateTime FROM bid;
`, p)
	var out []bidRow
	for _, row := range rankFinalTable(t, lines) {
		var b bidRow
		parts := strings.SplitN(row, ", ", 4)
		fmt.Sscan(parts[0], &b.auction)
		fmt.Sscan(parts[1], &b.bidder)
		fmt.Sscan(parts[2], &b.price)
		b.dateTime = parts[3]
		out = append(out, b)
	}
	if len(out) < 1000 {
		t.Fatalf("only %d bids", len(out))
	}
	return out
}

// rankTopN is the brute-force top-n of rows per key in the order cmp.
func rankTopN(rows []bidRow, key func(bidRow) int64, cmp func(a, b bidRow) int, n int, numbered bool) []string {
	parts := map[int64][]bidRow{}
	for _, r := range rows {
		parts[key(r)] = append(parts[key(r)], r)
	}
	var out []string
	for _, p := range parts {
		slices.SortStableFunc(p, cmp)
		for i, r := range p[:min(n, len(p))] {
			s := r.String()
			if numbered {
				s += fmt.Sprintf(", %d", i+1)
			}
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func byPriceDesc(a, b bidRow) int {
	if c := -rankCmpInt(a.price, b.price); c != 0 {
		return c
	}
	if c := strings.Compare(a.dateTime, b.dateTime); c != 0 {
		return c
	}
	return rankCmpInt(a.bidder, b.bidder)
}

func rankCmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func rankSameRows(t *testing.T, got, want []string) {
	t.Helper()
	for i := 0; i < max(len(got), len(want)); i++ {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			t.Fatalf("got %d rows, want %d; first difference at row %d: got %q, want %q", len(got), len(want), i, g, w)
		}
	}
}

func TestTopNPerKey(t *testing.T) {
	byAuction := func(b bidRow) int64 { return b.auction }
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			all := rankBids(t, p)
			got := rankFinalTable(t, run(t, rankDDL+`
CREATE TABLE out (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, bidder, price, dateTime FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, dateTime, bidder) AS rn FROM bid)
WHERE rn <= 3;
`, p))
			rankSameRows(t, got, rankTopN(all, byAuction, byPriceDesc, 3, false))
			got = rankFinalTable(t, run(t, rankDDL+`
CREATE TABLE out (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3), rn BIGINT) WITH ('connector' = 'collect');
INSERT INTO out SELECT * FROM (
  SELECT auction, bidder, price, dateTime, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, dateTime, bidder) AS rn FROM bid)
WHERE rn < 3;
`, p))
			rankSameRows(t, got, rankTopN(all, byAuction, byPriceDesc, 2, true))
		})
	}
}

func TestTopNGlobal(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			all := rankBids(t, p)
			got := rankFinalTable(t, run(t, rankDDL+`
CREATE TABLE out (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, bidder, price, dateTime FROM (
  SELECT *, ROW_NUMBER() OVER (ORDER BY price DESC, dateTime, bidder) AS rn FROM bid)
WHERE rn BETWEEN 1 AND 10;
`, p))
			rankSameRows(t, got, rankTopN(all, func(bidRow) int64 { return 0 }, byPriceDesc, 10, false))
		})
	}
}

// TestDeduplicate checks Flink's deduplication on the rowtime: the first
// (or last) bid of every bidder. Bids of one bidder may share a
// timestamp, so the test checks that the row kept is a bid of the bidder
// at its earliest (latest) time.
func TestDeduplicate(t *testing.T) {
	for _, keep := range []string{"ASC", "DESC"} {
		for _, p := range []int{1, 2} {
			t.Run(fmt.Sprint(keep, p), func(t *testing.T) {
				all := rankBids(t, p)
				got := rankFinalTable(t, run(t, rankDDL+`
CREATE TABLE out (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, bidder, price, dateTime FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY dateTime `+keep+`) AS rn FROM bid)
WHERE rn = 1;
`, p))
				best := map[int64]string{}
				rows := map[string]bool{}
				for _, b := range all {
					rows[b.String()] = true
					if cur, ok := best[b.bidder]; !ok || (keep == "ASC") == (b.dateTime < cur) && b.dateTime != cur {
						best[b.bidder] = b.dateTime
					}
				}
				if len(got) != len(best) {
					t.Fatalf("%d rows for %d bidders", len(got), len(best))
				}
				seen := map[int64]bool{}
				for _, row := range got {
					var auction, bidder int64
					fmt.Sscanf(row, "%d, %d", &auction, &bidder)
					if !rows[row] || seen[bidder] || !strings.HasSuffix(row, ", "+best[bidder]) {
						t.Fatalf("row %s: not the bid of bidder %d at %s", row, bidder, best[bidder])
					}
					seen[bidder] = true
				}
			})
		}
	}
}

func TestOrderByLimit(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			all := rankBids(t, p)
			got := rankFinalTable(t, run(t, rankDDL+`
CREATE TABLE out (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, bidder, price, dateTime FROM bid ORDER BY price DESC, dateTime, bidder LIMIT 7;
`, p))
			rankSameRows(t, got, rankTopN(all, func(bidRow) int64 { return 0 }, byPriceDesc, 7, false))
			got = rankFinalTable(t, run(t, rankDDL+`
CREATE TABLE out (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, bidder, price, dateTime FROM bid ORDER BY price DESC, dateTime, bidder LIMIT 4 OFFSET 3;
`, p))
			ordered := slices.Clone(all)
			slices.SortStableFunc(ordered, byPriceDesc)
			var want []string
			for _, b := range ordered[3:7] {
				want = append(want, b.String())
			}
			sort.Strings(want)
			rankSameRows(t, got, want)
		})
	}
}

// TestUnionAll reads the bids of two tables and constant rows.
func TestUnionAll(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			all := rankBids(t, p)
			got := rankFinalTable(t, run(t, rankDDL+strings.NewReplacer("TABLE nexmark", "TABLE nexmark2", "VIEW bid", "VIEW bid2", "FROM nexmark", "FROM nexmark2").Replace(rankDDL)+`
CREATE TABLE out (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out
SELECT auction, bidder, price, dateTime FROM bid WHERE price > 50000000
UNION ALL
SELECT auction, bidder, price, dateTime FROM bid2 WHERE auction % 2 = 0
UNION ALL
VALUES (1, 2, 3, TIMESTAMP '2024-01-01 00:00:00');
`, p))
			want := []string{"1, 2, 3, 2024-01-01T00:00"}
			for _, b := range all {
				if b.price > 50000000 {
					want = append(want, b.String())
				}
				if b.auction%2 == 0 {
					want = append(want, b.String())
				}
			}
			sort.Strings(want)
			rankSameRows(t, got, want)
		})
	}
}

func TestValuesIntoSink(t *testing.T) {
	for _, p := range []int{1, 2} {
		got := run(t, `
CREATE TABLE out (a BIGINT, b STRING, c DECIMAL(5, 2)) WITH ('connector' = 'collect');
INSERT INTO out VALUES (1, 'a', 1.5), (2, 'bc', NULL), (CAST(NULL AS INT), 'd', 3);
INSERT INTO out SELECT 4, 'e', 0.25;
`, p)
		sort.Strings(got)
		rankSameRows(t, got, []string{"+I[1, a, 1.50]", "+I[2, bc, null]", "+I[4, e, 0.25]", "+I[null, d, 3.00]"})
	}
}

// TestSelectDistinct checks SELECT DISTINCT of an insert-only input and of
// a changelog (the prices of a global top-10, whose rows come and go).
func TestSelectDistinct(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			all := rankBids(t, p)
			got := rankFinalTable(t, run(t, rankDDL+`
CREATE TABLE out (bidder BIGINT) WITH ('connector' = 'collect');
INSERT INTO out SELECT DISTINCT bidder FROM bid;
`, p))
			set := map[string]bool{}
			for _, b := range all {
				set[fmt.Sprint(b.bidder)] = true
			}
			want := slices.Sorted(maps.Keys(set))
			rankSameRows(t, got, want)

			got = rankFinalTable(t, run(t, rankDDL+`
CREATE TABLE out (price BIGINT) WITH ('connector' = 'collect');
INSERT INTO out SELECT DISTINCT price / 10000000 FROM (SELECT price, dateTime, bidder FROM bid ORDER BY price DESC, dateTime, bidder LIMIT 10);
`, p))
			set = map[string]bool{}
			for _, row := range rankTopN(all, func(bidRow) int64 { return 0 }, byPriceDesc, 10, false) {
				var b bidRow
				fmt.Sscanf(row, "%d, %d, %d", &b.auction, &b.bidder, &b.price)
				set[fmt.Sprint(b.price/10000000)] = true
			}
			rankSameRows(t, got, slices.Sorted(maps.Keys(set)))
		})
	}
}

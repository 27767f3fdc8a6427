package sql_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// TestDistinctFiltersMatchBruteForce checks DISTINCT aggregates that share
// a view per argument (several FILTERs over one argument, an integer and a
// string argument, COUNT and SUM), and over an updating input, where each
// call keeps its own counts.
func TestDistinctFiltersMatchBruteForce(t *testing.T) {
	rows := bids(t, 1)
	type group struct {
		bidders    [3]map[string]bool // all, price < 10000, price >= 1000000
		channels   [2]map[string]bool // all, price < 10000
		sumBidders map[int64]bool
	}
	want := map[string]*group{}
	for _, r := range rows {
		var price, bidder int64
		fmt.Sscan(r[2], &price)
		fmt.Sscan(r[1], &bidder)
		g := want[r[0]]
		if g == nil {
			g = &group{sumBidders: map[int64]bool{}}
			for i := range g.bidders {
				g.bidders[i] = map[string]bool{}
			}
			for i := range g.channels {
				g.channels[i] = map[string]bool{}
			}
			want[r[0]] = g
		}
		g.bidders[0][r[1]] = true
		g.channels[0][r[3]] = true
		g.sumBidders[bidder] = true
		if price < 10000 {
			g.bidders[1][r[1]] = true
			g.channels[1][r[3]] = true
		}
		if price >= 1000000 {
			g.bidders[2][r[1]] = true
		}
	}
	var wantRows []string
	for k, g := range want {
		var sum int64
		for b := range g.sumBidders {
			sum += b
		}
		wantRows = append(wantRows, fmt.Sprintf("[%s, %d, %d, %d, %d, %d, %d]", k, len(g.bidders[0]), len(g.bidders[1]), len(g.bidders[2]), len(g.channels[0]), len(g.channels[1]), sum))
	}
	sort.Strings(wantRows)
	for _, p := range []int{1, 2} {
		lines := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, b BIGINT, b_low BIGINT, b_high BIGINT, c BIGINT, c_low BIGINT, sb BIGINT) WITH ('connector' = 'collect');
INSERT INTO out
SELECT auction,
  COUNT(DISTINCT bidder),
  COUNT(DISTINCT bidder) FILTER (WHERE price < 10000),
  COUNT(DISTINCT bidder) FILTER (WHERE price >= 1000000),
  COUNT(DISTINCT channel),
  COUNT(DISTINCT channel) FILTER (WHERE price < 10000),
  SUM(DISTINCT bidder)
FROM bid GROUP BY auction;
`, p)
		got := finalTable(t, lines)
		if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
			t.Fatalf("parallelism %d: got %d rows, want %d\ngot  %v\nwant %v", p, len(got), len(wantRows), got, wantRows)
		}
	}

	// Over an updating input (the highest price of each auction and
	// bidder), rows are taken back and the counts of each value matter.
	last := map[[2]string]int64{}
	for _, r := range rows {
		var price int64
		fmt.Sscan(r[2], &price)
		k := [2]string{r[0], r[1]}
		if p, ok := last[k]; !ok || price > p {
			last[k] = price
		}
	}
	byAuction := map[string][2]map[string]bool{}
	for k, price := range last {
		g, ok := byAuction[k[0]]
		if !ok {
			g = [2]map[string]bool{{}, {}}
			byAuction[k[0]] = g
		}
		g[0][fmt.Sprint(price%7)] = true
		if price < 10000 {
			g[1][fmt.Sprint(price%7)] = true
		}
	}
	wantRows = wantRows[:0]
	for k, g := range byAuction {
		wantRows = append(wantRows, fmt.Sprintf("[%s, %d, %d]", k, len(g[0]), len(g[1])))
	}
	sort.Strings(wantRows)
	lines := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, m BIGINT, m_low BIGINT) WITH ('connector' = 'collect');
INSERT INTO out
SELECT auction, COUNT(DISTINCT MOD(price, 7)), COUNT(DISTINCT MOD(price, 7)) FILTER (WHERE price < 10000)
FROM (SELECT auction, bidder, MAX(price) AS price FROM bid GROUP BY auction, bidder)
GROUP BY auction;
`, 2)
	got := finalTable(t, lines)
	if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Fatalf("updating input: got %d rows, want %d\ngot  %v\nwant %v", len(got), len(wantRows), got, wantRows)
	}
}

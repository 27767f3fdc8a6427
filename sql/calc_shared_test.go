package sql_test

import (
	"strconv"
	"strings"
	"testing"
)

// TestSharedSubexpressionsPerRow checks that a condition repeating a call,
// run in the source of a Calc that passes its rows as they are, evaluates
// it for every row, not once for the first.
func TestSharedSubexpressionsPerRow(t *testing.T) {
	ddl := strings.Replace(nexmarkDDL, "'events.num' = '1000'", "'events.num' = '5000'", 1)
	sink := "CREATE TABLE out (auction BIGINT, price BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');\n"
	got := run(t, ddl+sink+"INSERT INTO out SELECT auction, price, dateTime FROM bid WHERE MOD(auction, 7) = 0 OR MOD(auction, 7) = 1;\n", 1)
	var want []string
	for _, l := range run(t, ddl+sink+"INSERT INTO out SELECT auction, price, dateTime FROM bid;\n", 1) {
		a, err := strconv.ParseInt(strings.TrimSpace(strings.SplitN(strings.TrimPrefix(l, "+I["), ",", 2)[0]), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if a%7 <= 1 {
			want = append(want, l)
		}
	}
	if len(want) == 0 {
		t.Fatal("no bid passes the filter: the test tests nothing")
	}
	if d := diffLines(sorted(got), sorted(want)); d != "" {
		t.Fatalf("a repeated call in the condition:\n%.2000s", d)
	}
}

// TestSharedConstantsTellApart checks that two constants printed alike (an
// ARRAY's strings are not quoted) are not taken for one subexpression.
func TestSharedConstantsTellApart(t *testing.T) {
	sink := "CREATE TABLE out (auction BIGINT, x VARCHAR, y VARCHAR) WITH ('connector' = 'collect');\n"
	q := "INSERT INTO out SELECT auction, ARRAY['a, b', 'c'][CAST(MOD(auction, 2) + 1 AS INT)], ARRAY['a', 'b, c'][CAST(MOD(auction, 2) + 1 AS INT)] FROM bid;\n"
	for _, l := range run(t, nexmarkDDL+sink+q, 1) {
		if !strings.HasSuffix(l, ", a, b, a]") && !strings.HasSuffix(l, ", c, b, c]") {
			t.Fatalf("row %s: want x and y of different arrays", l)
		}
	}
}

// TestHavingKeepsUpdatesWhole checks that a filter over an aggregation's
// changelog sees each update whole, in batches of any size: a count that
// only grows gives no deletion and no +U without its -U.
func TestHavingKeepsUpdatesWhole(t *testing.T) {
	ddl := strings.Replace(nexmarkDDL, "'events.num' = '1000'", "'events.num' = '30000'", 1)
	sink := "CREATE TABLE out (auction BIGINT, c BIGINT) WITH ('connector' = 'collect');\n"
	lines := run(t, ddl+sink+"INSERT INTO out SELECT auction, COUNT(*) AS c FROM bid GROUP BY auction HAVING COUNT(*) > 0;\n", 1)
	for i, l := range lines {
		if strings.HasPrefix(l, "-D") {
			t.Fatalf("line %d: %s, a deletion of a count that only grows", i, l)
		}
		if strings.HasPrefix(l, "+U") && (i == 0 || !strings.HasPrefix(lines[i-1], "-U")) {
			t.Fatalf("line %d: %s without its -U", i, l)
		}
	}
	if len(lines) < 2000 {
		t.Fatalf("%d changes: too few for batches of 1024", len(lines))
	}
}

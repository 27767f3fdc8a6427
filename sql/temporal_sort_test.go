package sql_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestTemporalSortOrder checks that ORDER BY the rowtime attribute emits
// every bid once, in ascending time and, within a time, by descending
// price: the order of the rows the sink receives, which the golden tests
// (final tables, sorted) do not see.
func TestTemporalSortOrder(t *testing.T) {
	want := bids(t, 1)
	lines := run(t, nexmarkDDL+`
CREATE TABLE out (auction BIGINT, price BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
INSERT INTO out SELECT auction, price, dateTime FROM bid ORDER BY dateTime, price DESC;
`, 1)
	if len(lines) != len(want) || len(lines) == 0 {
		t.Fatalf("%d rows, want the %d bids", len(lines), len(want))
	}
	type row struct {
		auction, price int64
		ts             string
	}
	var got []row
	for _, l := range lines {
		var r row
		f := strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "+I["), "]"), ", ")
		if !strings.HasPrefix(l, "+I[") || len(f) != 3 {
			t.Fatalf("line %q", l)
		}
		fmt.Sscan(f[0], &r.auction)
		fmt.Sscan(f[1], &r.price)
		r.ts = f[2]
		got = append(got, r)
	}
	if !slices.IsSortedFunc(got, func(a, b row) int {
		if c := strings.Compare(a.ts, b.ts); c != 0 {
			return c
		}
		return int(b.price - a.price)
	}) {
		t.Errorf("rows out of order:\n%s", strings.Join(lines, "\n"))
	}
	var wantRows, gotRows []string
	for _, w := range want {
		wantRows = append(wantRows, w[0]+" "+w[2]+" "+w[4])
	}
	for _, r := range got {
		gotRows = append(gotRows, fmt.Sprintf("%d %d %s", r.auction, r.price, r.ts))
	}
	slices.Sort(wantRows)
	slices.Sort(gotRows)
	if !slices.Equal(gotRows, wantRows) {
		t.Errorf("the sorted rows are not the bids")
	}
}

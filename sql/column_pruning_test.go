package sql_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sql"
)

// explainText returns what EXPLAIN of stmt prints after the statements of
// ddl.
func explainText(t *testing.T, ddl, stmt string) string {
	t.Helper()
	return explainIn(t, sql.NewSession(sql.WithConnectors(registry(&collectSink{}))), ddl, stmt)
}

// bidFields parses the rows "+I[f0, f1, ...]" of an insert-only table.
func bidFields(t *testing.T, lines []string) [][]string {
	t.Helper()
	var out [][]string
	for _, l := range lines {
		if !strings.HasPrefix(l, "+I[") || !strings.HasSuffix(l, "]") {
			t.Fatalf("row %q: want an insertion", l)
		}
		out = append(out, strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "+I["), "]"), ", "))
	}
	return out
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPrunedLookupJoinRows checks that a lookup join that keeps only the
// columns read above it (Nexmark q13's shape: a view of the bids with a
// PROCTIME() column, joined on MOD(auction, n)) gives the rows of the join
// computed in Go over the bids, for an INNER join and for a LEFT join
// whose condition reads a column of each side that is not selected, at
// parallelism 1 and 2. The plans are checked to be the pruned ones: the
// source does not write the bids' strings, and PROCTIME() is not computed.
func TestPrunedLookupJoinRows(t *testing.T) {
	dir := t.TempDir()
	side := filepath.Join(dir, "side_input.csv")
	// Keys 0 to 99 but the multiples of 3, each with a value and a note.
	var rows []string
	values := map[int64]string{}
	for k := int64(0); k < 100; k++ {
		if k%3 != 0 {
			rows = append(rows, fmt.Sprintf("%d,v%d,n%d", k, k, k))
			values[k] = fmt.Sprint(k)
		}
	}
	writeFile(t, side, rows...)
	ddl := strings.Replace(nexmarkDDL, "'events.num' = '1000'", "'events.num' = '5000'", 1) + fmt.Sprintf(`
CREATE TABLE side_input (key BIGINT, `+"`value`"+` VARCHAR, note VARCHAR)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3)) WITH ('connector' = 'collect');
CREATE TABLE q13 (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3), `+"`value`"+` VARCHAR) WITH ('connector' = 'collect');
CREATE TABLE notes (bidder BIGINT, note VARCHAR) WITH ('connector' = 'collect');
`, side)
	inner := "INSERT INTO q13 SELECT B.auction, B.bidder, B.price, B.dateTime, S.`value`" + `
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.auction, 100) = S.key;
`
	left := `INSERT INTO notes SELECT B.bidder, S.note
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
LEFT JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.auction, 100) = S.key AND MOD(B.price, 2) = MOD(S.key, 2);
`
	for _, stmt := range []string{inner, left} {
		plan := explainText(t, ddl, stmt)
		for _, absent := range []string{"`bid`.`channel`", "`bid`.`extra`", "PROCTIME()"} {
			if strings.Contains(plan, absent) {
				t.Fatalf("the plan of\n%s\nholds %s:\n%s", stmt, absent, plan)
			}
		}
	}
	for _, p := range []int{1, 2} {
		// The joins computed over the bids (whose times depend on the
		// number of the source's subtasks).
		var wantInner, wantLeft []string
		bids := bidFields(t, run(t, ddl+"INSERT INTO bids SELECT auction, bidder, price, dateTime FROM bid;\n", p))
		for _, b := range bids {
			auction, price := mustInt(t, b[0]), mustInt(t, b[2])
			k := auction % 100
			v, ok := values[k]
			if ok {
				wantInner = append(wantInner, fmt.Sprintf("+I[%s, %s, %s, %s, v%s]", b[0], b[1], b[2], b[3], v))
			}
			if ok && price%2 == k%2 {
				wantLeft = append(wantLeft, fmt.Sprintf("+I[%s, n%s]", b[1], v))
			} else {
				wantLeft = append(wantLeft, fmt.Sprintf("+I[%s, null]", b[1]))
			}
		}
		if len(wantInner) == 0 || len(wantInner) == len(bids) || len(wantLeft) != len(bids) {
			t.Fatalf("%d of %d bids have a row in the table: the test tests little", len(wantInner), len(bids))
		}
		for _, c := range []struct {
			stmt string
			want []string
		}{{inner, wantInner}, {left, wantLeft}} {
			got, _ := runWith(t, ddl+c.stmt, eddy.WithParallelism(p))
			if d := diffLines(sorted(got), sorted(c.want)); d != "" {
				t.Fatalf("p%d, %s:\n%.3000s", p, c.stmt, d)
			}
		}
	}
}

// TestMergedVolatileCalcRows checks the rows of Calcs fused with a Calc
// under them that computes a volatile column. Over a view of the bids
// with PROCTIME() (Nexmark q12's shape), a filter and processing-time
// windows counting each bidder's bids give what Go computes over the
// bids; the plan's source writes the bidder alone. A UUID() read twice
// above the Calc that draws it (which is then not fused) is one value
// in both places; read once, each row has its own.
func TestMergedVolatileCalcRows(t *testing.T) {
	ddl := strings.Replace(nexmarkDDL, "'events.num' = '1000'", "'events.num' = '5000'", 1) + `
CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM bid;
CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT) WITH ('connector' = 'collect');
CREATE TABLE counts (bidder BIGINT, c BIGINT) WITH ('connector' = 'collect');
CREATE TABLE uuids (u VARCHAR, v VARCHAR) WITH ('connector' = 'collect');
`
	windows := `INSERT INTO counts
SELECT bidder, COUNT(*) FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
`
	plan := explainText(t, ddl, windows)
	if !strings.Contains(plan, "project=[`bid`.`bidder`, `bid`.`dateTime`]") {
		t.Fatalf("the source of q12's shape writes more than the bidder and the dateTime:\n%s", plan)
	}
	bids := bidFields(t, run(t, ddl+"INSERT INTO bids SELECT auction, bidder, price FROM bid;\n", 1))
	perBidder := map[string]int64{}
	var filtered []string
	for _, b := range bids {
		perBidder[b[1]]++
		if mustInt(t, b[0])%5 == 0 {
			filtered = append(filtered, fmt.Sprintf("+I[%s, %s, %s]", b[0], b[1], b[2]))
		}
	}
	if len(filtered) == 0 {
		t.Fatal("no bid passes the filter: the test tests nothing")
	}
	for _, p := range []int{1, 2} {
		got, _ := runWith(t, ddl+"INSERT INTO bids SELECT auction, bidder, price FROM B WHERE MOD(auction, 5) = 0 AND p_time IS NOT NULL;\n", eddy.WithParallelism(p))
		if d := diffLines(sorted(got), sorted(filtered)); d != "" {
			t.Fatalf("p%d, a filter over the view:\n%.3000s", p, d)
		}
		// The windows' counts of a bidder add up to its bids, however
		// the bids fall into processing-time windows.
		got, _ = runWith(t, ddl+windows, eddy.WithParallelism(p))
		sums := map[string]int64{}
		for _, r := range bidFields(t, got) {
			sums[r[0]] += mustInt(t, r[1])
		}
		if fmt.Sprint(sums) != fmt.Sprint(perBidder) {
			t.Fatalf("p%d, bids per bidder over processing-time windows: got %v, want %v", p, sums, perBidder)
		}
	}

	twice := "INSERT INTO uuids SELECT u, UPPER(u) FROM (SELECT auction, UUID() AS u FROM bid);\n"
	if plan := explainText(t, ddl, twice); !strings.Contains(plan, "UUID() AS `u`]") {
		t.Fatalf("a UUID() read twice: want its Calc apart from the one reading it:\n%s", plan)
	}
	once := "INSERT INTO uuids SELECT UPPER(u), '' FROM (SELECT auction, UUID() AS u FROM bid);\n"
	for _, p := range []int{1, 2} {
		rows := bidFields(t, run(t, ddl+twice, p))
		if len(rows) != len(bids) {
			t.Fatalf("p%d: %d rows of UUIDs, want %d", p, len(rows), len(bids))
		}
		for _, r := range rows {
			if strings.ToUpper(r[0]) != r[1] {
				t.Fatalf("p%d: UUID %s read twice gives %s the second time", p, r[0], r[1])
			}
		}
		seen := map[string]bool{}
		for _, r := range bidFields(t, run(t, ddl+once, p)) {
			if seen[r[0]] {
				t.Fatalf("p%d: UUID %s drawn for two rows", p, r[0])
			}
			seen[r[0]] = true
		}
		if len(seen) != len(bids) {
			t.Fatalf("p%d: %d UUIDs, want %d", p, len(seen), len(bids))
		}
	}
}

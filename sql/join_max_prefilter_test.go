package sql_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// maxRow is a row of TestMaxPrefilter: an id, a price and a time in ms.
type maxRow struct{ id, price, ms int64 }

// maxPrefilterRows returns the rows of TestMaxPrefilter, in the order the
// source emits them. First, in time order, rows over 30 windows of 10 s
// (enough for the filter to forget the first ones, once they fired), with
// few prices (ties with the maximum) and some at the start of a window.
// Then rows that come late for their windows, which the window
// aggregation does not count but the join still joins: for each of the
// windows 20 to 28, whose maxima the filter still holds, one at the start
// of the next window at this window's maximum (it joins this window too,
// though below the next window's maximum), one above the window's
// maximum, then one at the maximum.
func maxPrefilterRows() ([]maxRow, map[int64]int64) {
	rng := rand.New(rand.NewPCG(3, 4))
	const start = int64(1_700_000_000_000) // a window's start
	var rows []maxRow
	add := func(price, ms int64) { rows = append(rows, maxRow{int64(len(rows)), price, ms}) }
	for ms := start; ms < start+300_000; ms += 1 + rng.Int64N(900) {
		if rng.IntN(8) == 0 {
			ms -= (ms - start) % 10_000
			if len(rows) > 0 && rows[len(rows)-1].ms > ms {
				ms += 10_000
			}
		}
		add(rng.Int64N(40), ms)
	}
	maxOf := map[int64]int64{} // by window end
	for _, r := range rows {
		end := r.ms - (r.ms-start)%10_000 + 10_000
		if m, ok := maxOf[end]; !ok || r.price > m {
			maxOf[end] = r.price
		}
	}
	for k := int64(20); k <= 28; k++ {
		end := start + 10_000*k
		add(maxOf[end], end)
		add(maxOf[end]+100, end-5_000)
		add(maxOf[end], end-4_000)
	}
	return rows, maxOf
}

// TestMaxPrefilter runs joins of a relation with the MAX of its price over
// TUMBLE windows, as Nexmark's q7 does, with the filter that drops the
// rows below their window's highest price so far (maxPrefilter) and
// without it, and checks both against the rows each window's maximum
// selects: a row joins its own window, and the one before when it is at
// its window's start, where its price is the window's maximum over the
// rows that were not late.
func TestMaxPrefilter(t *testing.T) {
	rows, maxOf := maxPrefilterRows()
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%d|%d|%s", r.id, r.price, types.Timestamp{Millis: r.ms}.Format(3)))
	}
	var want []string // "+I[id, price" of each result
	for _, r := range rows {
		end := r.ms - r.ms%10_000 + 10_000
		ends := []int64{end}
		if r.ms%10_000 == 0 {
			ends = append(ends, r.ms)
		}
		for _, e := range ends {
			if m, ok := maxOf[e]; ok && m == r.price {
				want = append(want, fmt.Sprintf("+I[%d, %d", r.id, r.price))
			}
		}
	}
	slices.Sort(want)
	ddl := `CREATE TABLE bids (id BIGINT, price BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'paced', 'id' = 'bids');
CREATE TABLE hi (id BIGINT, price BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'wide');
`
	maxima := `(SELECT MAX(price) AS maxprice, window_end AS wend
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end) M`
	for _, q := range []struct{ name, sql string }{
		{"rows on the left", `INSERT INTO hi SELECT B.id, B.price, B.ts FROM bids B JOIN ` + maxima + `
ON B.price = M.maxprice WHERE B.ts BETWEEN M.wend - INTERVAL '10' SECOND AND M.wend;`},
		{"rows on the right", `INSERT INTO hi SELECT B.id, B.price, B.ts FROM ` + maxima + ` JOIN bids B
ON M.maxprice = B.price AND M.wend >= B.ts AND B.ts + INTERVAL '10' SECOND >= M.wend;`},
	} {
		for _, off := range []bool{false, true} {
			script := ddl + q.sql
			if off {
				script = ddl + "SET 'table.optimizer.join-max-prefilter-enabled' = 'false';\n" + q.sql
			}
			reg := registry(&collectSink{})
			reg.Register(newRowsFactory())
			reg.Register(&pacedFactory{tables: map[string][]string{"bids": lines}})
			i := strings.LastIndex(script, "INSERT INTO")
			explain := explainIn(t, sql.NewSession(sql.WithConnectors(reg)), script[:i], script[i:])
			if has := strings.Contains(explain, "maxPrefilter=["); has == off {
				t.Fatalf("%s (filter off: %v): EXPLAIN shows the filter: %v\n%s", q.name, off, has, explain)
			}
			// The rows by id and price.
			var got []string
			for _, l := range lateRun(t, lines, script, 1)["wide"] {
				got = append(got, l[:strings.LastIndex(l, ",")])
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s (filter off: %v): %d rows, want %d:\n%s", q.name, off, len(got), len(want), diffLines(got, want))
			}
		}
	}
	if len(want) < 30 {
		t.Fatalf("only %d rows at their window's maximum: the test needs more", len(want))
	}
}

// TestMaxPrefilterPlanned checks where the filter of TestMaxPrefilter is
// planned: not where it could drop a row that joins.
func TestMaxPrefilterPlanned(t *testing.T) {
	ddl := `CREATE TABLE bids (id BIGINT, price BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'paced', 'id' = 'bids');
CREATE TABLE hi (id BIGINT, price BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'wide');
`
	maxima := func(agg, window, where string) string {
		return `(SELECT ` + agg + ` AS maxprice, window_end AS wend
  FROM TABLE(` + window + `) ` + where + ` GROUP BY window_start, window_end) M`
	}
	tumble := `TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)`
	q := func(join, m, on string) string {
		return `INSERT INTO hi SELECT B.id, B.price, B.ts FROM bids B ` + join + ` ` + m + ` ON ` + on + `;`
	}
	between := `B.price = M.maxprice AND B.ts BETWEEN M.wend - INTERVAL '10' SECOND AND M.wend`
	for _, c := range []struct {
		name, sql string
		want      bool
	}{
		{"q7", q("JOIN", maxima("MAX(price)", tumble, ""), between), true},
		{"a filter of the rows", q("JOIN", maxima("MAX(price)", tumble, ""), between+" AND B.id > 5"), false},
		{"narrower bounds", q("JOIN", maxima("MAX(price)", tumble, ""), `B.price = M.maxprice AND B.ts > M.wend - INTERVAL '5' SECOND AND B.ts < M.wend`), true},
		{"a left join", q("LEFT JOIN", maxima("MAX(price)", tumble, ""), between), false},
		{"a filter of the maximum's rows", q("JOIN", maxima("MAX(price)", tumble, "WHERE id > 5"), between), false},
		{"MAX with FILTER", q("JOIN", maxima("MAX(price) FILTER (WHERE id > 5)", tumble, ""), between), false},
		{"MIN", q("JOIN", maxima("MIN(price)", tumble, ""), between), false},
		{"HOP", q("JOIN", maxima("MAX(price)", `HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)`, ""), between), false},
		{"another column", q("JOIN", maxima("MAX(price)", tumble, ""), `B.id = M.maxprice AND B.ts BETWEEN M.wend - INTERVAL '10' SECOND AND M.wend`), false},
		{"wider than the window", q("JOIN", maxima("MAX(price)", tumble, ""), `B.price = M.maxprice AND B.ts BETWEEN M.wend - INTERVAL '11' SECOND AND M.wend`), false},
		{"after the window's end", q("JOIN", maxima("MAX(price)", tumble, ""), `B.price = M.maxprice AND B.ts BETWEEN M.wend - INTERVAL '10' SECOND AND M.wend + INTERVAL '1' SECOND`), false},
		{"no lower bound", q("JOIN", maxima("MAX(price)", tumble, ""), `B.price = M.maxprice AND B.ts <= M.wend`), false},
		{"idle sources", "SET 'table.exec.source.idle-timeout' = '1 min';\n" + q("JOIN", maxima("MAX(price)", tumble, ""), between), false},
		{"no sub-plans reused", "SET 'table.optimizer.reuse-sub-plan-enabled' = 'false';\n" + q("JOIN", maxima("MAX(price)", tumble, ""), between), true},
		{"no sources reused", "SET 'table.optimizer.reuse-source-enabled' = 'false';\n" + q("JOIN", maxima("MAX(price)", tumble, ""), between), false},
	} {
		reg := registry(&collectSink{})
		reg.Register(newRowsFactory())
		reg.Register(&pacedFactory{tables: map[string][]string{"bids": nil}})
		script := ddl + c.sql
		i := strings.LastIndex(script, "INSERT INTO")
		plan := explainIn(t, sql.NewSession(sql.WithConnectors(reg)), script[:i], script[i:])
		if got := strings.Contains(plan, "maxPrefilter=["); got != c.want {
			t.Errorf("%s: the filter is planned: %v, want %v\n%s", c.name, got, c.want, plan)
		}
	}
}

package sql_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// The subquery tests run IN, EXISTS, NOT IN, NOT EXISTS, scalar
// subqueries, INTERSECT and EXCEPT over the 'rows' tables of the join
// tests and compare each result's final table with brute force.

// subqueryRow renders an output row of two BIGINT columns.
func subqueryRow(a int64, b *int64) string { return fmt.Sprintf("[%d, %s]", a, nullText(b)) }

// subquerySinks declares a sink of two BIGINT columns per name.
func subquerySinks(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "CREATE TABLE out_%s (a BIGINT, b BIGINT) WITH ('connector' = 'rows', 'id' = '%s');\n", n, n)
	}
	return b.String()
}

// keyIn tells whether k (not NULL) is the key of a row of rs that keep
// accepts.
func keyIn(k int64, rs []testRow, keep func(testRow) bool) bool {
	for _, r := range rs {
		if r.k != nil && *r.k == k && keep(r) {
			return true
		}
	}
	return false
}

// bruteNotIn is x NOT IN (the keys of the rows of rs that keep accepts)
// with SQL's three-valued logic: true if the subquery is empty; otherwise
// unknown (false) for a NULL x, false if some key equals x, unknown if a
// key is NULL, true else.
func bruteNotIn(x *int64, rs []testRow, keep func(testRow) bool) bool {
	var sub []*int64
	for _, r := range rs {
		if keep(r) {
			sub = append(sub, r.k)
		}
	}
	if len(sub) == 0 {
		return true
	}
	if x == nil {
		return false
	}
	hasNull := false
	for _, k := range sub {
		if k == nil {
			hasNull = true
		} else if *k == *x {
			return false
		}
	}
	return !hasNull
}

func all(testRow) bool { return true }

// keyCounts counts the rows of rs per key (NULL under nil).
func keyCounts(rs []testRow) map[int64]int {
	m := map[int64]int{}
	for _, r := range rs {
		if r.k != nil {
			m[*r.k]++
		}
	}
	return m
}

func TestSubqueriesMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	ls, rs := joinTestRows(rng, 70, 8, "l"), joinTestRows(rng, 50, 8, "r")
	// Keys of R whose count is at least 6 at the end: a GROUP BY whose
	// groups pass and leave the HAVING as R's rows come.
	counts := keyCounts(rs)
	big := func(r testRow) bool { return r.k != nil && counts[*r.k] >= 6 }
	small := func(r testRow) bool { return r.k != nil && counts[*r.k] < 6 }
	type tc struct {
		name, query string
		keep        func(l testRow) bool
		// row renders a kept row; nil renders [id, k].
		row func(l testRow) string
	}
	rMax := int64(-1)
	for _, r := range rs {
		if r.id < 20 && r.k != nil && *r.k > rMax {
			rMax = *r.k
		}
	}
	cases := []tc{
		{name: "in", query: "SELECT id, k FROM L WHERE k IN (SELECT k FROM R WHERE id < 30)",
			keep: func(l testRow) bool { return l.k != nil && keyIn(*l.k, rs, func(r testRow) bool { return r.id < 30 }) }},
		{name: "exists", query: "SELECT id, k FROM L WHERE EXISTS (SELECT * FROM R WHERE R.k = L.k AND R.id > L.id) AND id % 3 <> 0",
			keep: func(l testRow) bool {
				return l.id%3 != 0 && l.k != nil && keyIn(*l.k, rs, func(r testRow) bool { return r.id > l.id })
			}},
		{name: "not_exists", query: "SELECT id, k FROM L WHERE NOT EXISTS (SELECT * FROM R WHERE R.k = L.k AND R.id > L.id)",
			keep: func(l testRow) bool {
				return l.k == nil || !keyIn(*l.k, rs, func(r testRow) bool { return r.id > l.id })
			}},
		{name: "not_in", query: "SELECT id, k FROM L WHERE k NOT IN (SELECT k FROM R WHERE k IS NOT NULL AND id < 8)",
			keep: func(l testRow) bool {
				return bruteNotIn(l.k, rs, func(r testRow) bool { return r.k != nil && r.id < 8 })
			}},
		{name: "not_in_empty", query: "SELECT id, k FROM L WHERE k NOT IN (SELECT k FROM R WHERE id < 0)",
			keep: func(l testRow) bool { return true }},
		{name: "in_group_by", query: "SELECT id, k FROM L WHERE k IN (SELECT k FROM R GROUP BY k HAVING COUNT(*) >= 6)",
			keep: func(l testRow) bool { return l.k != nil && keyIn(*l.k, rs, big) }},
		{name: "not_in_group_by", query: "SELECT id, k FROM L WHERE k NOT IN (SELECT k FROM R WHERE k IS NOT NULL GROUP BY k HAVING COUNT(*) < 6)",
			keep: func(l testRow) bool { return bruteNotIn(l.k, rs, small) }},
		{name: "scalar_where", query: "SELECT id, k FROM L WHERE k >= (SELECT MAX(k) FROM R WHERE id < 20) - 2",
			keep: func(l testRow) bool { return l.k != nil && *l.k >= rMax-2 }},
		{name: "scalar_select", query: "SELECT id, (SELECT COUNT(*) FROM R) FROM L WHERE id < 10",
			keep: func(l testRow) bool { return l.id < 10 },
			row:  func(l testRow) string { n := int64(len(rs)); return subqueryRow(l.id, &n) }},
	}
	var names []string
	for _, c := range cases {
		names = append(names, c.name)
	}
	// A GROUP BY of L (a changelog of updates) semi-joined with R.
	lCounts := map[int64]int64{}
	for _, l := range ls {
		if l.k != nil {
			lCounts[*l.k]++
		}
	}
	var wantGrouped []string
	for k, n := range lCounts {
		if keyIn(k, rs, func(r testRow) bool { return r.id < 25 }) {
			wantGrouped = append(wantGrouped, subqueryRow(k, &n))
		}
	}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			f := newRowsFactory()
			f.tables["L"] = rowsTable{lines: rowLines(ls), mode: changelog.InsertOnly}
			f.tables["R"] = rowsTable{lines: rowLines(rs), mode: changelog.InsertOnly}
			script := joinTablesDDL + subquerySinks(append(names, "grouped", "not_in_null")...)
			for _, c := range cases {
				script += fmt.Sprintf("INSERT INTO out_%s %s;\n", c.name, c.query)
			}
			script += "INSERT INTO out_grouped SELECT k, c FROM (SELECT k, COUNT(*) AS c FROM L GROUP BY k) WHERE k IN (SELECT k FROM R WHERE id < 25);\n"
			// R has NULL keys: k NOT IN (SELECT k FROM R) is never true.
			script += "INSERT INTO out_not_in_null SELECT id, k FROM L WHERE k NOT IN (SELECT k FROM R);\n"
			joinRun(t, f, script, p)
			for _, c := range cases {
				var want []string
				for _, l := range ls {
					if !c.keep(l) {
						continue
					}
					if c.row != nil {
						want = append(want, c.row(l))
					} else {
						want = append(want, subqueryRow(l.id, l.k))
					}
				}
				joinSameTable(t, c.name, joinFinalTable(t, f.out[c.name]), want)
			}
			joinSameTable(t, "grouped", joinFinalTable(t, f.out["grouped"]), wantGrouped)
			if got := joinFinalTable(t, f.out["not_in_null"]); len(got) != 0 {
				t.Errorf("not_in_null: %d rows, want none: %v", len(got), got)
			}
		})
	}
}

// TestSubqueriesOfChangelogs runs semi and anti joins whose inputs are
// retract changelogs (rows deleted and updated to other keys), and a NOT
// IN whose subquery's NULL key comes and goes.
func TestSubqueriesOfChangelogs(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	changes := func(rows []testRow, keys int) (lines []string, final []testRow) {
		for _, r := range rows {
			lines = append(lines, "+I|"+r.line())
		}
		for i, r := range rows {
			switch i % 4 {
			case 0:
				lines = append(lines, "-D|"+r.line())
			case 1:
				n := r
				k := int64(rng.IntN(keys))
				n.k = &k
				lines = append(lines, "-U|"+r.line(), "+U|"+n.line())
				final = append(final, n)
			default:
				final = append(final, r)
			}
		}
		return lines, final
	}
	ls, rs := joinTestRows(rng, 60, 10, "l"), joinTestRows(rng, 40, 10, "r")
	lLines, lFinal := changes(ls, 10)
	rLines, rFinal := changes(rs, 10)
	nonNull := func(r testRow) bool { return r.k != nil }
	cases := []struct {
		name, query string
		keep        func(l testRow) bool
	}{
		{"in", "SELECT id, k FROM L WHERE k IN (SELECT k FROM R)",
			func(l testRow) bool { return l.k != nil && keyIn(*l.k, rFinal, all) }},
		{"not_exists", "SELECT id, k FROM L WHERE NOT EXISTS (SELECT * FROM R WHERE R.k = L.k AND R.s <> L.s)",
			func(l testRow) bool { return l.k == nil || !keyIn(*l.k, rFinal, all) }},
		{"not_in", "SELECT id, k FROM L WHERE k NOT IN (SELECT k FROM R WHERE k IS NOT NULL)",
			func(l testRow) bool { return bruteNotIn(l.k, rFinal, nonNull) }},
		// The subquery's only NULL key is deleted again: the rows come
		// back.
		{"not_in_null", "SELECT id, k FROM L WHERE k NOT IN (SELECT k FROM R WHERE k IS NOT NULL OR id = 0)",
			func(l testRow) bool {
				return bruteNotIn(l.k, rFinal, func(r testRow) bool { return r.k != nil || r.id == 0 })
			}},
	}
	ddl := `
CREATE TABLE L (id BIGINT, k BIGINT, s STRING, ts TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'L');
CREATE TABLE R (id BIGINT, k INT, s STRING, ts TIMESTAMP(3)) WITH ('connector' = 'rows', 'id' = 'R');
`
	var names []string
	for _, c := range cases {
		names = append(names, c.name)
	}
	// Row 0 of R is deleted (i % 4 == 0), with a NULL key for the
	// not_in_null case.
	rs[0].k = nil
	rLines[0] = "+I|" + rs[0].line()
	rLines[len(rs)] = "-D|" + rs[0].line()
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			f := newRowsFactory()
			f.tables["L"] = rowsTable{lines: lLines, mode: changelog.Retract}
			f.tables["R"] = rowsTable{lines: rLines, mode: changelog.Retract}
			script := ddl + subquerySinks(names...)
			for _, c := range cases {
				script += fmt.Sprintf("INSERT INTO out_%s %s;\n", c.name, c.query)
			}
			joinRun(t, f, script, p)
			for _, c := range cases {
				var want []string
				for _, l := range lFinal {
					if c.keep(l) {
						want = append(want, subqueryRow(l.id, l.k))
					}
				}
				joinSameTable(t, c.name, joinFinalTable(t, f.out[c.name]), want)
			}
		})
	}
}

// TestIntersectExcept compares INTERSECT and EXCEPT, with and without ALL,
// with multisets computed by brute force; NULL keys are equal, as in set
// operations.
func TestIntersectExcept(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	ls, rs := joinTestRows(rng, 80, 6, "l"), joinTestRows(rng, 60, 6, "r")
	const null = int64(-1)
	count := func(rows []testRow, keep func(testRow) bool) map[int64]int {
		m := map[int64]int{}
		for _, r := range rows {
			if !keep(r) {
				continue
			}
			k := null
			if r.k != nil {
				k = *r.k
			}
			m[k]++
		}
		return m
	}
	render := func(k int64) string {
		if k == null {
			return "[null]"
		}
		return fmt.Sprintf("[%d]", k)
	}
	lc := count(ls, all)
	rc := count(rs, func(r testRow) bool { return r.id < 8 })
	var intersect, intersectAll, except, exceptAll []string
	for k, n := range lc {
		m := rc[k]
		if m > 0 {
			intersect = append(intersect, render(k))
		} else {
			except = append(except, render(k))
		}
		for i := 0; i < min(n, m); i++ {
			intersectAll = append(intersectAll, render(k))
		}
		for i := 0; i < n-m; i++ {
			exceptAll = append(exceptAll, render(k))
		}
	}
	cases := []struct {
		name, op string
		want     []string
	}{
		{"intersect", "INTERSECT", intersect}, {"intersect_all", "INTERSECT ALL", intersectAll},
		{"except", "EXCEPT", except}, {"except_all", "EXCEPT ALL", exceptAll},
	}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			f := newRowsFactory()
			f.tables["L"] = rowsTable{lines: rowLines(ls), mode: changelog.InsertOnly}
			f.tables["R"] = rowsTable{lines: rowLines(rs), mode: changelog.InsertOnly}
			script := joinTablesDDL
			for _, c := range cases {
				script += fmt.Sprintf("CREATE TABLE out_%s (k BIGINT) WITH ('connector' = 'rows', 'id' = '%s');\n", c.name, c.name)
				script += fmt.Sprintf("INSERT INTO out_%s SELECT k FROM L %s SELECT k FROM R WHERE id < 8;\n", c.name, c.op)
			}
			joinRun(t, f, script, p)
			for _, c := range cases {
				joinSameTable(t, c.name, joinFinalTable(t, f.out[c.name]), c.want)
			}
		})
	}
}

// TestSubqueryJoinsResumeFromCheckpoint kills a job of a semi join and a
// NOT IN (two anti joins) whose subqueries are GROUP BYs whose groups come
// and go (the NOT IN's over its own table), and restarts it from its last
// checkpoint: the exactly-once filesystem tables hold the results of a run
// without failures.
func TestSubqueryJoinsResumeFromCheckpoint(t *testing.T) {
	out := t.TempDir()
	failOnce.seen.Store(0)
	failOnce.fired.Store(false)
	failOnce.at.Store(1000)
	seq := `WITH ('connector' = 'datagen', 'rows-per-second' = '20000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000')`
	groups := "SELECT c FROM (SELECT id %% 50 AS c, COUNT(*) AS n FROM %s GROUP BY id %% 50) WHERE n "
	_, env := runWith(t, fmt.Sprintf(`
CREATE FUNCTION fail_once AS 'test.FailOnce';
CREATE TABLE a (id BIGINT) %s;
CREATE TABLE b (id BIGINT) %s;
CREATE TABLE semi (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/semi', 'format' = 'debezium-json');
CREATE TABLE anti (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/anti', 'format' = 'debezium-json');
INSERT INTO semi SELECT fail_once(id) FROM a WHERE id %% 100 IN (%s>= 30);
INSERT INTO anti SELECT id FROM a WHERE id %% 100 NOT IN (%s< 60);`, seq, seq, out, out, fmt.Sprintf(groups, "b"), fmt.Sprintf(groups, "a")),
		eddy.WithParallelism(2), eddy.WithCheckpointing(5*time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()), eddy.WithRestartStrategy(eddy.FixedDelayRestart(2, 10*time.Millisecond)))
	if !failOnce.fired.Load() || env.Restarts() != 1 {
		t.Fatalf("the injected failure fired %v, the job restarted %d times; want one failure and one restart", failOnce.fired.Load(), env.Restarts())
	}
	// Every group ends with 60 rows: the semi join keeps the ids
	// whose id % 100 is a group (below 50), the NOT IN every id (its
	// subquery ends empty).
	for _, c := range []struct {
		table string
		keep  func(id int) bool
	}{
		{"semi", func(id int) bool { return id%100 < 50 }},
		{"anti", func(int) bool { return true }},
	} {
		got, _ := runWith(t, fmt.Sprintf(`
CREATE TABLE back (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/%s', 'format' = 'debezium-json');
CREATE TABLE seen (id BIGINT) WITH ('connector' = 'collect');
INSERT INTO seen SELECT * FROM back;`, out, c.table), eddy.WithParallelism(1))
		// The part files are read in no particular order: count the
		// changes of each row.
		net := map[string]int{}
		for _, l := range got {
			switch l[:2] {
			case "+I", "+U":
				net[l[2:]]++
			default:
				net[l[2:]]--
			}
		}
		for id := 1; id <= 3000; id++ {
			want := 0
			if c.keep(id) {
				want = 1
			}
			if n := net[fmt.Sprintf("[%d]", id)]; n != want {
				t.Fatalf("%s: id %d is in the table %d times, want %d (%d changes in all)", c.table, id, n, want, len(got))
			}
		}
		// How often rows came and went depends on how the two sources
		// interleave.
		t.Logf("%s: %d changes for %d rows", c.table, len(got), len(net))
	}
}

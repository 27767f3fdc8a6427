package sql_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// windowDistinctDDL is 4000 rows of 4 keys over 20 s of event time, each
// row up to 1 s out of order (the watermark allows 2 s: none is late); v
// is one of 301 values, or NULL for one row in ten.
const windowDistinctDDL = `
CREATE TABLE ev (id BIGINT, k INT, v BIGINT,
    ts AS CAST(TO_TIMESTAMP_LTZ(id * 5 - MOD(id * 7919, 1000), 3) AS TIMESTAMP(3)),
    WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'datagen', 'number-of-rows' = '4000',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4000',
        'fields.k.min' = '0', 'fields.k.max' = '3',
        'fields.v.min' = '0', 'fields.v.max' = '300', 'fields.v.null-rate' = '0.1');
`

// windowDistinctCalls are the calls of every window of the test, and its
// columns: values by word (BIGINT) and by key (VARCHAR), a FILTER, and a
// plain call beside them.
const windowDistinctCalls = `COUNT(DISTINCT v), COUNT(DISTINCT v) FILTER (WHERE MOD(id, 3) = 0), SUM(DISTINCT v),
  COUNT(DISTINCT CAST(v AS VARCHAR)), COUNT(*)`

// TestWindowDistinctMatchesBruteForce checks COUNT(DISTINCT) and
// SUM(DISTINCT) in TUMBLE, HOP, CUMULATE and SESSION windows against the
// distinct values of each window computed in Go, at parallelism 1 and 2,
// each run once whole and once stopped with a savepoint in the middle of
// its input (windows open, panes and sessions holding values) and
// restored.
func TestWindowDistinctMatchesBruteForce(t *testing.T) {
	type row struct {
		id, k, v int64
		null     bool
	}
	var rows []row
	for _, l := range run(t, windowDistinctDDL+`
CREATE TABLE out (id BIGINT, k INT, v BIGINT) WITH ('connector' = 'collect');
INSERT INTO out SELECT id, k, v FROM ev;
`, 1) {
		f := strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "+I["), "]"), ", ")
		var r row
		fmt.Sscan(f[0], &r.id)
		fmt.Sscan(f[1], &r.k)
		if f[2] == "null" {
			r.null = true
		} else {
			fmt.Sscan(f[2], &r.v)
		}
		rows = append(rows, r)
	}
	if len(rows) != 4000 {
		t.Fatalf("%d rows, want 4000", len(rows))
	}
	ts := func(id int64) int64 { return id*5 - id*7919%1000 }
	floor := func(x, d int64) int64 {
		q := x / d
		if x%d != 0 && x < 0 {
			q--
		}
		return q * d
	}

	// The windows of each kind: per key and window, the rows.
	type win struct {
		kind      string
		k, ws, we int64
	}
	members := map[win][]row{}
	for _, r := range rows {
		t := ts(r.id)
		ws := floor(t, 2000)
		members[win{"tumble", r.k, ws, ws + 2000}] = append(members[win{"tumble", r.k, ws, ws + 2000}], r)
		for j := int64(0); j < 3; j++ {
			ws := floor(t, 1000) - j*1000
			w := win{"hop", r.k, ws, ws + 3000}
			members[w] = append(members[w], r)
		}
		base := floor(t, 4000)
		for we := base + 1000; we <= base+4000; we += 1000 {
			if we > t {
				w := win{"cumulate", r.k, base, we}
				members[w] = append(members[w], r)
			}
		}
	}
	// Sessions with a gap of 15 ms: a row's session is [ts, ts + 15),
	// and sessions that overlap or touch merge.
	const gap = 15
	byKey := map[int64][]row{}
	for _, r := range rows {
		byKey[r.k] = append(byKey[r.k], r)
	}
	sessions := 0
	for k, rs := range byKey {
		slices.SortFunc(rs, func(a, b row) int { return int(ts(a.id) - ts(b.id)) })
		for i := 0; i < len(rs); {
			j, end := i+1, ts(rs[i].id)+gap
			for j < len(rs) && ts(rs[j].id) <= end {
				end = max(end, ts(rs[j].id)+gap)
				j++
			}
			members[win{"session", k, ts(rs[i].id), end}] = rs[i:j]
			sessions++
			i = j
		}
	}
	merged := 0
	for w, rs := range members {
		if w.kind == "session" && len(rs) > 1 {
			merged++
		}
	}
	if merged < 100 {
		t.Fatalf("%d sessions of more than one row, of %d: the test wants sessions that merge", merged, sessions)
	}

	var want []string
	for w, rs := range members {
		all, filtered := map[int64]bool{}, map[int64]bool{}
		var sum int64
		for _, r := range rs {
			if r.null {
				continue
			}
			if !all[r.v] {
				sum += r.v
			}
			all[r.v] = true
			if r.id%3 == 0 {
				filtered[r.v] = true
			}
		}
		s := "null"
		if len(all) > 0 {
			s = fmt.Sprint(sum)
		}
		want = append(want, fmt.Sprintf("[%s, %d, %s, %s, %d, %d, %s, %d, %d]", w.kind, w.k, flinkTimestamp(w.ws), flinkTimestamp(w.we), len(all), len(filtered), s, len(all), len(rs)))
	}
	slices.Sort(want)

	script := windowDistinctDDL + `
CREATE TABLE out (kind VARCHAR, k INT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, n3 BIGINT, s BIGINT, ns BIGINT, c BIGINT) WITH ('connector' = 'golden');
INSERT INTO out
SELECT 'tumble', k, window_start, window_end, ` + windowDistinctCalls + `
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end
UNION ALL
SELECT 'hop', k, window_start, window_end, ` + windowDistinctCalls + `
FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) GROUP BY k, window_start, window_end
UNION ALL
SELECT 'cumulate', k, window_start, window_end, ` + windowDistinctCalls + `
FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '4' SECOND)) GROUP BY k, window_start, window_end
UNION ALL
SELECT 'session', k, window_start, window_end, ` + windowDistinctCalls + `
FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '0.015' SECOND)) GROUP BY k, window_start, window_end;
`
	for _, p := range []int{1, 2} {
		for _, stopAfter := range []int64{0, 700} {
			got, err := goldenRun(t, script, p, stopAfter)
			if err != nil {
				t.Fatalf("parallelism %d, stop after %d: %v", p, stopAfter, err)
			}
			if diff := diffLines(got, want); diff != "" {
				t.Errorf("parallelism %d, stopped with a savepoint after %d rows per reader (0: not stopped): got %d rows, want %d (got, want):\n%s", p, stopAfter, len(got), len(want), diff)
			}
		}
	}
}

// flinkTimestamp formats the TIMESTAMP(3) of Unix milliseconds ms as
// Flink prints it (Java's LocalDateTime: the seconds only if they or the
// milliseconds are not zero).
func flinkTimestamp(ms int64) string {
	tm := time.UnixMilli(ms).UTC()
	s := tm.Format("2006-01-02T15:04")
	frac := tm.Nanosecond() / 1e6
	if tm.Second() != 0 || frac != 0 {
		s += fmt.Sprintf(":%02d", tm.Second())
	}
	if frac != 0 {
		s += fmt.Sprintf(".%03d", frac)
	}
	return s
}

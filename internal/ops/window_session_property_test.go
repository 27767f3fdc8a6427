package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/ops/opstest"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/window"
)

// TestSessionWindowMatchesBruteForce does for session windows what
// TestPaneWindowMatchesBruteForce does for pane windows. The brute force
// keeps each key's sessions as intervals: a record's [ts,ts+gap) merges
// with every session it overlaps or touches; if the merged session's
// end-1+lateness is at or behind the watermark, the record is late and
// nothing changes; otherwise the session is kept, and fires at once if its
// end-1 is at or behind the watermark. A watermark fires the sessions whose
// end-1 it passes, then forgets those whose lateness it passes.
func TestSessionWindowMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(20260102, 1))
	for run := range 200 {
		gap := 1 + rng.Int64N(8)
		var lateness int64
		if run%2 == 1 {
			lateness = 1 + rng.Int64N(10)
		}
		evs := randomEvents(rng)
		check := func(evs []event) string { return compareSessionWindow(gap, lateness, evs) }
		if diff := check(evs); diff != "" {
			evs = shrink(evs, func(evs []event) bool { return check(evs) != "" })
			spec := fmt.Sprintf("assigner=session gap=%d lateness=%d", gap, lateness)
			t.Fatalf("run %d, %s: the operator disagrees with the brute force on\n\n%s\n%s",
				run, spec, scriptOf(spec, evs), check(evs))
		}
	}
}

func bruteForceSessions(gap, lateness int64, evs []event) (out []result, late int64) {
	type session struct{ start, end, count int64 }
	sessions := map[string][]session{}
	wm := int64(math.MinInt64)
	emit := func(step int, key string, s session) {
		out = append(out, result{step: step, ts: s.end - 1, key: key,
			win: window.Window{Start: s.start, End: s.end}, count: s.count})
	}
	advance := func(step int, to int64) {
		if to <= wm {
			return
		}
		for key, ss := range sessions {
			keep := ss[:0]
			for _, s := range ss {
				if s.end-1 > wm && s.end-1 <= to {
					emit(step, key, s)
				}
				if s.end-1+lateness > to {
					keep = append(keep, s)
				}
			}
			sessions[key] = keep
		}
		wm = to
	}
	for i, e := range evs {
		if e.wm {
			advance(i, e.ts)
			continue
		}
		m := session{e.ts, e.ts + gap, 1}
		var rest []session
		for _, s := range sessions[e.key] {
			if s.start <= m.end && s.end >= m.start {
				m = session{min(m.start, s.start), max(m.end, s.end), m.count + s.count}
			} else {
				rest = append(rest, s)
			}
		}
		if m.end-1+lateness <= wm {
			late++
			continue
		}
		sessions[e.key] = append(rest, m)
		if m.end-1 <= wm {
			emit(i, e.key, m)
		}
	}
	advance(len(evs), math.MaxInt64)
	return out, late
}

func runSessionWindow(gap, lateness int64, evs []event) ([]result, int64, error) {
	h := opstest.New("session")
	step := 0
	col := &collector{step: &step}
	outs := map[string]any{"": runtime.Input[result](col)}
	logic := WindowLogic[string, opstest.Record, int64, result]{
		Create: func() int64 { return 0 },
		Add:    func(acc int64, _ opstest.Record) int64 { return acc + 1 },
		Merge:  func(a, b int64) int64 { return a + b },
		Fire: func(key string, w window.Window, accs []int64, emit func(result)) error {
			var n int64
			for _, a := range accs {
				n += a
			}
			emit(result{key: key, win: w, count: n})
			return nil
		},
	}
	opts := WindowOptions{Assigner: window.Session(time.Duration(gap) * time.Millisecond), AllowedLateness: lateness}
	op, err := NewSessionWindow(h.Context(), recordKey(), h.Backend, opts, logic, outs)
	if err != nil {
		return nil, 0, err
	}
	b := runtime.NewBatch[opstest.Record](1)
	for i, e := range evs {
		step = i
		if e.wm {
			err = op.ProcessWatermark(e.ts)
		} else {
			b.Reset()
			b.Append(opstest.Record{Key: e.key, Val: e.ts}, e.ts)
			err = op.ProcessBatch(b)
		}
		if err != nil {
			return nil, 0, err
		}
	}
	step = len(evs)
	if err := op.ProcessWatermark(runtime.MaxWatermark); err != nil {
		return nil, 0, err
	}
	if err := op.EndInput(); err != nil {
		return nil, 0, err
	}
	return col.out, h.LateRecords(), nil
}

func compareSessionWindow(gap, lateness int64, evs []event) string {
	got, gotLate, err := runSessionWindow(gap, lateness, evs)
	if err != nil {
		return "error: " + err.Error()
	}
	want, wantLate := bruteForceSessions(gap, lateness, evs)
	return diffResults(got, want, gotLate, wantLate)
}

// diffResults describes how two multisets of results and late counts
// differ, or returns "".
func diffResults(got, want []result, gotLate, wantLate int64) string {
	lines := func(rs []result) []string {
		var s []string
		for _, r := range rs {
			s = append(s, r.String())
		}
		slices.Sort(s)
		return s
	}
	g, w := lines(got), lines(want)
	var diff []string
	for _, l := range w {
		if i := slices.Index(g, l); i >= 0 {
			g = slices.Delete(g, i, i+1)
		} else {
			diff = append(diff, "missing    "+l)
		}
	}
	for _, l := range g {
		diff = append(diff, "unexpected "+l)
	}
	if gotLate != wantLate {
		diff = append(diff, fmt.Sprintf("late records: got %d, want %d", gotLate, wantLate))
	}
	return strings.Join(diff, "\n")
}

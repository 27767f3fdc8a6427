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

// TestPaneWindowMatchesBruteForce runs the pane window operator, counting
// per key, on random streams with bounded disorder and random watermarks,
// and compares what it emits with a brute-force evaluation of the
// semantics: every window is computed by definition and fires at the first
// watermark >= end-1, with its count and the timestamp end-1. A record
// counts in each of its windows whose end-1+lateness is above the
// watermark, and fires again at once those of them that have fired; it is
// late if it has no such window. Records in no window (the gaps of sliding
// windows with size < slide) are counted as window gap records, never as
// late. Each run uses no allowed lateness, or a random one.
//
// A failure prints a shrunk script in the syntax of testdata.
func TestPaneWindowMatchesBruteForce(t *testing.T) {
	for _, kind := range []window.Kind{window.TumblingKind, window.SlidingKind, window.CumulateKind} {
		t.Run(kindName(kind), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(20260101, uint64(kind)))
			for run := range 150 {
				spec := randomWindowSpec(rng, kind)
				if run%2 == 1 {
					spec.lateness = 1 + rng.Int64N(10)
				}
				events := randomEvents(rng)
				if diff := comparePaneWindow(spec, events); diff != "" {
					events = shrink(events, func(evs []event) bool { return comparePaneWindow(spec, evs) != "" })
					t.Fatalf("run %d, %s: the operator disagrees with the brute force on\n\n%s\n%s",
						run, spec, scriptOf(spec.String(), events), comparePaneWindow(spec, events))
				}
			}
		})
	}
}

func kindName(k window.Kind) string {
	switch k {
	case window.TumblingKind:
		return "tumbling"
	case window.SlidingKind:
		return "sliding"
	}
	return "cumulate"
}

// windowSpec is a tumbling, sliding or cumulate assigner in milliseconds.
type windowSpec struct {
	kind        window.Kind
	size, slide int64 // slide is the step of cumulate windows
	lateness    int64
}

func (s windowSpec) String() string {
	l := ""
	if s.lateness > 0 {
		l = fmt.Sprintf(" lateness=%d", s.lateness)
	}
	switch s.kind {
	case window.TumblingKind:
		return fmt.Sprintf("assigner=tumbling size=%d%s", s.size, l)
	case window.SlidingKind:
		return fmt.Sprintf("assigner=sliding size=%d slide=%d%s", s.size, s.slide, l)
	}
	return fmt.Sprintf("assigner=cumulate step=%d size=%d%s", s.slide, s.size, l)
}

func (s windowSpec) assigner() window.Assigner {
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	switch s.kind {
	case window.TumblingKind:
		return window.Tumbling(ms(s.size))
	case window.SlidingKind:
		return window.Sliding(ms(s.size), ms(s.slide))
	}
	return window.Cumulate(ms(s.slide), ms(s.size))
}

// windowsOf lists the windows that contain ts, by definition.
func (s windowSpec) windowsOf(ts int64) []window.Window {
	floor := func(x, m int64) int64 { return x - ((x%m)+m)%m }
	var ws []window.Window
	switch s.kind {
	case window.TumblingKind:
		st := floor(ts, s.size)
		ws = append(ws, window.Window{Start: st, End: st + s.size})
	case window.SlidingKind:
		for st := floor(ts, s.slide); st > ts-s.size; st -= s.slide {
			ws = append(ws, window.Window{Start: st, End: st + s.size})
		}
	case window.CumulateKind:
		st := floor(ts, s.size)
		for e := st + s.slide; e <= st+s.size; e += s.slide {
			if ts < e {
				ws = append(ws, window.Window{Start: st, End: e})
			}
		}
	}
	return ws
}

func randomWindowSpec(rng *rand.Rand, kind window.Kind) windowSpec {
	switch kind {
	case window.TumblingKind:
		return windowSpec{kind: kind, size: 1 + rng.Int64N(12)}
	case window.SlidingKind:
		// Sizes that are multiples of the slide, that are not, and that
		// are smaller (gaps between windows).
		return windowSpec{kind: kind, size: 1 + rng.Int64N(15), slide: 1 + rng.Int64N(8)}
	}
	step := 1 + rng.Int64N(5)
	return windowSpec{kind: kind, size: step * (1 + rng.Int64N(4)), slide: step}
}

// event is a record (key, ts) or, if wm, a watermark ts.
type event struct {
	wm  bool
	key string
	ts  int64
}

// randomEvents returns about 150 records of 4 keys whose timestamps lag the
// highest timestamp so far by at most a random bound, and watermarks that
// mostly trail that bound but sometimes overtake it, so that some records
// are late.
func randomEvents(rng *rand.Rand) []event {
	disorder := rng.Int64N(12)
	n := 50 + rng.IntN(150)
	var evs []event
	cursor, maxTS := rng.Int64N(40)-20, int64(math.MinInt64)
	for range n {
		cursor += rng.Int64N(4)
		ts := cursor - rng.Int64N(disorder+1)
		maxTS = max(maxTS, ts)
		evs = append(evs, event{key: string(rune('a' + rng.IntN(4))), ts: ts})
		if rng.IntN(6) == 0 {
			evs = append(evs, event{wm: true, ts: maxTS - rng.Int64N(disorder+6) + 3})
		}
	}
	return evs
}

// result is one emitted window result, with the number of the step (event)
// that emitted it; len(events) is the end of input.
type result struct {
	step  int
	ts    int64
	key   string
	win   window.Window
	count int64
}

func (r result) String() string {
	return fmt.Sprintf("step %d: emit ts=%d: %s [%d,%d) %d", r.step, r.ts, r.key, r.win.Start, r.win.End, r.count)
}

// bruteForce evaluates the events by the semantics.
func bruteForce(spec windowSpec, evs []event) (out []result, late, gaps int64) {
	type kw struct {
		key string
		win window.Window
	}
	counts := map[kw]int64{} // windows with data, until their lateness ends
	fired := map[kw]bool{}
	wm := int64(math.MinInt64)
	emit := func(step int, k kw) {
		out = append(out, result{step: step, ts: k.win.End - 1, key: k.key, win: k.win, count: counts[k]})
	}
	advance := func(step int, to int64) {
		if to <= wm {
			return
		}
		wm = to
		for k := range counts {
			if k.win.End-1 <= wm && !fired[k] {
				emit(step, k)
				fired[k] = true
			}
		}
		for k := range counts {
			if k.win.End-1+spec.lateness <= wm {
				delete(counts, k)
				delete(fired, k)
			}
		}
	}
	for i, e := range evs {
		if e.wm {
			advance(i, e.ts)
			continue
		}
		ws := spec.windowsOf(e.ts)
		live := false
		for _, w := range ws {
			if w.End-1+spec.lateness > wm {
				k := kw{e.key, w}
				counts[k]++
				live = true
				if w.End-1 <= wm {
					emit(i, k)
					fired[k] = true
				}
			}
		}
		switch {
		case len(ws) == 0:
			gaps++
		case !live:
			late++
		}
	}
	advance(len(evs), math.MaxInt64)
	return out, late, gaps
}

// collector is the main output of the operator in the property test.
type collector struct {
	step *int
	out  []result
}

func (c *collector) ProcessBatch(b *runtime.Batch[result]) error {
	for i, r := range b.Data {
		r.step, r.ts = *c.step, b.TS[i]
		c.out = append(c.out, r)
	}
	return nil
}
func (c *collector) ProcessWatermark(int64) error { return nil }
func (c *collector) EndInput() error              { return nil }

// runPaneWindow runs the operator on the events.
func runPaneWindow(spec windowSpec, evs []event) (out []result, late, gaps int64, err error) {
	h := opstest.New("window")
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
	opts := WindowOptions{Assigner: spec.assigner(), AllowedLateness: spec.lateness}
	op, err := NewPaneWindow(h.Context(), recordKey(), h.Backend, opts, logic, outs)
	if err != nil {
		return nil, 0, 0, err
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
			return nil, 0, 0, err
		}
	}
	step = len(evs)
	if err := op.ProcessWatermark(runtime.MaxWatermark); err != nil {
		return nil, 0, 0, err
	}
	if err := op.EndInput(); err != nil {
		return nil, 0, 0, err
	}
	return col.out, h.LateRecords(), h.WindowGapRecords(), nil
}

// comparePaneWindow returns how the operator and the brute force differ on
// the events, or "".
func comparePaneWindow(spec windowSpec, evs []event) string {
	got, gotLate, gotGaps, err := runPaneWindow(spec, evs)
	if err != nil {
		return "error: " + err.Error()
	}
	want, wantLate, wantGaps := bruteForce(spec, evs)
	d := diffResults(got, want, gotLate, wantLate)
	if gotGaps != wantGaps {
		d = strings.TrimPrefix(d+fmt.Sprintf("\nwindow gap records: got %d, want %d", gotGaps, wantGaps), "\n")
	}
	return d
}

// shrink removes events, chunks first, as long as the failure stays.
func shrink(evs []event, fails func([]event) bool) []event {
	for chunk := len(evs) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(evs); {
			cand := slices.Concat(evs[:i], evs[i+chunk:])
			if fails(cand) {
				evs = cand
			} else {
				i += chunk
			}
		}
	}
	return evs
}

// scriptOf renders the events as a testdata case of a new-window command
// with the arguments args.
func scriptOf(args string, evs []event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "new-window %s\n----\nok\n\ninput\n", args)
	for _, e := range evs {
		if e.wm {
			fmt.Fprintf(&b, "watermark %d\n", e.ts)
		} else {
			fmt.Fprintf(&b, "%s %d\n", e.key, e.ts)
		}
	}
	b.WriteString("end\n----\n")
	return b.String()
}

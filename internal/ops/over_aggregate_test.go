package ops

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops/opstest"
	"github.com/eddystream/eddy/internal/runtime"
)

// insertsOf feeds the records of the harness to an operator of changes, as
// insertions.
type insertsOf struct {
	runtime.Input[changelog.Change[opstest.Record]]
}

func (a insertsOf) ProcessBatch(b *runtime.Batch[opstest.Record]) error {
	out := runtime.NewBatch[changelog.Change[opstest.Record]](b.Len())
	for i, r := range b.Data {
		out.Append(changelog.InsertOf(r), b.TS[i])
	}
	return a.Input.ProcessBatch(out)
}

// newOverHarness returns a harness of an OVER aggregation of the records'
// values (their count and sum) over the frame given, partitioned by key.
// It emits "key=value n=N sum=S".
func newOverHarness(t *testing.T, rows bool, preceding int64, eventTime bool) *opstest.Harness {
	t.Helper()
	h := opstest.New("over")
	opstest.Output[changelog.Change[string]](h, "", func(c changelog.Change[string]) string { return c.Kind.String() + " " + c.Row })
	spec, err := NewKeySpec(func(c changelog.Change[opstest.Record]) string { return c.Row.Key })
	if err != nil {
		t.Fatal(err)
	}
	logic := OverAggLogic[opstest.Record, [2]int64, [2]int64, string]{
		Create: func() [2]int64 { return [2]int64{} },
		Add: func(acc [2]int64, r opstest.Record, _ agg.Views) [2]int64 {
			return [2]int64{acc[0] + 1, acc[1] + r.Val}
		},
		Retract: func(acc [2]int64, r opstest.Record, _ agg.Views) [2]int64 {
			return [2]int64{acc[0] - 1, acc[1] - r.Val}
		},
		Result: func(acc [2]int64) [2]int64 { return acc },
		Output: func(r opstest.Record, v [2]int64) string {
			return fmt.Sprintf("%s=%d n=%d sum=%d", r.Key, r.Val, v[0], v[1])
		},
		Rows:      rows,
		Preceding: preceding,
		EventTime: eventTime,
	}
	o, err := NewOverAgg(h.Context(), spec, h.Backend, logic, h.Outputs())
	if err != nil {
		t.Fatal(err)
	}
	if o.timers != nil {
		h.Timers = o.timers.Len
	}
	if err := h.Start(&runtime.Built{Inputs: []any{runtime.Input[opstest.Record](insertsOf{o})}}); err != nil {
		t.Fatal(err)
	}
	return h
}

// overStep is a script step and what the operator must do.
type overStep struct{ script, want string }

func runOverSteps(t *testing.T, h *opstest.Harness, steps []overStep) {
	t.Helper()
	for i, s := range steps {
		got := h.Run(s.script, false)
		if want := strings.TrimLeft(s.want, "\n"); got != want {
			t.Fatalf("step %d:\n%s\ngot:\n%s\nwant:\n%s", i, s.script, got, want)
		}
	}
}

// TestOverAggEventTimeRange checks an event-time RANGE frame of 10 ms: rows
// wait for the watermark, rows of one time see each other, a late row is
// dropped and counted, rows leave the frame, and a partition's state goes
// when its cleanup timer finds no row after its last.
func TestOverAggEventTimeRange(t *testing.T) {
	h := newOverHarness(t, false, 10, true)
	runOverSteps(t, h, []overStep{
		{`
a 5
a 3
b 4
a 5 v=7
watermark 4`, `
emit ts=3: +I a=3 n=1 sum=3
emit ts=4: +I b=4 n=1 sum=4
watermark 4
`},
		// Behind the watermark: late.
		{"a 4", "late-records 1\n"},
		{"watermark 5", `
emit ts=5: +I a=5 n=3 sum=15
emit ts=5: +I a=7 n=3 sum=15
watermark 5
`},
		// a keeps 3 rows and its cleanup timer at 16, b 1 row and its
		// timer at 15.
		{"state", "state: over-acc=2 over-frame=4 over-pending=0 timers=2\n"},
		// b's cleanup timer clears b; a's row at 20 waits.
		{"a 20 v=1\nwatermark 15", "watermark 15\n"},
		{"state", "state: over-acc=1 over-frame=3 over-pending=1 timers=2\n"},
		// a's cleanup at 16 clears a (its rows left the frame of 20).
		{"watermark 20", "emit ts=20: +I a=1 n=1 sum=1\nwatermark 20\n"},
		{"a 25 v=2\na 31 v=3\nwatermark 31", `
emit ts=25: +I a=2 n=2 sum=3
emit ts=31: +I a=3 n=2 sum=5
watermark 31
`},
		{"end", "watermark max\nend\n"},
		{"state", "state: over-acc=0 over-frame=0 over-pending=0 timers=0\n"},
	})
}

// TestOverAggEventTimeRows checks an event-time ROWS frame of 1 row before
// the current one: rows of one time go in arrival order, each sees the
// row before it.
func TestOverAggEventTimeRows(t *testing.T) {
	h := newOverHarness(t, true, 1, true)
	runOverSteps(t, h, []overStep{
		{`
a 7 v=1
a 5 v=2
a 7 v=3
a 6 v=4
watermark 10`, `
emit ts=5: +I a=2 n=1 sum=2
emit ts=6: +I a=4 n=2 sum=6
emit ts=7: +I a=1 n=2 sum=5
emit ts=7: +I a=3 n=2 sum=4
watermark 10
`},
		// The frame keeps its last rows: a ROWS frame has no cleanup.
		{"state", "state: over-acc=1 over-frame=2 over-pending=0 timers=0\n"},
		{"a 10 v=9\na 11 v=9", "late-records 1\n"},
		{"end", "emit ts=11: +I a=9 n=2 sum=12\nwatermark max\nend\n"},
	})
}

// TestOverAggProcessingTimeRange checks a processing-time RANGE frame of 10
// ms: rows go out when they arrive, leave the frame 10 ms later, and the
// partition's state goes with its cleanup timer.
func TestOverAggProcessingTimeRange(t *testing.T) {
	h := newOverHarness(t, false, 10, false)
	runOverSteps(t, h, []overStep{
		{"a - v=1", "emit ts=none: +I a=1 n=1 sum=1\n"},
		{"advance-processing-time 5\na - v=2", "emit ts=none: +I a=2 n=2 sum=3\n"},
		{"advance-processing-time 12\na - v=4", "emit ts=none: +I a=4 n=2 sum=6\n"},
		{"advance-processing-time 22", "ok\n"},
		{"state", "state: over-acc=1 over-frame=2 timers=1\n"},
		{"advance-processing-time 23", "ok\n"},
		{"state", "state: over-acc=0 over-frame=0 timers=0\n"},
		{"a - v=8", "emit ts=none: +I a=8 n=1 sum=8\n"},
	})
}

package opstest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/runtime"
)

// wakeOp is an operator that asks to be woken at each record's value (and,
// for "again=D", D after that, from the wake-up) and emits "woke T at now".
type wakeOp struct {
	ctx  *runtime.Context
	out  runtime.Input[string]
	late runtime.Input[Record]
}

func (o *wakeOp) ProcessBatch(b *runtime.Batch[Record]) error {
	for _, r := range b.Data {
		o.wake(r.Val, r.Op)
	}
	return nil
}

func (o *wakeOp) wake(ts int64, op string) {
	o.ctx.WakeAt(ts, func(now int64) error {
		out := runtime.NewBatch[string](1)
		out.Append(fmt.Sprintf("woke %d at %d", ts, now), now)
		if d, ok := strings.CutPrefix(op, "again="); ok {
			n, _ := strconv.ParseInt(d, 10, 64)
			o.wake(ts+n, "")
		}
		return o.out.ProcessBatch(out)
	})
}

// ProcessWatermark forwards wm to both outputs.
func (o *wakeOp) ProcessWatermark(wm int64) error {
	if err := o.out.ProcessWatermark(wm); err != nil {
		return err
	}
	return o.late.ProcessWatermark(wm)
}

// EndInput forgets to end the side output.
func (o *wakeOp) EndInput() error { return o.out.EndInput() }

func TestHarnessWakeUps(t *testing.T) {
	h := New("wake")
	out := Output[string](h, "", nil)
	late := Output[Record](h, "late", Record.String)
	op := &wakeOp{ctx: h.Context(), out: out, late: late}
	if err := h.Start(&runtime.Built{Inputs: []any{runtime.Input[Record](op)}}); err != nil {
		t.Fatal(err)
	}
	got := h.Run(`
		a 0 v=30
		a 0 v=10 again=5
		a 0 v=20
		advance-processing-time 25
		a 0 v=3
		watermark 7
		end
	`, false)
	// Wake-ups run in time order, each with the clock at its time; one
	// registered by a wake-up runs in the same advance; one already due
	// runs right after the step that registered it. The side output's
	// watermarks are those of the main output, so they are not shown, but
	// it misses the end.
	want := `emit ts=10: woke 10 at 10
emit ts=15: woke 15 at 15
emit ts=20: woke 20 at 20
emit ts=25: woke 3 at 25
watermark 7
watermark max
end
side late missed: end
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if h.Now() != 25 {
		t.Fatalf("clock at %d, want 25", h.Now())
	}
	if got := h.Run("advance-processing-time 20", false); !strings.Contains(got, "cannot go back") {
		t.Fatalf("moving the clock back: got %q", got)
	}
}

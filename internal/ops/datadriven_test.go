package ops

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/eddystream/eddy/internal/ops/opstest"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/window"
)

// TestDataDriven runs the operator scripts in testdata. Each file builds an
// operator with a new-* command, then drives it with input commands; see
// package opstest for the script lines. Rewrite the expected output with
//
//	go test ./internal/ops -run TestDataDriven -rewrite
//
// and read the diff: expected outputs are derived from the semantics, not
// from what the code prints.
//
// Commands:
//
//	new-window assigner=tumbling|sliding|cumulate|session size=N [slide=N] [step=N] [gap=N]
//	           [lateness=N] [late-output] [time=processing] [func=count|sum|list]
//	new-window-join assigner=tumbling|sliding size=N [slide=N]
//	new-interval-join lower=N upper=N
//	new-keyed-process
//	input [batch] [bug=NAME]
//	state
//
// bug=NAME marks a case whose expected output is right but which the
// operator gets wrong: the test reports it, and keeps the expectation on
// -rewrite.
//
// func=list is a ProcessWindow: the window function sees every record of the
// window, pane by pane. Window results print as "key [start,end) value".
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var h *opstest.Harness
		var bugs []string
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out := runCommand(t, td, &h)
			bug, ok := td.Arg("bug")
			if !ok {
				return out
			}
			// A case marked bug=NAME expects the correct output, which the
			// operator does not produce yet. Its failure is reported after
			// the file has run, so that the cases after it still run and
			// -rewrite keeps the expectation.
			if out != td.Expected {
				bugs = append(bugs, fmt.Sprintf("%s: known bug %s:\n%s\nexpected:\n%s\nfound:\n%s",
					td.Pos, bug.String(), td.String(), td.Expected, out))
				return td.Expected
			}
			bugs = append(bugs, fmt.Sprintf("%s: the case marked %s passes now; remove the marker", td.Pos, bug.String()))
			return out
		})
		for _, b := range bugs {
			t.Error(b)
		}
	})
}

// runCommand runs one command of a script on *h.
func runCommand(t *testing.T, td *datadriven.TestData, hp **opstest.Harness) string {
	h := *hp
	if strings.HasPrefix(td.Cmd, "new-") {
		var err error
		*hp, err = newHarness(td)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return "ok\n"
	}
	if h == nil {
		td.Fatalf(t, "%s before new-*", td.Cmd)
	}
	switch td.Cmd {
	case "input":
		return h.Run(td.Input, td.HasArg("batch"))
	case "state":
		return h.State() + "\n"
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

// args are a command's key=value arguments.
type args map[string]string

func argsOf(td *datadriven.TestData) args {
	a := args{}
	for _, arg := range td.CmdArgs {
		a[arg.Key] = strings.Join(arg.Vals, ",")
	}
	return a
}

func (a args) int(key string, def int64) (int64, error) {
	s, ok := a[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return n, nil
}

func (a args) has(key string) bool { _, ok := a[key]; return ok }

func newHarness(td *datadriven.TestData) (*opstest.Harness, error) {
	a := argsOf(td)
	switch td.Cmd {
	case "new-window":
		return newWindowHarness(a)
	case "new-window-join":
		return newWindowJoinHarness(a)
	case "new-interval-join":
		return newIntervalJoinHarness(a)
	case "new-keyed-process":
		return newKeyedProcessHarness()
	}
	return nil, fmt.Errorf("unknown command %q", td.Cmd)
}

func recordKey() KeySpec[string, opstest.Record] {
	spec, err := NewKeySpec(func(r opstest.Record) string { return r.Key })
	if err != nil {
		panic(err)
	}
	return spec
}

// assigner builds the window assigner the arguments describe.
func assigner(a args) (window.Assigner, error) {
	ms := func(key string) (time.Duration, error) {
		n, err := a.int(key, 0)
		return time.Duration(n) * time.Millisecond, err
	}
	size, err := ms("size")
	if err != nil {
		return window.Assigner{}, err
	}
	var as window.Assigner
	switch a["assigner"] {
	case "tumbling":
		as = window.Tumbling(size)
	case "sliding":
		slide, err := ms("slide")
		if err != nil {
			return as, err
		}
		as = window.Sliding(size, slide)
	case "cumulate":
		step, err := ms("step")
		if err != nil {
			return as, err
		}
		as = window.Cumulate(step, size)
	case "session":
		gap, err := ms("gap")
		if err != nil {
			return as, err
		}
		as = window.Session(gap)
	default:
		return as, fmt.Errorf("unknown assigner %q", a["assigner"])
	}
	if a["time"] == "processing" {
		as = as.InProcessingTime()
	}
	return as, as.Validate()
}

func windowString(w window.Window) string { return fmt.Sprintf("[%d,%d)", w.Start, w.End) }

// aggregateLogic is the window logic of a sum of val over the records (a
// count if val is 1), as eddy.Aggregate builds it: Fire merges the panes'
// accumulators.
func aggregateLogic(val func(opstest.Record) int64) WindowLogic[string, opstest.Record, int64, string] {
	return WindowLogic[string, opstest.Record, int64, string]{
		Create: func() int64 { return 0 },
		Add:    func(acc int64, r opstest.Record) int64 { return acc + val(r) },
		Merge:  func(x, y int64) int64 { return x + y },
		Fire: func(key string, w window.Window, accs []int64, emit func(string)) error {
			var acc int64
			for _, x := range accs {
				acc += x
			}
			emit(fmt.Sprintf("%s %s %d", key, windowString(w), acc))
			return nil
		},
	}
}

// listLogic is the window logic of eddy.ProcessWindow with a function that
// prints the values of all records of the window in the order it sees them.
func listLogic() WindowLogic[string, opstest.Record, []opstest.Record, string] {
	return WindowLogic[string, opstest.Record, []opstest.Record, string]{
		Create: func() []opstest.Record { return nil },
		Add:    func(acc []opstest.Record, r opstest.Record) []opstest.Record { return append(acc, r) },
		Merge:  func(x, y []opstest.Record) []opstest.Record { return append(x, y...) },
		Fire: func(key string, w window.Window, panes [][]opstest.Record, emit func(string)) error {
			var vals []string
			for _, p := range panes {
				for _, r := range p {
					vals = append(vals, strconv.FormatInt(r.Val, 10))
				}
			}
			emit(fmt.Sprintf("%s %s [%s]", key, windowString(w), strings.Join(vals, " ")))
			return nil
		},
	}
}

// newWindowOp builds a pane or session window operator for logic.
func newWindowOp[T, ACC any](h *opstest.Harness, spec KeySpec[string, T], opts WindowOptions, logic WindowLogic[string, T, ACC, string]) (runtime.Input[T], error) {
	if opts.Assigner.Kind() == window.SessionKind {
		w, err := NewSessionWindow(h.Context(), spec, h.Backend, opts, logic, h.Outputs())
		if err != nil {
			return nil, err
		}
		h.Timers = w.timers.Len
		return w, nil
	}
	w, err := NewPaneWindow(h.Context(), spec, h.Backend, opts, logic, h.Outputs())
	if err != nil {
		return nil, err
	}
	h.Timers = w.timers.Len
	return w, nil
}

func newWindowHarness(a args) (*opstest.Harness, error) {
	as, err := assigner(a)
	if err != nil {
		return nil, err
	}
	lateness, err := a.int("lateness", 0)
	if err != nil {
		return nil, err
	}
	h := opstest.New("window")
	h.SortTies = true
	opstest.Output[string](h, "", nil)
	opts := WindowOptions{Assigner: as, AllowedLateness: lateness}
	if a.has("late-output") && a["late-output"] != "false" {
		opts.LateTag = "late"
		opstest.Output(h, "late", opstest.Record.String)
	}
	var op runtime.Input[opstest.Record]
	switch fn := a["func"]; fn {
	case "", "count":
		op, err = newWindowOp(h, recordKey(), opts, aggregateLogic(func(opstest.Record) int64 { return 1 }))
	case "sum":
		op, err = newWindowOp(h, recordKey(), opts, aggregateLogic(func(r opstest.Record) int64 { return r.Val }))
	case "list":
		op, err = newWindowOp(h, recordKey(), opts, listLogic())
	default:
		err = fmt.Errorf("unknown func %q", fn)
	}
	if err != nil {
		return nil, err
	}
	return h, h.Start(&runtime.Built{Inputs: []any{op}})
}

// joinString renders a joined pair as "key (left value,right value)".
func joinString(l, r opstest.Record) string { return fmt.Sprintf("%s (%d,%d)", l.Key, l.Val, r.Val) }

func eitherKey() KeySpec[string, Either[opstest.Record, opstest.Record]] {
	return EitherKeySpec(recordKey(), recordKey())
}

func newWindowJoinHarness(a args) (*opstest.Harness, error) {
	as, err := assigner(a)
	if err != nil {
		return nil, err
	}
	h := opstest.New("window-join")
	h.SortTies = true
	opstest.Output[string](h, "", nil)
	op, err := newWindowOp(h, eitherKey(), WindowOptions{Assigner: as}, WindowJoinLogic[string](joinString))
	if err != nil {
		return nil, err
	}
	return h, h.Start(TwoInputs(op))
}

func newIntervalJoinHarness(a args) (*opstest.Harness, error) {
	lower, err := a.int("lower", 0)
	if err != nil {
		return nil, err
	}
	upper, err := a.int("upper", 0)
	if err != nil {
		return nil, err
	}
	logic, err := IntervalJoinLogic[string](lower, upper, joinString)
	if err != nil {
		return nil, err
	}
	h := opstest.New("interval-join")
	opstest.Output[string](h, "", nil)
	p, err := NewKeyedProcess(h.Context(), eitherKey(), h.Backend, logic, h.Outputs())
	if err != nil {
		return nil, err
	}
	h.Timers = p.timers.Len
	return h, h.Start(TwoInputs(p))
}

// procState is the value state of the scripted keyed process function.
type procState struct {
	Count int64 // records of the key since the state was last cleared
	Chain int64 // if not 0, the next timer to fire registers one Chain ms later
}

// scriptedProcessLogic is a keyed process function that does what each
// record's Op says, with space-separated instructions:
//
//	et=T / pt=T          register an event-time / processing-time timer at T
//	del-et=T / del-pt=T  delete it
//	chain=D              the next timer of the key to fire registers a timer
//	                     D later, in its own domain
//	clear                clear the key's state (after counting the record)
//	emit                 emit "key count=N" with the record's timestamp
//
// Every record adds 1 to the key's count (before clear). A timer emits
// "key <domain> timer T count=N wm=W now=P".
func scriptedProcessLogic() KeyedProcessLogic[string, opstest.Record, string] {
	var st *state.ValueHandle[string, state.VoidNamespace, procState]
	return KeyedProcessLogic[string, opstest.Record, string]{
		Open: func(c *KeyedContext[string, string]) error {
			var err error
			st, err = state.NewValueHandle[string, state.VoidNamespace, procState](c.Store(), nil, nil, "proc", nil, state.TTLConfig{})
			return err
		},
		Process: func(c *KeyedContext[string, string], r opstest.Record) error {
			s, _ := st.Value()
			s.Count++
			st.Update(s)
			for _, op := range strings.Fields(r.Op) {
				name, val, _ := strings.Cut(op, "=")
				var ts int64
				if val != "" {
					var err error
					if ts, err = strconv.ParseInt(val, 10, 64); err != nil {
						return fmt.Errorf("op %q: %w", op, err)
					}
				}
				switch name {
				case "et":
					c.RegisterEventTimeTimer(ts)
				case "pt":
					c.RegisterProcessingTimeTimer(ts)
				case "del-et":
					c.DeleteEventTimeTimer(ts)
				case "del-pt":
					c.DeleteProcessingTimeTimer(ts)
				case "chain":
					s, _ := st.Value()
					s.Chain = ts
					st.Update(s)
				case "clear":
					st.Clear()
				case "emit":
					s, _ := st.Value()
					c.Emit(fmt.Sprintf("%s count=%d", c.Key(), s.Count))
				default:
					return fmt.Errorf("unknown op %q", op)
				}
			}
			return nil
		},
		OnTimer: func(c *KeyedContext[string, string], ts int64) error {
			s, _ := st.Value()
			c.Emit(fmt.Sprintf("%s %s timer %d count=%d wm=%s now=%d", c.Key(), c.TimeDomain(), ts, s.Count, wmString(c.CurrentWatermark()), c.ProcessingTime()))
			if s.Chain != 0 {
				next := ts + s.Chain
				s.Chain = 0
				st.Update(s)
				if c.TimeDomain() == EventTime {
					c.RegisterEventTimeTimer(next)
				} else {
					c.RegisterProcessingTimeTimer(next)
				}
			}
			return nil
		},
	}
}

func wmString(wm int64) string {
	switch wm {
	case runtime.MinWatermark:
		return "none"
	case runtime.MaxWatermark:
		return "max"
	}
	return strconv.FormatInt(wm, 10)
}

func newKeyedProcessHarness() (*opstest.Harness, error) {
	h := opstest.New("keyed-process")
	opstest.Output[string](h, "", nil)
	p, err := NewKeyedProcess(h.Context(), recordKey(), h.Backend, scriptedProcessLogic(), h.Outputs())
	if err != nil {
		return nil, err
	}
	h.Timers = p.timers.Len
	return h, h.Start(&runtime.Built{Inputs: []any{runtime.Input[opstest.Record](p)}})
}

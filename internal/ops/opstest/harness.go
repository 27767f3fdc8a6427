// Package opstest is a test harness for the operators of internal/ops. A
// Harness drives one operator, with one input or two, outside a job: it gives
// the operator a Context of subtask 0 of parallelism 1 with 128 key groups, a
// heap state backend, and a processing-time clock that only moves when the
// script says so. It records everything the operator emits, on its main
// output and on each side output, as lines of text that golden files
// compare:
//
//	emit ts=9: a [0,10) 2
//	side late ts=3: a=3
//	watermark 9
//	late-records 1
//	window-gap-records 1
//	end
//
// Side outputs are expected to receive the watermarks and end of input of
// the main output; a side output that does not says so in a line such as
// "side late missed: watermark 9".
//
// A script is a list of lines, each one step:
//
//	a 3                      a record of key a, timestamp 3, value 3
//	a 3 v=5 et=20            ... with value 5; the rest of the line is Record.Op
//	a -                      a record without a timestamp
//	left a 3 / right b 4     a record on the first / second input
//	watermark 9              the combined watermark of the inputs; "watermark max"
//	advance-processing-time 20  moves the clock to 20, running due wake-ups in time order
//	end                      the final watermark (MaxInt64), then end of input
//	state                    the sizes of the operator's state tables and timers
//
// After every step the harness runs the wake-ups that are due at the current
// processing time, as a subtask does between messages.
//
// The package depends only on the runtime and the state backends, so that
// the tests of package ops can use it.
package opstest

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	heapstate "github.com/eddystream/eddy/internal/state/heap"
)

// MaxParallelism is the number of key groups of the operator under test.
const MaxParallelism = state.DefaultMaxParallelism

// Record is the record type of the harness's inputs: a key, a value, and
// the unparsed rest of its script line, which scripted test functions read
// as instructions.
type Record struct {
	Key string
	Val int64
	Op  string
}

// String renders the record as key=value, followed by Op if there is one.
func (r Record) String() string {
	if r.Op != "" {
		return fmt.Sprintf("%s=%d %s", r.Key, r.Val, r.Op)
	}
	return fmt.Sprintf("%s=%d", r.Key, r.Val)
}

// Harness drives one operator. Build it with New, create the operator with
// Context, Backend and Outputs, hand it over with Start, then Run scripts.
// It is not safe for concurrent use.
type Harness struct {
	// SortTies sorts the records that one step emits on one output with
	// equal timestamps by their text, so that golden files do not depend on
	// the order in which an operator visits keys or panes. Records with
	// different timestamps keep their order.
	SortTies bool
	// Timers, if set, returns the number of registered timers of the
	// operator; the state command prints it.
	Timers func() int

	ctx      *runtime.Context
	now      int64
	wakes    wakeups
	seq      int64
	backends []*heapstate.Backend
	outs     map[string]any
	tags     []string // side output tags, sorted
	ins      []runtime.Input[Record]
	ctl      runtime.Control
	events   []event
	late     int64
	gaps     int64
}

// New returns a harness whose operator is called name, with processing time
// at 0.
func New(name string) *Harness {
	h := &Harness{outs: map[string]any{}}
	h.ctx = runtime.NewContext(name, 0, 1, MaxParallelism, func() int64 { return h.now }, h.wakeAt)
	return h
}

// Context returns the operator's context.
func (h *Harness) Context() *runtime.Context { return h.ctx }

// Backend creates a heap state backend and keeps it, so that the state
// command can show its tables. Its type is that of ops.BackendFactory.
func (h *Harness) Backend(ctx *runtime.Context, kgs state.KeyGroupRange) (state.Backend, error) {
	b := heapstate.New(kgs, ctx.MaxParallelism)
	h.backends = append(h.backends, b)
	return b, nil
}

// Outputs returns the outputs to build the operator with: the main output
// "" and the side outputs added with Output, by tag.
func (h *Harness) Outputs() map[string]any { return h.outs }

// Now returns the current processing time.
func (h *Harness) Now() int64 { return h.now }

// Output adds an output of type T called tag ("" is the main output) whose
// records are rendered with format (nil means fmt's %v).
func Output[T any](h *Harness, tag string, format func(T) string) runtime.Input[T] {
	if _, ok := h.outs[tag]; ok {
		panic(fmt.Sprintf("opstest: output %q added twice", tag))
	}
	if format == nil {
		format = func(v T) string { return fmt.Sprint(v) }
	}
	r := &recorder[T]{h: h, tag: tag, format: format}
	h.outs[tag] = runtime.Input[T](r)
	if tag != "" {
		h.tags = append(h.tags, tag)
		slices.Sort(h.tags)
	}
	return r
}

// Start hands the harness the operator: one input of Record, or two (the
// first and second input, as ops.TwoInputs returns them). If b.Control is
// nil, the first input receives watermarks and end of input.
func (h *Harness) Start(b *runtime.Built) error {
	if _, ok := h.outs[""]; !ok {
		return fmt.Errorf("opstest: no main output; add one with Output before building the operator")
	}
	if n := len(b.Inputs); n != 1 && n != 2 {
		return fmt.Errorf("opstest: the operator has %d inputs; the harness drives 1 or 2", n)
	}
	for i, in := range b.Inputs {
		ri, ok := in.(runtime.Input[Record])
		if !ok {
			return fmt.Errorf("opstest: input %d is a %T, not an Input[opstest.Record]", i, in)
		}
		h.ins = append(h.ins, ri)
	}
	h.ctl = b.Control
	if h.ctl == nil {
		h.ctl = h.ins[0]
	}
	return nil
}

// LateRecords returns the operator's count of late records.
func (h *Harness) LateRecords() int64 { return h.ctx.Metrics.LateRecords.Load() }

// WindowGapRecords returns the operator's count of records that fell into
// the gaps between windows.
func (h *Harness) WindowGapRecords() int64 { return h.ctx.Metrics.WindowGapRecords.Load() }

// Send sends one batch of records with their timestamps to input i.
func (h *Harness) Send(i int, recs []Record, ts []int64) error {
	b := runtime.NewBatch[Record](len(recs))
	for j, r := range recs {
		b.Append(r, ts[j])
	}
	return h.call(func() error { return h.ins[i].ProcessBatch(b) })
}

// Watermark sends a watermark to the operator.
func (h *Harness) Watermark(wm int64) error {
	return h.call(func() error { return h.ctl.ProcessWatermark(wm) })
}

// End sends the final watermark, then end of input.
func (h *Harness) End() error {
	if err := h.Watermark(runtime.MaxWatermark); err != nil {
		return err
	}
	return h.call(h.ctl.EndInput)
}

// AdvanceProcessingTime moves the clock forward to now, running the due
// wake-ups in time order (then registration order); each runs with the
// clock at its own time, and wake-ups they register that are due run too.
func (h *Harness) AdvanceProcessingTime(now int64) error {
	if now < h.now {
		return fmt.Errorf("opstest: processing time cannot go back from %d to %d", h.now, now)
	}
	if err := h.fireDue(now); err != nil {
		return err
	}
	h.now = now
	return nil
}

// fireDue runs the wake-ups due at limit, each with the clock at its time.
func (h *Harness) fireDue(limit int64) error {
	for len(h.wakes) > 0 && h.wakes[0].ts <= limit {
		w := heap.Pop(&h.wakes).(wakeup)
		h.now = max(h.now, w.ts)
		if err := h.call(func() error { return w.fn(h.now) }); err != nil {
			return err
		}
	}
	return nil
}

func (h *Harness) wakeAt(ts int64, fn func(now int64) error) {
	h.seq++
	heap.Push(&h.wakes, wakeup{ts: ts, seq: h.seq, fn: fn})
}

// call runs fn and turns a panic into an error.
func (h *Harness) call(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return fn()
}

// State describes the operator's state: the number of entries of each
// table of its backends (by name, sorted) and its timers.
func (h *Harness) State() string {
	var parts []string
	for _, b := range h.backends {
		for _, name := range b.Tables() {
			t, _ := b.Table(name)
			parts = append(parts, fmt.Sprintf("%s=%d", name, t.Len()))
		}
	}
	if h.Timers != nil {
		parts = append(parts, fmt.Sprintf("timers=%d", h.Timers()))
	}
	if len(parts) == 0 {
		return "state: none"
	}
	return "state: " + strings.Join(parts, " ")
}

// Run runs a script and returns what the operator did, one line per event.
// With batch, consecutive records of the same input go to the operator as
// one batch; otherwise each record is a batch of its own. A failing step
// prints its error and ends the script.
func (h *Harness) Run(script string, batch bool) string {
	var out strings.Builder
	var pending struct {
		input int
		recs  []Record
		ts    []int64
	}
	step := func(fn func() error) bool {
		err := fn()
		if err == nil {
			err = h.fireDue(h.now)
		}
		h.render(&out)
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", firstLine(err))
			return false
		}
		return true
	}
	flush := func() bool {
		if len(pending.recs) == 0 {
			return true
		}
		recs, ts, in := pending.recs, pending.ts, pending.input
		pending.recs, pending.ts = nil, nil
		return step(func() error { return h.Send(in, recs, ts) })
	}
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		var fn func() error
		switch fields[0] {
		case "watermark":
			if len(fields) != 2 {
				return out.String() + fmt.Sprintf("bad line %q: want watermark N\n", line)
			}
			wm, err := parseTime(fields[1])
			if err != nil {
				return out.String() + fmt.Sprintf("bad line %q: %v\n", line, err)
			}
			fn = func() error { return h.Watermark(wm) }
		case "advance-processing-time":
			if len(fields) != 2 {
				return out.String() + fmt.Sprintf("bad line %q: want advance-processing-time N\n", line)
			}
			now, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return out.String() + fmt.Sprintf("bad line %q: %v\n", line, err)
			}
			fn = func() error { return h.AdvanceProcessingTime(now) }
		case "end":
			fn = h.End
		case "state":
			if !flush() {
				return out.String()
			}
			out.WriteString(h.State() + "\n")
			continue
		default:
			in, r, ts, err := h.parseRecord(fields)
			if err != nil {
				return out.String() + fmt.Sprintf("bad line %q: %v\n", line, err)
			}
			if !batch || in != pending.input {
				if !flush() {
					return out.String()
				}
			}
			pending.input = in
			pending.recs = append(pending.recs, r)
			pending.ts = append(pending.ts, ts)
			if !batch && !flush() {
				return out.String()
			}
			continue
		}
		if !flush() || !step(fn) {
			return out.String()
		}
	}
	flush()
	if out.Len() == 0 {
		return "ok\n"
	}
	return out.String()
}

// parseRecord parses "[left|right] key ts [v=N] [op...]".
func (h *Harness) parseRecord(fields []string) (input int, r Record, ts int64, err error) {
	if len(h.ins) == 2 {
		switch fields[0] {
		case "left":
		case "right":
			input = 1
		default:
			return 0, r, 0, fmt.Errorf("a record of a two-input operator starts with left or right")
		}
		fields = fields[1:]
	}
	if len(fields) < 2 {
		return 0, r, 0, fmt.Errorf("want key and timestamp")
	}
	r.Key = fields[0]
	if fields[1] == "-" {
		ts = runtime.NoTimestamp
	} else if ts, err = strconv.ParseInt(fields[1], 10, 64); err != nil {
		return 0, r, 0, err
	} else {
		r.Val = ts
	}
	rest := fields[2:]
	if len(rest) > 0 && strings.HasPrefix(rest[0], "v=") {
		if r.Val, err = strconv.ParseInt(rest[0][2:], 10, 64); err != nil {
			return 0, r, 0, err
		}
		rest = rest[1:]
	}
	r.Op = strings.Join(rest, " ")
	return input, r, ts, nil
}

func parseTime(s string) (int64, error) {
	switch s {
	case "max":
		return math.MaxInt64, nil
	case "min":
		return math.MinInt64, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

func formatTime(ts int64) string {
	switch ts {
	case math.MaxInt64:
		return "max"
	case math.MinInt64:
		return "none"
	}
	return strconv.FormatInt(ts, 10)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// eventKind is what an output received.
type eventKind uint8

const (
	emitEvent eventKind = iota
	watermarkEvent
	endEvent
	badBatchEvent
)

// event is one thing an output received during a step.
type event struct {
	tag  string
	kind eventKind
	ts   int64
	text string
}

// render appends the events of the step to out and forgets them. The
// watermarks and end of input of side outputs are not shown where they are
// the same as the main output's in the step; where they differ, a line says
// what the side output missed or got in addition.
func (h *Harness) render(out *strings.Builder) {
	evs := h.events
	h.events = nil
	if h.SortTies {
		sortTies(evs)
	}
	isControl := func(e event) bool { return e.kind == watermarkEvent || e.kind == endEvent }
	control := func(tag string) []string {
		var s []string
		for _, e := range evs {
			if e.tag == tag && isControl(e) {
				s = append(s, e.line())
			}
		}
		return s
	}
	for _, e := range evs {
		if e.tag != "" && isControl(e) {
			continue
		}
		line := e.line()
		if e.tag != "" {
			line = "side " + e.tag + " " + strings.TrimPrefix(line, "emit ")
		}
		out.WriteString(line + "\n")
	}
	mainControl := control("")
	for _, tag := range h.tags {
		side := control(tag)
		if missed := minus(mainControl, side); len(missed) > 0 {
			fmt.Fprintf(out, "side %s missed: %s\n", tag, strings.Join(missed, ", "))
		}
		if extra := minus(side, mainControl); len(extra) > 0 {
			fmt.Fprintf(out, "side %s extra: %s\n", tag, strings.Join(extra, ", "))
		}
	}
	if n := h.LateRecords(); n != h.late {
		h.late = n
		fmt.Fprintf(out, "late-records %d\n", n)
	}
	if n := h.WindowGapRecords(); n != h.gaps {
		h.gaps = n
		fmt.Fprintf(out, "window-gap-records %d\n", n)
	}
}

// minus returns the elements of a that are not in b, as multisets.
func minus(a, b []string) []string {
	b = slices.Clone(b)
	var d []string
	for _, x := range a {
		if i := slices.Index(b, x); i >= 0 {
			b = slices.Delete(b, i, i+1)
		} else {
			d = append(d, x)
		}
	}
	return d
}

func (e event) line() string {
	switch e.kind {
	case emitEvent:
		return fmt.Sprintf("emit ts=%s: %s", formatTime(e.ts), e.text)
	case watermarkEvent:
		return "watermark " + formatTime(e.ts)
	case endEvent:
		return "end"
	}
	return "bad batch: " + e.text
}

// sortTies sorts each run of emitted records of one output with equal
// timestamps by text.
func sortTies(evs []event) {
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && evs[j].kind == emitEvent && evs[i].kind == emitEvent && evs[j].tag == evs[i].tag && evs[j].ts == evs[i].ts {
			j++
		}
		slices.SortStableFunc(evs[i:j], func(a, b event) int { return cmp.Compare(a.text, b.text) })
		i = j
	}
}

// recorder is an output of the operator under test.
type recorder[T any] struct {
	h      *Harness
	tag    string
	format func(T) string
}

func (r *recorder[T]) ProcessBatch(b *runtime.Batch[T]) error {
	if len(b.Data) != len(b.TS) {
		r.h.events = append(r.h.events, event{tag: r.tag, kind: badBatchEvent,
			text: fmt.Sprintf("%d records with %d timestamps", len(b.Data), len(b.TS))})
		return nil
	}
	for i, v := range b.Data {
		r.h.events = append(r.h.events, event{tag: r.tag, kind: emitEvent, ts: b.TS[i], text: r.format(v)})
	}
	return nil
}

func (r *recorder[T]) ProcessWatermark(wm int64) error {
	r.h.events = append(r.h.events, event{tag: r.tag, kind: watermarkEvent, ts: wm})
	return nil
}

func (r *recorder[T]) EndInput() error {
	r.h.events = append(r.h.events, event{tag: r.tag, kind: endEvent})
	return nil
}

// wakeup is a processing-time callback of the operator.
type wakeup struct {
	ts, seq int64
	fn      func(now int64) error
}

// wakeups is a min-heap by time, then registration.
type wakeups []wakeup

func (w wakeups) Len() int { return len(w) }
func (w wakeups) Less(i, j int) bool {
	if w[i].ts != w[j].ts {
		return w[i].ts < w[j].ts
	}
	return w[i].seq < w[j].seq
}
func (w wakeups) Swap(i, j int) { w[i], w[j] = w[j], w[i] }
func (w *wakeups) Push(x any)   { *w = append(*w, x.(wakeup)) }
func (w *wakeups) Pop() any {
	old := *w
	x := old[len(old)-1]
	*w = old[:len(old)-1]
	return x
}

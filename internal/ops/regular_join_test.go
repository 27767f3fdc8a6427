package ops

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops/opstest"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	heapstate "github.com/eddystream/eddy/internal/state/heap"
	"github.com/eddystream/eddy/internal/state/pebble"
)

// joinChangeInput feeds the harness's records to an input of changes: a
// record's Op is its kind (+I when empty), and the row is the record
// without it.
type joinChangeInput struct {
	target runtime.Input[changelog.Change[opstest.Record]]
	buf    *runtime.Batch[changelog.Change[opstest.Record]]
}

func (c *joinChangeInput) ProcessBatch(b *runtime.Batch[opstest.Record]) error {
	c.buf.Reset()
	for i, r := range b.Data {
		kind := changelog.Insert
		if r.Op != "" {
			k, err := changelog.ParseKind(r.Op)
			if err != nil {
				return err
			}
			kind = k
		}
		r.Op = ""
		c.buf.Append(changelog.Of(kind, r), b.TS[i])
	}
	return c.target.ProcessBatch(c.buf)
}

func (c *joinChangeInput) ProcessWatermark(wm int64) error { return c.target.ProcessWatermark(wm) }
func (c *joinChangeInput) EndInput() error                 { return c.target.EndInput() }

// joinChangeInputs wraps the inputs of a built operator whose inputs take
// changes of records.
func joinChangeInputs(b *runtime.Built) *runtime.Built {
	out := &runtime.Built{Control: b.Control}
	for _, in := range b.Inputs {
		out.Inputs = append(out.Inputs, runtime.Input[opstest.Record](&joinChangeInput{
			target: in.(runtime.Input[changelog.Change[opstest.Record]]), buf: runtime.NewBatch[changelog.Change[opstest.Record]](0)}))
	}
	return out
}

// joinRecordKey keys changes of records by the record's key.
func joinRecordKey() KeySpec[string, changelog.Change[opstest.Record]] {
	spec, err := NewKeySpec[string](func(c changelog.Change[opstest.Record]) string { return c.Row.Key })
	if err != nil {
		panic(err)
	}
	return spec
}

// joinPair renders a result row of the test joins: "key L|R" with "-" for
// a missing side.
func joinPair(a, b *opstest.Record) string {
	l, r, k := "-", "-", ""
	if a != nil {
		l, k = fmt.Sprint(a.Val), a.Key
	}
	if b != nil {
		r, k = fmt.Sprint(b.Val), b.Key
	}
	return k + " " + l + "|" + r
}

func newJoinHarness(t *testing.T, logic RegularJoinLogic[opstest.Record, opstest.Record, string]) *opstest.Harness {
	t.Helper()
	h := opstest.New("join")
	opstest.Output[changelog.Change[string]](h, "", nil)
	spec := EitherKeySpec(joinRecordKey(), joinRecordKey())
	j, err := NewRegularJoin(h.Context(), spec, h.Backend, logic, h.Outputs())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(joinChangeInputs(TwoInputs[changelog.Change[opstest.Record], changelog.Change[opstest.Record]](j))); err != nil {
		t.Fatal(err)
	}
	return h
}

func checkJoinScript(t *testing.T, h *opstest.Harness, script, want string, batch bool) {
	t.Helper()
	got := h.Run(script, batch)
	if strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Fatalf("script:\n%s\ngot:\n%s\nwant:\n%s", script, got, want)
	}
}

// TestRegularJoinOuterPadding follows the padded rows of a full outer
// join: emitted while a row has no match, retracted when its first match
// arrives, emitted again when its last match goes. (The changes of one step
// are sorted: rows of a key are visited in no particular order.)
func TestRegularJoinOuterPadding(t *testing.T) {
	h := newJoinHarness(t, RegularJoinLogic[opstest.Record, opstest.Record, string]{LeftOuter: true, RightOuter: true, Output: joinPair})
	h.SortTies = true
	checkJoinScript(t, h, `
left a 1 v=1
right a 2 v=10
right a 3 v=11
left a 4 v=1 -D
right a 5 v=10 -D
right a 6 v=11 -D
state
`, `
emit ts=1: +I[a 1|-]
emit ts=2: +I[a 1|10]
emit ts=2: -D[a 1|-]
emit ts=3: +I[a 1|11]
emit ts=4: +I[a -|10]
emit ts=4: +I[a -|11]
emit ts=4: -D[a 1|10]
emit ts=4: -D[a 1|11]
emit ts=5: -D[a -|10]
emit ts=6: -D[a -|11]
state: join=0
`, false)
}

// TestRegularJoinOnMatches checks the per-row matches of an outer side with
// a further condition: a left row is padded while no right row of its key
// passes the condition with it.
func TestRegularJoinOnMatches(t *testing.T) {
	h := newJoinHarness(t, RegularJoinLogic[opstest.Record, opstest.Record, string]{LeftOuter: true, Output: joinPair,
		On: func(a, b opstest.Record) bool { return a.Val < b.Val }})
	// Rows of a key are visited in no particular order.
	h.SortTies = true
	checkJoinScript(t, h, `
left a 1 v=5
left a 1 v=20
right a 2 v=10
right a 3 v=30
right a 4 v=10 -D
right a 5 v=30 -D
`, `
emit ts=1: +I[a 5|-]
emit ts=1: +I[a 20|-]
emit ts=2: +I[a 5|10]
emit ts=2: -D[a 5|-]
emit ts=3: +I[a 20|30]
emit ts=3: +I[a 5|30]
emit ts=3: -D[a 20|-]
emit ts=4: -D[a 5|10]
emit ts=5: +I[a 20|-]
emit ts=5: +I[a 5|-]
emit ts=5: -D[a 20|30]
emit ts=5: -D[a 5|30]
`, false)
}

// TestRegularJoinUpdatePairs checks that the -U and +U of an input update
// come out as an update of the result row, and that a -U alone comes out as
// a deletion.
func TestRegularJoinUpdatePairs(t *testing.T) {
	h := newJoinHarness(t, RegularJoinLogic[opstest.Record, opstest.Record, string]{LeftOuter: true, Output: joinPair})
	checkJoinScript(t, h, `
left a 1 v=1
right a 2 v=10
left a 3 v=1 -U
left a 3 v=2 +U
right a 4 v=10 -U
right a 4 v=11 +U
right a 5 v=11 -U
`, `
emit ts=1: +I[a 1|-]
emit ts=2: -D[a 1|-]
emit ts=2: +I[a 1|10]
emit ts=3: -U[a 1|10]
emit ts=3: +U[a 2|10]
emit ts=4: -U[a 2|10]
emit ts=4: +U[a 2|11]
emit ts=5: -D[a 2|11]
emit ts=5: +I[a 2|-]
`, true)
}

// TestRegularJoinTTL checks that the state of idle keys goes away once its
// time to live has passed, and that expired rows join nothing.
func TestRegularJoinTTL(t *testing.T) {
	h := newJoinHarness(t, RegularJoinLogic[opstest.Record, opstest.Record, string]{Output: joinPair, TTL: 10 * time.Millisecond})
	checkJoinScript(t, h, `
left a 0 v=1
left b 0 v=2
right a 0 v=3
state
advance-processing-time 5
left c 5 v=4
state
advance-processing-time 20
left d 20 v=5
state
right c 21 v=6
right d 21 v=7
`, `
emit ts=0: +I[a 1|3]
state: join=2
state: join=3
state: join=1
emit ts=21: +I[d 5|7]
`, false)
	if got := h.Context().Metrics.RetractionsWithoutState.Load(); got != 0 {
		t.Fatalf("RetractionsWithoutState = %d, want 0", got)
	}
	checkJoinScript(t, h, "left a 22 v=1 -D", "ok", false)
	if got := h.Context().Metrics.RetractionsWithoutState.Load(); got != 1 {
		t.Fatalf("RetractionsWithoutState = %d, want 1 after retracting an expired row", got)
	}
}

type benchL struct{ ID, K, V int64 }
type benchR struct{ K, V int64 }

// BenchmarkRegularJoinOperator drives the join operator alone (no runtime)
// with the pattern of the join benchmarks of package eddy: 100 000 right
// rows, one per key, then left rows spread over the keys, in batches of
// 1024; it reports the cost per left row.
func BenchmarkRegularJoinOperator(b *testing.B) {
	for _, backend := range []string{"heap", "pebble"} {
		for _, outer := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/outer=%v", backend, outer), func(b *testing.B) {
				const keys = 100_000
				ctx := runtime.NewContext("join", 0, 1, 128, func() int64 { return 0 }, func(int64, func(int64) error) {})
				factory := func(ctx *runtime.Context, kgs state.KeyGroupRange) (state.Backend, error) {
					if backend == "pebble" {
						return pebble.Open(b.TempDir(), kgs, ctx.MaxParallelism, pebble.Options{MemoryBudget: 256 << 20})
					}
					return heapstate.New(kgs, ctx.MaxParallelism), nil
				}
				type E = Either[changelog.Change[benchL], changelog.Change[benchR]]
				ka, _ := NewKeySpec[int64](func(c changelog.Change[benchL]) int64 { return c.Row.K })
				kb, _ := NewKeySpec[int64](func(c changelog.Change[benchR]) int64 { return c.Row.K })
				var n int
				sink := &countInput[changelog.Change[int64]]{n: &n}
				j, err := NewRegularJoin(ctx, EitherKeySpec(ka, kb), factory, RegularJoinLogic[benchL, benchR, int64]{
					LeftOuter: outer, LeftInsertOnly: true, RightInsertOnly: true, Output: func(a *benchL, b *benchR) int64 { return a.V }}, map[string]any{"": runtime.Input[changelog.Change[int64]](sink)})
				if err != nil {
					b.Fatal(err)
				}
				defer j.Close()
				batch := runtime.NewBatch[E](1024)
				send := func() {
					if err := j.ProcessBatch(batch); err != nil {
						b.Fatal(err)
					}
					batch.Reset()
				}
				for i := range int64(keys) {
					batch.Append(E{Right: changelog.InsertOf(benchR{K: i, V: i}), IsRight: true}, 0)
					if batch.Len() == 1024 {
						send()
					}
				}
				send()
				b.ResetTimer()
				for i := range int64(b.N) {
					batch.Append(E{Left: changelog.InsertOf(benchL{ID: i, K: (i * 7919) % keys, V: i})}, 0)
					if batch.Len() == 1024 {
						send()
					}
				}
				send()
			})
		}
	}
}

// countInput counts what it receives.
type countInput[T any] struct{ n *int }

func (c *countInput[T]) ProcessBatch(b *runtime.Batch[T]) error { *c.n += b.Len(); return nil }
func (c *countInput[T]) ProcessWatermark(int64) error           { return nil }
func (c *countInput[T]) EndInput() error                        { return nil }

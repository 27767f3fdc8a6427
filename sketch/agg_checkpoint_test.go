package sketch_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/sketch"
	"github.com/eddystream/eddy/state"
	"github.com/eddystream/eddy/window"
)

// event is the record of the checkpoint test.
type event struct {
	Key   int64
	User  uint64
	Value float64
	TS    int64
}

func genEvent(i int64) event {
	h := uint64(i)*0x9e3779b97f4a7c15 ^ 0x5851f42d4c957f2d
	h ^= h >> 29
	k := i % 5
	return event{Key: k, User: h % uint64(200*(k+1)*(k+1)), Value: float64(h%10007) / 7, TS: i * 10}
}

// keyedCount is what the keyed process function of the checkpoint test
// emits after each record of a key: the record's number within its key, the
// distinct users so far (HyperLogLog) and the 1s among the key's last 64
// values above 700 (DGIM), both kept in keyed state with BinaryCodec.
type keyedCount struct {
	Key      int64
	Seq      int64
	Distinct uint64
	High     uint64
}

type sketchState struct {
	seq  state.Value[int64]
	hll  state.Value[*sketch.HyperLogLog]
	dgim state.Value[*sketch.DGIM]
}

func (f *sketchState) Open(ctx *eddy.KeyedContext[int64, keyedCount]) error {
	f.seq = state.NewValue(ctx.Store(), state.ValueDescriptor[int64]{Name: "seq"})
	f.hll = state.NewValue(ctx.Store(), state.ValueDescriptor[*sketch.HyperLogLog]{Name: "hll", Codec: sketch.BinaryCodec[sketch.HyperLogLog]()})
	f.dgim = state.NewValue(ctx.Store(), state.ValueDescriptor[*sketch.DGIM]{Name: "dgim", Codec: sketch.BinaryCodec[sketch.DGIM]()})
	return nil
}

func (f *sketchState) ProcessElement(ctx *eddy.KeyedContext[int64, keyedCount], e event) error {
	n, _ := f.seq.Value()
	f.seq.Update(n + 1)
	h, ok := f.hll.Value()
	if !ok {
		h = sketch.NewHyperLogLog(10)
	}
	h.AddUint64(e.User)
	f.hll.Update(h)
	g, ok := f.dgim.Value()
	if !ok {
		g = sketch.NewDGIM(64, 2)
	}
	g.Add(e.Value > 700)
	f.dgim.Update(g)
	ctx.Emit(keyedCount{Key: e.Key, Seq: n + 1, Distinct: h.Estimate(), High: g.Count()})
	return nil
}

// sketchOutputs are the results of sketchJob, by key and window (or
// sequence number).
type sketchOutputs struct {
	distinct  map[windowKey]uint64
	quantiles map[windowKey][]float64
	moments   map[windowKey]sketch.MomentsResult
	keyed     map[[2]int64]keyedCount
}

// sketchJob aggregates sliding windows with HLLAgg, KLLAgg and MomentsAgg,
// whose accumulators the window panes keep in keyed state, and runs
// sketchState; hook runs on every record first.
func sketchJob(t *testing.T, env *eddy.Environment, n int64, rate float64, hook func(event)) func() sketchOutputs {
	// One source and one hook subtask fix the order of each key's records,
	// so that the order-dependent KLL and DGIM give the same results on
	// every run and every replay.
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n, RatePerSecond: rate}, genEvent,
		eddy.BoundedOutOfOrder(0, func(e event) int64 { return e.TS })).Parallelism(1)
	checked := eddy.Map(src, func(e event) event {
		if hook != nil {
			hook(e)
		}
		return e
	}).Name("hook").Parallelism(1)
	byKey := eddy.KeyBy(checked, func(e event) int64 { return e.Key })
	sliding := window.Sliding(4*time.Second, time.Second)
	distinct := eddy.Collect(eddy.Aggregate(eddy.Window(byKey, sliding), sketch.HLLAgg(10, func(e event) uint64 { return e.User })))
	quantiles := eddy.Collect(eddy.Aggregate(eddy.Window(byKey, sliding), sketch.KLLAgg(64, 1, func(e event) float64 { return e.Value }, 0.1, 0.5, 0.9)))
	moments := eddy.Collect(eddy.Aggregate(eddy.Window(byKey, sliding), sketch.MomentsAgg(func(e event) float64 { return e.Value })))
	keyed := eddy.Collect(eddy.ProcessKeyed(byKey, func() eddy.KeyedProcessFunction[int64, event, keyedCount] { return &sketchState{} }))
	return func() sketchOutputs {
		out := sketchOutputs{distinct: map[windowKey]uint64{}, quantiles: map[windowKey][]float64{},
			moments: map[windowKey]sketch.MomentsResult{}, keyed: map[[2]int64]keyedCount{}}
		collectOnce(t, "distinct", distinct.Values(), out.distinct, equalFn[uint64])
		collectOnce(t, "quantiles", quantiles.Values(), out.quantiles, func(a, b []float64) bool { return fmt.Sprint(a) == fmt.Sprint(b) })
		collectOnce(t, "moments", moments.Values(), out.moments, func(a, b sketch.MomentsResult) bool {
			return a.Count == b.Count && math.Abs(a.Mean-b.Mean) <= 1e-9*math.Abs(b.Mean) && math.Abs(a.Variance-b.Variance) <= 1e-9*b.Variance
		})
		for _, c := range keyed.Values() {
			k := [2]int64{c.Key, c.Seq}
			if old, dup := out.keyed[k]; dup && old != c {
				t.Fatalf("key %d record %d: emitted %+v and %+v", c.Key, c.Seq, old, c)
			}
			out.keyed[k] = c
		}
		return out
	}
}

func equalFn[T comparable](a, b T) bool { return a == b }

// collectOnce indexes windowed results by key and window; a window that
// fires again after a restart (the sink is at-least-once) must give an
// equal value.
func collectOnce[R any](t *testing.T, what string, vs []eddy.Windowed[int64, R], into map[windowKey]R, eq func(a, b R) bool) {
	t.Helper()
	for _, w := range vs {
		k := windowKey{fmt.Sprint(w.Key), w.Window.Start, w.Window.End}
		if old, dup := into[k]; dup && !eq(old, w.Value) {
			t.Fatalf("%s %v fired with %v and %v", what, k, old, w.Value)
		}
		into[k] = w.Value
	}
}

// Sketches in window panes and in keyed state survive failures: a job that
// fails three times and restarts from its checkpoints gives the results of
// a failure-free run.
func TestCheckpointedSketches(t *testing.T) {
	const n = 30000
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	ref := sketchJob(t, env, n, 0, nil)
	if err := env.Execute(context.Background(), "reference"); err != nil {
		t.Fatal(err)
	}
	want := ref()

	env = eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithLogger(slog.New(slog.DiscardHandler)),
		eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
		eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 5*time.Millisecond)))
	var mu sync.Mutex
	panicAt := map[int64]bool{7000: true, 16000: true, 24000: true}
	got := sketchJob(t, env, n, 40000, func(e event) {
		i := e.TS / 10
		mu.Lock()
		boom := panicAt[i]
		delete(panicAt, i)
		mu.Unlock()
		if boom {
			panic(fmt.Sprintf("injected failure at record %d", i))
		}
	})
	if err := env.Execute(context.Background(), "failures"); err != nil {
		t.Fatal(err)
	}
	if r := env.Restarts(); r != 3 {
		t.Fatalf("job restarted %d times, want 3", r)
	}
	out := got()
	if len(out.keyed) != n {
		t.Fatalf("%d keyed outputs, want %d", len(out.keyed), n)
	}
	for k, v := range want.keyed {
		if out.keyed[k] != v {
			t.Fatalf("key %d record %d: %+v after restarts, %+v without", k[0], k[1], out.keyed[k], v)
		}
	}
	checkSame(t, "distinct", out.distinct, want.distinct, equalFn[uint64])
	checkSame(t, "quantiles", out.quantiles, want.quantiles, func(a, b []float64) bool { return fmt.Sprint(a) == fmt.Sprint(b) })
	checkSame(t, "moments", out.moments, want.moments, func(a, b sketch.MomentsResult) bool {
		return a.Count == b.Count && math.Abs(a.Mean-b.Mean) <= 1e-9*math.Abs(b.Mean)
	})
}

func checkSame[R any](t *testing.T, what string, got, want map[windowKey]R, eq func(a, b R) bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d windows after restarts, %d without", what, len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !eq(g, w) {
			t.Fatalf("%s %v: %v after restarts, %v without", what, k, g, w)
		}
	}
}

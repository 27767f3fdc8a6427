package sketch_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/sketch"
	"github.com/eddystream/eddy/state"
	"github.com/eddystream/eddy/window"
)

// visit is the record of the engine tests: a page, a user and a latency,
// at a time in milliseconds.
type visit struct {
	Page    string
	User    uint64
	Latency float64
	At      int64
}

// visits returns n visits over 60 s of event time in timestamp order, on
// four pages with different numbers of users and latency distributions.
func visits(n int, seed uint64) []visit {
	r := rand.New(rand.NewPCG(seed, 99))
	pages := []struct {
		name  string
		users uint64
		mu    float64
	}{{"home", 20000, 50}, {"cart", 3000, 120}, {"pay", 400, 300}, {"help", 40, 80}}
	out := make([]visit, n)
	for i := range out {
		p := pages[r.IntN(len(pages))]
		out[i] = visit{Page: p.name, User: r.Uint64N(p.users), Latency: p.mu * math.Exp(r.NormFloat64()*0.5), At: int64(i) * 60000 / int64(n)}
	}
	return out
}

// windowKey identifies a keyed window.
type windowKey struct {
	Page       string
	Start, End int64
}

// expectedWindows returns the windows of each page that hold at least one
// visit, for windows of size ms starting every slide ms.
func expectedWindows(vs []visit, size, slide int64) map[windowKey][]visit {
	out := map[windowKey][]visit{}
	for _, v := range vs {
		last := v.At - v.At%slide
		for s := last; s > v.At-size; s -= slide {
			k := windowKey{v.Page, s, s + size}
			out[k] = append(out[k], v)
		}
	}
	return out
}

// runWindows aggregates vs per page in windows of a with f and returns the
// results by window.
func runWindows[ACC, R any](t *testing.T, vs []visit, a window.Assigner, f agg.Function[visit, ACC, R]) map[windowKey]R {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	// One source subtask keeps each page's visits in order, so that the
	// order-dependent synopses (KLL, samples) give the same result every run.
	src := eddy.FromSlice(env, vs, eddy.Monotonous(func(v visit) int64 { return v.At })).Parallelism(1)
	byPage := eddy.KeyBy(src, func(v visit) string { return v.Page })
	out := eddy.Collect(eddy.Aggregate(eddy.Window(byPage, a), f))
	if err := env.Execute(context.Background(), "sketch windows"); err != nil {
		t.Fatal(err)
	}
	got := map[windowKey]R{}
	for _, w := range out.Values() {
		k := windowKey{w.Key, w.Window.Start, w.Window.End}
		if _, dup := got[k]; dup {
			t.Fatalf("window %v fired twice", k)
		}
		got[k] = w.Value
	}
	return got
}

var windowCases = []struct {
	name        string
	a           window.Assigner
	size, slide int64
}{
	{"tumbling", window.Tumbling(10 * time.Second), 10000, 10000},
	{"sliding", window.Sliding(10*time.Second, 2*time.Second), 10000, 2000},
}

// checkWindows checks that got has exactly the windows of want.
func checkWindows[R any](t *testing.T, got map[windowKey]R, want map[windowKey][]visit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d windows fired, want %d", len(got), len(want))
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Fatalf("window %v did not fire", k)
		}
	}
}

// Per-page distinct users with HLLAgg in tumbling and sliding windows,
// against exact counts.
func TestEngineHLLAggWindows(t *testing.T) {
	vs := visits(60000, 1)
	const p = 12
	bound := 4 * 1.04 / math.Sqrt(1<<p) // four standard errors
	for _, c := range windowCases {
		t.Run(c.name, func(t *testing.T) {
			got := runWindows(t, vs, c.a, sketch.HLLAgg(p, func(v visit) uint64 { return v.User }))
			want := expectedWindows(vs, c.size, c.slide)
			checkWindows(t, got, want)
			worst := 0.0
			for k, in := range want {
				users := map[uint64]bool{}
				for _, v := range in {
					users[v.User] = true
				}
				exact := float64(len(users))
				rel := math.Abs(float64(got[k])-exact) / exact
				worst = max(worst, rel)
				if rel > bound {
					t.Errorf("%v: estimate %d, exact %v (error %.2f%% > %.2f%%)", k, got[k], exact, 100*rel, 100*bound)
				}
			}
			t.Logf("%d windows, worst relative error %.2f%% (bound %.2f%%)", len(want), 100*worst, 100*bound)
		})
	}
}

// Per-page mean and variance with MomentsAgg equal the exact ones.
func TestEngineMomentsAggWindows(t *testing.T) {
	vs := visits(20000, 2)
	for _, c := range windowCases {
		t.Run(c.name, func(t *testing.T) {
			got := runWindows(t, vs, c.a, sketch.MomentsAgg(func(v visit) float64 { return v.Latency }))
			want := expectedWindows(vs, c.size, c.slide)
			checkWindows(t, got, want)
			for k, in := range want {
				var sum float64
				for _, v := range in {
					sum += v.Latency
				}
				mean := sum / float64(len(in))
				var ss float64
				for _, v := range in {
					ss += (v.Latency - mean) * (v.Latency - mean)
				}
				r := got[k]
				if r.Count != uint64(len(in)) {
					t.Fatalf("%v: count %d, want %d", k, r.Count, len(in))
				}
				closeTo(t, k, "mean", r.Mean, mean)
				closeTo(t, k, "variance", r.Variance, ss/float64(len(in)))
				if len(in) > 1 {
					closeTo(t, k, "sample variance", r.SampleVariance, ss/float64(len(in)-1))
				}
			}
		})
	}
}

func closeTo(t *testing.T, k windowKey, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("%v: %s %v, want %v", k, what, got, want)
	}
}

// Per-page latency quantiles with KLLAgg are within the rank error.
func TestEngineKLLAggWindows(t *testing.T) {
	vs := visits(40000, 3)
	const k = 100
	qs := []float64{0.1, 0.5, 0.9, 0.99}
	eps := sketch.KLLNormalizedRankError(k, false)
	for _, c := range windowCases {
		t.Run(c.name, func(t *testing.T) {
			got := runWindows(t, vs, c.a, sketch.KLLAgg(k, 5, func(v visit) float64 { return v.Latency }, qs...))
			want := expectedWindows(vs, c.size, c.slide)
			checkWindows(t, got, want)
			worst := 0.0
			for wk, in := range want {
				xs := make([]float64, len(in))
				for i, v := range in {
					xs[i] = v.Latency
				}
				slices.Sort(xs)
				for i, q := range qs {
					x := got[wk][i]
					// The true rank interval of x: values below it to values at or below it.
					lo := float64(sort.SearchFloat64s(xs, x)) / float64(len(xs))
					hi := float64(sort.Search(len(xs), func(j int) bool { return xs[j] > x })) / float64(len(xs))
					err := 0.0
					if q < lo {
						err = lo - q
					} else if q > hi {
						err = q - hi
					}
					worst = max(worst, err)
					if err > eps {
						t.Errorf("%v q=%v: %v has rank [%.4f, %.4f] (error %.4f > %.4f)", wk, q, x, lo, hi, err, eps)
					}
				}
			}
			t.Logf("%d windows, worst rank error %.4f (bound %.4f)", len(want), worst, eps)
		})
	}
}

// Per-page top users and reservoirs in windows: TopKAgg finds the heavy
// users, ReservoirAgg samples only the window's own users.
func TestEngineTopKAndReservoirWindows(t *testing.T) {
	vs := visits(20000, 4)
	// Make user 7 of "home" heavy: every fifth home visit.
	n := 0
	for i := range vs {
		if vs[i].Page == "home" {
			if n%5 == 0 {
				vs[i].User = 7
			}
			n++
		}
	}
	a := window.Tumbling(10 * time.Second)
	want := expectedWindows(vs, 10000, 10000)
	tops := runWindows(t, vs, a, sketch.TopKAgg(3, 1024, 4, 1, func(v visit) string { return fmt.Sprint(v.User) }))
	samples := runWindows(t, vs, a, sketch.ReservoirAgg(25, 1, func(v visit) uint64 { return v.User }))
	checkWindows(t, tops, want)
	for k, in := range want {
		if k.Page == "home" {
			if top := tops[k]; len(top) == 0 || top[0].Item != "7" {
				t.Errorf("%v: top users %v, want 7 first", k, top)
			}
		}
		users := map[uint64]bool{}
		for _, v := range in {
			users[v.User] = true
		}
		s := samples[k]
		if len(s) != min(25, len(in)) {
			t.Errorf("%v: %d sampled of %d", k, len(s), len(in))
		}
		for _, u := range s {
			if !users[u] {
				t.Fatalf("%v: sampled user %d is not in the window", k, u)
			}
		}
	}
}

// distinctUsers keeps a HyperLogLog per page in a state.Value with an
// explicit codec, and a DGIM counter of slow visits (latency over 200 ms)
// among the last 100 of the page, and emits both after every visit.
type distinctUsers struct {
	hll  state.Value[*sketch.HyperLogLog]
	slow state.Value[*sketch.DGIM]
}

type pageStats struct {
	Page     string
	Distinct uint64
	Slow     uint64
}

func (f *distinctUsers) Open(ctx *eddy.KeyedContext[string, pageStats]) error {
	f.hll = state.NewValue(ctx.Store(), state.ValueDescriptor[*sketch.HyperLogLog]{
		Name: "users", Codec: sketch.BinaryCodec[sketch.HyperLogLog](),
	})
	f.slow = state.NewValue(ctx.Store(), state.ValueDescriptor[*sketch.DGIM]{
		Name: "slow", Codec: sketch.BinaryCodec[sketch.DGIM](),
	})
	return nil
}

func (f *distinctUsers) ProcessElement(ctx *eddy.KeyedContext[string, pageStats], v visit) error {
	h, ok := f.hll.Value()
	if !ok {
		h = sketch.NewHyperLogLog(12)
	}
	h.AddUint64(v.User)
	f.hll.Update(h)
	g, ok := f.slow.Value()
	if !ok {
		g = sketch.NewDGIM(100, 8)
	}
	g.Add(v.Latency > 200)
	f.slow.Update(g)
	ctx.Emit(pageStats{Page: ctx.Key(), Distinct: h.Estimate(), Slow: g.Count()})
	return nil
}

func TestEngineSketchInKeyedState(t *testing.T) {
	vs := visits(30000, 5)
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	// One source subtask keeps each page's visits in order, for DGIM.
	src := eddy.FromSlice(env, vs, eddy.Monotonous(func(v visit) int64 { return v.At })).Parallelism(1)
	out := eddy.Collect(eddy.ProcessKeyed(eddy.KeyBy(src, func(v visit) string { return v.Page }),
		func() eddy.KeyedProcessFunction[string, visit, pageStats] { return &distinctUsers{} }))
	if err := env.Execute(context.Background(), "distinct users"); err != nil {
		t.Fatal(err)
	}
	last := map[string]pageStats{}
	n := 0
	for _, s := range out.Values() {
		last[s.Page] = s
		n++
	}
	if n != len(vs) {
		t.Fatalf("%d outputs, want %d", n, len(vs))
	}
	users := map[string]map[uint64]bool{}
	var recent = map[string][]bool{}
	for _, v := range vs {
		if users[v.Page] == nil {
			users[v.Page] = map[uint64]bool{}
		}
		users[v.Page][v.User] = true
		recent[v.Page] = append(recent[v.Page], v.Latency > 200)
	}
	for page, u := range users {
		exact := float64(len(u))
		if got := float64(last[page].Distinct); math.Abs(got-exact) > 4*1.04/64*exact {
			t.Errorf("%s: %v distinct users, exact %v", page, got, exact)
		}
		r := recent[page]
		var slow uint64
		for _, b := range r[max(0, len(r)-100):] {
			if b {
				slow++
			}
		}
		// DGIM with r = 8: error at most count/(2(r−1)) + 1.
		if got := last[page].Slow; math.Abs(float64(got)-float64(slow)) > float64(slow)/14+1 {
			t.Errorf("%s: %d slow of the last 100, exact %d", page, got, slow)
		}
	}
}

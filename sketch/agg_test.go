package sketch_test

import (
	"bytes"
	"encoding"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/sketch"
)

// item is the input of the adapter tests.
type item struct {
	Key   string
	ID    uint64
	Value float64
}

func items(n int, seed uint64) []item {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]item, n)
	for i := range out {
		id := r.Uint64N(uint64(n / 3))
		out[i] = item{Key: fmt.Sprint("k", id%50), ID: id, Value: r.NormFloat64()*10 + 100}
	}
	return out
}

// marshal encodes a synopsis for comparisons.
func marshal(t *testing.T, v any) []byte {
	t.Helper()
	m, ok := v.(encoding.BinaryMarshaler)
	if !ok {
		t.Fatalf("%T does not marshal", v)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkAdapter checks the value semantics of an adapter: Create returns
// independent accumulators, Merge changes neither its second argument nor
// the pane accumulators merged into a fresh one (as a window firing does),
// results do not alias accumulators, and, when exact is set, merging
// partial accumulators gives the result of one accumulator over all inputs.
// enc encodes an accumulator.
func checkAdapter[IN, ACC, OUT any](t *testing.T, f agg.Function[IN, ACC, OUT], in []IN, enc func(ACC) []byte, exact bool) {
	t.Helper()
	fresh := enc(f.Create())
	c1, c2 := f.Create(), f.Create()
	c1 = f.Add(c1, in[0])
	if !bytes.Equal(enc(c2), fresh) {
		t.Fatal("adding to one created accumulator changed another")
	}

	// Three panes and one accumulator of everything.
	panes := []ACC{f.Create(), f.Create(), f.Create()}
	whole := f.Create()
	for i, v := range in {
		panes[i%3] = f.Add(panes[i%3], v)
		whole = f.Add(whole, v)
	}
	before := make([][]byte, len(panes))
	for i, p := range panes {
		before[i] = enc(p)
	}
	fire := func() OUT {
		acc := f.Create()
		for _, p := range panes {
			acc = f.Merge(acc, p)
		}
		return f.Result(acc)
	}
	r1 := fire()
	r2 := fire()
	for i, p := range panes {
		if !bytes.Equal(enc(p), before[i]) {
			t.Fatalf("firing changed pane %d", i)
		}
	}
	if !reflect.DeepEqual(r1, r2) {
		t.Fatalf("firing twice gave %v then %v", r1, r2)
	}
	// Merge of two non-empty accumulators leaves the second alone.
	a := f.Add(f.Create(), in[1])
	a = f.Merge(a, panes[0])
	if !bytes.Equal(enc(panes[0]), before[0]) {
		t.Fatal("Merge changed its second argument")
	}
	_ = a
	// The result does not alias the accumulator.
	w := enc(whole)
	res := f.Result(whole)
	scribble(res)
	if !bytes.Equal(enc(whole), w) {
		t.Fatal("changing the result changed the accumulator")
	}
	if exact {
		if got, want := fire(), f.Result(whole); !reflect.DeepEqual(got, want) {
			t.Fatalf("merged panes give %v, one accumulator %v", got, want)
		}
	}
}

// scribble overwrites what a result points to.
func scribble(v any) {
	switch r := v.(type) {
	case []float64:
		for i := range r {
			r[i] = -1
		}
	case []uint64:
		for i := range r {
			r[i] = 0
		}
	case []sketch.ItemCount:
		for i := range r {
			r[i] = sketch.ItemCount{}
		}
	case []sketch.WeightedItem[uint64]:
		for i := range r {
			r[i] = sketch.WeightedItem[uint64]{}
		}
	case *sketch.CountMin:
		r.AddString("scribble", 1000)
	case *sketch.Bloom:
		r.AddString("scribble")
	}
}

func encPtr[P encoding.BinaryMarshaler](t *testing.T) func(P) []byte {
	return func(p P) []byte { return marshal(t, p) }
}

func TestAggAdapters(t *testing.T) {
	in := items(3000, 7)
	key := func(v item) string { return v.Key }
	id := func(v item) uint64 { return v.ID }
	val := func(v item) float64 { return v.Value }
	t.Run("Moments", func(t *testing.T) {
		f := sketch.MomentsAgg(val)
		checkAdapter(t, f, in, func(m sketch.Moments) []byte { return marshal(t, &m) }, false)
	})
	t.Run("HLL", func(t *testing.T) {
		checkAdapter(t, sketch.HLLAgg(12, id), in, encPtr[*sketch.HyperLogLog](t), true)
		checkAdapter(t, sketch.HLLAgg(4, key), in, encPtr[*sketch.HyperLogLog](t), true)
	})
	t.Run("PCSA", func(t *testing.T) {
		checkAdapter(t, sketch.PCSAAgg(64, 3, id), in, encPtr[*sketch.PCSA](t), true)
	})
	t.Run("FM", func(t *testing.T) {
		checkAdapter(t, sketch.FMAgg(16, 4, 3, func(v item) []byte { return []byte(v.Key) }), in, encPtr[*sketch.FlajoletMartin](t), true)
	})
	t.Run("CountMin", func(t *testing.T) {
		checkAdapter(t, sketch.CountMinAgg(64, 4, 3, key), in, encPtr[*sketch.CountMin](t), true)
	})
	t.Run("AMS", func(t *testing.T) {
		checkAdapter(t, sketch.AMSAgg(64, 5, 3, id), in, encPtr[*sketch.AMS](t), true)
	})
	t.Run("Bloom", func(t *testing.T) {
		checkAdapter(t, sketch.BloomAgg(1<<12, 4, 3, id), in, encPtr[*sketch.Bloom](t), true)
	})
	t.Run("KLL", func(t *testing.T) {
		checkAdapter(t, sketch.KLLAgg(32, 3, val, 0, 0.5, 0.99, 1), in, encPtr[*sketch.KLL](t), false)
	})
	t.Run("Reservoir", func(t *testing.T) {
		checkAdapter(t, sketch.ReservoirAgg(20, 3, id), in, encPtr[*sketch.Reservoir[uint64]](t), false)
	})
	t.Run("WeightedReservoir", func(t *testing.T) {
		f := sketch.WeightedReservoirAgg(20, 3, func(v item) (uint64, float64) { return v.ID, v.Value })
		checkAdapter(t, f, in, encPtr[*sketch.WeightedReservoir[uint64]](t), false)
	})
	t.Run("TopK", func(t *testing.T) {
		checkAdapter(t, sketch.TopKAgg(5, 256, 4, 3, key), in, encPtr[*sketch.TopK](t), false)
	})
}

// Named key types hash as their underlying types.
func TestAggKeyForms(t *testing.T) {
	type name string
	type id int64
	type raw []byte
	hs := sketch.HLLAgg(10, func(s string) name { return name(s) })
	hb := sketch.HLLAgg(10, func(s string) raw { return raw(s) })
	hp := sketch.HLLAgg(10, func(s string) string { return s })
	hi := sketch.HLLAgg(10, func(s string) id { return id(len(s)) })
	hu := sketch.HLLAgg(10, func(s string) uint64 { return uint64(len(s)) })
	a, b, c, d, e := hs.Create(), hb.Create(), hp.Create(), hi.Create(), hu.Create()
	for i := range 500 {
		s := fmt.Sprint("item-", i)
		a, b, c, d, e = hs.Add(a, s), hb.Add(b, s), hp.Add(c, s), hi.Add(d, s), hu.Add(e, s)
	}
	if !bytes.Equal(marshal(t, a), marshal(t, c)) || !bytes.Equal(marshal(t, b), marshal(t, c)) {
		t.Error("a named string or byte-slice key hashes unlike a string")
	}
	if !bytes.Equal(marshal(t, d), marshal(t, e)) {
		t.Error("a named int64 key hashes unlike a uint64")
	}
}

func TestMomentsAggResult(t *testing.T) {
	f := sketch.MomentsAgg(func(x float64) float64 { return x })
	acc := f.Create()
	for _, x := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		acc = f.Add(acc, x)
	}
	r := f.Result(acc)
	want := sketch.MomentsResult{Count: 8, Sum: 40, Mean: 5, Variance: 4, SampleVariance: 32.0 / 7, StdDev: 2, SampleStdDev: math.Sqrt(32.0 / 7)}
	if math.Abs(r.SampleVariance-want.SampleVariance) > 1e-12 || math.Abs(r.SampleStdDev-want.SampleStdDev) > 1e-12 {
		t.Fatalf("got %+v, want %+v", r, want)
	}
	r.SampleVariance, r.SampleStdDev = want.SampleVariance, want.SampleStdDev
	if r != want {
		t.Fatalf("got %+v, want %+v", r, want)
	}
	if got := f.Result(f.Create()); got.Count != 0 || !math.IsNaN(got.Mean) || !math.IsNaN(got.Variance) {
		t.Fatalf("empty: %+v", got)
	}
}

func TestKLLAggEmptyAndInvalid(t *testing.T) {
	f := sketch.KLLAgg(200, 1, func(x float64) float64 { return x }, 0.5, 0.9)
	if r := f.Result(f.Create()); len(r) != 2 || !math.IsNaN(r[0]) || !math.IsNaN(r[1]) {
		t.Fatalf("empty result %v", r)
	}
	mustPanic(t, "quantile 1.5", func() { sketch.KLLAgg(200, 1, func(x float64) float64 { return x }, 1.5) })
	mustPanic(t, "k=2", func() { sketch.KLLAgg(2, 1, func(x float64) float64 { return x }) })
	mustPanic(t, "precision 30", func() { sketch.HLLAgg(30, func(x string) string { return x }) })
	mustPanic(t, "TopK k=0", func() { sketch.TopKAgg(0, 10, 2, 1, func(x string) string { return x }) })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

// Accumulators of different panes and keys sample independently: two
// reservoirs fed different streams of equal length keep different
// positions.
func TestReservoirAggReseeds(t *testing.T) {
	f := sketch.ReservoirAgg(10, 1, func(v int) int { return v })
	a, b := f.Create(), f.Create()
	for i := range 1000 {
		a = f.Add(a, i)
		b = f.Add(b, 1000+i)
	}
	pa, pb := f.Result(a), f.Result(b)
	for i := range pb {
		pb[i] -= 1000
	}
	slices.Sort(pa)
	slices.Sort(pb)
	if slices.Equal(pa, pb) {
		t.Fatalf("two panes kept the same positions %v", pa)
	}
}

func TestTopK(t *testing.T) {
	// Zipf-like counts: item i occurs 1000/(i+1) times, interleaved.
	var stream []string
	for round := range 1000 {
		for i := range 200 {
			if round < 1000/(i+1) {
				stream = append(stream, fmt.Sprint("item", i))
			}
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(stream), func(i, j int) { stream[i], stream[j] = stream[j], stream[i] })
	whole := sketch.NewTopK(5, 2048, 5, 9)
	parts := []*sketch.TopK{sketch.NewTopK(5, 2048, 5, 9), sketch.NewTopK(5, 2048, 5, 9)}
	for i, s := range stream {
		whole.Add(s, 1)
		parts[i%2].Add(s, 1)
	}
	if err := parts[0].Merge(parts[1]); err != nil {
		t.Fatal(err)
	}
	for _, tk := range []*sketch.TopK{whole, parts[0]} {
		top := tk.Top()
		if len(top) != 5 {
			t.Fatalf("top %v", top)
		}
		for i, ic := range top {
			want := uint64(1000 / (i + 1))
			if ic.Item != fmt.Sprint("item", i) || ic.Count < want || ic.Count > want+want/10 {
				t.Errorf("rank %d: %+v, want item%d ≈ %d", i, ic, i, want)
			}
		}
	}
	if err := whole.Merge(sketch.NewTopK(4, 2048, 5, 9)); err == nil {
		t.Error("merging TopK with another k succeeded")
	}
	// Round trip.
	b := marshal(t, whole)
	var back sketch.TopK
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Top(), whole.Top()) || !bytes.Equal(marshal(t, &back), b) {
		t.Fatal("TopK round trip differs")
	}
	for n := range len(b) {
		if err := back.UnmarshalBinary(b[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
	if err := back.UnmarshalBinary(append(slices.Clone(b), 0)); err == nil {
		t.Fatal("trailing byte: no error")
	}
}

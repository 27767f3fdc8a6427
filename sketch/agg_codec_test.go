package sketch_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/eddystream/eddy/agg"
	istate "github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/heap"
	"github.com/eddystream/eddy/internal/state/memtest"
	"github.com/eddystream/eddy/sketch"
	"github.com/eddystream/eddy/state"
)

const maxP = 128

var allGroups = istate.KeyGroupRange{Start: 0, End: maxP}

// keyedStore is a store of string keys over b whose current key is k.
func keyedStore(b istate.Backend, k string) state.Store[string] {
	kc := &istate.KeyContext[string]{Key: k, KG: 17}
	return istate.NewStore(b, kc, func() int64 { return 0 }, nil)
}

// roundTrip keeps x in a state.Value with BinaryCodec, both on a backend
// that encodes every write (memtest) and through a snapshot and restore of
// the heap backend, and checks that what comes back encodes like x and,
// after feeding more input to both, still does.
func roundTrip[T any, P sketch.Binary[T]](t *testing.T, x func() P, more func(P)) {
	t.Helper()
	desc := state.ValueDescriptor[P]{Name: "synopsis", Codec: sketch.BinaryCodec[T, P]()}
	check := func(how string, got, want P) {
		t.Helper()
		if !bytes.Equal(marshal(t, got), marshal(t, want)) {
			t.Fatalf("%s: restored %T encodes differently", how, want)
		}
		more(got)
		more(want)
		if !bytes.Equal(marshal(t, got), marshal(t, want)) {
			t.Fatalf("%s: restored %T diverges after more input", how, want)
		}
	}

	// A bytes backend: Update encodes, Value decodes.
	v := state.NewValue(keyedStore(memtest.New(allGroups, maxP), "a"), desc)
	want := x()
	v.Update(want)
	got, ok := v.Value()
	if !ok {
		t.Fatal("value missing")
	}
	if got == want {
		t.Fatal("the bytes backend returned the stored pointer")
	}
	check("memtest", got, want)

	// The heap backend, snapshotted and restored into a new one.
	hb := heap.New(allGroups, maxP)
	want = x()
	state.NewValue(keyedStore(hb, "a"), desc).Update(want)
	tbl, _ := hb.Table("synopsis")
	blob := tbl.AppendKeyGroup(nil, 17)
	hb2 := heap.New(allGroups, maxP)
	v2 := state.NewValue(keyedStore(hb2, "a"), desc)
	tbl2, _ := hb2.Table("synopsis")
	if err := tbl2.RestoreKeyGroup(17, blob); err != nil {
		t.Fatal(err)
	}
	got, ok = v2.Value()
	if !ok {
		t.Fatal("restored value missing")
	}
	check("heap snapshot", got, want)
}

func fill[P interface{ AddString(string) }](p P, n int, salt string) P {
	for i := range n {
		p.AddString(fmt.Sprint(salt, i%(n/2+1)))
	}
	return p
}

// TestBinaryCodecInKeyedState round-trips every synopsis through its codec
// inside keyed state.
func TestBinaryCodecInKeyedState(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	t.Run("Moments", func(t *testing.T) {
		roundTrip(t, func() *sketch.Moments {
			m := sketch.NewMoments()
			for i := range 100 {
				m.Add(float64(i) * 1.5)
			}
			return m
		}, func(m *sketch.Moments) { m.Add(7) })
	})
	t.Run("FlajoletMartin", func(t *testing.T) {
		roundTrip(t, func() *sketch.FlajoletMartin { return fill(sketch.NewFlajoletMartin(16, 4, 1), 500, "x") },
			func(f *sketch.FlajoletMartin) { fill(f, 100, "y") })
	})
	t.Run("PCSA", func(t *testing.T) {
		roundTrip(t, func() *sketch.PCSA { return fill(sketch.NewPCSA(64, 1), 500, "x") },
			func(p *sketch.PCSA) { fill(p, 100, "y") })
	})
	t.Run("HyperLogLogSparse", func(t *testing.T) {
		roundTrip(t, func() *sketch.HyperLogLog { return fill(sketch.NewHyperLogLog(14), 50, "x") },
			func(h *sketch.HyperLogLog) { fill(h, 10, "y") })
	})
	t.Run("HyperLogLogDense", func(t *testing.T) {
		roundTrip(t, func() *sketch.HyperLogLog { return fill(sketch.NewHyperLogLog(8), 5000, "x") },
			func(h *sketch.HyperLogLog) { fill(h, 100, "y") })
	})
	t.Run("CountMin", func(t *testing.T) {
		roundTrip(t, func() *sketch.CountMin {
			c := sketch.NewCountMin(50, 4, 1)
			c.SetConservative(true)
			for i := range 500 {
				c.AddString(fmt.Sprint(i%40), 2)
			}
			return c
		}, func(c *sketch.CountMin) { c.AddUint64(5, 3) })
	})
	t.Run("AMS", func(t *testing.T) {
		roundTrip(t, func() *sketch.AMS {
			a := sketch.NewAMS(32, 5, 1)
			for i := range 500 {
				a.AddUint64(uint64(i%40), 1)
			}
			return a
		}, func(a *sketch.AMS) { a.AddString("x", -2) })
	})
	t.Run("Reservoir", func(t *testing.T) {
		roundTrip(t, func() *sketch.Reservoir[string] {
			res := sketch.NewReservoir[string](10, 1)
			for i := range 500 {
				res.Add(fmt.Sprint("s", i))
			}
			return res
		}, func(res *sketch.Reservoir[string]) {
			for i := range 100 {
				res.Add(fmt.Sprint("t", i))
			}
		})
	})
	t.Run("WeightedReservoir", func(t *testing.T) {
		ws := make([]float64, 600)
		for i := range ws {
			ws[i] = r.Float64()*10 + 0.1
		}
		roundTrip(t, func() *sketch.WeightedReservoir[int64] {
			res := sketch.NewWeightedReservoir[int64](10, 1)
			for i := range 500 {
				res.Add(int64(i), ws[i])
			}
			return res
		}, func(res *sketch.WeightedReservoir[int64]) {
			for i := 500; i < 600; i++ {
				res.Add(int64(i), ws[i])
			}
		})
	})
	t.Run("Bloom", func(t *testing.T) {
		roundTrip(t, func() *sketch.Bloom { return fill(sketch.NewBloomForCapacity(200, 0.01, 1), 300, "x") },
			func(b *sketch.Bloom) { fill(b, 20, "y") })
	})
	t.Run("DGIM", func(t *testing.T) {
		roundTrip(t, func() *sketch.DGIM {
			g := sketch.NewDGIM(100, 2)
			for i := range 1000 {
				g.Add(i%3 != 0)
			}
			return g
		}, func(g *sketch.DGIM) {
			for i := range 50 {
				g.Add(i%2 == 0)
			}
		})
	})
	t.Run("KLL", func(t *testing.T) {
		xs := make([]float64, 5000)
		for i := range xs {
			xs[i] = r.NormFloat64()
		}
		roundTrip(t, func() *sketch.KLL {
			s := sketch.NewKLL(32, 1)
			for _, x := range xs[:4000] {
				s.Add(x)
			}
			s.Quantile(0.5) // builds the cached view
			return s
		}, func(s *sketch.KLL) {
			for _, x := range xs[4000:] {
				s.Add(x)
			}
		})
	})
	edges := powerLawEdges(400, 4, 9)
	t.Run("TriestBase", func(t *testing.T) {
		roundTrip(t, func() *sketch.TriestBase {
			b := sketch.NewTriestBase(200, 1)
			for _, e := range edges[:1000] {
				b.Add(e[0], e[1])
			}
			return b
		}, func(b *sketch.TriestBase) {
			for _, e := range edges[1000:] {
				b.Add(e[0], e[1])
			}
		})
	})
	t.Run("TriestImpr", func(t *testing.T) {
		roundTrip(t, func() *sketch.TriestImpr {
			b := sketch.NewTriestImpr(200, 1)
			for _, e := range edges[:1000] {
				b.Add(e[0], e[1])
			}
			return b
		}, func(b *sketch.TriestImpr) {
			for _, e := range edges[1000:] {
				b.Add(e[0], e[1])
			}
		})
	})
	t.Run("TriestFD", func(t *testing.T) {
		roundTrip(t, func() *sketch.TriestFD {
			b := sketch.NewTriestFD(200, 1)
			for i, e := range edges[:1000] {
				b.Add(e[0], e[1])
				if i%5 == 4 {
					b.Remove(edges[i-2][0], edges[i-2][1])
				}
			}
			return b
		}, func(b *sketch.TriestFD) {
			for i, e := range edges[1000:] {
				b.Add(e[0], e[1])
				if i%7 == 0 {
					b.Remove(e[0], e[1])
				}
			}
		})
	})
	t.Run("TopK", func(t *testing.T) {
		roundTrip(t, func() *sketch.TopK {
			k := sketch.NewTopK(5, 64, 3, 1)
			for i := range 500 {
				k.Add(fmt.Sprint(i%37%(i%5+1)), 1)
			}
			return k
		}, func(k *sketch.TopK) { k.Add("new", 100) })
	})
}

// powerLawEdges returns a deterministic simple graph with preferential
// attachment: each new vertex links to d earlier ones.
func powerLawEdges(n, d int, seed uint64) [][2]uint64 {
	r := rand.New(rand.NewPCG(seed, seed))
	var edges [][2]uint64
	var ends []uint64
	seen := map[[2]uint64]bool{}
	for v := uint64(1); v < uint64(n); v++ {
		for range d {
			var u uint64
			if len(ends) == 0 || r.IntN(3) == 0 {
				u = r.Uint64N(v)
			} else {
				u = ends[r.IntN(len(ends))]
			}
			e := [2]uint64{u, v}
			if u == v || seen[e] {
				continue
			}
			seen[e] = true
			edges = append(edges, e)
			ends = append(ends, u, v)
		}
	}
	return edges
}

func TestBinaryCodecNilAndErrors(t *testing.T) {
	c := sketch.BinaryCodec[sketch.HyperLogLog]()
	enc := c.Append([]byte("prefix"), nil)
	got, n, err := c.Decode(enc[6:])
	if err != nil || got != nil || n != len(enc)-6 {
		t.Fatalf("nil round trip: %v, %d, %v", got, n, err)
	}
	h := fill(sketch.NewHyperLogLog(10), 100, "x")
	enc = c.Append(nil, h)
	enc = c.Append(enc, h) // codecs are self-delimiting
	got, n, err = c.Decode(enc)
	if err != nil || n != len(enc)/2 || got.Estimate() != h.Estimate() {
		t.Fatalf("decode: %v, %d, %v", got, n, err)
	}
	for i := range len(enc) / 2 {
		if _, _, err := c.Decode(enc[:i]); !errors.Is(err, sketch.ErrTruncated) {
			t.Fatalf("truncated to %d bytes: %v", i, err)
		}
	}
	// A blob of another synopsis is refused.
	other := sketch.BinaryCodec[sketch.PCSA]().Append(nil, sketch.NewPCSA(16, 1))
	if _, _, err := c.Decode(other); !errors.Is(err, sketch.ErrCorrupt) {
		t.Fatalf("foreign tag: %v", err)
	}
	// Decoded values do not share memory with the input.
	enc = c.Append(nil, fill(sketch.NewHyperLogLog(10), 20, "x"))
	got, _, _ = c.Decode(enc)
	before := marshal(t, got)
	for i := range enc {
		enc[i] = 0xff
	}
	if !bytes.Equal(marshal(t, got), before) {
		t.Fatal("the decoded sketch shares memory with its encoding")
	}
}

// Moments values (the accumulator of MomentsAgg) round-trip through
// BinaryValueCodec in aggregating state on a bytes backend.
func TestBinaryValueCodecAggregatingState(t *testing.T) {
	s := keyedStore(memtest.New(allGroups, maxP), "a")
	f := sketch.MomentsAgg(func(x float64) float64 { return x })
	st := state.NewAggregating(s, state.AggregatingDescriptor[float64, sketch.Moments, sketch.MomentsResult]{
		Name: "moments", Function: f, Codec: sketch.BinaryValueCodec[sketch.Moments](),
	})
	hll := state.NewAggregating(s, state.AggregatingDescriptor[string, *sketch.HyperLogLog, uint64]{
		Name: "hll", Function: sketch.HLLAgg(12, func(s string) string { return s }), Codec: sketch.BinaryCodec[sketch.HyperLogLog](),
	})
	direct := sketch.NewMoments()
	exact := map[string]bool{}
	for i := range 1000 {
		x := float64(i%17) * 0.25
		st.Add(x)
		direct.Add(x)
		k := fmt.Sprint(i % 300)
		hll.Add(k)
		exact[k] = true
	}
	got, ok := st.Get()
	if !ok || got.Count != 1000 || got.Mean != direct.Mean() || got.Variance != direct.Variance() {
		t.Fatalf("moments %+v, want mean %v variance %v", got, direct.Mean(), direct.Variance())
	}
	if n, _ := hll.Get(); n != uint64(len(exact)) {
		t.Fatalf("hll %d, want %d (exact while sparse)", n, len(exact))
	}
}

// Window panes keep their accumulators in keyed state with the default
// codec, which encodes every field by reflection: check that it round-trips
// each adapter's accumulator exactly.
func TestDefaultCodecWindowAccumulators(t *testing.T) {
	in := items(2000, 11)
	id := func(v item) uint64 { return v.ID }
	val := func(v item) float64 { return v.Value }
	key := func(v item) string { return v.Key }
	checkDefault(t, sketch.HLLAgg(6, id), in)
	checkDefault(t, sketch.HLLAgg(14, id), in[:50])
	checkDefault(t, sketch.PCSAAgg(64, 3, id), in)
	checkDefault(t, sketch.FMAgg(16, 4, 3, id), in)
	checkDefault(t, sketch.CountMinAgg(64, 4, 3, key), in)
	checkDefault(t, sketch.AMSAgg(64, 5, 3, id), in)
	checkDefault(t, sketch.BloomAgg(1<<12, 4, 3, id), in)
	checkDefault(t, sketch.KLLAgg(32, 3, val, 0.5), in)
	checkDefault(t, sketch.ReservoirAgg(20, 3, key), in)
	checkDefault(t, sketch.WeightedReservoirAgg(20, 3, func(v item) (string, float64) { return v.Key, v.Value }), in)
	checkDefault(t, sketch.TopKAgg(5, 64, 3, 3, key), in)
	c, err := state.DefaultCodec[sketch.Moments]()
	if err != nil {
		t.Fatal(err)
	}
	m := sketch.MomentsAgg(val)
	acc := m.Create()
	for _, v := range in {
		acc = m.Add(acc, v)
	}
	back, _, err := c.Decode(c.Append(nil, acc))
	if err != nil || back != acc {
		t.Fatalf("Moments: %v, %v", back, err)
	}
}

func checkDefault[IN, ACC, OUT any](t *testing.T, f agg.Function[IN, ACC, OUT], in []IN) {
	t.Helper()
	c, err := state.DefaultCodec[ACC]()
	if err != nil {
		t.Fatalf("%T has no default codec: %v", *new(ACC), err)
	}
	acc := f.Create()
	for _, v := range in {
		acc = f.Add(acc, v)
	}
	enc := c.Append(nil, acc)
	back, n, err := c.Decode(enc)
	if err != nil || n != len(enc) {
		t.Fatalf("%T: %d of %d bytes, %v", acc, n, len(enc), err)
	}
	if !bytes.Equal(marshal(t, back), marshal(t, acc)) {
		t.Fatalf("%T: default codec round trip differs", acc)
	}
}

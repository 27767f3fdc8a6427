package sketch

// Comparisons against well-kept external implementations. These imports are
// test-only: the sketch package itself depends on nothing outside the
// standard library.
//
// Accuracy tables (slow, about half a minute):
//
//	SKETCH_COMPARE=1 go test -count=1 -run Compare -v ./sketch/
//
// Update speed:
//
//	go test -count=1 -run '^$' -bench Compare -benchmem ./sketch/

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/apache/datasketches-go/common"
	dskll "github.com/apache/datasketches-go/kll"
	axiom "github.com/axiomhq/hyperloglog"
)

func requireCompare(t *testing.T) {
	if os.Getenv("SKETCH_COMPARE") != "1" {
		t.Skip("set SKETCH_COMPARE=1 to run the comparison tables")
	}
}

// hllErrStats accumulates relative errors.
type hllErrStats struct{ sum, sumAbs, sumSq, n float64 }

func (s *hllErrStats) add(est, truth float64) {
	e := est/truth - 1
	s.sum += e
	s.sumAbs += math.Abs(e)
	s.sumSq += e * e
	s.n++
}

func (s *hllErrStats) String() string {
	return fmt.Sprintf("bias %+.4f  mean|e| %.4f  rmse %.4f", s.sum/s.n, s.sumAbs/s.n, math.Sqrt(s.sumSq/s.n))
}

// TestCompareHLLAccuracy compares ours with axiomhq/hyperloglog at equal
// memory: the same precision, where both keep one byte per dense register
// (2^p bytes). Each trial feeds both sketches the same keys; "hash" feeds
// identical 64-bit hashes through AddHash/InsertHash (estimator only), "item"
// feeds the 8-byte keys through each library's own hash function.
func TestCompareHLLAccuracy(t *testing.T) {
	requireCompare(t)
	checkpoints := []int{100, 1000, 5000, 10000, 20000, 100000, 1000000}
	for _, p := range []uint8{10, 14} {
		const trials = 40
		ours := make([]hllErrStats, len(checkpoints))
		theirs := make([]hllErrStats, len(checkpoints))
		oursItem := make([]hllErrStats, len(checkpoints))
		theirsItem := make([]hllErrStats, len(checkpoints))
		var memOurs, memTheirs, serOurs, serTheirs int
		sizeOurs := make([]int, len(checkpoints))
		sizeTheirs := make([]int, len(checkpoints))
		for trial := uint64(0); trial < trials; trial++ {
			a := NewHyperLogLog(p)
			b, err := axiom.NewSketch(p, true)
			if err != nil {
				t.Fatal(err)
			}
			ai := NewHyperLogLog(p)
			bi, _ := axiom.NewSketch(p, true)
			r := newSplitMix64(trial + 77)
			var buf [8]byte
			n := 0
			for ci, c := range checkpoints {
				for ; n < c; n++ {
					x := r.next()
					a.AddHash(x)
					b.InsertHash(x)
					binary.LittleEndian.PutUint64(buf[:], x)
					ai.Add(buf[:])
					bi.Insert(buf[:])
				}
				ours[ci].add(float64(a.Estimate()), float64(c))
				theirs[ci].add(float64(b.Estimate()), float64(c))
				oursItem[ci].add(float64(ai.Estimate()), float64(c))
				theirsItem[ci].add(float64(bi.Estimate()), float64(c))
				if trial == 0 {
					ab, _ := a.MarshalBinary()
					bb, _ := b.MarshalBinary()
					sizeOurs[ci], sizeTheirs[ci] = len(ab), len(bb)
				}
			}
			memOurs = a.sizeBytes()
			bb, _ := b.MarshalBinary()
			ab, _ := a.MarshalBinary()
			serOurs, serTheirs = len(ab), len(bb)
			memTheirs = 1 << p // axiomhq v0.3 dense registers: one byte each
		}
		t.Logf("precision %d: dense registers ours %d B, axiomhq %d B; serialized ours %d B, axiomhq %d B; 1.04/sqrt(m) = %.4f",
			p, memOurs, memTheirs, serOurs, serTheirs, 1.04/math.Sqrt(float64(uint64(1)<<p)))
		for ci, c := range checkpoints {
			t.Logf("p=%d n=%-8d size: eddy %d B, axiomhq %d B", p, c, sizeOurs[ci], sizeTheirs[ci])
			t.Logf("p=%d n=%-8d hash: eddy %s | axiomhq %s", p, c, &ours[ci], &theirs[ci])
			t.Logf("p=%d n=%-8d item: eddy %s | axiomhq %s", p, c, &oursItem[ci], &theirsItem[ci])
		}
	}
}

// TestCompareKLLAccuracy compares ours with Apache datasketches-go's KLL at
// the same k (200): retained items (memory is 8 bytes per retained item in
// both) and the largest rank error over the 99 percentiles, on random
// permutations of 10^6 values.
func TestCompareKLLAccuracy(t *testing.T) {
	requireCompare(t)
	const n, trials = 1000000, 10
	var ourWorst, theirWorst, ourSum, theirSum float64
	var ourRet, theirRet int
	for trial := uint64(0); trial < trials; trial++ {
		xs := permutation(n, trial+500)
		a := NewKLL(200, trial)
		b, err := dskll.NewKllItemsSketch[float64](200, 8, common.ItemSketchDoubleComparator(false), common.ItemSketchDoubleSerDe{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range xs {
			a.Add(x)
			b.Update(x)
		}
		ea := kllMaxRankError(a, n)
		eb := 0.0
		for i := 1; i < 100; i++ {
			q := float64(i) / 100
			v, err := b.GetQuantile(q, true)
			if err != nil {
				t.Fatal(err)
			}
			eb = math.Max(eb, math.Abs((v+1)/n-q))
			x := math.Floor(q * n)
			rk, _ := b.GetRank(x, true)
			eb = math.Max(eb, math.Abs(rk-(x+1)/n))
		}
		ourWorst, theirWorst = math.Max(ourWorst, ea), math.Max(theirWorst, eb)
		ourSum += ea
		theirSum += eb
		ourRet, theirRet = a.NumRetained(), int(b.GetNumRetained())
	}
	t.Logf("KLL k=200, n=%d, %d trials: retained eddy %d, datasketches %d", n, trials, ourRet, theirRet)
	t.Logf("max rank error over percentiles: eddy mean %.4f worst %.4f | datasketches mean %.4f worst %.4f (bound %.4f)",
		ourSum/trials, ourWorst, theirSum/trials, theirWorst, KLLNormalizedRankError(200, true))
}

func BenchmarkCompareHLLAdd(b *testing.B) {
	keys := make([][8]byte, 1<<16)
	r := newSplitMix64(1)
	for i := range keys {
		binary.LittleEndian.PutUint64(keys[i][:], r.next())
	}
	b.Run("eddy/dense", func(b *testing.B) {
		h := NewHyperLogLog(14)
		h.toDense()
		for i := 0; i < b.N; i++ {
			h.Add(keys[i&(1<<16-1)][:])
		}
	})
	b.Run("axiomhq/dense", func(b *testing.B) {
		h := axiom.New14()
		for i := 0; i < 1<<16; i++ { // force the dense representation
			h.Insert(keys[i][:])
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			h.Insert(keys[i&(1<<16-1)][:])
		}
	})
	b.Run("eddy/hash", func(b *testing.B) {
		h := NewHyperLogLog(14)
		h.toDense()
		for i := 0; i < b.N; i++ {
			h.AddHash(uint64(i) * 0x9e3779b97f4a7c15)
		}
	})
	b.Run("axiomhq/hash", func(b *testing.B) {
		h := axiom.NewNoSparse()
		for i := 0; i < b.N; i++ {
			h.InsertHash(uint64(i) * 0x9e3779b97f4a7c15)
		}
	})
	// Fill: a fresh sketch takes 10^5 distinct items through the sparse
	// phase into dense, then estimates; the metric is ns per item.
	for _, lib := range []string{"eddy", "axiomhq"} {
		b.Run(lib+"/fill100k", func(b *testing.B) {
			var buf [8]byte
			for i := 0; i < b.N; i++ {
				if lib == "eddy" {
					h := NewHyperLogLog(14)
					for j := 0; j < 100000; j++ {
						binary.LittleEndian.PutUint64(buf[:], uint64(j))
						h.Add(buf[:])
					}
					h.Estimate()
				} else {
					h := axiom.New14()
					for j := 0; j < 100000; j++ {
						binary.LittleEndian.PutUint64(buf[:], uint64(j))
						h.Insert(buf[:])
					}
					h.Estimate()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100000, "ns/item")
		})
	}
	b.Run("eddy/estimate", func(b *testing.B) {
		h := NewHyperLogLog(14)
		for i := 0; i < 1000000; i++ {
			h.AddUint64(uint64(i))
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			h.Estimate()
		}
	})
	b.Run("axiomhq/estimate", func(b *testing.B) {
		h := axiom.New14()
		var buf [8]byte
		for i := 0; i < 1000000; i++ {
			binary.LittleEndian.PutUint64(buf[:], uint64(i))
			h.Insert(buf[:])
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			h.Estimate()
		}
	})
}

func BenchmarkCompareKLLAdd(b *testing.B) {
	xs := make([]float64, 1<<16)
	r := newSplitMix64(1)
	for i := range xs {
		xs[i] = r.float64()
	}
	b.Run("eddy", func(b *testing.B) {
		s := NewKLL(200, 1)
		for i := 0; i < b.N; i++ {
			s.Add(xs[i&(1<<16-1)])
		}
	})
	b.Run("datasketches", func(b *testing.B) {
		s, _ := dskll.NewKllItemsSketch[float64](200, 8, common.ItemSketchDoubleComparator(false), common.ItemSketchDoubleSerDe{})
		for i := 0; i < b.N; i++ {
			s.Update(xs[i&(1<<16-1)])
		}
	})
	b.Run("eddy/quantile", func(b *testing.B) {
		s := NewKLL(200, 1)
		for _, x := range xs {
			s.Add(x)
		}
		for i := 0; i < b.N; i++ {
			s.Add(xs[i&(1<<16-1)]) // invalidate the sorted view, as a stream would
			s.Quantile(0.5)
		}
	})
	b.Run("datasketches/quantile", func(b *testing.B) {
		s, _ := dskll.NewKllItemsSketch[float64](200, 8, common.ItemSketchDoubleComparator(false), common.ItemSketchDoubleSerDe{})
		for _, x := range xs {
			s.Update(x)
		}
		for i := 0; i < b.N; i++ {
			s.Update(xs[i&(1<<16-1)])
			s.GetQuantile(0.5, true)
		}
	})
}

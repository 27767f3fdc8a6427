package sketch

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

const (
	kllVersion = 1
	// KLLDefaultK is the recommended accuracy parameter for NewKLL: about
	// 1.33% single-rank and 1.65% all-ranks error at 99% confidence, with
	// about 600 retained values.
	KLLDefaultK = 200
	kllMinWidth = 8 // m: the smallest level capacity
)

// KLL is the quantile sketch of Karnin, Lang and Liberty (2016) over float64
// values, laid out as in Apache DataSketches: level h holds items of weight
// 2^h, level h's capacity is max(8, ⌈k·(2/3)^(H−1−h)⌉) for H levels, and
// when the sketch is full the lowest level at capacity is sorted and
// compacted: one of every pair, starting at a random offset, moves up a
// level with double weight. It keeps O(k) items.
//
// Rank error. For accuracy parameter k, a rank query Rank(x) is within
// ε₁(k) = 2.296/k^0.9723 of the true normalised rank, and all ranks at once
// (as for a CDF or PMF) within ε₂(k) = 2.446/k^0.9433, each with probability
// 99%; k = 200 gives ε₁ ≈ 1.33% and ε₂ ≈ 1.65% (NormalizedRankError). These
// are the empirical fits Apache DataSketches publishes for this compaction
// scheme; the tests here check them for this implementation. A quantile
// query returns a retained item whose rank is within the same ε of the
// requested rank. Sketches with the same k merge; the merged sketch keeps
// the same bounds relative to the combined count.
//
// NaN values are ignored.
type KLL struct {
	k        int
	n        uint64
	levels   [][]float64 // levels[0] unsorted, higher levels sorted
	minV     float64
	maxV     float64
	rng      splitMix64
	retained int       // items held in all levels
	caps     []int     // per-level capacities for the current level count
	capTotal int       // sum of caps
	scratch  []float64 // spare backing array for compaction merges
	sorted   []float64 // cached sorted view: items ...
	cumW     []uint64  // ... and inclusive cumulative weights
	viewBufV []float64 // merge buffers for buildView
	viewBufW []uint64
	viewGood bool
}

// NewKLL returns an empty sketch with accuracy parameter k whose random
// compactions derive from seed. It panics unless 8 ≤ k ≤ 65535.
func NewKLL(k int, seed uint64) *KLL {
	if k < kllMinWidth || k > math.MaxUint16 {
		panic(fmt.Sprintf("sketch: KLL needs 8 ≤ k ≤ 65535, got %d", k))
	}
	s := &KLL{k: k, levels: [][]float64{make([]float64, 0, k)}, minV: math.NaN(), maxV: math.NaN(),
		rng: newSplitMix64(seed)}
	s.setCaps()
	return s
}

// setCaps recomputes the level capacities after the level count changed.
func (s *KLL) setCaps() {
	s.caps = s.caps[:0]
	s.capTotal = 0
	for h := range s.levels {
		c := kllLevelCapacity(s.k, len(s.levels), h)
		s.caps = append(s.caps, c)
		s.capTotal += c
	}
}

// KLLNormalizedRankError returns the normalised rank error of a KLL sketch
// with parameter k at 99% confidence: for a single rank (allRanks false) or
// for all ranks simultaneously, as a CDF or PMF needs (allRanks true).
func KLLNormalizedRankError(k int, allRanks bool) float64 {
	if allRanks {
		return 2.446 / math.Pow(float64(k), 0.9433)
	}
	return 2.296 / math.Pow(float64(k), 0.9723)
}

// NormalizedRankError returns KLLNormalizedRankError(k, allRanks) for this
// sketch's k.
func (s *KLL) NormalizedRankError(allRanks bool) float64 {
	return KLLNormalizedRankError(s.k, allRanks)
}

// K returns the accuracy parameter.
func (s *KLL) K() int { return s.k }

// Count returns the number of values added.
func (s *KLL) Count() uint64 { return s.n }

// Min returns the smallest value added, or NaN if none.
func (s *KLL) Min() float64 { return s.minV }

// Max returns the largest value added, or NaN if none.
func (s *KLL) Max() float64 { return s.maxV }

// NumRetained returns the number of items the sketch holds.
func (s *KLL) NumRetained() int { return s.retained }

// levelCapacity returns max(m, round(k·(2/3)^depth)) computed as Apache
// DataSketches does, with depth = numLevels − 1 − level.
func kllLevelCapacity(k, numLevels, level int) int {
	depth := numLevels - 1 - level
	if depth > 40 {
		return kllMinWidth
	}
	c := (2*float64(k)*math.Pow(2.0/3.0, float64(depth)) + 1) / 2
	return max(kllMinWidth, min(k, int(c)))
}

// Add adds the value x; NaN is ignored.
func (s *KLL) Add(x float64) {
	if x != x {
		return
	}
	if s.n == 0 {
		s.minV, s.maxV = x, x
	} else if x < s.minV {
		s.minV = x
	} else if x > s.maxV {
		s.maxV = x
	}
	s.n++
	s.viewGood = false
	s.levels[0] = append(s.levels[0], x)
	s.retained++
	if s.retained >= s.capTotal {
		s.compress()
	}
}

// compress compacts levels until the sketch is within capacity.
func (s *KLL) compress() {
	for s.retained >= s.capTotal {
		h := 0
		for len(s.levels[h]) < s.caps[h] {
			h++
		}
		s.compact(h)
	}
}

// compact halves level h into level h+1: after sorting level 0, every
// other item starting at a random offset moves up with double weight; an
// odd item out (the smallest) stays behind.
func (s *KLL) compact(h int) {
	if h == len(s.levels)-1 {
		s.levels = append(s.levels, nil)
		s.setCaps()
	}
	lv := s.levels[h]
	if h == 0 {
		slices.Sort(lv)
	}
	start := len(lv) % 2
	n := 0
	for i := start + int(s.rng.next()&1); i < len(lv); i += 2 {
		lv[start+n] = lv[i] // in place: start+n ≤ i
		n++
	}
	up := s.levels[h+1]
	merged := mergeInto(s.scratch[:0], up, lv[start:start+n])
	s.scratch = up[:0] // the old backing array is free now
	s.levels[h+1] = merged
	s.levels[h] = lv[:start]
	s.retained -= len(lv) - start - n
}

// mergeInto appends the merge of sorted a and b to dst, which must not
// alias either.
func mergeInto(dst, a, b []float64) []float64 {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			dst = append(dst, b[j])
			j++
		} else {
			dst = append(dst, a[i])
			i++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

func mergeSorted(a, b []float64) []float64 {
	out := make([]float64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			out = append(out, b[j])
			j++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// buildView builds the sorted view of retained items and their cumulative
// weights by merging the levels, which are sorted except level 0.
func (s *KLL) buildView() {
	if s.viewGood {
		return
	}
	n := s.retained
	vals := append(slices.Grow(s.sorted[:0], n), s.levels[0]...)
	slices.Sort(vals)
	wts := slices.Grow(s.cumW[:0], n)[:len(vals)]
	for i := range wts {
		wts[i] = 1
	}
	bufV := slices.Grow(s.viewBufV[:0], n)
	bufW := slices.Grow(s.viewBufW[:0], n)
	for h := 1; h < len(s.levels); h++ {
		lv := s.levels[h]
		if len(lv) == 0 {
			continue
		}
		w := uint64(1) << h
		bufV, bufW = bufV[:0], bufW[:0]
		i, j := 0, 0
		for i < len(vals) && j < len(lv) {
			if lv[j] < vals[i] {
				bufV, bufW = append(bufV, lv[j]), append(bufW, w)
				j++
			} else {
				bufV, bufW = append(bufV, vals[i]), append(bufW, wts[i])
				i++
			}
		}
		bufV, bufW = append(bufV, vals[i:]...), append(bufW, wts[i:]...)
		for ; j < len(lv); j++ {
			bufV, bufW = append(bufV, lv[j]), append(bufW, w)
		}
		vals, bufV = bufV, vals
		wts, bufW = bufW, wts
	}
	var c uint64
	for i, w := range wts {
		c += w
		wts[i] = c
	}
	s.sorted, s.cumW = vals, wts
	s.viewBufV, s.viewBufW = bufV, bufW
	s.viewGood = true
}

// Rank returns the estimated normalised rank of x: the fraction of values
// added that are less than or equal to x. It returns NaN for an empty
// sketch.
func (s *KLL) Rank(x float64) float64 {
	if s.n == 0 {
		return math.NaN()
	}
	s.buildView()
	i := sort.Search(len(s.sorted), func(i int) bool { return s.sorted[i] > x })
	if i == 0 {
		return 0
	}
	return float64(s.cumW[i-1]) / float64(s.n)
}

// CDF returns Rank of each split point.
func (s *KLL) CDF(splits []float64) []float64 {
	out := make([]float64, len(splits))
	for i, x := range splits {
		out[i] = s.Rank(x)
	}
	return out
}

// Quantile returns an estimate of the q-quantile, 0 ≤ q ≤ 1: the smallest
// retained value whose estimated rank is at least q (Quantile(0) is Min and
// Quantile(1) is Max). It returns NaN for an empty sketch and panics if q is
// outside [0, 1].
func (s *KLL) Quantile(q float64) float64 {
	if !(q >= 0 && q <= 1) {
		panic(fmt.Sprintf("sketch: KLL quantile %g outside [0, 1]", q))
	}
	if s.n == 0 {
		return math.NaN()
	}
	switch q {
	case 0:
		return s.minV
	case 1:
		return s.maxV
	}
	s.buildView()
	target := uint64(math.Ceil(q * float64(s.n)))
	i := sort.Search(len(s.cumW), func(i int) bool { return s.cumW[i] >= target })
	if i == len(s.cumW) {
		return s.maxV
	}
	return s.sorted[i]
}

// Quantiles returns Quantile of each fraction in qs.
func (s *KLL) Quantiles(qs []float64) []float64 {
	out := make([]float64, len(qs))
	for i, q := range qs {
		out[i] = s.Quantile(q)
	}
	return out
}

// Merge adds the values summarised by other to s. Both sketches need the
// same k; other is not modified.
func (s *KLL) Merge(other *KLL) error {
	if other == nil {
		return nil
	}
	if s.k != other.k {
		return fmt.Errorf("%w KLL with k=%d with k=%d", ErrIncompatible, s.k, other.k)
	}
	if other.n == 0 {
		return nil
	}
	if other == s {
		c := other.Clone()
		other = c
	}
	if s.n == 0 {
		s.minV, s.maxV = other.minV, other.maxV
	} else {
		s.minV = min(s.minV, other.minV)
		s.maxV = max(s.maxV, other.maxV)
	}
	for len(s.levels) < len(other.levels) {
		s.levels = append(s.levels, nil)
	}
	s.setCaps()
	s.retained += other.retained
	s.levels[0] = append(s.levels[0], other.levels[0]...)
	for h := 1; h < len(other.levels); h++ {
		s.levels[h] = mergeSorted(s.levels[h], other.levels[h])
	}
	s.n += other.n
	s.viewGood = false
	s.compress()
	return nil
}

// Clone returns an independent copy of s, including its random state.
func (s *KLL) Clone() *KLL {
	c := &KLL{k: s.k, n: s.n, minV: s.minV, maxV: s.maxV, rng: s.rng, retained: s.retained}
	c.levels = make([][]float64, len(s.levels))
	for i, l := range s.levels {
		c.levels[i] = slices.Clone(l)
	}
	if c.levels[0] == nil {
		c.levels[0] = make([]float64, 0, s.k)
	}
	c.setCaps()
	return c
}

// MarshalBinary encodes the sketch, including its random state; it
// implements encoding.BinaryMarshaler.
func (s *KLL) MarshalBinary() ([]byte, error) {
	e := newEncoder(kllVersion, tagKLL, 48+8*s.NumRetained()+2*len(s.levels))
	e.count(s.k)
	e.uvarint(s.n)
	e.rng(s.rng)
	e.f64(s.minV)
	e.f64(s.maxV)
	e.count(len(s.levels))
	for _, l := range s.levels {
		e.f64s(l)
	}
	return e.bytes(), nil
}

// UnmarshalBinary restores a sketch written by MarshalBinary; it implements
// encoding.BinaryUnmarshaler. On error s is unchanged.
func (s *KLL) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "KLL", kllVersion, tagKLL)
	k := d.uvarint()
	n := d.uvarint()
	rng := d.rng()
	minV, maxV := d.f64(), d.f64()
	nl := d.count(1)
	if d.err == nil && (k < kllMinWidth || k > math.MaxUint16 || nl < 1 || nl > 64) {
		d.fail("k=%d with %d levels", k, nl)
	}
	levels := make([][]float64, nl)
	var weight uint64
	retained := 0
	for h := range levels {
		levels[h] = d.f64s()
		if d.err != nil {
			break
		}
		for i, v := range levels[h] {
			if v != v || (h > 0 && i > 0 && v < levels[h][i-1]) {
				d.fail("level %d item %d is NaN or out of order", h, i)
				break
			}
		}
		weight += uint64(len(levels[h])) << h
		retained += len(levels[h])
	}
	if d.err == nil && (weight != n || (n > 0 && !(minV <= maxV))) {
		d.fail("retained weight %d for count %d, min %g, max %g", weight, n, minV, maxV)
	}
	if err := d.finish(); err != nil {
		return err
	}
	t := &KLL{k: int(k), n: n, levels: levels, minV: minV, maxV: maxV, rng: rng, retained: retained}
	t.setCaps()
	if n == 0 {
		t.minV, t.maxV = math.NaN(), math.NaN()
	}
	*s = *t
	return nil
}

package sketch

import (
	"fmt"
	"math"
)

const countMinVersion = 1

// CountMin is the Count-Min sketch of Cormode and Muthukrishnan (2005) for
// non-negative item frequencies. A sketch of width w and depth d answers a
// point query with an overestimate â with
//
//	a ≤ â ≤ a + ε·‖a‖₁ with probability ≥ 1 − δ, where ε = e/w, δ = e^−d.
//
// Each row hashes the item's 64-bit XXH64 key with its own pairwise
// independent function (a·x + b) mod (2^61 − 1), whose coefficients come from
// the seed. With conservative update (SetConservative) an update raises only
// the counters that are below the new minimum estimate; estimates stay
// overestimates within the same bound and are usually much tighter.
type CountMin struct {
	width, depth int
	seed         uint64
	conservative bool
	total        uint64
	rows         []uint64 // depth × width counters
	coef         []uint64 // a, b per row
}

// NewCountMin returns an empty sketch with the given width (columns) and
// depth (rows). It panics unless both are positive.
func NewCountMin(width, depth int, seed uint64) *CountMin {
	if width < 1 || depth < 1 {
		panic(fmt.Sprintf("sketch: CountMin needs positive width and depth, got %d×%d", width, depth))
	}
	c := &CountMin{width: width, depth: depth, seed: seed, rows: make([]uint64, width*depth)}
	c.coef = countMinCoefficients(depth, seed)
	return c
}

// NewCountMinWithError returns a sketch sized for error epsilon with
// failure probability delta: width ⌈e/ε⌉ and depth ⌈ln(1/δ)⌉. It panics
// unless 0 < epsilon and 0 < delta < 1.
func NewCountMinWithError(epsilon, delta float64, seed uint64) *CountMin {
	w, d := CountMinSize(epsilon, delta)
	return NewCountMin(w, d, seed)
}

// CountMinSize returns the width ⌈e/ε⌉ and depth ⌈ln(1/δ)⌉ that guarantee
// error ε·‖a‖₁ with probability at least 1 − δ. It panics unless 0 < epsilon
// and 0 < delta < 1.
func CountMinSize(epsilon, delta float64) (width, depth int) {
	if !(epsilon > 0) || !(delta > 0 && delta < 1) {
		panic(fmt.Sprintf("sketch: CountMin needs epsilon > 0 and 0 < delta < 1, got %g and %g", epsilon, delta))
	}
	return int(math.Ceil(math.E / epsilon)), max(1, int(math.Ceil(math.Log(1/delta))))
}

func countMinCoefficients(depth int, seed uint64) []uint64 {
	r := newSplitMix64(seed ^ 0x636f756e746d696e) // "countmin"
	coef := make([]uint64, 2*depth)
	for i := range coef {
		v := r.next() & mersenne61
		for v == mersenne61 || (i%2 == 0 && v == 0) {
			v = r.next() & mersenne61
		}
		coef[i] = v
	}
	return coef
}

// SetConservative switches conservative update on or off for future
// updates.
func (c *CountMin) SetConservative(on bool) { c.conservative = on }

// Conservative reports whether conservative update is on.
func (c *CountMin) Conservative() bool { return c.conservative }

// Width returns the number of counters per row.
func (c *CountMin) Width() int { return c.width }

// Depth returns the number of rows.
func (c *CountMin) Depth() int { return c.depth }

// Epsilon returns e/width, the error bound as a fraction of Total.
func (c *CountMin) Epsilon() float64 { return math.E / float64(c.width) }

// Delta returns e^−depth, the probability that a query exceeds the bound.
func (c *CountMin) Delta() float64 { return math.Exp(-float64(c.depth)) }

// Total returns ‖a‖₁, the sum of all counts added.
func (c *CountMin) Total() uint64 { return c.total }

// Add adds count occurrences of item.
func (c *CountMin) Add(item []byte, count uint64) { c.addKey(hash64(item, c.seed), count) }

// AddString adds count occurrences of the item s.
func (c *CountMin) AddString(s string, count uint64) { c.addKey(hashString(s, c.seed), count) }

// AddUint64 adds count occurrences of the item x.
func (c *CountMin) AddUint64(x, count uint64) { c.addKey(hashUint64(x, c.seed), count) }

// Estimate returns the estimated count of item, never below the true
// count.
func (c *CountMin) Estimate(item []byte) uint64 { return c.estimateKey(hash64(item, c.seed)) }

// EstimateString returns the estimated count of the item s.
func (c *CountMin) EstimateString(s string) uint64 { return c.estimateKey(hashString(s, c.seed)) }

// EstimateUint64 returns the estimated count of the item x.
func (c *CountMin) EstimateUint64(x uint64) uint64 { return c.estimateKey(hashUint64(x, c.seed)) }

func (c *CountMin) column(row int, key uint64) int {
	h := mulAdd61(c.coef[2*row], key, c.coef[2*row+1])
	return row*c.width + int(fastRange(h<<3, uint64(c.width)))
}

func (c *CountMin) addKey(key, count uint64) {
	c.total += count
	key = mod61(key)
	if !c.conservative {
		for j := 0; j < c.depth; j++ {
			c.rows[c.column(j, key)] += count
		}
		return
	}
	target := c.estimateReduced(key) + count
	for j := 0; j < c.depth; j++ {
		if i := c.column(j, key); c.rows[i] < target {
			c.rows[i] = target
		}
	}
}

func (c *CountMin) estimateKey(key uint64) uint64 { return c.estimateReduced(mod61(key)) }

func (c *CountMin) estimateReduced(key uint64) uint64 {
	est := uint64(math.MaxUint64)
	for j := 0; j < c.depth; j++ {
		est = min(est, c.rows[c.column(j, key)])
	}
	return est
}

// Merge adds the counts of other to c. Both sketches need the same width,
// depth and seed. Merging conservative-update sketches by addition keeps
// the overestimate guarantee.
func (c *CountMin) Merge(other *CountMin) error {
	if other == nil {
		return nil
	}
	if c.width != other.width || c.depth != other.depth || c.seed != other.seed {
		return fmt.Errorf("%w CountMin %d×%d (seed %d) with %d×%d (seed %d)",
			ErrIncompatible, c.width, c.depth, c.seed, other.width, other.depth, other.seed)
	}
	if other == c {
		for i := range c.rows {
			c.rows[i] *= 2
		}
		c.total *= 2
		return nil
	}
	for i, v := range other.rows {
		c.rows[i] += v
	}
	c.total += other.total
	return nil
}

// MarshalBinary encodes the sketch; it implements encoding.BinaryMarshaler.
func (c *CountMin) MarshalBinary() ([]byte, error) {
	e := newEncoder(countMinVersion, tagCountMin, 32+4*len(c.rows))
	e.count(c.width)
	e.count(c.depth)
	e.u64(c.seed)
	e.bool(c.conservative)
	e.uvarint(c.total)
	for _, v := range c.rows {
		e.uvarint(v)
	}
	return e.bytes(), nil
}

// UnmarshalBinary restores a sketch written by MarshalBinary; it implements
// encoding.BinaryUnmarshaler. On error c is unchanged.
func (c *CountMin) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "CountMin", countMinVersion, tagCountMin)
	w := d.uvarint()
	dep := d.uvarint()
	seed := d.u64()
	cons := d.bool()
	total := d.uvarint()
	if d.err == nil && (w < 1 || dep < 1 || w*dep/dep != w || w*dep > uint64(d.remaining())) {
		d.err = fmt.Errorf("%w CountMin encoding: %d×%d counters do not fit in %d bytes", ErrTruncated, w, dep, d.remaining())
	}
	if d.err != nil {
		return d.err
	}
	rows := make([]uint64, w*dep)
	for i := range rows {
		rows[i] = d.uvarint()
	}
	if err := d.finish(); err != nil {
		return err
	}
	*c = CountMin{width: int(w), depth: int(dep), seed: seed, conservative: cons, total: total, rows: rows,
		coef: countMinCoefficients(int(dep), seed)}
	return nil
}

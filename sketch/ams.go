package sketch

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

const amsVersion = 1

// AMS estimates the second frequency moment F2 = Σ f_i² of a turnstile
// stream with the tug-of-war sketch of Alon, Matias and Szegedy (1996), in
// its bucketed ("fast AMS") form: each of depth rows hashes an item to one
// of width counters and adds s(x)·c to it, where s is a 4-wise independent
// ±1 hash. A row's estimate Σ_b Z_b² is unbiased with variance at most
// 2·F2²/width, the same as averaging width independent tug-of-war copies
// Z², but each update touches one counter per row instead of width. The
// sketch reports the median of the rows.
//
// With width ⌈6/ε²⌉ a row is within (1 ± ε)·F2 with probability at least
// 2/3 (Chebyshev); the median of depth rows fails with probability at most
// e^(−0.0589·depth) (Chernoff), so depth ⌈17·ln(1/δ)⌉ gives 1 − δ.
//
// Bucket and sign both come from one degree-3 polynomial over GF(2^61 − 1)
// per row, whose coefficients come from the seed. The sketch is linear:
// negative counts are allowed and sketches with equal shape and seed merge
// by addition.
type AMS struct {
	width, depth int
	seed         uint64
	counters     []int64
	coef         [][4]uint64
}

// NewAMS returns an empty sketch with depth rows of width counters. It
// panics unless both are positive.
func NewAMS(width, depth int, seed uint64) *AMS {
	if width < 1 || depth < 1 {
		panic(fmt.Sprintf("sketch: AMS needs positive width and depth, got %d×%d", width, depth))
	}
	return &AMS{width: width, depth: depth, seed: seed, counters: make([]int64, width*depth),
		coef: amsCoefficients(depth, seed)}
}

// NewAMSWithError returns a sketch whose F2 estimate is within (1 ± ε)·F2
// with probability at least 1 − δ: width ⌈6/ε²⌉, depth ⌈17·ln(1/δ)⌉ rounded
// up to an odd number. It panics unless 0 < epsilon and 0 < delta < 1.
func NewAMSWithError(epsilon, delta float64, seed uint64) *AMS {
	if !(epsilon > 0) || !(delta > 0 && delta < 1) {
		panic(fmt.Sprintf("sketch: AMS needs epsilon > 0 and 0 < delta < 1, got %g and %g", epsilon, delta))
	}
	w := int(math.Ceil(6 / (epsilon * epsilon)))
	d := max(1, int(math.Ceil(17*math.Log(1/delta))))
	d |= 1
	return NewAMS(w, d, seed)
}

func amsCoefficients(depth int, seed uint64) [][4]uint64 {
	r := newSplitMix64(seed ^ 0x616d735f66327373) // "ams_f2ss"
	coef := make([][4]uint64, depth)
	for i := range coef {
		for j := range coef[i] {
			v := r.next() & mersenne61
			for v == mersenne61 {
				v = r.next() & mersenne61
			}
			coef[i][j] = v
		}
	}
	return coef
}

// Width returns the number of counters per row.
func (a *AMS) Width() int { return a.width }

// Depth returns the number of rows.
func (a *AMS) Depth() int { return a.depth }

// Add adds count (which may be negative) to the frequency of item.
func (a *AMS) Add(item []byte, count int64) { a.addKey(hash64(item, a.seed), count) }

// AddString adds count to the frequency of the item s.
func (a *AMS) AddString(s string, count int64) { a.addKey(hashString(s, a.seed), count) }

// AddUint64 adds count to the frequency of the item x.
func (a *AMS) AddUint64(x uint64, count int64) { a.addKey(hashUint64(x, a.seed), count) }

func (a *AMS) addKey(key uint64, count int64) {
	x := mod61(key)
	x2 := mulAdd61(x, x, 0)
	x3 := mulAdd61(x2, x, 0)
	for j := range a.depth {
		h := poly3(&a.coef[j], x, x2, x3)
		i := j*a.width + int(fastRange((h>>1)<<4, uint64(a.width)))
		if h&1 == 0 {
			a.counters[i] += count
		} else {
			a.counters[i] -= count
		}
	}
}

// poly3 returns (c3·x³ + c2·x² + c1·x + c0) mod 2^61 − 1 given x, x² and x³
// reduced mod 2^61 − 1, summing the products in 128 bits and reducing once.
func poly3(c *[4]uint64, x, x2, x3 uint64) uint64 {
	hi, lo := bits.Mul64(c[3], x3)
	h2, l2 := bits.Mul64(c[2], x2)
	h1, l1 := bits.Mul64(c[1], x)
	var carry uint64
	lo, carry = bits.Add64(lo, l2, 0)
	hi += h2 + carry
	lo, carry = bits.Add64(lo, l1, 0)
	hi += h1 + carry
	lo, carry = bits.Add64(lo, c[0], 0)
	hi += carry
	// The sum is below 2^125, so hi < 2^61 and 8·hi fits in 64 bits; since
	// 2^64 ≡ 8 (mod 2^61 − 1) the value is ≡ lo + 8·hi.
	r := mod61(hi<<3) + (lo & mersenne61) + (lo >> 61)
	return mod61(r)
}

// Estimate returns the estimate of F2, the median over rows of Σ_b Z_b².
func (a *AMS) Estimate() float64 {
	rows := make([]float64, a.depth)
	for j := range rows {
		var s float64
		for _, z := range a.counters[j*a.width : (j+1)*a.width] {
			f := float64(z)
			s += f * f
		}
		rows[j] = s
	}
	slices.Sort(rows)
	if a.depth%2 == 1 {
		return rows[a.depth/2]
	}
	return (rows[a.depth/2-1] + rows[a.depth/2]) / 2
}

// Merge adds the frequencies summarised by other to a. Both sketches need
// the same width, depth and seed.
func (a *AMS) Merge(other *AMS) error {
	if other == nil {
		return nil
	}
	if a.width != other.width || a.depth != other.depth || a.seed != other.seed {
		return fmt.Errorf("%w AMS %d×%d (seed %d) with %d×%d (seed %d)",
			ErrIncompatible, a.width, a.depth, a.seed, other.width, other.depth, other.seed)
	}
	if other == a {
		for i := range a.counters {
			a.counters[i] *= 2
		}
		return nil
	}
	for i, v := range other.counters {
		a.counters[i] += v
	}
	return nil
}

// MarshalBinary encodes the sketch; it implements encoding.BinaryMarshaler.
func (a *AMS) MarshalBinary() ([]byte, error) {
	e := newEncoder(amsVersion, tagAMS, 24+4*len(a.counters))
	e.count(a.width)
	e.count(a.depth)
	e.u64(a.seed)
	for _, v := range a.counters {
		e.varint(v)
	}
	return e.bytes(), nil
}

// UnmarshalBinary restores a sketch written by MarshalBinary; it implements
// encoding.BinaryUnmarshaler. On error a is unchanged.
func (a *AMS) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "AMS", amsVersion, tagAMS)
	w := d.uvarint()
	dep := d.uvarint()
	seed := d.u64()
	if d.err == nil && (w < 1 || dep < 1 || w*dep/dep != w || w*dep > uint64(d.remaining())) {
		d.err = fmt.Errorf("%w AMS encoding: %d×%d counters do not fit in %d bytes", ErrTruncated, w, dep, d.remaining())
	}
	if d.err != nil {
		return d.err
	}
	counters := make([]int64, w*dep)
	for i := range counters {
		counters[i] = d.varint()
	}
	if err := d.finish(); err != nil {
		return err
	}
	*a = AMS{width: int(w), depth: int(dep), seed: seed, counters: counters, coef: amsCoefficients(int(dep), seed)}
	return nil
}

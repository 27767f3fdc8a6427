package sketch

import (
	"fmt"
	"math"
	"math/bits"
)

const pcsaVersion = 1

// PCSA is Flajolet and Martin's probabilistic counting with stochastic
// averaging (FM85). One hash chooses one of m bitmaps with its low bits and
// sets bit ρ of that bitmap, where ρ is the index of the lowest 1-bit of the
// remaining bits. R_j is the index of the lowest 0-bit of bitmap j, and the
// estimate is (m/φ)·2^(ΣR_j/m) with φ = FlajoletMartinPhi; its standard
// error is about 0.78/√m.
//
// Stochastic averaging is biased while n is not much larger than m, so, as
// HyperLogLog does, the sketch answers with linear counting m·ln(m/V) over
// the V empty bitmaps while that estimate is at most 3m (below that load
// linear counting is the more accurate of the two). Sketches with equal m
// and seed merge by OR-ing bitmaps.
type PCSA struct {
	logm    uint8
	seed    uint64
	bitmaps []uint64
}

// NewPCSA returns an empty sketch with m bitmaps. It panics unless m is a
// power of two between 1 and 2^20.
func NewPCSA(m int, seed uint64) *PCSA {
	if m < 1 || m > 1<<20 || m&(m-1) != 0 {
		panic(fmt.Sprintf("sketch: PCSA needs a power-of-two bitmap count in [1, 2^20], got %d", m))
	}
	return &PCSA{logm: uint8(bits.TrailingZeros(uint(m))), seed: seed, bitmaps: make([]uint64, m)}
}

// Bitmaps returns m, the number of bitmaps.
func (p *PCSA) Bitmaps() int { return len(p.bitmaps) }

// Add adds the item b.
func (p *PCSA) Add(b []byte) { p.AddHash(hash64(b, p.seed)) }

// AddString adds the item s.
func (p *PCSA) AddString(s string) { p.AddHash(hashString(s, p.seed)) }

// AddUint64 adds the item x.
func (p *PCSA) AddUint64(x uint64) { p.AddHash(hashUint64(x, p.seed)) }

// AddHash adds an item given by its uniformly distributed 64-bit hash: the
// bitmap is h mod m and the bit is the lowest 1-bit of h div m.
func (p *PCSA) AddHash(h uint64) {
	j := h & (uint64(len(p.bitmaps)) - 1)
	w := h >> p.logm
	rho := min(bits.TrailingZeros64(w), 63-int(p.logm))
	p.bitmaps[j] |= 1 << rho
}

// Estimate returns the estimated number of distinct items.
func (p *PCSA) Estimate() float64 {
	m := float64(len(p.bitmaps))
	sumR, empty := 0, 0
	for _, b := range p.bitmaps {
		sumR += bits.TrailingZeros64(^b)
		if b == 0 {
			empty++
		}
	}
	if empty > 0 {
		if lc := m * math.Log(m/float64(empty)); lc <= 3*m {
			return lc
		}
	}
	return m / FlajoletMartinPhi * math.Exp2(float64(sumR)/m)
}

// Merge adds the items of other to p. Both sketches need the same number of
// bitmaps and seed.
func (p *PCSA) Merge(other *PCSA) error {
	if other == nil {
		return nil
	}
	if p.logm != other.logm || p.seed != other.seed {
		return fmt.Errorf("%w PCSA of %d bitmaps (seed %d) with %d bitmaps (seed %d)",
			ErrIncompatible, len(p.bitmaps), p.seed, len(other.bitmaps), other.seed)
	}
	for i, b := range other.bitmaps {
		p.bitmaps[i] |= b
	}
	return nil
}

// MarshalBinary encodes the sketch; it implements encoding.BinaryMarshaler.
func (p *PCSA) MarshalBinary() ([]byte, error) {
	e := newEncoder(pcsaVersion, tagPCSA, 16+3*len(p.bitmaps))
	e.u8(p.logm)
	e.u64(p.seed)
	for _, b := range p.bitmaps {
		e.uvarint(b)
	}
	return e.bytes(), nil
}

// UnmarshalBinary restores a sketch written by MarshalBinary; it implements
// encoding.BinaryUnmarshaler. On error p is unchanged.
func (p *PCSA) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "PCSA", pcsaVersion, tagPCSA)
	logm := d.u8()
	seed := d.u64()
	if d.err == nil && logm > 20 {
		d.fail("log2 of bitmap count %d above 20", logm)
	}
	if d.err == nil && 1<<logm > d.remaining() {
		d.err = fmt.Errorf("%w PCSA encoding: %d bitmaps need at least %d bytes, have %d", ErrTruncated, 1<<logm, 1<<logm, d.remaining())
	}
	if d.err != nil {
		return d.err
	}
	bm := make([]uint64, 1<<logm)
	for i := range bm {
		bm[i] = d.uvarint()
	}
	if err := d.finish(); err != nil {
		return err
	}
	*p = PCSA{logm: logm, seed: seed, bitmaps: bm}
	return nil
}

package sketch

import (
	"fmt"
	"math"
	"math/bits"
)

const bloomVersion = 1

// Bloom is a Bloom filter (Bloom 1970): m bits and k hash positions per
// item. Contains never returns a false negative; its false-positive rate
// after n distinct insertions is about (1 − e^(−kn/m))^k. Positions come
// from one 64-bit XXH64 hash by enhanced double hashing (Kirsch and
// Mitzenmacher). Filters with the same shape and seed merge by bitwise OR,
// which yields the filter of the union.
type Bloom struct {
	m    uint64
	k    int
	seed uint64
	bits []uint64
}

// NewBloom returns an empty filter of m bits with k hash positions per item.
// It panics unless m ≥ 1 and 1 ≤ k ≤ 64.
func NewBloom(m uint64, k int, seed uint64) *Bloom {
	if m < 1 || k < 1 || k > 64 {
		panic(fmt.Sprintf("sketch: Bloom needs m ≥ 1 bits and 1 ≤ k ≤ 64 hashes, got m=%d k=%d", m, k))
	}
	return &Bloom{m: m, k: k, seed: seed, bits: make([]uint64, (m+63)/64)}
}

// NewBloomForCapacity returns a filter sized for n items at false-positive
// rate p: m = ⌈−n·ln p/(ln 2)²⌉ bits and k = round((m/n)·ln 2) hashes. It
// panics unless n ≥ 1 and 0 < p < 1.
func NewBloomForCapacity(n uint64, p float64, seed uint64) *Bloom {
	m, k := BloomSize(n, p)
	return NewBloom(m, k, seed)
}

// BloomSize returns the bit count m = ⌈−n·ln p/(ln 2)²⌉ and the hash count
// k = round((m/n)·ln 2), at least 1, for n items at false-positive rate p.
// For n = 1000 and p = 0.01 it returns 9586 bits and 7 hashes. It panics
// unless n ≥ 1 and 0 < p < 1.
func BloomSize(n uint64, p float64) (m uint64, k int) {
	if n < 1 || !(p > 0 && p < 1) {
		panic(fmt.Sprintf("sketch: Bloom sizing needs n ≥ 1 and 0 < p < 1, got n=%d p=%g", n, p))
	}
	m = uint64(math.Ceil(-float64(n) * math.Log(p) / (math.Ln2 * math.Ln2)))
	k = max(1, min(64, int(math.Round(float64(m)/float64(n)*math.Ln2))))
	return m, k
}

// BloomFalsePositiveRate returns (1 − e^(−kn/m))^k, the expected
// false-positive rate of an m-bit filter with k hashes after n insertions.
func BloomFalsePositiveRate(m uint64, k int, n uint64) float64 {
	return math.Pow(1-math.Exp(-float64(k)*float64(n)/float64(m)), float64(k))
}

// Bits returns m, the number of bits.
func (b *Bloom) Bits() uint64 { return b.m }

// Hashes returns k, the number of positions per item.
func (b *Bloom) Hashes() int { return b.k }

// Add inserts the item x.
func (b *Bloom) Add(x []byte) { b.addHash(hash64(x, b.seed)) }

// AddString inserts the item s.
func (b *Bloom) AddString(s string) { b.addHash(hashString(s, b.seed)) }

// AddUint64 inserts the item x.
func (b *Bloom) AddUint64(x uint64) { b.addHash(hashUint64(x, b.seed)) }

// Contains reports whether x may have been inserted; false is certain.
func (b *Bloom) Contains(x []byte) bool { return b.hasHash(hash64(x, b.seed)) }

// ContainsString reports whether the item s may have been inserted.
func (b *Bloom) ContainsString(s string) bool { return b.hasHash(hashString(s, b.seed)) }

// ContainsUint64 reports whether the item x may have been inserted.
func (b *Bloom) ContainsUint64(x uint64) bool { return b.hasHash(hashUint64(x, b.seed)) }

// positions yields the k bit positions of hash h by enhanced double
// hashing: g_i = h1 + i·h2 + (i³ − i)/6, reduced to [0, m).
func (b *Bloom) forPositions(h uint64, fn func(pos uint64) bool) {
	h1, h2 := h, mix64(h)|1
	for i := 0; i < b.k; i++ {
		if !fn(fastRange(h1, b.m)) {
			return
		}
		h1 += h2
		h2 += uint64(i + 1)
	}
}

func (b *Bloom) addHash(h uint64) {
	b.forPositions(h, func(pos uint64) bool {
		b.bits[pos>>6] |= 1 << (pos & 63)
		return true
	})
}

func (b *Bloom) hasHash(h uint64) bool {
	found := true
	b.forPositions(h, func(pos uint64) bool {
		found = b.bits[pos>>6]&(1<<(pos&63)) != 0
		return found
	})
	return found
}

// FillRatio returns the fraction of bits set.
func (b *Bloom) FillRatio() float64 {
	set := 0
	for _, w := range b.bits {
		set += bits.OnesCount64(w)
	}
	return float64(set) / float64(b.m)
}

// EstimatedFalsePositiveRate returns FillRatio^k, the current chance that
// a fresh item tests positive.
func (b *Bloom) EstimatedFalsePositiveRate() float64 {
	return math.Pow(b.FillRatio(), float64(b.k))
}

// EstimatedCount returns the Swamidass–Baldi estimate −(m/k)·ln(1 − X/m) of
// the number of distinct items inserted, where X is the number of set bits.
func (b *Bloom) EstimatedCount() float64 {
	return -float64(b.m) / float64(b.k) * math.Log(1-b.FillRatio())
}

// Merge ORs other into b, giving the filter of the union. Both filters need
// the same bit count, hash count and seed.
func (b *Bloom) Merge(other *Bloom) error {
	if other == nil {
		return nil
	}
	if b.m != other.m || b.k != other.k || b.seed != other.seed {
		return fmt.Errorf("%w Bloom filter of %d bits, %d hashes (seed %d) with %d bits, %d hashes (seed %d)",
			ErrIncompatible, b.m, b.k, b.seed, other.m, other.k, other.seed)
	}
	for i, w := range other.bits {
		b.bits[i] |= w
	}
	return nil
}

// MarshalBinary encodes the filter; it implements encoding.BinaryMarshaler.
func (b *Bloom) MarshalBinary() ([]byte, error) {
	e := newEncoder(bloomVersion, tagBloom, 24+8*len(b.bits))
	e.uvarint(b.m)
	e.u8(byte(b.k))
	e.u64(b.seed)
	for _, w := range b.bits {
		e.u64(w)
	}
	return e.bytes(), nil
}

// UnmarshalBinary restores a filter written by MarshalBinary; it implements
// encoding.BinaryUnmarshaler. On error b is unchanged.
func (b *Bloom) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "Bloom", bloomVersion, tagBloom)
	m := d.uvarint()
	k := int(d.u8())
	seed := d.u64()
	if d.err == nil && (m < 1 || k < 1 || k > 64) {
		d.fail("m=%d bits with k=%d hashes", m, k)
	}
	words := (m + 63) / 64
	if d.err == nil && words > uint64(d.remaining()/8) {
		d.err = fmt.Errorf("%w Bloom encoding: %d bits need %d bytes, have %d", ErrTruncated, m, 8*words, d.remaining())
	}
	if d.err != nil {
		return d.err
	}
	ws := make([]uint64, words)
	for i := range ws {
		ws[i] = d.u64()
	}
	if d.err == nil && m%64 != 0 && ws[len(ws)-1]>>(m%64) != 0 {
		d.fail("bits set beyond bit %d", m)
	}
	if err := d.finish(); err != nil {
		return err
	}
	*b = Bloom{m: m, k: k, seed: seed, bits: ws}
	return nil
}

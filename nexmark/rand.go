package nexmark

import "math/bits"

// splitmix is a splitmix64 stream. The generator starts one per event from the
// event id, which makes every event independent of the others.
//
// Small bounded numbers (intn) are carved out of a buffered 64-bit draw by
// multiply-high: each draw yields several numbers, which keeps the cost per
// event to a few draws. A new draw is taken whenever fewer than
// minSpareBits bits beyond what the next number needs are left, so the
// relative bias of every number stays below 2^-minSpareBits.
type splitmix struct {
	s    uint64
	buf  uint64 // unused random bits for intn, at the top of the word
	left int    // how many bits of buf are still unused
}

const (
	golden64     = 0x9e3779b97f4a7c15
	eventSpread  = 0xd1b54a32d192ed03 // odd: spreads consecutive ids
	eventSalt    = 0x6e65786d61726b31 // "nexmark1"
	minSpareBits = 24
)

// mix64 is the splitmix64 output function (a bijection on uint64).
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// eventRand returns the random stream of event id.
func eventRand(id int64) splitmix {
	return splitmix{s: uint64(id)*eventSpread ^ eventSalt}
}

// next returns 64 random bits.
func (r *splitmix) next() uint64 {
	r.s += golden64
	return mix64(r.s)
}

// intn returns a number in [0, n) for n > 0.
func (r *splitmix) intn(n uint64) uint64 {
	k := bits.Len64(n)
	if r.left < k+minSpareBits {
		r.buf, r.left = r.next(), 64
	}
	hi, lo := bits.Mul64(r.buf, n)
	r.buf = lo
	r.left -= k
	return hi
}

// fresh returns a number in [0, n) for n > 0 from a fresh draw, leaving the
// intn buffer alone, so that what follows does not depend on n.
func (r *splitmix) fresh(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// float64 returns a number in [0, 1) from a fresh draw.
func (r *splitmix) float64() float64 {
	return float64(r.next()>>11) * 0x1p-53
}

package sketch

import (
	"math"
	"math/bits"
)

// splitMix64 is the small deterministic generator used by every randomised
// synopsis. Its whole state is one word, so serialized synopses capture it and
// resume the same random sequence after a round trip.
type splitMix64 struct {
	state uint64
}

const golden64 = 0x9e3779b97f4a7c15

// newSplitMix64 seeds a generator. The seed is scrambled first so that
// seeds differing by a multiple of the generator's increment (such as
// i·golden64 for run i) do not yield overlapping, shifted sequences.
func newSplitMix64(seed uint64) splitMix64 {
	return splitMix64{state: mix64(seed ^ 0x5851f42d4c957f2d)}
}

// next returns the next 64 uniformly distributed bits.
func (r *splitMix64) next() uint64 {
	r.state += golden64
	return mix64(r.state)
}

// mix64 is the splitmix64 finaliser: a bijective 64-bit avalanche mixer.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float64 returns a uniform value in [0, 1).
func (r *splitMix64) float64() float64 {
	return float64(r.next()>>11) * 0x1p-53
}

// float64Open returns a uniform value in (0, 1), never 0, so its logarithm
// is finite.
func (r *splitMix64) float64Open() float64 {
	return (float64(r.next()>>12) + 0.5) * 0x1p-52
}

// intn returns a uniform integer in [0, n) without modulo bias (Lemire's
// multiply-and-reject method). n must be positive.
func (r *splitMix64) intn(n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}

// coin returns true with probability num/den, exactly, for 0 ≤ num ≤ den and
// den > 0.
func (r *splitMix64) coin(num, den uint64) bool {
	return r.intn(den) < num
}

// exp1 returns an exponentially distributed value with rate 1.
func (r *splitMix64) exp1() float64 {
	return -math.Log(r.float64Open())
}

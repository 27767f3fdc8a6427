package sketch

import "math"

const momentsVersion = 1

// Moments keeps the count, mean and second central moment of a stream of
// float64 values. It updates with Welford's method and merges with Chan et
// al.'s parallel formula, so it does not suffer the cancellation of the naive
// sum/sum-of-squares form. The zero value is an empty summary ready to use.
type Moments struct {
	n    uint64
	mean float64
	m2   float64 // Σ (x − mean)²
}

// NewMoments returns an empty Moments summary.
func NewMoments() *Moments { return &Moments{} }

// Add adds one observation x.
func (s *Moments) Add(x float64) {
	s.n++
	delta := x - s.mean
	s.mean += delta / float64(s.n)
	s.m2 += delta * (x - s.mean)
}

// Remove deletes one earlier observation x by inverting the Welford update.
// Removing a value that was never added leaves a meaningless summary;
// Remove on an empty summary does nothing.
func (s *Moments) Remove(x float64) {
	switch s.n {
	case 0:
		return
	case 1:
		*s = Moments{}
		return
	}
	n := float64(s.n)
	newMean := (n*s.mean - x) / (n - 1)
	s.m2 -= (x - s.mean) * (x - newMean)
	if s.m2 < 0 {
		s.m2 = 0 // rounding can leave a tiny negative value
	}
	s.mean = newMean
	s.n--
}

// Merge adds the observations summarised by other to s using Chan et al.'s
// formula M2 = M2a + M2b + δ²·na·nb/n. It never fails; the error result
// matches the other synopses.
func (s *Moments) Merge(other *Moments) error {
	if other == nil || other.n == 0 {
		return nil
	}
	if s.n == 0 {
		*s = *other
		return nil
	}
	na, nb := float64(s.n), float64(other.n)
	n := na + nb
	delta := other.mean - s.mean
	s.mean += delta * nb / n
	s.m2 += other.m2 + delta*delta*na*nb/n
	s.n += other.n
	return nil
}

// Count returns the number of observations.
func (s *Moments) Count() uint64 { return s.n }

// Sum returns the sum of the observations.
func (s *Moments) Sum() float64 { return s.mean * float64(s.n) }

// SumSquares returns the sum of the squared observations.
func (s *Moments) SumSquares() float64 { return s.m2 + float64(s.n)*s.mean*s.mean }

// Mean returns the arithmetic mean, or NaN for an empty summary.
func (s *Moments) Mean() float64 {
	if s.n == 0 {
		return math.NaN()
	}
	return s.mean
}

// Variance returns the population variance M2/n, or NaN for an empty
// summary.
func (s *Moments) Variance() float64 {
	if s.n == 0 {
		return math.NaN()
	}
	return s.m2 / float64(s.n)
}

// SampleVariance returns the unbiased sample variance M2/(n−1), or NaN when
// fewer than two observations were added.
func (s *Moments) SampleVariance() float64 {
	if s.n < 2 {
		return math.NaN()
	}
	return s.m2 / float64(s.n-1)
}

// StdDev returns the population standard deviation, the square root of
// Variance.
func (s *Moments) StdDev() float64 { return math.Sqrt(s.Variance()) }

// SampleStdDev returns the square root of SampleVariance.
func (s *Moments) SampleStdDev() float64 { return math.Sqrt(s.SampleVariance()) }

// Reset empties the summary.
func (s *Moments) Reset() { *s = Moments{} }

// MarshalBinary encodes the summary; it implements
// encoding.BinaryMarshaler.
func (s *Moments) MarshalBinary() ([]byte, error) {
	e := newEncoder(momentsVersion, tagMoments, 26)
	e.uvarint(s.n)
	e.f64(s.mean)
	e.f64(s.m2)
	return e.bytes(), nil
}

// UnmarshalBinary restores a summary written by MarshalBinary; it implements
// encoding.BinaryUnmarshaler. On error s is unchanged.
func (s *Moments) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "Moments", momentsVersion, tagMoments)
	var t Moments
	t.n = d.uvarint()
	t.mean = d.f64()
	t.m2 = d.f64()
	if d.err == nil && (t.m2 < 0 || math.IsNaN(t.m2) || (t.n == 0 && (t.mean != 0 || t.m2 != 0))) {
		d.fail("inconsistent moments n=%d mean=%g m2=%g", t.n, t.mean, t.m2)
	}
	if err := d.finish(); err != nil {
		return err
	}
	*s = t
	return nil
}

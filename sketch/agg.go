package sketch

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/state"
)

// This file adapts the mergeable synopses to agg.Function, so that they can
// aggregate windows (eddy.Aggregate) and live in aggregating keyed state
// (state.NewAggregating, with a codec from BinaryCodec).
//
// The accumulators are pointers to synopses, yet the functions keep the
// value semantics agg.Function asks for: Create returns a fresh synopsis,
// Add and Merge return their first argument after changing it, and Merge
// never changes its second argument, so the accumulators of window panes,
// which are merged into fresh accumulators every time a window fires, stay
// intact. Results never share memory with the accumulator.
//
// The synopses that do not merge (DGIM and the TRIEST estimators) are not
// aggregate functions; keep them in a state.Value with BinaryCodec inside a
// keyed process function.

// Key is the type of the values that the distinct-count, frequency and
// membership adapters hash: strings and byte slices by their bytes, integers
// by their 64-bit two's complement value (so int64(7) and uint64(7) are the
// same item, and "7" is another).
type Key interface {
	~string | ~[]byte | ~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64
}

// keyKind says which form of a Key a keyForm carries.
type keyKind uint8

const (
	keyString keyKind = iota
	keyBytes
	keyUint64
)

// keyForm is a Key reduced to one of the three forms the synopses hash.
type keyForm struct {
	kind keyKind
	s    string
	b    []byte
	u    uint64
}

// formOf reduces k to the form its synopsis method takes.
func formOf[K Key](k K) keyForm {
	switch v := any(k).(type) {
	case string:
		return keyForm{kind: keyString, s: v}
	case []byte:
		return keyForm{kind: keyBytes, b: v}
	case int:
		return keyForm{kind: keyUint64, u: uint64(v)}
	case int32:
		return keyForm{kind: keyUint64, u: uint64(int64(v))}
	case int64:
		return keyForm{kind: keyUint64, u: uint64(v)}
	case uint:
		return keyForm{kind: keyUint64, u: uint64(v)}
	case uint32:
		return keyForm{kind: keyUint64, u: uint64(v)}
	case uint64:
		return keyForm{kind: keyUint64, u: v}
	}
	// A named type: go by its kind.
	rv := reflect.ValueOf(k)
	switch rv.Kind() {
	case reflect.String:
		return keyForm{kind: keyString, s: rv.String()}
	case reflect.Slice:
		return keyForm{kind: keyBytes, b: rv.Bytes()}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return keyForm{kind: keyUint64, u: uint64(rv.Int())}
	default:
		return keyForm{kind: keyUint64, u: rv.Uint()}
	}
}

// hashAdder is a synopsis that takes items in the three forms.
type hashAdder interface {
	Add([]byte)
	AddString(string)
	AddUint64(uint64)
}

// addKey adds k to s in the form it has.
func addKey[K Key](s hashAdder, k K) {
	f := formOf(k)
	switch f.kind {
	case keyString:
		s.AddString(f.s)
	case keyBytes:
		s.Add(f.b)
	default:
		s.AddUint64(f.u)
	}
}

// mustMerge panics with err: adapters merge only synopses they created with
// equal parameters, so a failure means state restored from a job that used
// other parameters.
func mustMerge(what string, err error) {
	if err != nil {
		panic(fmt.Errorf("sketch: %s aggregate: %w (was the job restored with other parameters?)", what, err))
	}
}

// MomentsResult is the result of MomentsAgg. As with Moments, the mean and
// variances are NaN when there are too few values (none, or fewer than two
// for the sample variance).
type MomentsResult struct {
	Count          uint64  // number of values
	Sum            float64 // their sum
	Mean           float64 // their mean
	Variance       float64 // population variance
	SampleVariance float64 // sample variance (n−1 in the denominator)
	StdDev         float64 // population standard deviation
	SampleStdDev   float64 // sample standard deviation
}

// MomentsAgg returns an aggregate function computing the count, mean and
// variance of f of its inputs with Welford's updates and Chan's merges. Its
// accumulator is a Moments value, whose default state codec is exact.
func MomentsAgg[T any](f func(T) float64) agg.Function[T, Moments, MomentsResult] {
	return agg.Of(
		func() Moments { return Moments{} },
		func(acc Moments, in T) Moments { acc.Add(f(in)); return acc },
		func(a, b Moments) Moments { mustMerge("Moments", a.Merge(&b)); return a },
		func(acc Moments) MomentsResult { return momentsResult(&acc) },
	)
}

func momentsResult(m *Moments) MomentsResult {
	return MomentsResult{
		Count: m.Count(), Sum: m.Sum(), Mean: m.Mean(),
		Variance: m.Variance(), SampleVariance: m.SampleVariance(),
		StdDev: m.StdDev(), SampleStdDev: m.SampleStdDev(),
	}
}

// HLLAgg returns an aggregate function estimating the number of distinct
// keys of its inputs with a HyperLogLog of the given precision (4 to 18;
// the relative standard error is 1.04/√(2^precision)). It panics on an
// invalid precision.
func HLLAgg[T any, K Key](precision uint8, key func(T) K) agg.Function[T, *HyperLogLog, uint64] {
	NewHyperLogLog(precision) // validate now, not in the job
	return agg.Of(
		func() *HyperLogLog { return NewHyperLogLog(precision) },
		func(acc *HyperLogLog, in T) *HyperLogLog { addKey(acc, key(in)); return acc },
		func(a, b *HyperLogLog) *HyperLogLog { mustMerge("HyperLogLog", a.Merge(b)); return a },
		func(acc *HyperLogLog) uint64 { return acc.Estimate() },
	)
}

// PCSAAgg returns an aggregate function estimating the number of distinct
// keys of its inputs with a PCSA sketch of m bitmaps (a power of two) and
// the given seed. It panics on invalid parameters.
func PCSAAgg[T any, K Key](m int, seed uint64, key func(T) K) agg.Function[T, *PCSA, float64] {
	proto := NewPCSA(m, seed)
	return agg.Of(
		func() *PCSA { return clonePCSA(proto) },
		func(acc *PCSA, in T) *PCSA { addKey(acc, key(in)); return acc },
		func(a, b *PCSA) *PCSA { mustMerge("PCSA", a.Merge(b)); return a },
		func(acc *PCSA) float64 { return acc.Estimate() },
	)
}

func clonePCSA(p *PCSA) *PCSA {
	c := *p
	c.bitmaps = slices.Clone(p.bitmaps)
	return &c
}

// FMAgg returns an aggregate function estimating the number of distinct
// keys of its inputs with a Flajolet–Martin sketch of the given number of
// hash functions in groups (see NewFlajoletMartin; the estimate is only
// good to a constant factor). It panics on invalid parameters.
func FMAgg[T any, K Key](hashes, groups int, seed uint64, key func(T) K) agg.Function[T, *FlajoletMartin, float64] {
	proto := NewFlajoletMartin(hashes, groups, seed)
	return agg.Of(
		func() *FlajoletMartin { return cloneFM(proto) },
		func(acc *FlajoletMartin, in T) *FlajoletMartin { addKey(acc, key(in)); return acc },
		func(a, b *FlajoletMartin) *FlajoletMartin { mustMerge("FlajoletMartin", a.Merge(b)); return a },
		func(acc *FlajoletMartin) float64 { return acc.Estimate() },
	)
}

func cloneFM(f *FlajoletMartin) *FlajoletMartin {
	c := *f
	c.salts = slices.Clone(f.salts)
	c.ranks = slices.Clone(f.ranks)
	return &c
}

// CountMinAgg returns an aggregate function counting the keys of its inputs
// in a Count-Min sketch of width × depth counters (CountMinSize derives
// them from an error bound). The result is a copy of the sketch, to query
// with Estimate. It panics on invalid parameters.
func CountMinAgg[T any, K Key](width, depth int, seed uint64, key func(T) K) agg.Function[T, *CountMin, *CountMin] {
	proto := NewCountMin(width, depth, seed)
	return agg.Of(
		func() *CountMin { return cloneCountMin(proto) },
		func(acc *CountMin, in T) *CountMin { addCounted(acc, key(in)); return acc },
		func(a, b *CountMin) *CountMin { mustMerge("CountMin", a.Merge(b)); return a },
		cloneCountMin,
	)
}

func addCounted[K Key](c *CountMin, k K) {
	f := formOf(k)
	switch f.kind {
	case keyString:
		c.AddString(f.s, 1)
	case keyBytes:
		c.Add(f.b, 1)
	default:
		c.AddUint64(f.u, 1)
	}
}

// cloneCountMin copies c; the hash coefficients are never written after
// construction, so the copy shares them.
func cloneCountMin(c *CountMin) *CountMin {
	d := *c
	d.rows = slices.Clone(c.rows)
	return &d
}

// AMSAgg returns an aggregate function estimating the second frequency
// moment F2 (the self-join size, Σ count²) of the keys of its inputs with an
// AMS sketch of width × depth counters. It panics on invalid parameters.
func AMSAgg[T any, K Key](width, depth int, seed uint64, key func(T) K) agg.Function[T, *AMS, float64] {
	proto := NewAMS(width, depth, seed)
	return agg.Of(
		func() *AMS {
			c := *proto // the coefficients are read-only and shared
			c.counters = slices.Clone(proto.counters)
			return &c
		},
		func(acc *AMS, in T) *AMS {
			f := formOf(key(in))
			switch f.kind {
			case keyString:
				acc.AddString(f.s, 1)
			case keyBytes:
				acc.Add(f.b, 1)
			default:
				acc.AddUint64(f.u, 1)
			}
			return acc
		},
		func(a, b *AMS) *AMS { mustMerge("AMS", a.Merge(b)); return a },
		func(acc *AMS) float64 { return acc.Estimate() },
	)
}

// BloomAgg returns an aggregate function collecting the keys of its inputs
// in a Bloom filter of m bits and k hash positions (BloomSize derives them
// from a capacity and false-positive rate). The result is a copy of the
// filter, to query with Contains. It panics on invalid parameters.
func BloomAgg[T any, K Key](m uint64, k int, seed uint64, key func(T) K) agg.Function[T, *Bloom, *Bloom] {
	proto := NewBloom(m, k, seed)
	return agg.Of(
		func() *Bloom { return cloneBloom(proto) },
		func(acc *Bloom, in T) *Bloom { addKey(acc, key(in)); return acc },
		func(a, b *Bloom) *Bloom { mustMerge("Bloom", a.Merge(b)); return a },
		cloneBloom,
	)
}

func cloneBloom(b *Bloom) *Bloom {
	c := *b
	c.bits = slices.Clone(b.bits)
	return &c
}

// KLLAgg returns an aggregate function estimating the quantiles qs (each in
// [0, 1]) of f of its inputs with a KLL sketch of parameter k (8 to 65535;
// KLLNormalizedRankError gives the rank error). The result holds one value
// per quantile, NaN for an empty input. It panics on invalid parameters.
//
// Every accumulator starts from seed, and reseeds its compaction coins on its
// first input from seed and that input, so that the panes and keys that a
// window merges flip independent coins and a run stays reproducible.
func KLLAgg[T any](k int, seed uint64, f func(T) float64, qs ...float64) agg.Function[T, *KLL, []float64] {
	NewKLL(k, seed)
	for _, q := range qs {
		if !(q >= 0 && q <= 1) {
			panic(fmt.Sprintf("sketch: KLLAgg quantile %v outside [0, 1]", q))
		}
	}
	qs = slices.Clone(qs)
	return agg.Of(
		func() *KLL { return NewKLL(k, seed) },
		func(acc *KLL, in T) *KLL {
			x := f(in)
			if acc.n == 0 {
				acc.rng = newSplitMix64(seed ^ mix64(math.Float64bits(x)+golden64))
			}
			acc.Add(x)
			return acc
		},
		func(a, b *KLL) *KLL { mustMerge("KLL", a.Merge(b)); return a },
		func(acc *KLL) []float64 {
			if acc.Count() == 0 {
				out := make([]float64, len(qs))
				for i := range out {
					out[i] = math.NaN()
				}
				return out
			}
			return acc.Quantiles(qs)
		},
	)
}

// firstItemSeed derives the seed of an accumulator from seed and its first
// item, encoded with the item type's default state codec; it returns seed
// if the type has none.
func firstItemSeed[V any](seed uint64, v V) uint64 {
	c, err := state.DefaultCodec[V]()
	if err != nil {
		return seed
	}
	return seed ^ hash64(c.Append(nil, v), seed+golden64)
}

// ReservoirAgg returns an aggregate function keeping a uniform random sample
// of at most k of f of its inputs (Algorithm R, merged by drawing from each
// side in proportion to its count). The result is a copy of the sample. It
// panics unless k ≥ 1.
//
// Every accumulator reseeds on its first input from seed and that input
// (encoded with its default state codec, if it has one), so that the panes
// and keys that a window merges draw independently and a run stays
// reproducible.
func ReservoirAgg[T, V any](k int, seed uint64, f func(T) V) agg.Function[T, *Reservoir[V], []V] {
	NewReservoir[V](k, seed)
	return agg.Of(
		func() *Reservoir[V] { return NewReservoir[V](k, seed) },
		func(acc *Reservoir[V], in T) *Reservoir[V] {
			v := f(in)
			if acc.n == 0 {
				acc.rng = newSplitMix64(firstItemSeed(seed, v))
			}
			acc.Add(v)
			return acc
		},
		func(a, b *Reservoir[V]) *Reservoir[V] { mustMerge("Reservoir", a.Merge(b)); return a },
		func(acc *Reservoir[V]) []V { return slices.Clone(acc.Sample()) },
	)
}

// WeightedReservoirAgg returns an aggregate function keeping a weighted
// random sample without replacement of at most k of the items f returns
// with their weights (A-ExpJ; inputs whose weight is not positive and finite
// are ignored). The result is a copy of the sample. Accumulators reseed on
// their first item as ReservoirAgg's do. It panics unless k ≥ 1.
func WeightedReservoirAgg[T, V any](k int, seed uint64, f func(T) (V, float64)) agg.Function[T, *WeightedReservoir[V], []WeightedItem[V]] {
	NewWeightedReservoir[V](k, seed)
	return agg.Of(
		func() *WeightedReservoir[V] { return NewWeightedReservoir[V](k, seed) },
		func(acc *WeightedReservoir[V], in T) *WeightedReservoir[V] {
			v, w := f(in)
			if acc.n == 0 {
				acc.rng = newSplitMix64(firstItemSeed(seed, v))
			}
			acc.Add(v, w)
			return acc
		},
		func(a, b *WeightedReservoir[V]) *WeightedReservoir[V] {
			mustMerge("WeightedReservoir", a.Merge(b))
			return a
		},
		func(acc *WeightedReservoir[V]) []WeightedItem[V] { return slices.Clone(acc.Sample()) },
	)
}

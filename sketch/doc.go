// Package sketch provides streaming synopses: small, mergeable summaries of
// unbounded streams that answer approximate queries with known error bounds.
//
// The synopses:
//
//   - Moments: count, mean and variance with Welford updates and Chan merges.
//   - FlajoletMartin and PCSA: the classic distinct-count sketches.
//   - HyperLogLog: HLL++-style distinct counting with a 64-bit hash, a sparse
//     representation and Ertl's improved estimator.
//   - CountMin (optionally with conservative update) and AMS (F2) sketches.
//   - Reservoir (Algorithm R) and WeightedReservoir (A-ExpJ) samples.
//   - Bloom filters and DGIM sliding-window counters.
//   - KLL quantile sketches.
//   - TriestBase, TriestImpr and TriestFD triangle-count estimators.
//
// Every randomised synopsis takes an explicit uint64 seed and draws from its
// own splitmix64 generator, whose state is part of the serialized form, so a
// run is reproducible and a restored synopsis continues exactly where the
// original stopped. Serialized forms start with a version byte followed by a
// type tag; decoders reject unknown versions, foreign tags, truncated input
// and trailing bytes with errors that wrap ErrVersion, ErrCorrupt and
// ErrTruncated.
//
// In the engine, every mergeable synopsis is an aggregate function for
// windows and keyed aggregations (HLLAgg, MomentsAgg, KLLAgg, CountMinAgg,
// AMSAgg, PCSAAgg, FMAgg, BloomAgg, ReservoirAgg, WeightedReservoirAgg,
// TopKAgg), and BinaryCodec / BinaryValueCodec keep any synopsis in keyed
// state through its binary encoding, so it is checkpointed and restored with
// the job. TRIEST and DGIM do not merge; keep them in keyed state of a process
// function (see examples/triangles).
//
// Create synopses with their constructors; only the zero Moments is ready
// to use. None of the types is safe for concurrent use; callers that share one must
// synchronise. Query methods of HyperLogLog and KLL may reorganise internal
// buffers and count as writes.
package sketch

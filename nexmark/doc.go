// Package nexmark generates the Nexmark online-auction event stream.
//
// The generator is a Go port of the reference Nexmark generator
// (github.com/nexmark/nexmark, the Flink variant): the same event mix
// (person : auction : bid = 1 : 3 : 46 by default), the same dense id
// formulas derived from the event id, the same hot-key ratios, the same
// log-uniform price distribution, the same channel/URL cache, the same
// "extra" padding to average sizes and the same synthetic event time
// (BaseTime + eventNumber × interEventDelay, with out-of-order groups).
// Field names and the JSON shape follow the reference DDL.
//
// # Determinism
//
// Every event is generated from a pseudo-random stream seeded from its event
// id alone, so event i does not depend on any other event, two generators
// with the same Config produce identical events, parallel parts are disjoint
// and a part can resume from any position (see Generator.SetPosition).
//
// # Differences from the reference
//
// The port does not reproduce java.util.Random or SplittableRandom bit for
// bit: it uses splitmix64 seeded per event. All formulas, proportions and
// distributions are the reference's, but individual random values differ.
// The remaining differences are:
//
//   - The reference builds the hot-channel URLs and the 10 000 cached channel
//     URLs (and the 90% choice to append "&channel_id=") from an unseeded
//     Random, so they change from run to run; here they come from a fixed seed
//     and are the same in every run.
//   - Item names, descriptions and the two halves of e-mail addresses are
//     trimmed windows of a shared, pre-generated 64 KiB random text (letters
//     with a space 1 time in 13), much as the reference slices "extra" out of
//     a reusable 1 MiB string (which this port does too). Each value has the
//     reference's length and character distribution, but values of different
//     events are not independent of each other.
//   - Config.BaseTime defaults to a fixed instant (DefaultBaseTime) instead of
//     the wall clock, so runs are reproducible.
//
// Quirks of the reference that are kept on purpose: the bidder of a bid gets
// the first person id added twice (Config.BidderDoubleOffset); the URL of
// cached channel 1 carries channel_id=-2147483648 (the absolute value of the
// bit-reversed int overflows); padding characters range over 'H' to 'z',
// backslash included, because the reference takes a signed remainder; a hot
// bidder or seller may name a person that is not generated yet; and the Flink
// source starts at event id 2 and event number 1 (DefaultConfig sets
// FirstEventID and FirstEventNumber to 1).
//
// # Parallel parts
//
// NewGenerator(cfg, part, parts) splits the sequence the way the reference's
// GeneratorConfig.split does: part i gets a contiguous range of event ids, all
// parts start at the same event number and therefore run on parallel event
// timelines that all begin at BaseTime. The reference sets NumEventGenerators
// to the source parallelism so that n parts together keep the configured
// FirstEventRate; Config.NumEventGenerators = 0 does the same here.
package nexmark

// Package connectortest is the conformance suite of eddy's connectors: the
// tests every source, sink and option spec passes, built on public packages
// only so that connectors written outside eddy run it as the built-in ones
// do.
//
// A source's test describes it with a SourceCase and calls RunSource: the
// suite reads it in full, checkpoints and restores it mid-stream, kills and
// resumes it, and rescales it through a savepoint, each time into an
// exactly-once MemorySink whose committed records must equal the expected
// input exactly; RunStream does the same for a source only available as a
// stream (eddy.FromSlice, eddy.FromGenerator). A sink's test calls RunSink with a SinkCase: the suite
// writes a known input through the sink with failures injected and compares
// what the outside system holds, exactly once for a transactional sink, in
// its final state for an upsert sink. A registered connector or format also
// calls RunOptions, which checks that every bad option value gives an error
// naming the option, and that secret values never appear in errors.
//
//	func TestConformance(t *testing.T) {
//		connectortest.RunSource(t, connectortest.SourceCase[Row]{
//			Open: func(t testing.TB) (connector.Source[Row], func()) {
//				dir := writeInput(t)
//				return mysource.New(dir), nil
//			},
//			Want: expectedRows,
//		})
//	}
//
// No check depends on timing: the suite pauses sources at record counts and
// waits for checkpoints to complete, and JobTimeout only keeps a broken
// connector from hanging the tests.
package connectortest

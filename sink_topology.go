package eddy

// TopologySink is implemented by connector sinks that need operators of
// their own rather than one writer per subtask: a sink whose parallel
// writers keep keyed state and hand what they wrote to a single committer
// at every checkpoint, as a lake table's sink does (many writers, one
// snapshot per checkpoint). WriteTo and WriteUpserts hand the stream to
// AddTo instead of adding a writer operator; the sink's NewWriter is then
// never called by eddy.
//
// AddTo is called once, while the job is built. It adds the sink's
// operators reading s, built with eddy's public API (KeyBy, ProcessKeyed,
// WriteTo with a connector.TransactionalSink, ...), and returns the last
// of them; name is the sink's name. Errors belong in the returned Sink's
// environment: add a sink that fails when the job starts, with
// WriteTo(s, name, sinkThatFails), so that Plan and Execute report them.
type TopologySink[T any] interface {
	AddTo(s *Stream[T], name string) *Sink
}

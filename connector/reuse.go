package connector

// Record reuse, as Flink's object reuse but decided by eddy rather than
// asserted by the user: a reader may write the records of each Read into
// the memory of the records of the Read before when everything that takes
// its records keeps nothing of them. eddy allows it only when the source's
// every output goes, in the source's goroutine and before its next Read,
// to the writers of sinks that are NonRetainingWriters (a source chained to
// a blackhole, print or filesystem sink, say).

// NonRetainingWriter is implemented by writers that keep nothing of the
// records given to Write once it returns: they discard the records, or
// encode or copy what they need of them. A source whose records go
// straight to such a writer may then reuse its records' memory (see
// ReusesRecords). A writer that buffers records, or strings or rows that
// share their memory, until Flush must not claim it.
type NonRetainingWriter interface {
	// RetainsNoRecords reports whether the writer keeps nothing of a
	// record after Write returns.
	RetainsNoRecords() bool
}

// RecordReuser is implemented by the ReaderContext that eddy gives a
// reader. Readers ask it through ReusesRecords, so that contexts that do
// not know (a test's own context) need not implement it.
type RecordReuser interface {
	// ReusesRecords reports whether every record a Read emits has been
	// consumed, and nothing of it kept, by the time the next Read begins.
	ReusesRecords() bool
}

// ReusesRecords reports whether the reader of ctx may write the records of
// a Read into memory that the records of its earlier Reads used: true only
// when ctx implements RecordReuser and says so. A reader asks once, when it
// is made; the answer holds for its life.
func ReusesRecords(ctx ReaderContext) bool {
	r, ok := ctx.(RecordReuser)
	return ok && r.ReusesRecords()
}

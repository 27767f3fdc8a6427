package connector

// StatusReporter is implemented by readers and enumerators that report
// their progress for the job's REST API, dashboard and metrics: a CDC
// source's snapshot progress per table and its lag behind the database, a
// broker source's offsets and lag.
//
// Status is called about once a second on the goroutine that calls the
// implementation's other methods (the reader's subtask, the enumerator's
// goroutine), so it needs no locks. It returns a small JSON-encodable map
// whose keys are lowerCamelCase names, such as "snapshotTablesDone" or
// "lagMillis". Numeric entries whose names end in "Millis", "Bytes",
// "Records" or "Offset" are also exported as Prometheus gauges. The map
// must not hold credentials.
type StatusReporter interface {
	Status() map[string]any
}

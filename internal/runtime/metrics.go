package runtime

import "sync/atomic"

// OperatorMetrics counts what one operator subtask does. Counters are
// written by the subtask and may be read from any goroutine.
type OperatorMetrics struct {
	Name    string
	Subtask int
	// RecordsIn counts records received from exchanges by a task's head.
	RecordsIn atomic.Int64
	// RecordsOut counts records sent into exchanges by the operator.
	RecordsOut atomic.Int64
	// LateRecords counts records that arrived after their window (and its
	// allowed lateness) had closed. They go to the late side output if one
	// is declared.
	LateRecords atomic.Int64
	// WindowGapRecords counts records that fell into a gap between the
	// windows of a sliding assigner whose size is below its slide: they
	// belong to no window. They go to the late side output if one is
	// declared.
	WindowGapRecords atomic.Int64
	// DeadLetters counts malformed input records routed to a dead-letter
	// output.
	DeadLetters atomic.Int64
	// RetractionsWithoutState counts retractions (-U, -D) that a relational
	// operator received for a row or group it holds no state for, because
	// the state expired (state TTL) or the row was never inserted: they
	// change nothing.
	RetractionsWithoutState atomic.Int64
	// Watermark is the operator's current input watermark.
	Watermark atomic.Int64
}

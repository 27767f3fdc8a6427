package runtime

import (
	"sync"
	"sync/atomic"
	"time"
)

// OperatorMetrics counts what one operator subtask does. Counters are
// written by the subtask and may be read from any goroutine.
type OperatorMetrics struct {
	// ID is the operator's node ID (names need not be unique).
	ID      int
	Name    string
	Subtask int
	// RecordsIn counts the records the operator received, from an
	// exchange or from the operator chained before it.
	RecordsIn atomic.Int64
	// RecordsOut counts the records the operator emitted on its main
	// output.
	RecordsOut atomic.Int64
	// BytesIn counts the bytes a source's reader read from the external
	// system (connector.CountBytesIn); 0 for the operators that receive Go
	// values in process.
	BytesIn atomic.Int64
	// BytesOut counts the bytes a sink's writer wrote to the external
	// system (connector.CountBytesOut); 0 for the operators that emit Go
	// values in process.
	BytesOut atomic.Int64
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
	// StateBytes is the size of the subtask's state in the latest
	// completed checkpoint.
	StateBytes atomic.Int64
	// Task measures the time of the subtask's goroutine, which runs the
	// operator and the others chained with it.
	Task *TaskMetrics
	// Status is the latest progress report of a connector's reader (see
	// connector.StatusReporter).
	Status atomic.Pointer[map[string]any]
	// EnumeratorStatus, for subtask 0 of a source, is the latest progress
	// report of its enumerator.
	EnumeratorStatus atomic.Pointer[map[string]any]
}

// TaskMetrics measures how the goroutine of one subtask of an operator chain
// spends its time: waiting for input (idle), blocked on a full exchange
// channel (backpressured), or working (busy, the rest).
type TaskMetrics struct {
	// Chain names the operator chain.
	Chain string
	// Started is when the subtask started.
	Started time.Time
	// Idle is the time, in nanoseconds, spent in finished waits for input.
	Idle atomic.Int64
	// BackPressured is the time, in nanoseconds, spent in finished waits
	// for room in a downstream channel.
	BackPressured atomic.Int64
	// Ended is when the subtask stopped, in Unix nanoseconds; 0 while it
	// runs.
	Ended atomic.Int64

	// mu orders a wait's start and end with Times, so that a wait is
	// counted once: while it lasts, or in Idle or BackPressured after.
	mu sync.Mutex
	// waitStart is when the ongoing wait began (zero when none).
	waitStart time.Time
	// waitBackPressured tells whether the ongoing wait is for room
	// downstream rather than for input.
	waitBackPressured bool
}

// beginWait marks the start of a wait for input, or for room downstream
// when backPressured, and returns its start. m may be nil.
func (m *TaskMetrics) beginWait(backPressured bool) time.Time {
	now := time.Now()
	if m == nil {
		return now
	}
	m.mu.Lock()
	m.waitStart, m.waitBackPressured = now, backPressured
	m.mu.Unlock()
	return now
}

// endWait ends the wait that began at start, adding its time to Idle or
// BackPressured. m may be nil.
func (m *TaskMetrics) endWait(start time.Time) {
	if m == nil {
		return
	}
	d := int64(time.Since(start))
	m.mu.Lock()
	if m.waitBackPressured {
		m.BackPressured.Add(d)
	} else {
		m.Idle.Add(d)
	}
	m.waitStart = time.Time{}
	m.mu.Unlock()
}

// Times returns the time the subtask spent working, waiting for input and
// waiting for room downstream up to now (or its end), counting a wait
// still going on: busy is its running time less the two waits, and does
// not go back between two calls.
func (m *TaskMetrics) Times(now time.Time) (busy, idle, backPressured time.Duration) {
	if e := m.Ended.Load(); e != 0 {
		now = time.Unix(0, e)
	}
	m.mu.Lock()
	idle, backPressured = time.Duration(m.Idle.Load()), time.Duration(m.BackPressured.Load())
	if !m.waitStart.IsZero() && now.After(m.waitStart) {
		if m.waitBackPressured {
			backPressured += now.Sub(m.waitStart)
		} else {
			idle += now.Sub(m.waitStart)
		}
	}
	m.mu.Unlock()
	return max(now.Sub(m.Started)-idle-backPressured, 0), idle, backPressured
}

// NewOperatorMetrics returns the metrics of subtask subtask of operator
// name (node id), run by the task measured by task (nil when not measured), before
// its first watermark.
func NewOperatorMetrics(id int, name string, subtask int, task *TaskMetrics) *OperatorMetrics {
	m := &OperatorMetrics{ID: id, Name: name, Subtask: subtask, Task: task}
	m.Watermark.Store(MinWatermark)
	return m
}

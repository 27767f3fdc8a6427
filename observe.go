package eddy

import (
	"errors"
	"fmt"
	"time"

	"github.com/eddystream/eddy/internal/runtime"
)

// JobState is the state of a job's execution, as Flink names it.
type JobState string

// The states of a job.
const (
	// JobCreated is a job that has not started executing.
	JobCreated JobState = "CREATED"
	// JobRunning is a job executing.
	JobRunning JobState = "RUNNING"
	// JobRestarting is a job waiting to restart after a failure.
	JobRestarting JobState = "RESTARTING"
	// JobFinished is a job whose bounded inputs ended, or that stopped
	// with a savepoint.
	JobFinished JobState = "FINISHED"
	// JobFailed is a job that failed beyond what its restart strategy
	// allows.
	JobFailed JobState = "FAILED"
	// JobCanceled is a job whose context was cancelled.
	JobCanceled JobState = "CANCELED"
)

// JobStatus describes a job's execution.
type JobStatus struct {
	State JobState
	// Started is when the job started executing; Ended when it stopped
	// (zero while it runs).
	Started, Ended time.Time
	// Restarts counts its restarts after failures.
	Restarts int
	// Failure is why a failed job failed.
	Failure error
}

// JobStatus returns the state of the job's execution.
func (e *Environment) JobStatus() JobStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := JobStatus{State: e.state, Started: e.started, Ended: e.ended, Failure: e.failure}
	if st.State == "" {
		st.State = JobCreated
	}
	if j := e.running; j != nil {
		st.Restarts = j.Restarts()
		if st.State == JobRunning && j.Restarting() {
			st.State = JobRestarting
		}
	}
	return st
}

// OperatorMetrics is a snapshot of the counters of one operator subtask.
type OperatorMetrics struct {
	// OperatorID identifies the operator in the job graph (JobOperator.ID):
	// names need not be unique.
	OperatorID int
	// Name is the operator's name.
	Name string
	// Subtask is the index of the subtask, from 0.
	Subtask int
	// Chain names the operator chain the operator runs in (its vertex in
	// the job graph): the operators chained together share a goroutine,
	// so they share the idle, backpressured and busy times below.
	Chain string
	// RecordsIn counts the records the operator received, from an
	// exchange or from the operator chained before it.
	RecordsIn int64
	// RecordsOut counts the records the operator emitted on its main
	// output (side outputs, such as late records and dead letters, are
	// counted apart).
	RecordsOut int64
	// BytesIn counts the bytes a source's reader read from the external
	// system (Flink's numBytesIn): the encoded payloads of the records, as
	// the connector counts them (connector.CountBytesIn). It is 0 for the
	// other operators, which receive Go values in process, and for sources
	// whose connector does not count bytes.
	BytesIn int64
	// BytesOut counts the bytes a sink's writer wrote to the external
	// system (Flink's numBytesOut): the encoded payloads of the records, as
	// the connector counts them (connector.CountBytesOut). It is 0 for the
	// other operators, which emit Go values in process, and for sinks whose
	// connector does not count bytes.
	BytesOut int64
	// LateRecords counts records that arrived after their window (and its
	// allowed lateness) had closed.
	LateRecords int64
	// WindowGapRecords counts records that fell between the windows of a
	// sliding window whose size is below its slide.
	WindowGapRecords int64
	// DeadLetters counts malformed input records set aside by a source.
	DeadLetters int64
	// RetractionsWithoutState counts retractions (-U, -D) that a relational
	// operator received for a row or group it held no state for, because
	// the state had expired (state TTL) or the row was never inserted: they
	// changed nothing.
	RetractionsWithoutState int64
	// Watermark is the operator's input watermark, or for a source the
	// watermark it emits (math.MinInt64 before the first).
	Watermark int64
	// StateBytes is the size of the subtask's state in the latest
	// completed checkpoint (0 before the first, and for stateless
	// operators).
	StateBytes int64
	// Started is when the subtask started (again after a restart, when the
	// counters start again from zero).
	Started time.Time
	// Running reports that the subtask has not ended.
	Running bool
	// IdleTime is the time the subtask's goroutine waited for input.
	IdleTime time.Duration
	// BackPressuredTime is the time it waited for room in a downstream
	// exchange (the operators after it were slower).
	BackPressuredTime time.Duration
	// BusyTime is the rest of its running time: processing records.
	BusyTime time.Duration
	// Status is the latest progress report of a source's reader, for
	// connectors that report one (connector.StatusReporter): a CDC
	// source's snapshot progress and lag, a broker source's offsets.
	Status map[string]any
	// EnumeratorStatus, on subtask 0 of a source, is the latest progress
	// report of its enumerator.
	EnumeratorStatus map[string]any
}

// Metrics returns a snapshot of the counters of the operators of the
// executing or executed job, one entry per operator subtask, in the order of
// the job graph's chains.
func (e *Environment) Metrics() []OperatorMetrics {
	e.mu.Lock()
	j := e.running
	e.mu.Unlock()
	if j == nil {
		return nil
	}
	ms := j.Metrics()
	now := time.Now()
	out := make([]OperatorMetrics, len(ms))
	for i, m := range ms {
		out[i] = OperatorMetrics{
			OperatorID: m.ID, Name: m.Name, Subtask: m.Subtask,
			RecordsIn: m.RecordsIn.Load(), RecordsOut: m.RecordsOut.Load(),
			BytesIn: m.BytesIn.Load(), BytesOut: m.BytesOut.Load(),
			LateRecords: m.LateRecords.Load(), WindowGapRecords: m.WindowGapRecords.Load(),
			DeadLetters: m.DeadLetters.Load(), RetractionsWithoutState: m.RetractionsWithoutState.Load(),
			Watermark: m.Watermark.Load(), StateBytes: m.StateBytes.Load(),
		}
		if st := m.Status.Load(); st != nil {
			out[i].Status = *st
		}
		if st := m.EnumeratorStatus.Load(); st != nil {
			out[i].EnumeratorStatus = *st
		}
		if t := m.Task; t != nil {
			o := &out[i]
			o.Chain, o.Started, o.Running = t.Chain, t.Started, t.Ended.Load() == 0
			o.BusyTime, o.IdleTime, o.BackPressuredTime = t.Times(now)
		}
	}
	return out
}

// CheckpointStats describes a completed, failed or aborted checkpoint or
// savepoint.
type CheckpointStats struct {
	// ID is the checkpoint's id.
	ID int64
	// Triggered is when the checkpoint started at the sources.
	Triggered time.Time
	// Duration is the time from triggering the checkpoint at the sources to
	// its metadata being durable (or to its failure).
	Duration time.Duration
	// Write is the part of Duration spent writing files, while the tasks go
	// on processing.
	Write time.Duration
	// Sync is the longest time a subtask stopped processing to take its
	// part of the snapshot.
	Sync time.Duration
	// Alignment is the longest time a subtask spent aligning the
	// checkpoint's barriers: from the first barrier to reach it to the
	// last, the inputs that had delivered theirs were held back.
	Alignment time.Duration
	// Bytes is the size of the checkpoint: its state files and every
	// shared file it references.
	Bytes int64
	// Uploaded is what the checkpoint wrote: its state files and the shared
	// files that no earlier checkpoint had stored. With incremental
	// snapshots it is a fraction of Bytes.
	Uploaded int64
	// Savepoint marks a savepoint.
	Savepoint bool
	// Failed is why the checkpoint failed or was aborted; nil for a
	// completed one.
	Failed error
}

// CheckpointStats returns the checkpoints completed by the current (or
// last) run of the job, oldest first (at most the latest 1000).
func (e *Environment) CheckpointStats() []CheckpointStats {
	var out []CheckpointStats
	for _, s := range e.CheckpointHistory() {
		if s.Failed == nil {
			out = append(out, s)
		}
	}
	return out
}

// CheckpointHistory returns the checkpoints of the current (or last) run of
// the job, completed and failed, oldest first (at most the latest 1000).
func (e *Environment) CheckpointHistory() []CheckpointStats {
	e.mu.Lock()
	j := e.running
	e.mu.Unlock()
	if j == nil {
		return nil
	}
	stats := j.CheckpointStats()
	out := make([]CheckpointStats, len(stats))
	for i, s := range stats {
		out[i] = CheckpointStats(s)
	}
	return out
}

// CheckpointCounts counts the checkpoints of a job's run.
type CheckpointCounts struct {
	// Completed and Failed count the checkpoints (and savepoints) that
	// completed and that failed or were aborted.
	Completed, Failed int64
}

// CheckpointCounts counts the checkpoints of the current (or last) run of
// the job.
func (e *Environment) CheckpointCounts() CheckpointCounts {
	e.mu.Lock()
	j := e.running
	e.mu.Unlock()
	if j == nil {
		return CheckpointCounts{}
	}
	return CheckpointCounts(j.CheckpointCounts())
}

// Restarts returns how many times the executing job has restarted after a
// failure.
func (e *Environment) Restarts() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running == nil {
		return 0
	}
	return e.running.Restarts()
}

// Exception is a failure of the job.
type Exception struct {
	// Time is when the failure was seen.
	Time time.Time
	// Operator and Subtask name the operator subtask that failed; Operator
	// is empty for a failure outside the operators (writing a checkpoint,
	// say), and Subtask is then -1.
	Operator string
	// OperatorID identifies the failed operator among operators of the
	// same name (OperatorMetrics.OperatorID); -1 when Operator is empty.
	OperatorID int
	Subtask    int
	// Err is the failure.
	Err error
	// Restarted reports that the job restarted after the failure; the
	// last failure of a job that failed for good has it false.
	Restarted bool
}

// Exceptions returns the latest failures of the job (at most 100), oldest
// first.
func (e *Environment) Exceptions() []Exception {
	e.mu.Lock()
	j := e.running
	e.mu.Unlock()
	if j == nil {
		return nil
	}
	xs := j.Exceptions()
	out := make([]Exception, len(xs))
	for i, x := range xs {
		out[i] = Exception(x)
	}
	return out
}

// JobGraph is the physical plan of a job: its operator chains (vertices),
// each run by Parallelism subtasks, and the exchanges between them.
type JobGraph struct {
	Vertices []JobVertex
	Edges    []JobEdge
}

// JobVertex is a chain of operators run together by each of its subtasks.
type JobVertex struct {
	// ID numbers the vertex from 0, in the order of Vertices.
	ID int
	// Name joins the names of its operators with " -> ".
	Name string
	// Operators lists the chained operators, upstream first.
	Operators []JobOperator
	// Parallelism is the number of subtasks.
	Parallelism int
}

// JobOperator is one operator of a vertex.
type JobOperator struct {
	// ID identifies the operator (OperatorMetrics.OperatorID).
	ID int
	// Name is the operator's name, as in OperatorMetrics.
	Name string
	// UID identifies the operator's state in checkpoints.
	UID string
	// MaxParallelism is the number of key groups of its keyed state.
	MaxParallelism int
	// Changelog names the kinds of change its output carries, as Flink's
	// EXPLAIN shows them: "[I]" for insert-only, "[I,UB,UA,D]" for a
	// retracting changelog, "[I,UA,D]" for an upserting one.
	Changelog string
}

// JobEdge is an exchange between two vertices.
type JobEdge struct {
	// Source and Target are vertex IDs.
	Source, Target int
	// Partitioning is FORWARD, HASH, REBALANCE or BROADCAST.
	Partitioning string
	// SideOutput names the source operator's side output the edge carries;
	// empty for its main output.
	SideOutput string
}

// JobGraph returns the physical plan of the executing or executed job, or
// of the job the environment would execute. It reports the errors Plan
// would.
func (e *Environment) JobGraph() (*JobGraph, error) {
	e.mu.Lock()
	j := e.running
	e.mu.Unlock()
	var p *runtime.Plan
	if j != nil {
		p = j.Plan
	} else {
		e.compileMu.Lock()
		defer e.compileMu.Unlock()
		if len(e.errs) > 0 {
			return nil, fmt.Errorf("eddy: %w", errors.Join(e.errs...))
		}
		var err error
		if p, err = runtime.Compile(e.graph, e.cfg); err != nil {
			return nil, fmt.Errorf("eddy: %w", err)
		}
	}
	return jobGraphOf(p), nil
}

func jobGraphOf(p *runtime.Plan) *JobGraph {
	g := &JobGraph{}
	vertexOf := map[*runtime.Node]int{}
	for i, c := range p.Chains {
		v := JobVertex{ID: i, Name: c.Name(), Parallelism: c.Parallelism}
		for _, n := range c.Nodes {
			vertexOf[n] = i
			mode := n.Changelog
			if mode == "" {
				mode = "[I]"
			}
			v.Operators = append(v.Operators, JobOperator{ID: n.ID, Name: n.Name, UID: n.StateUID(), MaxParallelism: n.ResolvedMaxParallelism(), Changelog: mode})
		}
		g.Vertices = append(g.Vertices, v)
	}
	for _, c := range p.Chains {
		for _, n := range c.Nodes {
			for _, e := range n.Outputs {
				if e.Chained() {
					continue
				}
				g.Edges = append(g.Edges, JobEdge{Source: vertexOf[n], Target: vertexOf[e.To], Partitioning: e.Partition.String(), SideOutput: e.Tag})
			}
		}
	}
	return g
}

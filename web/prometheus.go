package web

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/eddystream/eddy"
)

// prometheusHandler serves the metrics of the jobs of js, and of the Go
// runtime and the process, in Prometheus' text format (docs/metrics.md
// lists them). The jobs are read when Prometheus scrapes: the records'
// path pays nothing for it beyond the engine's own counters.
func prometheusHandler(js *Jobs) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		newJobsCollector(js),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Metric names follow Flink's Prometheus reporter: the scopes job, task
// (an operator chain's subtask) and operator joined by '_' before Flink's
// metric name, with the prefix eddy_ instead of flink_taskmanager_, and
// Flink's label names (which also keep the label "job" free for
// Prometheus' own). Counters end in _total, as Prometheus and OpenMetrics
// name them; times are milliseconds where Flink's are.
const (
	jobScope      = "eddy_job_"
	taskScope     = "eddy_job_task_"
	operatorScope = "eddy_job_task_operator_"
	// connectorScope prefixes the numeric entries of the progress reports
	// of sources' readers and enumerators.
	connectorScope = operatorScope + "connector_"
	// enumeratorSubtask is the subtask_index of a source enumerator's
	// metrics.
	enumeratorSubtask = "enumerator"
)

var (
	jobLabels      = []string{"job_name"}
	taskLabels     = []string{"job_name", "task_name", "subtask_index"}
	operatorLabels = []string{"job_name", "task_name", "operator_id", "operator_name", "subtask_index"}
)

// metricDesc is a metric's descriptor with its type.
type metricDesc struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
}

func newMetric(name string, typ prometheus.ValueType, help string, labels []string) metricDesc {
	return metricDesc{prometheus.NewDesc(name, help, labels, nil), typ}
}

func counter(name, help string, labels []string) metricDesc {
	return newMetric(name, prometheus.CounterValue, help, labels)
}

func gauge(name, help string, labels []string) metricDesc {
	return newMetric(name, prometheus.GaugeValue, help, labels)
}

// The metrics of a job.
var (
	jobStatus = gauge(jobScope+"status",
		"1 for the job's current state (CREATED, RUNNING, RESTARTING, FINISHED, FAILED, CANCELED), 0 for the others.",
		[]string{"job_name", "state"})
	jobUptime = gauge(jobScope+"uptime",
		"Milliseconds since the job started executing (until it ended, for a job that ended).", jobLabels)
	jobRestarts = counter(jobScope+"numRestarts_total",
		"Restarts of the job after failures.", jobLabels)
	jobExceptions = counter(jobScope+"numExceptions_total",
		"Failures of the job, in its operators or outside them (writing a checkpoint, say), seen since the server shows the job.", jobLabels)
	jobCompleted = counter(jobScope+"numberOfCompletedCheckpoints_total",
		"Checkpoints and savepoints completed by the job's current execution.", jobLabels)
	jobFailed = counter(jobScope+"numberOfFailedCheckpoints_total",
		"Checkpoints and savepoints that failed or were aborted in the job's current execution.", jobLabels)
	jobLastDuration = gauge(jobScope+"lastCheckpointDuration",
		"Milliseconds from triggering the latest completed checkpoint at the sources to its metadata being durable.", jobLabels)
	jobLastSize = gauge(jobScope+"lastCheckpointSize",
		"Bytes of the latest completed checkpoint: its state files and every shared file it references.", jobLabels)
	jobLastUploaded = gauge(jobScope+"lastCheckpointUploadedSize",
		"Bytes the latest completed checkpoint wrote (a fraction of lastCheckpointSize with incremental snapshots).", jobLabels)
	jobLastAlignment = gauge(jobScope+"lastCheckpointAlignmentTime",
		"Longest milliseconds a subtask spent aligning the barriers of the latest completed checkpoint.", jobLabels)
)

// The metrics of a task: a subtask of an operator chain.
var (
	taskBusyRate = gauge(taskScope+"busyTimeMsPerSecond",
		"Milliseconds per second the subtask spent processing records over the latest sampling interval (0 to 1000).", taskLabels)
	taskIdleRate = gauge(taskScope+"idleTimeMsPerSecond",
		"Milliseconds per second the subtask waited for input over the latest sampling interval (0 to 1000).", taskLabels)
	taskBackPressuredRate = gauge(taskScope+"backPressuredTimeMsPerSecond",
		"Milliseconds per second the subtask waited for room downstream over the latest sampling interval (0 to 1000).", taskLabels)
	taskBusy = counter(taskScope+"busyTimeSeconds_total",
		"Seconds the subtask spent processing records since it started.", taskLabels)
	taskIdle = counter(taskScope+"idleTimeSeconds_total",
		"Seconds the subtask waited for input since it started.", taskLabels)
	taskBackPressured = counter(taskScope+"backPressuredTimeSeconds_total",
		"Seconds the subtask waited for room in a downstream exchange since it started.", taskLabels)
)

// The metrics of an operator subtask.
var (
	opRecordsIn = counter(operatorScope+"numRecordsIn_total",
		"Records the operator subtask received from exchanges (for the first operator of a chain).", operatorLabels)
	opRecordsOut = counter(operatorScope+"numRecordsOut_total",
		"Records the operator subtask sent into exchanges.", operatorLabels)
	opRecordsInRate = gauge(operatorScope+"numRecordsInPerSecond",
		"Records per second the operator subtask received over the latest sampling interval.", operatorLabels)
	opRecordsOutRate = gauge(operatorScope+"numRecordsOutPerSecond",
		"Records per second the operator subtask sent over the latest sampling interval.", operatorLabels)
	opBytesIn = counter(operatorScope+"numBytesIn_total",
		"Bytes the operator subtask read from an external system (counted by a source's connector; 0 for operators that receive records in process).", operatorLabels)
	opBytesOut = counter(operatorScope+"numBytesOut_total",
		"Bytes the operator subtask wrote to an external system (counted by a sink's connector; 0 for operators that emit records in process).", operatorLabels)
	opBytesInRate = gauge(operatorScope+"numBytesInPerSecond",
		"Bytes per second the operator subtask read from an external system over the latest sampling interval.", operatorLabels)
	opBytesOutRate = gauge(operatorScope+"numBytesOutPerSecond",
		"Bytes per second the operator subtask wrote to an external system over the latest sampling interval.", operatorLabels)
	opLate = counter(operatorScope+"numLateRecordsDropped_total",
		"Records that arrived after their window (and its allowed lateness) had closed.", operatorLabels)
	opWindowGap = counter(operatorScope+"numWindowGapRecords_total",
		"Records that fell between the windows of a sliding window whose size is below its slide.", operatorLabels)
	opDeadLetters = counter(operatorScope+"numDeadLetters_total",
		"Malformed input records a source set aside.", operatorLabels)
	opRetractions = counter(operatorScope+"numRetractionsWithoutState_total",
		"Retractions a relational operator received for a row or group it held no state for.", operatorLabels)
	opExceptions = counter(operatorScope+"numExceptions_total",
		"Failures of the operator subtask seen since the server shows the job.", operatorLabels)
	opWatermark = gauge(operatorScope+"currentInputWatermark",
		"The operator subtask's input watermark, in milliseconds (absent before the first watermark, after the last, and for operators that are not the first of a chain fed by an exchange).", operatorLabels)
	opWatermarkLag = gauge(operatorScope+"watermarkLag",
		"Milliseconds from the operator subtask's input watermark to now (absent when currentInputWatermark is).", operatorLabels)
	opStateSize = gauge(operatorScope+"stateSize",
		"Bytes of the operator subtask's state in the latest completed checkpoint.", operatorLabels)
)

// jobStates lists the states eddy_job_status reports.
var jobStates = []eddy.JobState{eddy.JobCreated, eddy.JobRunning, eddy.JobRestarting, eddy.JobFinished, eddy.JobFailed, eddy.JobCanceled}

// jobsCollector reads the jobs of js when Prometheus scrapes.
type jobsCollector struct {
	js *Jobs

	mu sync.Mutex
	// exceptions counts each job's failures: the job keeps only its
	// latest, so the collector counts those newer than the ones it saw.
	exceptions map[*job]*exceptionCount
	// connector holds the descriptors of connector metrics by name.
	connector map[string]*prometheus.Desc
}

// exceptionCount counts the failures of a job.
type exceptionCount struct {
	// last is the time of the latest failure counted.
	last       time.Time
	total      int64
	byOperator map[exceptionKey]int64
	// names are the names of the operators in byOperator.
	names map[exceptionKey]string
}

func newJobsCollector(js *Jobs) *jobsCollector {
	return &jobsCollector{js: js, exceptions: map[*job]*exceptionCount{}, connector: map[string]*prometheus.Desc{}}
}

// Describe describes nothing: the connector metrics depend on what the
// sources report, so the collector is unchecked.
func (c *jobsCollector) Describe(chan<- *prometheus.Desc) {}

// Collect reads every job's status, checkpoints, failures and metrics.
func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	jobs := c.js.list()
	live := make(map[*job]bool, len(jobs))
	for _, j := range jobs {
		live[j] = true
		c.collectJob(ch, j, time.Now())
	}
	for j := range c.exceptions {
		if !live[j] {
			delete(c.exceptions, j)
		}
	}
}

func (c *jobsCollector) collectJob(ch chan<- prometheus.Metric, j *job, now time.Time) {
	emit := func(m metricDesc, v float64, labels ...string) {
		if m, err := prometheus.NewConstMetric(m.desc, m.typ, v, validLabels(labels)...); err == nil {
			ch <- m
		}
	}
	env, name := j.env, j.name

	st := env.JobStatus()
	for _, s := range jobStates {
		v := 0.0
		if st.State == s {
			v = 1
		}
		emit(jobStatus, v, name, string(s))
	}
	if !st.Started.IsZero() {
		end := now
		if !st.Ended.IsZero() {
			end = st.Ended
		}
		emit(jobUptime, float64(end.Sub(st.Started).Milliseconds()), name)
	}
	emit(jobRestarts, float64(st.Restarts), name)
	counts := env.CheckpointCounts()
	emit(jobCompleted, float64(counts.Completed), name)
	emit(jobFailed, float64(counts.Failed), name)
	hist := env.CheckpointHistory()
	for i := len(hist) - 1; i >= 0; i-- {
		if s := hist[i]; s.Failed == nil {
			emit(jobLastDuration, float64(s.Duration.Milliseconds()), name)
			emit(jobLastSize, float64(s.Bytes), name)
			emit(jobLastUploaded, float64(s.Uploaded), name)
			emit(jobLastAlignment, float64(s.Alignment.Milliseconds()), name)
			break
		}
	}
	xs := c.countExceptions(j, env.Exceptions())
	emit(jobExceptions, float64(xs.total), name)

	ms := env.Metrics()
	chainOf := make(map[int]string, len(ms))
	type taskKey struct {
		chain   string
		subtask int
	}
	tasks := map[taskKey]bool{}
	operators := make(map[exceptionKey]bool, len(ms))
	connectors := map[string]bool{}
	for i := range ms {
		m := &ms[i]
		chainOf[m.OperatorID] = m.Chain
		key := exceptionKey{m.OperatorID, m.Subtask}
		if operators[key] {
			continue
		}
		operators[key] = true
		subtask := strconv.Itoa(m.Subtask)
		opID := strconv.Itoa(m.OperatorID)
		rates := j.ratesOf(m.OperatorID, m.Subtask)

		// The first operator of a chain reports the times of the chain's
		// goroutine, which its operators share.
		if tk := (taskKey{m.Chain, m.Subtask}); !tasks[tk] {
			tasks[tk] = true
			emit(taskBusyRate, rates.BusyTimeMsPerSecond, name, m.Chain, subtask)
			emit(taskIdleRate, rates.IdleTimeMsPerSecond, name, m.Chain, subtask)
			emit(taskBackPressuredRate, rates.BackPressuredTimeMsPerSecond, name, m.Chain, subtask)
			emit(taskBusy, m.BusyTime.Seconds(), name, m.Chain, subtask)
			emit(taskIdle, m.IdleTime.Seconds(), name, m.Chain, subtask)
			emit(taskBackPressured, m.BackPressuredTime.Seconds(), name, m.Chain, subtask)
		}

		emit(opRecordsIn, float64(m.RecordsIn), name, m.Chain, opID, m.Name, subtask)
		emit(opRecordsOut, float64(m.RecordsOut), name, m.Chain, opID, m.Name, subtask)
		emit(opRecordsInRate, rates.RecordsInPerSecond, name, m.Chain, opID, m.Name, subtask)
		emit(opRecordsOutRate, rates.RecordsOutPerSecond, name, m.Chain, opID, m.Name, subtask)
		emit(opBytesIn, float64(m.BytesIn), name, m.Chain, opID, m.Name, subtask)
		emit(opBytesOut, float64(m.BytesOut), name, m.Chain, opID, m.Name, subtask)
		emit(opBytesInRate, rates.BytesInPerSecond, name, m.Chain, opID, m.Name, subtask)
		emit(opBytesOutRate, rates.BytesOutPerSecond, name, m.Chain, opID, m.Name, subtask)
		emit(opLate, float64(m.LateRecords), name, m.Chain, opID, m.Name, subtask)
		emit(opWindowGap, float64(m.WindowGapRecords), name, m.Chain, opID, m.Name, subtask)
		emit(opDeadLetters, float64(m.DeadLetters), name, m.Chain, opID, m.Name, subtask)
		emit(opRetractions, float64(m.RetractionsWithoutState), name, m.Chain, opID, m.Name, subtask)
		emit(opExceptions, float64(xs.byOperator[key]), name, m.Chain, opID, m.Name, subtask)
		// No watermark before the first (math.MinInt64), nor after the
		// last of an input that ended (math.MaxInt64).
		if wm := m.Watermark; wm != math.MinInt64 && wm != math.MaxInt64 {
			emit(opWatermark, float64(wm), name, m.Chain, opID, m.Name, subtask)
			emit(opWatermarkLag, float64(now.UnixMilli()-wm), name, m.Chain, opID, m.Name, subtask)
		}
		emit(opStateSize, float64(m.StateBytes), name, m.Chain, opID, m.Name, subtask)

		c.collectStatus(ch, connectors, m.Status, name, m.Chain, opID, m.Name, subtask)
		c.collectStatus(ch, connectors, m.EnumeratorStatus, name, m.Chain, opID, m.Name, enumeratorSubtask)
	}
	// Failures of operator subtasks that no longer report metrics.
	for key, n := range xs.byOperator {
		if !operators[key] {
			operators[key] = true
			id := ""
			if key.operator >= 0 {
				id = strconv.Itoa(key.operator)
			}
			emit(opExceptions, float64(n), name, chainOf[key.operator], id, xs.names[key], strconv.Itoa(key.subtask))
		}
	}
}

// countExceptions counts the failures in xs (oldest first) newer than
// those counted before, and returns the job's counts. c.mu is held.
func (c *jobsCollector) countExceptions(j *job, xs []eddy.Exception) *exceptionCount {
	n := c.exceptions[j]
	if n == nil {
		n = &exceptionCount{byOperator: map[exceptionKey]int64{}, names: map[exceptionKey]string{}}
		c.exceptions[j] = n
	}
	for _, x := range xs {
		if !x.Time.After(n.last) {
			continue
		}
		n.last = x.Time
		n.total++
		if x.Operator != "" {
			key := exceptionKey{x.OperatorID, x.Subtask}
			n.byOperator[key]++
			n.names[key] = x.Operator
		}
	}
	return n
}

// connectorSuffixes are the endings of the names of the entries of a
// progress report that are exported (connector.StatusReporter).
var connectorSuffixes = []string{"Millis", "Bytes", "Records", "Offset"}

// collectStatus exports the numeric entries of a reader's or enumerator's
// progress report whose names end in one of connectorSuffixes, as gauges.
// Other entries (strings, say) are never exported. seen holds the series
// exported for the job, so that two entries whose names differ only in
// characters a metric name cannot hold do not clash. c.mu is held.
func (c *jobsCollector) collectStatus(ch chan<- prometheus.Metric, seen map[string]bool, status map[string]any, job, task, operatorID, operator, subtask string) {
	for k, v := range status {
		f, ok := number(v)
		if !ok || !hasConnectorSuffix(k) {
			continue
		}
		name := connectorScope + metricNamePart(k)
		series := name + "\xff" + operatorID + "\xff" + subtask
		if seen[series] {
			continue
		}
		seen[series] = true
		d := c.connector[name]
		if d == nil {
			d = prometheus.NewDesc(name, "The entry "+strconv.Quote(k)+" of the progress report of a source's reader (subtask_index \""+enumeratorSubtask+"\": of its enumerator).", operatorLabels, nil)
			c.connector[name] = d
		}
		if m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, f, validLabels([]string{job, task, operatorID, operator, subtask})...); err == nil {
			ch <- m
		}
	}
}

// validLabels makes label values valid UTF-8 (job and operator names come
// from SQL files and pipeline definitions), so that a scrape never fails.
func validLabels(vs []string) []string {
	for i, v := range vs {
		vs[i] = strings.ToValidUTF8(v, "\uFFFD")
	}
	return vs
}

func hasConnectorSuffix(k string) bool {
	for _, s := range connectorSuffixes {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// metricNamePart replaces the characters of k that a metric name cannot
// hold with '_'.
func metricNamePart(k string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			return r
		}
		return '_'
	}, k)
}

// number returns v as a float64 when it is a number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	case interface{ Float64() (float64, error) }: // json.Number
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// exceptionKey names an operator subtask as the series of an operator's
// metrics and exceptions do: by the operator's id in the job graph (-1 for
// a failure of an operator whose id is unknown).
type exceptionKey struct {
	operator int
	subtask  int
}

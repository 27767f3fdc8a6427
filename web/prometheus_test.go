package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/window"
)

// promEvent is a record of the test jobs: a key and an event time in
// milliseconds.
type promEvent struct{ Key, Time int64 }

// startPromJob runs an endless generator of 20 000 events per second (event
// time advancing as fast as the clock) into a keyed tumbling count with
// checkpoints every 50 ms, and stops it when the test ends.
func startPromJob(tb testing.TB, parallelism int) *eddy.Environment {
	tb.Helper()
	base := time.Now().UnixMilli()
	env := eddy.NewEnvironment(eddy.WithParallelism(parallelism),
		eddy.WithCheckpointing(50*time.Millisecond), eddy.WithCheckpointDir(tb.TempDir()))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: -1, RatePerSecond: 20_000},
		func(i int64) promEvent { return promEvent{Key: i % 16, Time: base + i/20} },
		eddy.BoundedOutOfOrder(10*time.Millisecond, func(e promEvent) int64 { return e.Time }))
	keyed := eddy.KeyBy(src, func(e promEvent) int64 { return e.Key })
	eddy.Discard(eddy.Aggregate(eddy.Window(keyed, window.Tumbling(100*time.Millisecond)), agg.Count[promEvent]()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "prometheus") }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			tb.Errorf("the job ended with %v", err)
		}
	})
	return env
}

// scrape gets the metrics from h and parses them.
func scrape(tb testing.TB, h http.Handler) (map[string]*dto.MetricFamily, string) {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		tb.Fatalf("GET /metrics: status %d, Content-Type %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	body := rec.Body.String()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		tb.Fatalf("parsing the metrics: %v\n%s", err, body)
	}
	return fams, body
}

// waitUntil polls cond until it holds, failing the test after a minute.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			tb.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// labelsOf returns the labels of m.
func labelsOf(m *dto.Metric) map[string]string {
	ls := map[string]string{}
	for _, l := range m.GetLabel() {
		ls[l.GetName()] = l.GetValue()
	}
	return ls
}

// value returns the value of a gauge, counter or untyped metric.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

// sum adds the values of the family name whose labels include match.
func sum(fams map[string]*dto.MetricFamily, name string, match map[string]string) (float64, int) {
	var total float64
	n := 0
	for _, m := range fams[name].GetMetric() {
		ls := labelsOf(m)
		ok := true
		for k, v := range match {
			ok = ok && ls[k] == v
		}
		if ok {
			total += value(m)
			n++
		}
	}
	return total, n
}

// credentialLike matches what looks like a secret in an exposition.
var credentialLike = regexp.MustCompile(`(?i)password|passwd|secret|bearer|api[_-]?key|s3cr3t|hunter2`)

// TestPrometheusMetricsOfARunningJob scrapes a running keyed aggregation
// with checkpoints and checks the metrics of its job, tasks and operators,
// and of the Go runtime and the process.
func TestPrometheusMetricsOfARunningJob(t *testing.T) {
	env := startPromJob(t, 2)
	js := &Jobs{}
	js.Set("prom-running", env)
	h := prometheusHandler(js)

	waitUntil(t, "a completed checkpoint holding state", func() bool {
		for _, s := range env.CheckpointStats() {
			if s.Bytes > 0 {
				return true
			}
		}
		return false
	})
	waitUntil(t, "a watermark", func() bool {
		for _, m := range env.Metrics() {
			if m.Watermark > 0 {
				return true
			}
		}
		return false
	})
	js.sampleAll(time.Now())
	time.Sleep(100 * time.Millisecond)
	js.sampleAll(time.Now())
	first, body := scrape(t, h)

	types := map[string]dto.MetricType{
		"eddy_job_status":                                         dto.MetricType_GAUGE,
		"eddy_job_uptime":                                         dto.MetricType_GAUGE,
		"eddy_job_numRestarts_total":                              dto.MetricType_COUNTER,
		"eddy_job_numExceptions_total":                            dto.MetricType_COUNTER,
		"eddy_job_numberOfCompletedCheckpoints_total":             dto.MetricType_COUNTER,
		"eddy_job_numberOfFailedCheckpoints_total":                dto.MetricType_COUNTER,
		"eddy_job_lastCheckpointDuration":                         dto.MetricType_GAUGE,
		"eddy_job_lastCheckpointSize":                             dto.MetricType_GAUGE,
		"eddy_job_lastCheckpointUploadedSize":                     dto.MetricType_GAUGE,
		"eddy_job_lastCheckpointAlignmentTime":                    dto.MetricType_GAUGE,
		"eddy_job_task_busyTimeMsPerSecond":                       dto.MetricType_GAUGE,
		"eddy_job_task_idleTimeMsPerSecond":                       dto.MetricType_GAUGE,
		"eddy_job_task_backPressuredTimeMsPerSecond":              dto.MetricType_GAUGE,
		"eddy_job_task_busyTimeSeconds_total":                     dto.MetricType_COUNTER,
		"eddy_job_task_idleTimeSeconds_total":                     dto.MetricType_COUNTER,
		"eddy_job_task_backPressuredTimeSeconds_total":            dto.MetricType_COUNTER,
		"eddy_job_task_operator_numRecordsIn_total":               dto.MetricType_COUNTER,
		"eddy_job_task_operator_numRecordsOut_total":              dto.MetricType_COUNTER,
		"eddy_job_task_operator_numRecordsInPerSecond":            dto.MetricType_GAUGE,
		"eddy_job_task_operator_numRecordsOutPerSecond":           dto.MetricType_GAUGE,
		"eddy_job_task_operator_numBytesIn_total":                 dto.MetricType_COUNTER,
		"eddy_job_task_operator_numBytesOut_total":                dto.MetricType_COUNTER,
		"eddy_job_task_operator_numBytesInPerSecond":              dto.MetricType_GAUGE,
		"eddy_job_task_operator_numBytesOutPerSecond":             dto.MetricType_GAUGE,
		"eddy_job_task_operator_numLateRecordsDropped_total":      dto.MetricType_COUNTER,
		"eddy_job_task_operator_numWindowGapRecords_total":        dto.MetricType_COUNTER,
		"eddy_job_task_operator_numDeadLetters_total":             dto.MetricType_COUNTER,
		"eddy_job_task_operator_numRetractionsWithoutState_total": dto.MetricType_COUNTER,
		"eddy_job_task_operator_numExceptions_total":              dto.MetricType_COUNTER,
		"eddy_job_task_operator_currentInputWatermark":            dto.MetricType_GAUGE,
		"eddy_job_task_operator_watermarkLag":                     dto.MetricType_GAUGE,
		"eddy_job_task_operator_stateSize":                        dto.MetricType_GAUGE,
	}
	for name, typ := range types {
		f := first[name]
		if f == nil || len(f.GetMetric()) == 0 {
			t.Errorf("no %s", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s is a %v, want a %v", name, f.GetType(), typ)
		}
		if f.GetHelp() == "" {
			t.Errorf("%s has no help", name)
		}
		for _, m := range f.GetMetric() {
			ls := labelsOf(m)
			if ls["job_name"] != "prom-running" {
				t.Errorf("%s %v: want job_name prom-running", name, ls)
			}
			switch {
			case strings.HasPrefix(name, operatorScope):
				if ls["task_name"] == "" || ls["operator_name"] == "" || (ls["subtask_index"] != "0" && ls["subtask_index"] != "1") {
					t.Errorf("%s %v: want a task, an operator and subtask 0 or 1", name, ls)
				}
			case strings.HasPrefix(name, taskScope):
				if ls["task_name"] == "" || (ls["subtask_index"] != "0" && ls["subtask_index"] != "1") || len(ls) != 3 {
					t.Errorf("%s %v: want a task and subtask 0 or 1", name, ls)
				}
			}
		}
	}
	// Two chains (the source and the window) of two subtasks each.
	if _, n := sum(first, "eddy_job_task_busyTimeSeconds_total", nil); n != 4 {
		t.Errorf("busy times of %d tasks, want 4", n)
	}
	for _, s := range jobStates {
		v, n := sum(first, "eddy_job_status", map[string]string{"state": string(s)})
		if want := map[bool]float64{true: 1}[s == eddy.JobRunning]; n != 1 || v != want {
			t.Errorf("eddy_job_status{state=%q} = %v (%d series), want %v", s, v, n, want)
		}
	}
	if v, _ := sum(first, "eddy_job_numberOfCompletedCheckpoints_total", nil); v <= 0 {
		t.Errorf("%v completed checkpoints after a checkpoint completed", v)
	}
	if v, _ := sum(first, "eddy_job_lastCheckpointSize", nil); v <= 0 {
		t.Errorf("the last checkpoint has %v bytes", v)
	}
	if v, _ := sum(first, "eddy_job_task_operator_stateSize", nil); v <= 0 {
		t.Errorf("the operators' state has %v bytes after a checkpoint", v)
	}
	if _, n := sum(first, "eddy_job_task_operator_currentInputWatermark", nil); n == 0 {
		t.Error("no operator has a watermark")
	}
	window := false
	for _, m := range first["eddy_job_task_operator_currentInputWatermark"].GetMetric() {
		ls := labelsOf(m)
		if value(m) <= 0 {
			t.Errorf("watermark %v of %v: want milliseconds of event time", value(m), ls)
		}
		window = window || strings.HasPrefix(ls["operator_name"], "Aggregate")
	}
	if !window {
		t.Error("the window operator has no watermark")
	}
	if _, n := sum(first, "eddy_job_task_operator_watermarkLag", nil); n != len(first["eddy_job_task_operator_currentInputWatermark"].GetMetric()) {
		t.Errorf("%d watermark lags for %d watermarks", n, len(first["eddy_job_task_operator_currentInputWatermark"].GetMetric()))
	}
	var goMetrics, processMetrics bool
	for name := range first {
		goMetrics = goMetrics || strings.HasPrefix(name, "go_")
		processMetrics = processMetrics || strings.HasPrefix(name, "process_")
	}
	if !goMetrics || !processMetrics {
		t.Errorf("the Go runtime's metrics (%v) or the process' (%v) are missing", goMetrics, processMetrics)
	}
	if s := credentialLike.FindString(body); s != "" {
		t.Errorf("the metrics hold %q", s)
	}

	// A running job works between two samples; on a loaded machine its
	// goroutines may not run between two given samples, so sample again
	// until they did.
	waitUntil(t, "busy time between two samples", func() bool {
		time.Sleep(50 * time.Millisecond)
		js.sampleAll(time.Now())
		fams, _ := scrape(t, h)
		busy, _ := sum(fams, "eddy_job_task_busyTimeMsPerSecond", nil)
		return busy > 0
	})

	in1, _ := sum(first, "eddy_job_task_operator_numRecordsIn_total", nil)
	out1, _ := sum(first, "eddy_job_task_operator_numRecordsOut_total", nil)
	waitUntil(t, "the record counters to grow", func() bool {
		second, _ := scrape(t, h)
		in2, _ := sum(second, "eddy_job_task_operator_numRecordsIn_total", nil)
		out2, _ := sum(second, "eddy_job_task_operator_numRecordsOut_total", nil)
		return in2 > in1 && out2 > out1
	})
}

// promStatusSource emits 1, 2, 3, … one a millisecond until release is
// closed; its reader and enumerator report progress, with entries that must
// not be exported.
type promStatusSource struct{ release chan struct{} }

type promStatusEnumerator struct{ connector.Enumerator }

func (promStatusEnumerator) Status() map[string]any {
	return map[string]any{"splitsAssigned": 1, "pendingRecords": 3, "secretToken": "s3cr3t"}
}

func (s *promStatusSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	e, err := connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "only"}}, nil
	})
	return promStatusEnumerator{e}, err
}

func (s *promStatusSource) NewReader(connector.ReaderContext) (connector.Reader[int64], error) {
	return &promStatusReader{s: s}, nil
}

type promStatusReader struct {
	s    *promStatusSource
	has  bool
	read int64
}

func (r *promStatusReader) AddSplits(s []connector.Split) error {
	r.has = r.has || len(s) > 0
	return nil
}

func (r *promStatusReader) Read(out connector.Output[int64]) error {
	if !r.has {
		return nil
	}
	select {
	case <-r.s.release:
		out.Split("only").Finish()
		r.has = false
	case <-time.After(time.Millisecond):
		r.read++
		out.Split("only").Emit(r.read)
	}
	return nil
}

func (r *promStatusReader) Status() map[string]any {
	return map[string]any{"readRecords": r.read, "lagMillis": int64(42), "password": "hunter2", "host.Bytes": "not a number"}
}

func (r *promStatusReader) SnapshotState(int64) ([]connector.Split, error) { return nil, nil }
func (r *promStatusReader) Close() error                                   { return nil }

// TestPrometheusConnectorStatusAndExceptions checks the gauges of a
// source's progress reports (numeric entries only) and the counts of a
// job's failures and restarts.
func TestPrometheusConnectorStatusAndExceptions(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithRestartStrategy(eddy.FixedDelayRestart(1, 0)))
	src := &promStatusSource{release: make(chan struct{})}
	var failed atomic.Bool
	eddy.SinkTo(eddy.FromSource[int64](env, "status", src, eddy.NoWatermarks[int64]()), func(v int64) error {
		if v == 3 && failed.CompareAndSwap(false, true) {
			return errors.New("the sink fails once")
		}
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- env.Execute(context.Background(), "prom-status") }()
	js := &Jobs{}
	js.Set("prom-status", env)
	h := prometheusHandler(js)

	var fams map[string]*dto.MetricFamily
	var body string
	waitUntil(t, "a restart and the progress of the reader and the enumerator", func() bool {
		fams, body = scrape(t, h)
		restarts, _ := sum(fams, "eddy_job_numRestarts_total", nil)
		read, _ := sum(fams, "eddy_job_task_operator_connector_readRecords", nil)
		_, enumerator := sum(fams, "eddy_job_task_operator_connector_pendingRecords", nil)
		return restarts == 1 && read > 0 && enumerator > 0
	})
	if v, n := sum(fams, "eddy_job_task_operator_connector_lagMillis", map[string]string{"subtask_index": "0", "job_name": "prom-status"}); n != 1 || v != 42 {
		t.Errorf("connector_lagMillis %v (%d series), want 42", v, n)
	}
	if v, n := sum(fams, "eddy_job_task_operator_connector_pendingRecords", map[string]string{"subtask_index": "enumerator"}); n != 1 || v != 3 {
		t.Errorf("the enumerator's connector_pendingRecords %v (%d series), want 3", v, n)
	}
	for name, f := range fams {
		if strings.HasPrefix(name, connectorScope) && f.GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s is a %v, want a gauge", name, f.GetType())
		}
	}
	for _, absent := range []string{"eddy_job_task_operator_connector_splitsAssigned", "eddy_job_task_operator_connector_host_Bytes", "eddy_job_task_operator_connector_password"} {
		if fams[absent] != nil {
			t.Errorf("%s is exported", absent)
		}
	}
	if v, _ := sum(fams, "eddy_job_numExceptions_total", nil); v != 1 {
		t.Errorf("eddy_job_numExceptions_total %v, want 1", v)
	}
	var sinkFailures float64
	for _, m := range fams["eddy_job_task_operator_numExceptions_total"].GetMetric() {
		if ls := labelsOf(m); strings.HasPrefix(ls["operator_name"], "Sink") {
			sinkFailures += value(m)
		} else if value(m) != 0 {
			t.Errorf("failures of %v: %v, want 0", ls, value(m))
		}
	}
	if sinkFailures != 1 {
		t.Errorf("the sink's failures %v, want 1", sinkFailures)
	}
	if s := credentialLike.FindString(body); s != "" {
		t.Errorf("the metrics hold %q", s)
	}

	close(src.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	fams, _ = scrape(t, h)
	if v, _ := sum(fams, "eddy_job_status", map[string]string{"state": string(eddy.JobFinished)}); v != 1 {
		t.Errorf("eddy_job_status{state=FINISHED} = %v after the job finished", v)
	}
	if v, _ := sum(fams, "eddy_job_numExceptions_total", nil); v != 1 {
		t.Errorf("eddy_job_numExceptions_total %v after a second scrape, want 1", v)
	}
}

// BenchmarkScrape measures one scrape of a running job of parallelism 4.
func BenchmarkScrape(b *testing.B) {
	env := startPromJob(b, 4)
	js := &Jobs{}
	js.Set("bench", env)
	h := prometheusHandler(js)
	waitUntil(b, "a completed checkpoint", func() bool { return env.CheckpointCounts().Completed > 0 })
	js.sampleAll(time.Now())
	time.Sleep(50 * time.Millisecond)
	js.sampleAll(time.Now())
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	var bytes int
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
		bytes = rec.Body.Len()
	}
	b.ReportMetric(float64(bytes), "bytes/scrape")
}

// TestPrometheusOperatorsOfTheSameName runs two chained operators both
// named "Map", the second failing once, and checks that each has its own
// series, told apart by operator_id, and that the failure is counted for
// the second alone.
func TestPrometheusOperatorsOfTheSameName(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithRestartStrategy(eddy.FixedDelayRestart(1, 0)))
	var failed atomic.Bool
	release := make(chan struct{})
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: 1000}, func(i int64) int64 { return i }, eddy.NoWatermarks[int64]())
	first := eddy.Map(src, func(v int64) int64 { return v + 1 })
	second := eddy.Map(first, func(v int64) int64 {
		if v == 3 && failed.CompareAndSwap(false, true) {
			panic("the second Map fails once")
		}
		if v == 1000 {
			<-release
		}
		return v
	})
	eddy.Discard(second)
	done := make(chan error, 1)
	go func() { done <- env.Execute(context.Background(), "same-names") }()
	js := &Jobs{}
	js.Set("same-names", env)
	h := prometheusHandler(js)

	var fams map[string]*dto.MetricFamily
	waitUntil(t, "a restart and both operators' records", func() bool {
		fams, _ = scrape(t, h)
		restarts, _ := sum(fams, "eddy_job_numRestarts_total", nil)
		_, maps := sum(fams, "eddy_job_task_operator_numRecordsOut_total", map[string]string{"operator_name": "Map"})
		return restarts == 1 && maps == 2
	})
	ids := map[string]float64{}
	for _, m := range fams["eddy_job_task_operator_numExceptions_total"].GetMetric() {
		if ls := labelsOf(m); ls["operator_name"] == "Map" {
			if _, dup := ids[ls["operator_id"]]; dup || ls["operator_id"] == "" {
				t.Errorf("operator_id %q of a Map is empty or repeated", ls["operator_id"])
			}
			ids[ls["operator_id"]] = value(m)
		}
	}
	var failures []float64
	for _, v := range ids {
		failures = append(failures, v)
	}
	slices.Sort(failures)
	if !slices.Equal(failures, []float64{0, 1}) {
		t.Errorf("the Maps' failures by operator_id: %v, want one with 1 and one with 0", ids)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

package web

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/window"
)

// serve serves s on a loopback port until the test ends and returns its
// base URL.
func serve(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// newServer returns a server with opts, failing the test on an error.
func newServer(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s, err := NewServer(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call sends a request (a POST's body as JSON) and returns the status and
// the body.
func call(t *testing.T, method, url, body string, header ...string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// get GETs url and decodes its JSON answer into v, failing on a status
// other than 200.
func get(t *testing.T, url string, v any) {
	t.Helper()
	code, b := call(t, http.MethodGet, url, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, b)
	}
}

// errorOf decodes an {"error": ...} answer.
func errorOf(b []byte) string {
	var e struct{ Error string }
	json.Unmarshal(b, &e)
	return e.Error
}

// poll calls cond until it holds, failing the test after a minute (and
// showing seen, the latest answer, when given).
func poll(t *testing.T, what string, cond func() bool, seen ...any) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			b, _ := json.Marshal(seen)
			t.Fatalf("gave up waiting for %s; last seen %s", what, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reading is a record of the test jobs.
type reading struct {
	Sensor, TS, Value int64
}

// endless starts an unbounded job at parallelism 2 (a generator of event
// time near the wall clock, a keyed tumbling window, a sink) with
// checkpoints every 50ms. It returns the environment, the job's cancel
// function and a function waiting for Execute's result.
func endless(t *testing.T, name string) (*eddy.Environment, context.CancelFunc, func() error) {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointDir(t.TempDir()), eddy.WithCheckpointing(50*time.Millisecond))
	base := time.Now().UnixMilli()
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: -1, RatePerSecond: 2000},
		func(i int64) reading { return reading{Sensor: i % 7, TS: base + i/2, Value: i % 5} },
		eddy.BoundedOutOfOrder(0, func(r reading) int64 { return r.TS }))
	sums := eddy.Reduce(eddy.Window(eddy.KeyBy(src, func(r reading) int64 { return r.Sensor }), window.Tumbling(100*time.Millisecond)),
		func(a, b reading) reading { a.Value += b.Value; return a })
	eddy.Discard(sums)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var err error
	go func() { err = env.Execute(ctx, name); close(done) }()
	wait := func() error { <-done; return err }
	t.Cleanup(func() {
		cancel()
		wait()
	})
	return env, cancel, wait
}

// jobJSON is the answer of GET /v1/jobs/{id}.
type jobJSON struct {
	ID, Name, State string
	Started, Ended  *time.Time
	DurationMs      int64
	Restarts        int
	Failure         *string
	Vertices        []vertexJSONTest
	Edges           []struct {
		Source, Target           int
		Partitioning, SideOutput string
	}
}

type vertexJSONTest struct {
	ID          int
	Name        string
	Parallelism int
	Operators   []struct {
		ID                   int
		Name, UID, Changelog string
		MaxParallelism       int
	}
	Metrics  metricsJSONTest
	Subtasks []struct {
		Subtask int
		metricsJSONTest
		Operators []map[string]any
	}
}

type metricsJSONTest struct {
	RecordsIn, RecordsOut                                                  int64
	RecordsInPerSecond, RecordsOutPerSecond                                float64
	BusyTimeMsPerSecond, IdleTimeMsPerSecond, BackPressuredTimeMsPerSecond float64
	Watermark, WatermarkLagMs                                              *int64
	StateBytes                                                             int64
}

// TestEndpointsOfARunningJob reads every GET endpoint of a running job,
// then stops it with a savepoint.
func TestEndpointsOfARunningJob(t *testing.T) {
	env, _, done := endless(t, "sensors")
	spDir := filepath.Join(t.TempDir(), "savepoints")
	s := newServer(t, SavepointDir(spDir))
	s.Set("sensors", env)
	url := serve(t, s)

	var job jobJSON
	poll(t, "the job to run, with rates, a watermark and state", func() bool {
		get(t, url+"/v1/jobs/sensors", &job)
		if job.State != "RUNNING" || len(job.Vertices) < 2 {
			return false
		}
		src, last := job.Vertices[0].Metrics, job.Vertices[len(job.Vertices)-1].Metrics
		return src.RecordsOut > 0 && src.RecordsOutPerSecond > 0 && last.RecordsIn > 0 &&
			last.Watermark != nil && last.WatermarkLagMs != nil && last.StateBytes > 0
	}, &job)
	if job.ID != "sensors" || job.Name != "sensors" || job.Started == nil || job.Ended != nil || job.Failure != nil || job.DurationMs < 0 {
		t.Fatalf("job %+v", job)
	}
	for _, v := range job.Vertices {
		if v.Parallelism != 2 || len(v.Operators) == 0 || v.Operators[0].UID == "" || v.Operators[0].Changelog == "" || v.Operators[0].MaxParallelism <= 0 {
			t.Fatalf("vertex %+v", v)
		}
		if m := v.Metrics; m.BusyTimeMsPerSecond < 0 || m.BusyTimeMsPerSecond > 1000 || m.IdleTimeMsPerSecond > 1000 || m.BackPressuredTimeMsPerSecond > 1000 {
			t.Fatalf("vertex %d times per second out of 0..1000: %+v", v.ID, m)
		}
	}
	if len(job.Edges) == 0 || job.Edges[0].Partitioning != "HASH" {
		t.Fatalf("edges %+v", job.Edges)
	}
	var current jobJSON
	get(t, url+"/v1/jobs/current", &current)
	if current.Name != "sensors" || len(current.Vertices) != len(job.Vertices) {
		t.Fatalf("current %+v", current)
	}

	var overview struct {
		Version string
		Jobs    int
	}
	get(t, url+"/v1/overview", &overview)
	if overview.Version == "" || overview.Jobs != 1 {
		t.Fatalf("overview %+v", overview)
	}
	var list struct{ Jobs []jobJSON }
	get(t, url+"/v1/jobs", &list)
	if len(list.Jobs) != 1 || list.Jobs[0].Name != "sensors" || list.Jobs[0].State != "RUNNING" || list.Jobs[0].Started == nil {
		t.Fatalf("jobs %+v", list)
	}

	last := len(job.Vertices) - 1
	var v vertexJSONTest
	get(t, url+"/v1/jobs/sensors/vertices/"+strconv.Itoa(last), &v)
	if v.ID != last || len(v.Subtasks) != 2 || v.Subtasks[1].Subtask != 1 || len(v.Subtasks[0].Operators) != len(v.Operators) {
		t.Fatalf("vertex %+v", v)
	}
	for _, st := range v.Subtasks {
		if st.Operators[0]["operator"] != v.Operators[0].Name {
			t.Fatalf("subtask %d operators %v, want %s first", st.Subtask, st.Operators, v.Operators[0].Name)
		}
	}
	for _, bad := range []string{"99", "-1", "x"} {
		if code, b := call(t, http.MethodGet, url+"/v1/jobs/sensors/vertices/"+bad, ""); code != http.StatusNotFound || errorOf(b) == "" {
			t.Fatalf("vertex %s: %d %s", bad, code, b)
		}
	}

	var flat []map[string]any
	get(t, url+"/v1/jobs/sensors/metrics", &flat)
	ops := 0
	for _, v := range job.Vertices {
		ops += len(v.Operators) * v.Parallelism
	}
	if len(flat) != ops {
		t.Fatalf("%d operator subtasks in /metrics, want %d", len(flat), ops)
	}
	for _, k := range []string{"operator", "vertex", "subtask", "recordsIn", "recordsOut", "bytesIn", "bytesOut", "lateRecords", "busyTimeMs", "idleTimeMs", "backPressuredTimeMs", "recordsInPerSecond", "bytesInPerSecond", "bytesOutPerSecond", "busyTimeMsPerSecond", "watermark", "stateBytes", "running"} {
		if _, ok := flat[0][k]; !ok {
			t.Fatalf("metrics %v lack %q", flat[0], k)
		}
	}

	var wms []struct {
		Operator                  string
		Subtask                   int
		Watermark, WatermarkLagMs *int64
	}
	get(t, url+"/v1/jobs/sensors/watermarks", &wms)
	lagged := 0
	for _, w := range wms {
		if w.WatermarkLagMs != nil {
			lagged++
		}
	}
	if len(wms) != ops || lagged == 0 {
		t.Fatalf("watermarks %+v", wms)
	}

	var cps struct {
		Counts struct{ Completed, Failed int64 }
		Latest *struct {
			ID     int64
			Status string
		}
		History []struct {
			ID        int64
			Status    string
			Triggered time.Time
			Bytes     int64
		}
	}
	poll(t, "two checkpoints", func() bool {
		get(t, url+"/v1/jobs/sensors/checkpoints", &cps)
		return cps.Counts.Completed >= 2 && len(cps.History) >= 2
	})
	if cps.Latest == nil || cps.Latest.Status != "COMPLETED" || cps.History[0].ID <= cps.History[1].ID || cps.History[0].Triggered.Before(cps.History[1].Triggered) {
		t.Fatalf("checkpoints not newest first: %+v", cps)
	}

	var exs struct{ Exceptions []any }
	get(t, url+"/v1/jobs/sensors/exceptions", &exs)
	if exs.Exceptions == nil || len(exs.Exceptions) != 0 {
		t.Fatalf("exceptions of a healthy job: %+v", exs)
	}
	var conns struct{ Connectors []any }
	get(t, url+"/v1/jobs/sensors/connectors", &conns)
	if conns.Connectors == nil {
		t.Fatal("connectors is not a list")
	}

	if code, b := call(t, http.MethodGet, url+"/v1/jobs/nosuch", ""); code != http.StatusNotFound || !strings.Contains(errorOf(b), "nosuch") {
		t.Fatalf("unknown job: %d %s", code, b)
	}

	code, b := call(t, http.MethodPost, url+"/v1/jobs/sensors/stop", `{"name": "final"}`)
	if code != http.StatusOK {
		t.Fatalf("stop: %d %s", code, b)
	}
	var sp struct{ Path string }
	json.Unmarshal(b, &sp)
	if filepath.Dir(sp.Path) != filepath.Join(spDir, "final") {
		t.Fatalf("savepoint at %s, want under %s", sp.Path, filepath.Join(spDir, "final"))
	}
	if _, err := os.Stat(filepath.Join(sp.Path, "_metadata")); err != nil {
		t.Fatal(err)
	}
	if err := done(); err != nil {
		t.Fatalf("the stopped job: %v", err)
	}
	get(t, url+"/v1/jobs/current", &job)
	if job.State != "FINISHED" || job.Ended == nil {
		t.Fatalf("after stop: %s, ended %v", job.State, job.Ended)
	}
}

// TestSavepointAndCancel takes a savepoint of a running job, which goes on
// running, then cancels it.
func TestSavepointAndCancel(t *testing.T) {
	env, cancel, done := endless(t, "cancelme")
	spDir := t.TempDir()
	var cancelled atomic.Bool
	s := newServer(t, SavepointDir(spDir), Cancel(func() { cancelled.Store(true); cancel() }))
	s.Set("cancelme", env)
	url := serve(t, s)

	var path string
	poll(t, "a savepoint", func() bool {
		code, b := call(t, http.MethodPost, url+"/v1/jobs/cancelme/savepoints", "")
		if code == http.StatusConflict {
			return false // the job is starting
		}
		if code != http.StatusOK {
			t.Fatalf("savepoint: %d %s", code, b)
		}
		var sp struct{ Path string }
		json.Unmarshal(b, &sp)
		path = sp.Path
		return true
	})
	if filepath.Dir(path) != spDir {
		t.Fatalf("savepoint at %s, want in %s", path, spDir)
	}
	if _, err := os.Stat(filepath.Join(path, "_metadata")); err != nil {
		t.Fatal(err)
	}
	if st := env.JobStatus().State; st != eddy.JobRunning && st != eddy.JobRestarting {
		t.Fatalf("after a savepoint the job is %s", st)
	}

	code, b := call(t, http.MethodPost, url+"/v1/jobs/current/cancel", "{}")
	if code != http.StatusOK || !cancelled.Load() {
		t.Fatalf("cancel: %d %s", code, b)
	}
	var st struct{ State string }
	json.Unmarshal(b, &st)
	if st.State != "CANCELED" {
		t.Fatalf("cancel answered %s", b)
	}
	if err := done(); err != nil || env.JobStatus().State != eddy.JobCanceled {
		t.Fatalf("the cancelled job returned %v, state %s", err, env.JobStatus().State)
	}

	// Without cancel and rescale functions the actions are not implemented.
	plain := newServer(t)
	plain.Set("cancelme", env)
	purl := serve(t, plain)
	for _, p := range []struct{ path, body string }{{"cancel", "{}"}, {"rescale", `{"parallelism": 3}`}} {
		code, b := call(t, http.MethodPost, purl+"/v1/jobs/current/"+p.path, p.body)
		if code != http.StatusNotImplemented || errorOf(b) == "" {
			t.Fatalf("%s without a function: %d %s", p.path, code, b)
		}
	}
}

// TestRescale checks the rescale endpoint calls the server's rescale
// function with the parallelism asked for, and shows the job it Sets.
func TestRescale(t *testing.T) {
	first := eddy.NewEnvironment()
	eddy.Discard(eddy.FromSlice(first, []int{1, 2, 3}, eddy.NoWatermarks[int]()))
	var got atomic.Int64
	var s *Server
	s = newServer(t, Rescale(func(ctx context.Context, n int) (string, error) {
		got.Store(int64(n))
		next := eddy.NewEnvironment(eddy.WithParallelism(n))
		eddy.Discard(eddy.FromSlice(next, []int{1, 2, 3}, eddy.NoWatermarks[int]()))
		s.Set("job", next)
		return "/savepoints/savepoint-1", nil
	}))
	s.Set("job", first)
	url := serve(t, s)
	code, b := call(t, http.MethodPost, url+"/v1/jobs/job/rescale", `{"parallelism": 3}`)
	if code != http.StatusOK || got.Load() != 3 {
		t.Fatalf("rescale: %d %s (function called with %d)", code, b, got.Load())
	}
	var ans struct {
		Path        string
		Parallelism int
	}
	json.Unmarshal(b, &ans)
	if ans.Path != "/savepoints/savepoint-1" || ans.Parallelism != 3 {
		t.Fatalf("rescale answered %s", b)
	}
	var job jobJSON
	get(t, url+"/v1/jobs/job", &job)
	if len(job.Vertices) == 0 || job.Vertices[0].Parallelism != 3 {
		t.Fatalf("after the rescale the job shows %+v", job.Vertices)
	}
	var list struct{ Jobs []jobJSON }
	get(t, url+"/v1/jobs", &list)
	if len(list.Jobs) != 1 {
		t.Fatalf("after the rescale %d jobs", len(list.Jobs))
	}
	for _, body := range []string{`{"parallelism": 0}`, `{"parallelism": 40000}`, `{}`, `{"parallelism": "3"}`, `{"parallelism": 2, "x": 1}`} {
		got.Store(0)
		if code, b := call(t, http.MethodPost, url+"/v1/jobs/job/rescale", body); code != http.StatusBadRequest || got.Load() != 0 {
			t.Fatalf("rescale %s: %d %s", body, code, b)
		}
	}
}

// TestExceptionsNewestFirst runs a job that fails, restarts twice and
// fails for good, and reads its exceptions and failure.
func TestExceptionsNewestFirst(t *testing.T) {
	env := eddy.NewEnvironment(eddy.WithRestartStrategy(eddy.FixedDelayRestart(2, time.Millisecond)))
	eddy.Discard(eddy.Map(eddy.FromSlice(env, []int{1, 2, 3}, eddy.NoWatermarks[int]()), func(i int) int {
		if i == 2 {
			panic("two is not allowed")
		}
		return i
	}))
	if err := env.Execute(context.Background(), "failing"); err == nil {
		t.Fatal("the job did not fail")
	}
	s := newServer(t)
	s.Set("failing", env)
	url := serve(t, s)
	var exs struct {
		Exceptions []struct {
			Time       time.Time
			Operator   string
			OperatorID int
			Subtask    int
			Error      string
			Restarted  bool
		}
	}
	get(t, url+"/v1/jobs/failing/exceptions", &exs)
	if len(exs.Exceptions) != 3 {
		t.Fatalf("%d exceptions, want 3: %+v", len(exs.Exceptions), exs)
	}
	if exs.Exceptions[0].Restarted || !exs.Exceptions[2].Restarted || exs.Exceptions[0].Time.Before(exs.Exceptions[2].Time) ||
		!strings.Contains(exs.Exceptions[0].Error, "two is not allowed") {
		t.Fatalf("exceptions not newest first: %+v", exs)
	}
	var job jobJSON
	get(t, url+"/v1/jobs/failing", &job)
	if job.State != "FAILED" || job.Failure == nil || !strings.Contains(*job.Failure, "two is not allowed") || job.Restarts != 2 {
		t.Fatalf("failed job %+v", job)
	}
	// Each exception names the Map by its id in the job graph.
	mapID := -1
	for _, v := range job.Vertices {
		for _, o := range v.Operators {
			if o.Name == "Map" {
				mapID = o.ID
			}
		}
	}
	for _, x := range exs.Exceptions {
		if x.Operator != "Map" || x.OperatorID != mapID || mapID < 0 {
			t.Errorf("exception of operator %q id %d, want the Map's id %d", x.Operator, x.OperatorID, mapID)
		}
	}
}

// TestOperatorCountersOfAFinishedJob checks a vertex's subtasks show their
// operators' counters, here the relational operators' retractions of rows
// they hold no state for.
func TestOperatorCountersOfAFinishedJob(t *testing.T) {
	type row struct{ K, V int64 }
	env := eddy.NewEnvironment()
	rows := eddy.AsChangelog(eddy.FromSlice(env, []changelog.Change[row]{
		{Kind: changelog.Insert, Row: row{1, 5}},
		{Kind: changelog.Delete, Row: row{2, 7}}, // never inserted
		{Kind: changelog.Delete, Row: row{1, 5}},
		{Kind: changelog.Delete, Row: row{1, 5}}, // deleted already
	}, eddy.NoWatermarks[changelog.Change[row]]()), changelog.Retract)
	eddy.Discard(eddy.GroupAggregate(eddy.GroupBy(rows, func(r row) int64 { return r.K }), agg.Count[row]()))
	if err := env.Execute(context.Background(), "retractions"); err != nil {
		t.Fatal(err)
	}
	url := serve(t, func() *Server { s := newServer(t); s.Set("retractions", env); return s }())
	var flat []struct {
		Operator                string
		RetractionsWithoutState int64
		RecordsOut              int64
	}
	get(t, url+"/v1/jobs/current/metrics", &flat)
	var n, out int64
	for _, m := range flat {
		n += m.RetractionsWithoutState
		out += m.RecordsOut
	}
	if n != 2 || out == 0 {
		t.Fatalf("the metrics count %d retractions without state (want 2) and %d records out: %+v", n, out, flat)
	}
	var job jobJSON
	get(t, url+"/v1/jobs/current", &job)
	if job.State != "FINISHED" || job.Ended == nil {
		t.Fatalf("finished job %+v", job)
	}
}

// TestServesSubscriptions checks that the server serves the published
// tables, under /v1/subscriptions.
func TestServesSubscriptions(t *testing.T) {
	env := eddy.NewEnvironment()
	srv := httptest.NewServer(Handler(env, "job"))
	defer srv.Close()
	var body struct{ Tables []any }
	get(t, srv.URL+"/v1/subscriptions", &body)
	if body.Tables == nil {
		t.Fatalf("GET /v1/subscriptions: %+v", body)
	}
	if code, _ := call(t, http.MethodGet, srv.URL+"/v1/subscriptions/none/events", ""); code != http.StatusNotFound {
		t.Fatalf("events of a table not published: status %d", code)
	}
}

package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/eddystream/eddy"
)

// maxNameLen bounds the name of a savepoint subdirectory.
const maxNameLen = 100

// maxParallelism is the largest parallelism a rescale accepts (the number
// of key groups).
const maxParallelism = 32768

// checkName reports whether name is one safe path element: letters, digits,
// '.', '_' and '-', starting with a letter or digit.
func checkName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("the savepoint name must have 1 to %d characters", maxNameLen)
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return fmt.Errorf("the savepoint name %q is not allowed: use letters, digits, '.', '_' and '-', starting with a letter or digit", name)
		}
	}
	return nil
}

// api registers the REST v1 endpoints.
func (s *Server) api(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/overview", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusOK, map[string]any{"version": version(), "jobs": len(s.jobs.list())})
	})
	mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		out := []jobSummary{}
		now := time.Now()
		for _, j := range s.jobs.list() {
			out = append(out, summaryOf(j, now))
		}
		s.writeJSON(w, http.StatusOK, map[string]any{"jobs": out})
	})
	mux.HandleFunc("GET /v1/jobs/{id}", s.withJob(s.jobDetail))
	mux.HandleFunc("GET /v1/jobs/{id}/vertices/{vid}", s.withJob(s.vertexDetail))
	mux.HandleFunc("GET /v1/jobs/{id}/metrics", s.withJob(s.metrics))
	mux.HandleFunc("GET /v1/jobs/{id}/watermarks", s.withJob(s.watermarks))
	mux.HandleFunc("GET /v1/jobs/{id}/checkpoints", s.withJob(s.checkpoints))
	mux.HandleFunc("GET /v1/jobs/{id}/exceptions", s.withJob(s.exceptions))
	mux.HandleFunc("GET /v1/jobs/{id}/connectors", s.withJob(s.connectors))
	mux.HandleFunc("POST /v1/jobs/{id}/savepoints", s.withJob(func(w http.ResponseWriter, r *http.Request, j *job) { s.savepoint(w, r, j, false) }))
	mux.HandleFunc("POST /v1/jobs/{id}/stop", s.withJob(func(w http.ResponseWriter, r *http.Request, j *job) { s.savepoint(w, r, j, true) }))
	mux.HandleFunc("POST /v1/jobs/{id}/cancel", s.withJob(s.cancel))
	mux.HandleFunc("POST /v1/jobs/{id}/rescale", s.withJob(s.rescale))
}

// withJob resolves the job of the path's {id}: its name, or "current".
func (s *Server) withJob(h func(http.ResponseWriter, *http.Request, *job)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		j := s.jobs.get(id)
		if j == nil {
			s.writeError(w, http.StatusNotFound, fmt.Sprintf("no job %q: GET /v1/jobs lists the jobs (\"current\" is the latest)", id))
			return
		}
		h(w, r, j)
	}
}

// jobSummary is a job in the list of jobs.
type jobSummary struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	State      string     `json:"state"`
	Started    *time.Time `json:"started"`
	Ended      *time.Time `json:"ended"`
	DurationMs int64      `json:"durationMs"`
	Restarts   int        `json:"restarts"`
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func summaryOf(j *job, now time.Time) jobSummary {
	st := j.env.JobStatus()
	s := jobSummary{ID: j.name, Name: j.name, State: string(st.State), Started: timeOrNil(st.Started), Ended: timeOrNil(st.Ended), Restarts: st.Restarts}
	if !st.Started.IsZero() {
		end := st.Ended
		if end.IsZero() {
			end = now
		}
		s.DurationMs = ms(end.Sub(st.Started))
	}
	return s
}

// vertexMetrics are a vertex's (or one of its subtasks') metrics.
type vertexMetrics struct {
	RecordsIn  int64 `json:"recordsIn"`
	RecordsOut int64 `json:"recordsOut"`
	// BytesIn and BytesOut are the bytes the chain's sources read from and
	// its sinks wrote to external systems (0 for the others).
	BytesIn  int64 `json:"bytesIn"`
	BytesOut int64 `json:"bytesOut"`
	Rates
	Watermark      *int64 `json:"watermark"`
	WatermarkLagMs *int64 `json:"watermarkLagMs"`
	StateBytes     int64  `json:"stateBytes"`
}

type operatorJSON struct {
	ID             int    `json:"id"`
	Name           string `json:"name"`
	UID            string `json:"uid"`
	MaxParallelism int    `json:"maxParallelism"`
	Changelog      string `json:"changelog"`
}

type vertexJSON struct {
	ID          int            `json:"id"`
	Name        string         `json:"name"`
	Parallelism int            `json:"parallelism"`
	Operators   []operatorJSON `json:"operators"`
	Metrics     vertexMetrics  `json:"metrics"`
	Subtasks    []subtaskJSON  `json:"subtasks,omitempty"`
}

type subtaskJSON struct {
	Subtask int       `json:"subtask"`
	Started time.Time `json:"started"`
	Running bool      `json:"running"`
	vertexMetrics
	Operators []operatorCounters `json:"operators"`
}

// operatorCounters are one operator subtask's counters (and, in the flat
// list of /metrics, its rates and times).
type operatorCounters struct {
	OperatorID              int    `json:"operatorId"`
	Operator                string `json:"operator"`
	Vertex                  *int   `json:"vertex,omitempty"`
	Subtask                 int    `json:"subtask"`
	RecordsIn               int64  `json:"recordsIn"`
	RecordsOut              int64  `json:"recordsOut"`
	BytesIn                 int64  `json:"bytesIn"`
	BytesOut                int64  `json:"bytesOut"`
	LateRecords             int64  `json:"lateRecords"`
	WindowGapRecords        int64  `json:"windowGapRecords"`
	DeadLetters             int64  `json:"deadLetters"`
	RetractionsWithoutState int64  `json:"retractionsWithoutState"`
	Watermark               *int64 `json:"watermark"`
	WatermarkLagMs          *int64 `json:"watermarkLagMs"`
	StateBytes              int64  `json:"stateBytes"`
	*subtaskTimes
}

// subtaskTimes are the cumulative times and the rates of the flat list.
type subtaskTimes struct {
	Started             time.Time `json:"started"`
	Running             bool      `json:"running"`
	BusyTimeMs          int64     `json:"busyTimeMs"`
	IdleTimeMs          int64     `json:"idleTimeMs"`
	BackPressuredTimeMs int64     `json:"backPressuredTimeMs"`
	Rates
}

type edgeJSON struct {
	Source       int    `json:"source"`
	Target       int    `json:"target"`
	Partitioning string `json:"partitioning"`
	SideOutput   string `json:"sideOutput"`
}

// watermarkOf returns the watermark, nil for none (before the first, and
// math.MinInt64), and its lag behind now for an event-time watermark in
// milliseconds since 1970 (nil otherwise, and at the end of input).
func watermarkOf(wm int64, now time.Time) (*int64, *int64) {
	if wm == math.MinInt64 {
		return nil, nil
	}
	const year2000 = 946684800000
	n := now.UnixMilli()
	if wm < year2000 || wm > n+100*365*24*3600*1000 {
		return &wm, nil
	}
	lag := n - wm
	return &wm, &lag
}

func countersOf(m eddy.OperatorMetrics, now time.Time) operatorCounters {
	wm, lag := watermarkOf(m.Watermark, now)
	return operatorCounters{OperatorID: m.OperatorID, Operator: m.Name, Subtask: m.Subtask, RecordsIn: m.RecordsIn, RecordsOut: m.RecordsOut,
		BytesIn: m.BytesIn, BytesOut: m.BytesOut,
		LateRecords: m.LateRecords, WindowGapRecords: m.WindowGapRecords, DeadLetters: m.DeadLetters,
		RetractionsWithoutState: m.RetractionsWithoutState, Watermark: wm, WatermarkLagMs: lag, StateBytes: m.StateBytes}
}

// graphView is the job graph with the metrics of its vertices and
// subtasks.
type graphView struct {
	vertices []vertexJSON
	edges    []edgeJSON
}

// view builds the job's graph with its metrics: a vertex's records in are
// its first operator's, its records out those of all its operators (what
// they sent into exchanges), its state and its bytes in and out (counted by
// the connectors of its sources and sinks) the sums; its busy, idle and
// backpressured time per second the maximum over its subtasks and its
// watermark their minimum.
func (s *Server) view(j *job, subtasks bool) (*graphView, error) {
	g, err := j.env.JobGraph()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	vertexOf := map[int]int{}
	for _, v := range g.Vertices {
		for _, o := range v.Operators {
			vertexOf[o.ID] = v.ID
		}
	}
	type subKey struct{ vertex, subtask int }
	subs := map[subKey]*subtaskJSON{}
	minWM := map[subKey]int64{}
	for _, m := range j.env.Metrics() {
		vid, ok := vertexOf[m.OperatorID]
		if !ok || vid < 0 || vid >= len(g.Vertices) {
			continue
		}
		k := subKey{vid, m.Subtask}
		st := subs[k]
		if st == nil {
			st = &subtaskJSON{Subtask: m.Subtask, Started: m.Started, Running: m.Running}
			subs[k] = st
		}
		r := j.ratesOf(m.OperatorID, m.Subtask)
		first := len(g.Vertices[vid].Operators) > 0 && g.Vertices[vid].Operators[0].ID == m.OperatorID
		if first {
			st.RecordsIn = m.RecordsIn
			st.RecordsInPerSecond = r.RecordsInPerSecond
			// The chained operators share their subtask's times.
			st.BusyTimeMsPerSecond = r.BusyTimeMsPerSecond
			st.IdleTimeMsPerSecond = r.IdleTimeMsPerSecond
			st.BackPressuredTimeMsPerSecond = r.BackPressuredTimeMsPerSecond
			minWM[k] = m.Watermark
		}
		ops := g.Vertices[vid].Operators
		if len(ops) > 0 && ops[len(ops)-1].ID == m.OperatorID {
			// What the chain emits is what its last operator emits.
			st.RecordsOut = m.RecordsOut
			st.RecordsOutPerSecond = r.RecordsOutPerSecond
		}
		// Only connectors count bytes, so the chain's are the sum of its
		// operators'.
		st.BytesIn += m.BytesIn
		st.BytesOut += m.BytesOut
		st.BytesInPerSecond += r.BytesInPerSecond
		st.BytesOutPerSecond += r.BytesOutPerSecond
		st.StateBytes += m.StateBytes
		st.Operators = append(st.Operators, countersOf(m, now))
	}
	gv := &graphView{vertices: []vertexJSON{}, edges: []edgeJSON{}}
	for _, v := range g.Vertices {
		vj := vertexJSON{ID: v.ID, Name: v.Name, Parallelism: v.Parallelism, Operators: []operatorJSON{}}
		for _, o := range v.Operators {
			vj.Operators = append(vj.Operators, operatorJSON(o))
		}
		vm := &vj.Metrics
		wm, haveWM := int64(math.MaxInt64), false
		for i := 0; i < v.Parallelism; i++ {
			st := subs[subKey{v.ID, i}]
			if st == nil {
				continue
			}
			k := subKey{v.ID, i}
			if w, ok := minWM[k]; ok {
				st.Watermark, st.WatermarkLagMs = watermarkOf(w, now)
				wm, haveWM = min(wm, w), true
			}
			vm.RecordsIn += st.RecordsIn
			vm.RecordsOut += st.RecordsOut
			vm.RecordsInPerSecond += st.RecordsInPerSecond
			vm.RecordsOutPerSecond += st.RecordsOutPerSecond
			vm.BytesIn += st.BytesIn
			vm.BytesOut += st.BytesOut
			vm.BytesInPerSecond += st.BytesInPerSecond
			vm.BytesOutPerSecond += st.BytesOutPerSecond
			vm.BusyTimeMsPerSecond = max(vm.BusyTimeMsPerSecond, st.BusyTimeMsPerSecond)
			vm.IdleTimeMsPerSecond = max(vm.IdleTimeMsPerSecond, st.IdleTimeMsPerSecond)
			vm.BackPressuredTimeMsPerSecond = max(vm.BackPressuredTimeMsPerSecond, st.BackPressuredTimeMsPerSecond)
			vm.StateBytes += st.StateBytes
			if subtasks {
				vj.Subtasks = append(vj.Subtasks, *st)
			}
		}
		if haveWM {
			vm.Watermark, vm.WatermarkLagMs = watermarkOf(wm, now)
		}
		gv.vertices = append(gv.vertices, vj)
	}
	for _, e := range g.Edges {
		gv.edges = append(gv.edges, edgeJSON(e))
	}
	return gv, nil
}

func (s *Server) jobDetail(w http.ResponseWriter, r *http.Request, j *job) {
	gv, err := s.view(j, false)
	if err != nil {
		s.writeError(w, http.StatusInternalServerError, fmt.Sprintf("the job graph of %s: %v", j.name, err))
		return
	}
	st := j.env.JobStatus()
	var failure *string
	if st.Failure != nil {
		f := st.Failure.Error()
		failure = &f
	}
	s.writeJSON(w, http.StatusOK, struct {
		jobSummary
		Failure  *string      `json:"failure"`
		Vertices []vertexJSON `json:"vertices"`
		Edges    []edgeJSON   `json:"edges"`
	}{summaryOf(j, time.Now()), failure, gv.vertices, gv.edges})
}

func (s *Server) vertexDetail(w http.ResponseWriter, r *http.Request, j *job) {
	vid, err := strconv.Atoi(r.PathValue("vid"))
	if err != nil {
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("no vertex %q: vertices are numbered from 0 (GET /v1/jobs/%s lists them)", r.PathValue("vid"), r.PathValue("id")))
		return
	}
	gv, err := s.view(j, true)
	if err != nil {
		s.writeError(w, http.StatusInternalServerError, fmt.Sprintf("the job graph of %s: %v", j.name, err))
		return
	}
	if vid < 0 || vid >= len(gv.vertices) {
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("no vertex %d: the job has %d (numbered from 0)", vid, len(gv.vertices)))
		return
	}
	v := gv.vertices[vid]
	if v.Subtasks == nil {
		v.Subtasks = []subtaskJSON{}
	}
	s.writeJSON(w, http.StatusOK, v)
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request, j *job) {
	vertexOf := map[int]int{}
	if g, err := j.env.JobGraph(); err == nil {
		for _, v := range g.Vertices {
			for _, o := range v.Operators {
				vertexOf[o.ID] = v.ID
			}
		}
	}
	now := time.Now()
	out := []operatorCounters{}
	for _, m := range j.env.Metrics() {
		c := countersOf(m, now)
		if v, ok := vertexOf[m.OperatorID]; ok {
			c.Vertex = &v
		}
		c.subtaskTimes = &subtaskTimes{Started: m.Started, Running: m.Running, BusyTimeMs: ms(m.BusyTime),
			IdleTimeMs: ms(m.IdleTime), BackPressuredTimeMs: ms(m.BackPressuredTime), Rates: j.ratesOf(m.OperatorID, m.Subtask)}
		out = append(out, c)
	}
	s.writeJSON(w, http.StatusOK, out)
}

func (s *Server) watermarks(w http.ResponseWriter, r *http.Request, j *job) {
	type wmJSON struct {
		Operator       string `json:"operator"`
		Subtask        int    `json:"subtask"`
		Watermark      *int64 `json:"watermark"`
		WatermarkLagMs *int64 `json:"watermarkLagMs"`
	}
	now := time.Now()
	out := []wmJSON{}
	for _, m := range j.env.Metrics() {
		wm, lag := watermarkOf(m.Watermark, now)
		out = append(out, wmJSON{m.Name, m.Subtask, wm, lag})
	}
	s.writeJSON(w, http.StatusOK, out)
}

type checkpointJSON struct {
	ID            int64     `json:"id"`
	Status        string    `json:"status"`
	Triggered     time.Time `json:"triggered"`
	DurationMs    int64     `json:"durationMs"`
	SyncMs        int64     `json:"syncMs"`
	AlignmentMs   int64     `json:"alignmentMs"`
	WriteMs       int64     `json:"writeMs"`
	Bytes         int64     `json:"bytes"`
	UploadedBytes int64     `json:"uploadedBytes"`
	Savepoint     bool      `json:"savepoint"`
	Failure       *string   `json:"failure"`
}

func (s *Server) checkpoints(w http.ResponseWriter, r *http.Request, j *job) {
	hist := j.env.CheckpointHistory()
	out := struct {
		Counts struct {
			Completed int64 `json:"completed"`
			Failed    int64 `json:"failed"`
		} `json:"counts"`
		Latest  *checkpointJSON  `json:"latest"`
		History []checkpointJSON `json:"history"`
	}{History: []checkpointJSON{}}
	c := j.env.CheckpointCounts()
	out.Counts.Completed, out.Counts.Failed = c.Completed, c.Failed
	for _, h := range slices.Backward(hist) {
		cj := checkpointJSON{ID: h.ID, Status: "COMPLETED", Triggered: h.Triggered, DurationMs: ms(h.Duration), SyncMs: ms(h.Sync),
			AlignmentMs: ms(h.Alignment), WriteMs: ms(h.Write), Bytes: h.Bytes, UploadedBytes: h.Uploaded, Savepoint: h.Savepoint}
		if h.Failed != nil {
			f := h.Failed.Error()
			cj.Status, cj.Failure = "FAILED", &f
		} else if out.Latest == nil {
			latest := cj
			out.Latest = &latest
		}
		out.History = append(out.History, cj)
	}
	s.writeJSON(w, http.StatusOK, out)
}

func (s *Server) exceptions(w http.ResponseWriter, r *http.Request, j *job) {
	type exJSON struct {
		Time     time.Time `json:"time"`
		Operator string    `json:"operator"`
		// OperatorID tells operators of the same name apart (-1 for a
		// failure outside the operators).
		OperatorID int    `json:"operatorId"`
		Subtask    int    `json:"subtask"`
		Error      string `json:"error"`
		Restarted  bool   `json:"restarted"`
	}
	out := []exJSON{}
	for _, x := range slices.Backward(j.env.Exceptions()) {
		msg := ""
		if x.Err != nil {
			msg = x.Err.Error()
		}
		out = append(out, exJSON{x.Time, x.Operator, x.OperatorID, x.Subtask, msg, x.Restarted})
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"exceptions": out})
}

func (s *Server) connectors(w http.ResponseWriter, r *http.Request, j *job) {
	type connJSON struct {
		Operator   string         `json:"operator"`
		Subtask    int            `json:"subtask"`
		Status     map[string]any `json:"status"`
		Enumerator map[string]any `json:"enumerator"`
	}
	out := []connJSON{}
	for _, m := range j.env.Metrics() {
		if m.Status != nil || m.EnumeratorStatus != nil {
			out = append(out, connJSON{m.Name, m.Subtask, m.Status, m.EnumeratorStatus})
		}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"connectors": out})
}

// actionTimeout bounds how long an action (a savepoint, a rescale) may take.
const actionTimeout = 10 * time.Minute

// savepoint takes a savepoint of the job, stopping it with stop, under the
// savepoint directory fixed at start (in the request's subdirectory name).
func (s *Server) savepoint(w http.ResponseWriter, r *http.Request, j *job, stop bool) {
	var req struct {
		Name string `json:"name"`
	}
	if code, err := decodeJSON(r, &req); err != nil {
		s.writeError(w, code, fmt.Sprintf(`bad request (%v): send {} or {"name": "<one path element>"}; the directory is set when the job starts (--savepoint-dir)`, err))
		return
	}
	if s.cfg.savepointDir == "" {
		s.writeError(w, http.StatusForbidden, "savepoints are disabled: the job was started without a savepoint directory; start it with --savepoint-dir or --checkpoint-dir (web.SavepointDir in Go)")
		return
	}
	dir := s.cfg.savepointDir
	if req.Name != "" {
		if err := checkName(req.Name); err != nil {
			s.writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		dir = filepath.Join(dir, req.Name)
	}
	ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
	defer cancel()
	path, err := j.env.TriggerSavepoint(ctx, dir, stop)
	if err != nil {
		s.writeError(w, http.StatusConflict, fmt.Sprintf("savepoint of %s: %v", j.name, err))
		return
	}
	what := "savepoint"
	if stop {
		what = "stopped with a savepoint"
	}
	s.cfg.log.Info(what, "job", j.name, "path", path)
	s.writeJSON(w, http.StatusOK, map[string]string{"path": path})
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, j *job) {
	var req struct{}
	if code, err := decodeJSON(r, &req); err != nil {
		s.writeError(w, code, fmt.Sprintf("bad request (%v): send {}", err))
		return
	}
	if s.cfg.cancel == nil {
		s.writeError(w, http.StatusNotImplemented, "this job cannot be cancelled through the API: its runner gave the server no cancel function (web.Cancel in Go)")
		return
	}
	s.cfg.log.Info("cancelling the job", "job", j.name)
	s.cfg.cancel()
	// Wait for the job to end, as long as the client waits.
	ctx, stop := context.WithTimeout(r.Context(), time.Minute)
	defer stop()
	for {
		st := j.env.JobStatus().State
		switch st {
		case eddy.JobCanceled, eddy.JobFinished, eddy.JobFailed:
			s.writeJSON(w, http.StatusOK, map[string]string{"state": string(st)})
			return
		}
		select {
		case <-ctx.Done():
			s.writeJSON(w, http.StatusAccepted, map[string]string{"state": string(st)})
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *Server) rescale(w http.ResponseWriter, r *http.Request, j *job) {
	var req struct {
		Parallelism *int `json:"parallelism"`
	}
	if code, err := decodeJSON(r, &req); err != nil {
		s.writeError(w, code, fmt.Sprintf(`bad request (%v): send {"parallelism": n}`, err))
		return
	}
	if s.cfg.rescale == nil {
		s.writeError(w, http.StatusNotImplemented, "this job cannot be rescaled through the API: its runner gave the server no rescale function (eddy run jobs can; otherwise stop it with a savepoint and start it again with --from-savepoint and --parallelism)")
		return
	}
	if req.Parallelism == nil || *req.Parallelism < 1 || *req.Parallelism > maxParallelism {
		s.writeError(w, http.StatusBadRequest, fmt.Sprintf(`send {"parallelism": n} with n from 1 to %d`, maxParallelism))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
	defer cancel()
	s.cfg.log.Info("rescaling the job", "job", j.name, "parallelism", *req.Parallelism)
	path, err := s.cfg.rescale(ctx, *req.Parallelism)
	if err != nil {
		code := http.StatusConflict
		if errors.Is(err, context.DeadlineExceeded) {
			code = http.StatusGatewayTimeout
		}
		s.writeError(w, code, fmt.Sprintf("rescaling %s to parallelism %d: %v", j.name, *req.Parallelism, err))
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"path": path, "parallelism": *req.Parallelism})
}

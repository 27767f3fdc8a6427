// Package web serves the REST API of a running job: its status and
// metrics, and savepoints (the eddy CLI's savepoint command uses it).
package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/subscribe"
)

// Option configures the REST API.
type Option func(*config)

type config struct {
	savepointDir string
}

// SavepointDir lets the API take savepoints, each in a new directory under
// dir (Flink's state.savepoints.dir). It is fixed when the job starts:
// requests choose no path, only whether to stop the job and, optionally, a
// name for a subdirectory of dir. Without it the API refuses savepoints.
func SavepointDir(dir string) Option { return func(c *config) { c.savepointDir = dir } }

// maxNameLen bounds the name of a savepoint subdirectory.
const maxNameLen = 100

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

// Handler returns the REST API of the job executing on env:
//
//	GET  /jobs/current             the operators and their counters
//	POST /jobs/current/savepoints  {"stop": false, "name": "..."} → {"path": "..."}
//	GET  /v1/subscriptions/...     the published tables and their events (subscribe.Hub.Handler)
//
// A savepoint is written under the directory of the SavepointDir option, in
// the subdirectory name if the request gives one; the answer is the path
// written. Without SavepointDir, savepoint requests are refused.
func Handler(env *eddy.Environment, name string, opts ...Option) http.Handler {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.savepointDir != "" {
		if abs, err := filepath.Abs(cfg.savepointDir); err == nil {
			cfg.savepointDir = abs
		}
	}
	mux := http.NewServeMux()
	// The tables the job publishes ('publish' connector), for subscribers.
	subs := subscribe.Default.Handler()
	mux.Handle("GET /v1/subscriptions", subs)
	mux.Handle("GET /v1/subscriptions/", subs)
	mux.HandleFunc("GET /jobs/current", func(w http.ResponseWriter, r *http.Request) {
		type op struct {
			Name                    string `json:"name"`
			Subtask                 int    `json:"subtask"`
			RecordsIn               int64  `json:"recordsIn"`
			RecordsOut              int64  `json:"recordsOut"`
			LateRecords             int64  `json:"lateRecords"`
			WindowGapRecords        int64  `json:"windowGapRecords"`
			DeadLetters             int64  `json:"deadLetters"`
			RetractionsWithoutState int64  `json:"retractionsWithoutState"`
			Watermark               int64  `json:"watermark"`
		}
		var ops []op
		for _, m := range env.Metrics() {
			ops = append(ops, op{m.Name, m.Subtask, m.RecordsIn, m.RecordsOut, m.LateRecords, m.WindowGapRecords, m.DeadLetters, m.RetractionsWithoutState, m.Watermark})
		}
		writeJSON(w, http.StatusOK, map[string]any{"name": name, "restarts": env.Restarts(), "operators": ops})
	})
	mux.HandleFunc("POST /jobs/current/savepoints", func(w http.ResponseWriter, r *http.Request) {
		if cfg.savepointDir == "" {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "savepoints are disabled: the job was started without a savepoint directory; start it with --savepoint-dir (web.SavepointDir in Go)"})
			return
		}
		var req struct {
			Stop bool   `json:"stop"`
			Name string `json:"name"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil && err != io.EOF {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf(`bad request (%v): send {"stop": false} and optionally "name": "<one path element>"; the directory is set when the job starts (--savepoint-dir)`, err)})
			return
		}
		dir := cfg.savepointDir
		if req.Name != "" {
			if err := checkName(req.Name); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
				return
			}
			dir = filepath.Join(dir, req.Name)
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Minute)
		defer cancel()
		path, err := env.TriggerSavepoint(ctx, dir, req.Stop)
		if err != nil {
			writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"path": path})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		fmt.Println("web: writing a response:", err)
	}
}

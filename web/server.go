// Package web serves the REST API of a running job: its status and
// metrics, and savepoints (the eddy CLI's savepoint command uses it).
package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/eddystream/eddy"
)

// Handler returns the REST API of the job executing on env:
//
//	GET  /jobs/current             the operators and their counters
//	POST /jobs/current/savepoints  {"dir": "...", "stop": false} → {"path": "..."}
func Handler(env *eddy.Environment, name string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jobs/current", func(w http.ResponseWriter, r *http.Request) {
		type op struct {
			Name             string `json:"name"`
			Subtask          int    `json:"subtask"`
			RecordsIn        int64  `json:"recordsIn"`
			RecordsOut       int64  `json:"recordsOut"`
			LateRecords      int64  `json:"lateRecords"`
			WindowGapRecords int64  `json:"windowGapRecords"`
			DeadLetters      int64  `json:"deadLetters"`
			Watermark        int64  `json:"watermark"`
		}
		var ops []op
		for _, m := range env.Metrics() {
			ops = append(ops, op{m.Name, m.Subtask, m.RecordsIn, m.RecordsOut, m.LateRecords, m.WindowGapRecords, m.DeadLetters, m.Watermark})
		}
		writeJSON(w, http.StatusOK, map[string]any{"name": name, "restarts": env.Restarts(), "operators": ops})
	})
	mux.HandleFunc("POST /jobs/current/savepoints", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Dir  string `json:"dir"`
			Stop bool   `json:"stop"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Dir == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": `send {"dir": "<savepoint directory>", "stop": false}`})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Minute)
		defer cancel()
		path, err := env.TriggerSavepoint(ctx, req.Dir, req.Stop)
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

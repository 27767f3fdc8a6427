package subscribe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// keepAlive is how often an idle event stream sends a comment, so that
// proxies keep the connection and a subscriber sees that it lives.
var keepAlive = 15 * time.Second

// maxWhere bounds the length of a subscription's condition.
const maxWhere = 8192

// Handler serves the hub over HTTP:
//
//	GET /v1/subscriptions                      the published tables (Info), as JSON
//	GET /v1/subscriptions/{name}               one table's Info
//	GET /v1/subscriptions/{name}/events        its events, as Server-Sent Events
//
// The events endpoint takes the query parameters where (a SQL condition
// over the table's columns) and after (resume after that position; the
// Last-Event-ID header of a reconnecting EventSource does the same). Each
// event is sent as
//
//	id: <position>
//	event: change
//	data: {"op":"+I","position":12,"row":{...}}
//
// Closing the connection ends the subscription. A subscription that ends
// otherwise (its subscriber fell too far behind, the table is no longer
// published) ends with an "error" event whose data is {"error": "...",
// "after": <position to resume after>}.
func (h *Hub) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/subscriptions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"tables": h.Advertise()})
	})
	mux.HandleFunc("GET /v1/subscriptions/{name}", func(w http.ResponseWriter, r *http.Request) {
		t, ok := h.Topic(r.PathValue("name"))
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": h.unknown(r.PathValue("name")).Error()})
			return
		}
		writeJSON(w, http.StatusOK, t.Info())
	})
	mux.HandleFunc("GET /v1/subscriptions/{name}/events", h.serveEvents)
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serveEvents streams a subscription's events.
func (h *Hub) serveEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	o := Options{Where: q.Get("where")}
	if len(o.Where) > maxWhere {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("the condition has %d bytes; at most %d are accepted", len(o.Where), maxWhere)})
		return
	}
	after := q.Get("after")
	if after == "" {
		after = r.Header.Get("Last-Event-ID")
	}
	if after != "" {
		p, err := strconv.ParseInt(after, 10, 64)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("after=%q is not a position: give the number of the last event received (its id)", after)})
			return
		}
		o.After = &p
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "the connection cannot stream events"})
		return
	}
	s, err := h.Subscribe(r.PathValue("name"), o)
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, ErrUnknownTable) {
			status = http.StatusNotFound
		}
		writeJSON(w, status, map[string]string{"error": err.Error()})
		return
	}
	defer s.Close()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The client learns what it subscribed to and where the stream
	// stands.
	fmt.Fprintf(w, ": subscribed to %s\n\n", s.topic.name)
	fl.Flush()

	ctx := r.Context()
	var buf []byte
	sent := s.Last() // the last id the client was sent (or resumed after)
	for {
		wait, cancel := context.WithTimeout(ctx, keepAlive)
		e, err := s.Next(wait)
		cancel()
		switch {
		case err == nil:
			buf = append(buf[:0], "id: "...)
			buf = strconv.AppendInt(buf, e.Position, 10)
			buf = append(buf, "\nevent: change\ndata: "...)
			buf = append(buf, e.JSON...)
			buf = append(buf, "\n\n"...)
			if _, err := w.Write(buf); err != nil {
				return
			}
			sent = e.Position
			// Write what is queued at once, then flush.
			if len(s.ch) == 0 {
				fl.Flush()
			}
		case ctx.Err() != nil:
			return // the subscriber went away
		case errors.Is(err, context.DeadlineExceeded):
			// Past the events the condition left out, the keep-alive
			// moves the client's last event id (an id without data
			// dispatches nothing but sets it), so that a reconnecting
			// EventSource resumes from here, not from its last event,
			// which the table may no longer keep.
			buf = append(buf[:0], ": keep-alive\n"...)
			if p, ok := s.caughtUp(); ok && p > sent {
				buf = append(buf, "id: "...)
				buf = strconv.AppendInt(buf, p, 10)
				buf = append(buf, '\n')
				sent = p
			}
			buf = append(buf, '\n')
			if _, err := w.Write(buf); err != nil {
				return
			}
			fl.Flush()
		default:
			b, _ := json.Marshal(map[string]any{"error": err.Error(), "after": s.Last()})
			fmt.Fprintf(w, "event: error\ndata: %s\n\n", b)
			fl.Flush()
			return
		}
	}
}

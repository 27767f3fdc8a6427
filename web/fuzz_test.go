package web

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FuzzHandler sends arbitrary requests (method, path, headers, body) to the
// handler of a finished tiny job: it must never panic, never answer 5xx
// (bad input is the client's error) and never serve a file from disk.
func FuzzHandler(f *testing.F) {
	for _, seed := range []struct{ method, path, headers, body string }{
		{"GET", "/", "", ""},
		{"GET", "/v1/jobs/current", "", ""},
		{"GET", "/v1/jobs/tiny/vertices/0", "", ""},
		{"GET", "/../../etc/passwd", "", ""},
		{"GET", "/assets/..%2f..%2fetc%2fpasswd", "", ""},
		{"GET", "/assets/../../go.mod", "", ""},
		{"GET", "/?token=x", "Cookie: eddy_token=y", ""},
		{"POST", "/v1/jobs/tiny/savepoints", "Content-Type: application/json", `{"name": "../x"}`},
		{"POST", "/v1/jobs/tiny/stop", "Content-Type: application/json\r\nSec-Fetch-Site: cross-site", `{}`},
		{"POST", "/v1/jobs/current/rescale", "Content-Type: application/json", `{"parallelism": 3}`},
		{"POST", "/v1/jobs/current/cancel", "Content-Type: application/json\r\nOrigin: https://evil.example", `{}`},
		{"POST", "/v1/jobs/%2e%2e/cancel", "Content-Type: application/json; charset=utf-8", `{"a":1}`},
		{"DELETE", "/v1/jobs/tiny", "Authorization: Bearer x", ""},
		{"GET", "/metrics", "Accept: application/openmetrics-text", ""},
		{"GET", "/v1/subscriptions/x/events", "", ""},
	} {
		f.Add(seed.method, seed.path, seed.headers, []byte(seed.body))
	}
	env := finished(f)
	s, err := NewServer(SavepointDir(f.TempDir()), Cancel(func() {}),
		Rescale(func(context.Context, int) (string, error) { return "", errors.New("the job has finished") }))
	if err != nil {
		f.Fatal(err)
	}
	s.Set("tiny", env)
	h := s.Handler()
	var secrets [][]byte
	for _, p := range []string{"/etc/passwd", "../go.mod", "server.go"} {
		if b, err := os.ReadFile(p); err == nil && len(b) > 40 {
			secrets = append(secrets, b[:40])
		}
	}
	f.Fuzz(func(t *testing.T, method, path, headers string, body []byte) {
		raw := method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:8081\r\n"
		if headers != "" {
			raw += headers + "\r\n"
		}
		raw += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw + string(body))))
		if err != nil {
			return // the server answers 400 before the handler
		}
		if strings.Contains(req.URL.Path, "/subscriptions/") && strings.HasSuffix(req.URL.Path, "/events") {
			return // a subscription's events stream until the client leaves
		}
		req = req.WithContext(context.Background())
		req.RemoteAddr = "127.0.0.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
		for _, sec := range secrets {
			if bytes.Contains(w.Body.Bytes(), sec) {
				t.Fatalf("%s %s served a file from disk: %.200s", method, path, w.Body)
			}
		}
	})
}

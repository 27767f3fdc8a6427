package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
)

// finished returns a tiny job that has run to its end.
func finished(t testing.TB) *eddy.Environment {
	t.Helper()
	env := eddy.NewEnvironment()
	eddy.Discard(eddy.FromSlice(env, []int{1, 2, 3}, eddy.NoWatermarks[int]()))
	if err := env.Execute(context.Background(), "tiny"); err != nil {
		t.Fatal(err)
	}
	return env
}

// record serves one request on h and returns the recorder.
func record(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestPathTraversalRefused checks that no request reads a file outside the
// embedded dashboard, nor writes a savepoint outside the savepoint
// directory.
func TestPathTraversalRefused(t *testing.T) {
	root := t.TempDir()
	spDir := filepath.Join(root, "sp")
	s := newServer(t, SavepointDir(spDir))
	s.Set("tiny", finished(t))
	h := s.Handler()
	for _, target := range []string{
		"/../../etc/passwd",
		"/assets/..%2f..%2fetc%2fpasswd",
		"/assets/../../etc/passwd",
		"/assets/%2e%2e/%2e%2e/etc/passwd",
		"/assets/../server.go",
		"/assets/..%2fserver.go",
		"/assets/",
		"/dashboard/index.html",
		"/etc/passwd",
		"/server.go",
	} {
		w := record(h, httptest.NewRequest(http.MethodGet, target, nil))
		body := w.Body.String()
		if w.Code == http.StatusOK || strings.Contains(body, "root:") || strings.Contains(body, "package web") {
			t.Errorf("GET %s: %d %.200q", target, w.Code, body)
		}
	}

	url := serve(t, s)
	for _, body := range []string{
		`{"name": "../x"}`,
		`{"name": "../outside"}`,
		`{"name": "a/b"}`,
		`{"name": ".."}`,
		`{"name": "."}`,
		`{"name": ".hidden"}`,
		`{"name": "/abs"}`,
		`{"name": "a\\b"}`,
		`{"name": "` + strings.Repeat("x", 101) + `"}`,
		`{"dir": "` + root + `/outside"}`,
		`{"path": "/tmp"}`,
		`{"stop": true}`,
		`not json`,
		`{} {}`,
	} {
		for _, action := range []string{"savepoints", "stop"} {
			code, b := call(t, http.MethodPost, url+"/v1/jobs/tiny/"+action, body)
			if code != http.StatusBadRequest || errorOf(b) == "" {
				t.Errorf("POST %s %s: %d %s, want 400 with an error", action, body, code, b)
			}
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("requests created %v in %s", entries, root)
	}

	off := newServer(t)
	off.Set("tiny", finished(t))
	code, b := call(t, http.MethodPost, serve(t, off)+"/v1/jobs/tiny/savepoints", `{}`)
	if code != http.StatusForbidden || !strings.Contains(errorOf(b), "--savepoint-dir") {
		t.Fatalf("without a savepoint directory: %d %s", code, b)
	}
}

// TestTokenRequired checks that a server on a non-loopback address needs
// its token on every request: as a bearer header, or the cookie set when
// the dashboard is opened with ?token=.
func TestTokenRequired(t *testing.T) {
	s := newServer(t, Address("0.0.0.0:8081"))
	tok := s.Token()
	if len(tok) != 64 {
		t.Fatalf("generated token %q, want 64 hex digits", tok)
	}
	if other := newServer(t, Address(":8081")); other.Token() == tok || other.Token() == "" {
		t.Fatalf("two servers' tokens: %q and %q", tok, other.Token())
	}
	s.Set("tiny", finished(t))
	url := serve(t, s)
	for _, p := range []string{"/", "/assets/app.js", "/v1/overview", "/v1/jobs", "/v1/jobs/tiny", "/metrics", "/v1/subscriptions", "/nosuch"} {
		for _, hdr := range [][]string{
			nil,
			{"Authorization", "Bearer wrong"},
			{"Authorization", "Bearer " + tok[:63]},
			{"Authorization", "Bearer " + tok + "0"},
			{"Authorization", "Basic " + tok},
			{"Authorization", tok},
			{"Cookie", "eddy_token=wrong"},
		} {
			code, b := call(t, http.MethodGet, url+p, "", hdr...)
			if code != http.StatusUnauthorized || errorOf(b) == "" {
				t.Errorf("GET %s with %v: %d, want 401", p, hdr, code)
			}
		}
	}
	if code, b := call(t, http.MethodPost, url+"/v1/jobs/tiny/cancel", "{}"); code != http.StatusUnauthorized {
		t.Fatalf("POST without the token: %d %s", code, b)
	}
	if code, b := call(t, http.MethodGet, url+"/v1/overview", "", "Authorization", "Bearer "+tok); code != http.StatusOK {
		t.Fatalf("with the token: %d %s", code, b)
	}
	if code, b := call(t, http.MethodGet, url+"/metrics", "", "Authorization", "bearer "+tok); code != http.StatusOK && code != http.StatusNotFound {
		t.Fatalf("/metrics with the token: %d %s", code, b)
	}

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(url + "/?token=wrong")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("/?token=wrong: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	resp, err = noRedirect.Get(url + "/?token=" + tok)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(cs) != 1 {
		t.Fatalf("/?token=: %d, Location %q, cookies %v", resp.StatusCode, resp.Header.Get("Location"), cs)
	}
	c := cs[0]
	if c.Name != "eddy_token" || c.Value != tok || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Fatalf("cookie %+v", c)
	}
	if code, b := call(t, http.MethodGet, url+"/v1/jobs", "", "Cookie", "eddy_token="+tok); code != http.StatusOK {
		t.Fatalf("with the cookie: %d %s", code, b)
	}
	if code, b := call(t, http.MethodGet, url+"/", "", "Cookie", "eddy_token="+tok); code != http.StatusOK || !strings.Contains(string(b), "<") {
		t.Fatalf("the dashboard with the cookie: %d %.100s", code, b)
	}

	// A token given is needed on a loopback address too; none is needed
	// without one.
	given := newServer(t, Token("s3cret"), Address("127.0.0.1:8081"))
	gurl := serve(t, given)
	if code, _ := call(t, http.MethodGet, gurl+"/v1/jobs", ""); code != http.StatusUnauthorized {
		t.Fatalf("loopback with a token, without it: %d", code)
	}
	if code, _ := call(t, http.MethodGet, gurl+"/v1/jobs", "", "Authorization", "Bearer s3cret"); code != http.StatusOK {
		t.Fatalf("loopback with a token, with it: %d", code)
	}
	open := newServer(t, Address("localhost:8081"))
	if open.Token() != "" {
		t.Fatalf("a loopback server generated the token %q", open.Token())
	}
	if code, _ := call(t, http.MethodGet, serve(t, open)+"/v1/jobs", ""); code != http.StatusOK {
		t.Fatalf("loopback without a token: %d", code)
	}
}

// TestRebindingRefused checks that a loopback server without a token
// answers only requests for a loopback host name.
func TestRebindingRefused(t *testing.T) {
	h := newServer(t).Handler()
	for host, want := range map[string]int{
		"127.0.0.1:8081": http.StatusOK, "localhost:8081": http.StatusOK, "[::1]:8081": http.StatusOK, "LOCALHOST": http.StatusOK,
		"evil.example": http.StatusForbidden, "evil.example:8081": http.StatusForbidden, "127.0.0.1.evil.example": http.StatusForbidden, "": http.StatusForbidden,
	} {
		r := httptest.NewRequest(http.MethodGet, "/v1/overview", nil)
		r.Host = host
		if w := record(h, r); w.Code != want {
			t.Errorf("Host %q: %d, want %d", host, w.Code, want)
		}
	}
}

// TestPostsRefused checks the refusals of POSTs: cross-site (by
// Sec-Fetch-Site or by a foreign Origin), without a JSON content type,
// with a body over 4 KiB, and with a method the endpoint does not take.
func TestPostsRefused(t *testing.T) {
	cancelled := false
	s := newServer(t, SavepointDir(t.TempDir()), Cancel(func() { cancelled = true }))
	s.Set("tiny", finished(t))
	url := serve(t, s)
	for _, hdr := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Origin", "https://evil.example"},
		{"Origin", "http://evil.example:" + strings.Split(url, ":")[2]},
	} {
		code, b := call(t, http.MethodPost, url+"/v1/jobs/tiny/cancel", "{}", hdr...)
		if code != http.StatusForbidden || errorOf(b) == "" {
			t.Errorf("POST with %v: %d %s, want 403", hdr, code, b)
		}
	}
	if cancelled {
		t.Fatal("a cross-site request cancelled the job")
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		code, b := call(t, http.MethodPost, url+"/v1/jobs/tiny/cancel", "{}", "Content-Type", ct)
		if code != http.StatusUnsupportedMediaType || errorOf(b) == "" {
			t.Errorf("POST as %q: %d %s, want 415", ct, code, b)
		}
	}
	big := `{"name": "` + strings.Repeat("x", 5000) + `"}`
	if code, b := call(t, http.MethodPost, url+"/v1/jobs/tiny/savepoints", big); code != http.StatusRequestEntityTooLarge || errorOf(b) == "" {
		t.Fatalf("a 5 KB body: %d %s, want 413", code, b)
	}
	// Without a Content-Length, the limit applies while reading.
	r := httptest.NewRequest(http.MethodPost, "/v1/jobs/tiny/savepoints", struct{ *strings.Reader }{strings.NewReader(big)})
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = -1
	r.Host = "127.0.0.1"
	if w := record(s.Handler(), r); w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 5 KB streamed body: %d %s, want 413", w.Code, w.Body)
	}
	if code, _ := call(t, http.MethodGet, url+"/v1/jobs/tiny/cancel", ""); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET of an action: %d, want 405", code)
	}
	if code, _ := call(t, http.MethodDelete, url+"/v1/jobs/tiny", ""); code != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE of a job: %d, want 405", code)
	}
	// The same origin (as the dashboard sends) and no browser headers (curl,
	// eddy savepoint) pass.
	if code, b := call(t, http.MethodPost, url+"/v1/jobs/tiny/cancel", "{}", "Origin", url, "Sec-Fetch-Site", "same-origin"); code != http.StatusOK || !cancelled {
		t.Fatalf("a same-origin POST: %d %s", code, b)
	}
}

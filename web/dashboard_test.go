package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/window"
)

// TestDashboardFiles checks how the dashboard's files are served: the page
// at /, its files under /assets/ with their content types, no listing of
// directories, a strict Content-Security-Policy, and revalidation.
func TestDashboardFiles(t *testing.T) {
	srv := httptest.NewServer(dashboardHandler())
	defer srv.Close()
	get := func(path string, header ...string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(body)
	}
	for path, ctype := range map[string]string{
		"/":                     "text/html; charset=utf-8",
		"/assets/app.js":        "text/javascript; charset=utf-8",
		"/assets/graph.js":      "text/javascript; charset=utf-8",
		"/assets/dashboard.css": "text/css; charset=utf-8",
		"/assets/chart.js":      "text/javascript; charset=utf-8",
		"/assets/format.js":     "text/javascript; charset=utf-8",
		"/assets/api.js":        "text/javascript; charset=utf-8",
	} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != ctype || body == "" {
			t.Errorf("GET %s: %d %q (%d bytes), want 200 %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body), ctype)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q, want no-cache", path, cc)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", path)
		}
		etag := resp.Header.Get("ETag")
		if etag == "" {
			t.Errorf("GET %s: no ETag", path)
			continue
		}
		if again, _ := get(path, "If-None-Match", etag); again.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", path, again.StatusCode)
		}
	}
	for _, path := range []string{"/assets/", "/assets", "/assets/missing.js", "/assets/../dashboard.go", "/index.html", "/assets/index.html", "/other"} {
		if resp, body := get(path); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMovedPermanently {
			t.Errorf("GET %s: %d %.80q, want not found", path, resp.StatusCode, body)
		}
	}
	// The page loads nothing from elsewhere and runs no inline script.
	_, page := get("/")
	for _, bad := range []string{"http://", "https://", "<script>", "onclick=", "style="} {
		if strings.Contains(page, bad) {
			t.Errorf("index.html contains %q", bad)
		}
	}
}

// chromiumPath returns the path of a Chromium or Chrome to test the
// dashboard with, skipping the test when there is none (failing on CI).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium to test the dashboard with: install the chromium package (apt-get install chromium)")
	}
	t.Skip("no Chromium to test the dashboard with (install the chromium package)")
	return ""
}

// artifactDir is where the test saves screenshots: $EDDY_TEST_ARTIFACTS, or
// a temporary directory.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("EDDY_TEST_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("the artifact directory EDDY_TEST_ARTIFACTS=%s: %v", dir, err)
	}
	return dir
}

// TestDashboardInBrowser runs a job (an endless generator, a keyed window
// count, a sink; parallelism 2, checkpoints every 100 ms), serves it, and
// opens the dashboard in headless Chromium: the graph shows the job's
// operators, its rates change, a savepoint taken from the page exists, and
// on an address that needs a token the page opened as /?token=... works.
func TestDashboardInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	root := t.TempDir()

	type reading struct {
		Sensor int64
		At     int64 // ms
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(2),
		eddy.WithCheckpointing(100*time.Millisecond), eddy.WithCheckpointDir(filepath.Join(root, "checkpoints")))
	src := eddy.FromGenerator(env, eddy.GeneratorOptions{Count: -1, RatePerSecond: 2000},
		func(i int64) reading { return reading{Sensor: i % 10, At: i} },
		eddy.BoundedOutOfOrder(10*time.Millisecond, func(r reading) int64 { return r.At }))
	counts := eddy.Aggregate(eddy.Window(eddy.KeyBy(src, func(r reading) int64 { return r.Sensor }), window.Tumbling(time.Second)),
		agg.Count[reading]()).Name("count per sensor")
	eddy.Discard(counts).Name("discard counts")
	graph, err := env.JobGraph()
	if err != nil {
		t.Fatal(err)
	}

	jobCtx, cancelJob := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- env.Execute(jobCtx, "dashboard-test") }()
	defer func() {
		cancelJob()
		if err := <-done; err != nil && !strings.Contains(err.Error(), "cancel") {
			t.Errorf("the job: %v", err)
		}
	}()

	savepoints := filepath.Join(root, "savepoints")
	s, err := NewServer(SavepointDir(savepoints), Cancel(cancelJob))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Set("dashboard-test", env)
	s.Sample()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	b := newBrowser(t, chromium)
	bctx, eval, waitFor, shot := b.tab, b.eval, b.waitFor, b.shot

	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatalf("opening the dashboard: %v", err)
	}
	waitFor("the job graph", `document.querySelector('#graph [data-vertex="0"]') ? "yes" : ""`)
	waitFor("the job's state", `document.getElementById('job-state').textContent === 'RUNNING' ? "yes" : ""`)

	// The graph shows every operator of the job, and the exchanges.
	var shown []string
	if err := eval(`[...document.querySelectorAll('#graph [data-operator]')].map(e => e.dataset.operator)`, &shown); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, v := range graph.Vertices {
		for _, o := range v.Operators {
			want = append(want, o.Name)
		}
	}
	for _, name := range append(want, "count per sensor", "discard counts") {
		if !slices.Contains(shown, name) {
			t.Errorf("the graph shows the operators %q, not %q", shown, name)
		}
	}
	var partitionings []string
	if err := eval(`[...document.querySelectorAll('#graph path[data-edge]')].map(e => e.dataset.partitioning)`, &partitionings); err != nil {
		t.Fatal(err)
	}
	if len(partitionings) != len(graph.Edges) || !slices.Contains(partitionings, "HASH") {
		t.Errorf("the graph shows the edges %q; the job has %+v", partitionings, graph.Edges)
	}

	// The generator's records per second are shown and change.
	rate := `(document.querySelector('#graph [data-vertex="0"] [data-metric="recordsOutPerSecond"]')?.dataset.value ?? "")`
	first := waitFor("a rate", rate)
	second := waitFor("another rate", `(() => { const v = `+rate+`; return v !== `+jsString(first)+` && Number(v) > 0 ? v : ""; })()`)
	t.Logf("records out per second of the generator: %s, then %s", first, second)
	text := waitFor("the rate's text", `document.querySelector('#graph [data-vertex="0"] [data-metric="recordsOutPerSecond"]').textContent`)
	if text == "–" || text == "" {
		t.Errorf("the generator's rate shows as %q", text)
	}
	waitFor("a checkpoint in the chart", `document.querySelector('#checkpoint-chart [data-checkpoint]') ? "yes" : ""`)
	shot("graph")

	// A vertex shows its subtasks.
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`#graph [data-vertex="1"] .vertex-box`))); err != nil {
		t.Fatalf("clicking vertex 1: %v", err)
	}
	waitFor("the subtasks of vertex 1", `document.querySelectorAll('#subtasks tbody tr[data-subtask]').length === 2 ? "yes" : ""`)
	shot("subtasks")

	// A savepoint taken from the page is written under the server's
	// directory.
	if err := chromedp.Do(bctx, chromedp.WaitEnabled(chromedp.CSS(`#savepoint-button`)), chromedp.Click(chromedp.CSS(`#savepoint-button`))); err != nil {
		t.Fatalf("clicking the savepoint button: %v", err)
	}
	status := waitFor("the savepoint's result", `(() => { const r = document.getElementById('savepoint-result'); return r.dataset.status === 'ok' || r.dataset.status === 'error' ? r.dataset.status + ' ' + r.textContent : ""; })()`)
	if !strings.HasPrefix(status, "ok ") {
		shot("failure")
		t.Fatalf("the savepoint from the page: %s", status)
	}
	var path string
	if err := eval(`document.getElementById('savepoint-result').dataset.path ?? ""`, &path); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(path, savepoints+string(filepath.Separator)) || !strings.Contains(status, path) {
		t.Errorf("the page shows the savepoint %q (%s), want a path under %s", path, status, savepoints)
	}
	if _, err := os.Stat(filepath.Join(path, "_metadata")); err != nil {
		t.Errorf("the savepoint the page shows: %v", err)
	}
	shot("savepoint")
	b.checkConsole()

	// On an address that is not loopback, the page opened with the token
	// keeps it in a cookie the page's scripts cannot read, and works.
	const token = "dashboard-test-token"
	public, err := NewServer(Address("0.0.0.0:8081"), Token(token))
	if err != nil {
		t.Fatal(err)
	}
	defer public.Close()
	public.Set("dashboard-test", env)
	publicSrv := httptest.NewServer(public.Handler())
	defer publicSrv.Close()
	if err := chromedp.Do(bctx, chromedp.Navigate(publicSrv.URL+"/?token="+token)); err != nil {
		t.Fatalf("opening the dashboard with its token: %v", err)
	}
	waitFor("the job graph with the token", `document.querySelector('#graph [data-vertex="0"]') && document.getElementById('connection').dataset.state === 'live' ? "yes" : ""`)
	var where struct{ Path, Search, Cookie string }
	if err := eval(`({Path: location.pathname, Search: location.search, Cookie: document.cookie})`, &where); err != nil {
		t.Fatal(err)
	}
	if where.Path != "/" || where.Search != "" || strings.Contains(where.Cookie, token) {
		t.Errorf("after opening /?token=...: at %s%s, cookies the page reads %q", where.Path, where.Search, where.Cookie)
	}
	b.checkConsole()
}

// browser is a headless Chromium tab for a test, with helpers.
type browser struct {
	t   *testing.T
	ctx context.Context // the test's deadline
	tab context.Context // the tab

	mu       sync.Mutex
	problems []string
	dir      string
}

// newBrowser starts Chromium with a tab, for at most two minutes; every
// console error, uncaught exception and refusal of the
// Content-Security-Policy is recorded for checkConsole.
func newBrowser(t *testing.T, chromium string) *browser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelTab)
	b := &browser{t: t, ctx: ctx, tab: tab, dir: artifactDir(t)}
	messages := chromedp.Console(tab)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("%s %s:%d: %s", m.Type, m.URL, m.Line+1, m.Text))
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// checkConsole fails the test for each problem the page's console showed
// since the last check, but those containing one of expected.
func (b *browser) checkConsole(expected ...string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		if !slices.ContainsFunc(expected, func(e string) bool { return strings.Contains(p, e) }) {
			b.t.Errorf("the page's console: %s", p)
		}
	}
	b.problems = nil
}

// shot saves a screenshot of the whole page as dashboard-<name>.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.tab, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(b.dir, "dashboard-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	b.t.Logf("screenshot: %s", path)
}

// eval evaluates a JavaScript expression giving a JSON value into v.
func (b *browser) eval(expr string, v any) error {
	raw, err := chromedp.Run(b.tab, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// waitFor evaluates expr until it gives a non-empty string, and returns it;
// it fails the test (with a screenshot) when the deadline passes first.
func (b *browser) waitFor(what, expr string) string {
	b.t.Helper()
	for {
		var got string
		err := b.eval(expr, &got)
		if err == nil && got != "" {
			return got
		}
		if b.ctx.Err() != nil {
			b.shot("failure")
			b.t.Fatalf("waiting for %s: %v (last error %v)", what, b.ctx.Err(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// jsString quotes s as a JavaScript string.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fakeAPI answers the REST API with fixed data showing what a small job
// does not: backpressure, a side output, a failed checkpoint, exceptions,
// connectors' progress, a name with markup; it records the POSTs.
type fakeAPI struct {
	mu    sync.Mutex
	posts []string
}

func (f *fakeAPI) handler() http.Handler {
	mux := http.NewServeMux()
	dash := dashboardHandler()
	mux.Handle("GET /{$}", dash)
	mux.Handle("GET /assets/", dash)
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		}
	}
	const started = `"started": "2026-01-02T03:04:05Z", "ended": null, "durationMs": 3725000, "restarts": 2`
	mux.Handle("GET /v1/overview", answer(`{"version": "v0.0.0-test", "jobs": 1}`))
	mux.Handle("GET /v1/jobs", answer(`{"jobs": [{"id": "fake job", "name": "fake job", "state": "RUNNING", `+started+`}]}`))
	vertex := func(id int, name string, ops string, metrics string) string {
		return fmt.Sprintf(`{"id": %d, "name": %q, "parallelism": 2, "operators": [%s], "metrics": {%s}}`, id, name, ops, metrics)
	}
	op := func(name, changelog string) string {
		return fmt.Sprintf(`{"name": %q, "uid": "uid-%s", "maxParallelism": 128, "changelog": %q}`, name, name, changelog)
	}
	job := `{"id": "fake job", "name": "fake job", "state": "RUNNING", ` + started + `, "failure": null,
		"vertices": [` +
		vertex(0, "Source: orders -> parse", op("Source: orders", "[I,UB,UA,D]")+","+op("parse", "[I,UB,UA,D]"),
			`"recordsIn": 0, "recordsOut": 90000, "recordsInPerSecond": 0, "recordsOutPerSecond": 1500, "busyTimeMsPerSecond": 100,
			 "idleTimeMsPerSecond": 0, "backPressuredTimeMsPerSecond": 900, "watermark": 1767323045000, "watermarkLagMs": 1500, "stateBytes": 2048`) + "," +
		vertex(1, "join <b>orders</b>", op("join <b>orders</b>", "[I,UB,UA,D]"),
			`"recordsIn": 90000, "recordsOut": 80000, "recordsInPerSecond": 1500, "recordsOutPerSecond": 1400, "busyTimeMsPerSecond": 950,
			 "idleTimeMsPerSecond": 50, "backPressuredTimeMsPerSecond": 0, "watermark": null, "watermarkLagMs": null, "stateBytes": 5242880`) + "," +
		vertex(2, "Sink: upsert", op("Sink: upsert", "[I,UA,D]"),
			`"recordsIn": 80000, "recordsOut": 0, "recordsInPerSecond": 1400, "recordsOutPerSecond": 0, "busyTimeMsPerSecond": 10,
			 "idleTimeMsPerSecond": 990, "backPressuredTimeMsPerSecond": 0, "stateBytes": 0`) + "," +
		vertex(3, "Sink: late", op("Sink: late", "[I]"), `"recordsInPerSecond": 1`) + `],
		"edges": [{"source": 0, "target": 1, "partitioning": "HASH", "sideOutput": ""},
		          {"source": 1, "target": 2, "partitioning": "FORWARD", "sideOutput": ""},
		          {"source": 0, "target": 3, "partitioning": "REBALANCE", "sideOutput": "late"}]}`
	mux.Handle("GET /v1/jobs/{id}", answer(job))
	mux.Handle("GET /v1/jobs/{id}/vertices/{vid}", answer(`{"id": 1, "name": "join <b>orders</b>", "parallelism": 2, "operators": [], "metrics": {},
		"subtasks": [{"subtask": 0, "recordsIn": 40000, "recordsInPerSecond": 700, "busyTimeMsPerSecond": 950, "operators": [{"operator": "join <b>orders</b>", "recordsIn": 40000, "stateBytes": 2000000}]},
		             {"subtask": 1, "recordsIn": 50000, "recordsInPerSecond": 800, "busyTimeMsPerSecond": 900, "operators": [{"operator": "join <b>orders</b>", "recordsIn": 50000, "lateRecords": 3}]}]}`))
	mux.Handle("GET /v1/jobs/{id}/metrics", answer(`[{"operator": "join <b>orders</b>", "vertex": 1, "subtask": 0, "stateBytes": 2621440},
		{"operator": "join <b>orders</b>", "vertex": 1, "subtask": 1, "stateBytes": 2621440}]`))
	var history []string
	for id := 12; id >= 1; id-- {
		status, failure, savepoint := "COMPLETED", "null", "false"
		if id == 7 {
			status, failure = "FAILED", `"checkpoint 7 expired before completing"`
		}
		if id == 10 {
			savepoint = "true"
		}
		history = append(history, fmt.Sprintf(`{"id": %d, "status": %q, "triggered": "2026-01-02T03:%02d:00Z", "durationMs": %d, "syncMs": 3,
			"alignmentMs": 12, "writeMs": 40, "bytes": %d, "uploadedBytes": 1000, "savepoint": %s, "failure": %s}`,
			id, status, id, 50+id*17%90, 100000+id*5000, savepoint, failure))
	}
	mux.Handle("GET /v1/jobs/{id}/checkpoints", answer(`{"counts": {"completed": 11, "failed": 1}, "latest": `+history[0]+`, "history": [`+strings.Join(history, ",")+`]}`))
	mux.Handle("GET /v1/jobs/{id}/exceptions", answer(`{"exceptions": [
		{"time": "2026-01-02T03:30:00Z", "operator": "join <b>orders</b>", "subtask": 1, "error": "join: <script>alert(1)</script> out of memory", "restarted": true},
		{"time": "2026-01-02T03:20:00Z", "operator": "", "subtask": -1, "error": "writing checkpoint 7: disk full", "restarted": true}]}`))
	mux.Handle("GET /v1/jobs/{id}/connectors", answer(`{"connectors": [
		{"operator": "Source: orders", "subtask": 0,
		 "status": {"phase": "snapshot", "lagMs": 1200, "tables": {"public.orders": {"rowsRead": 5000, "rowsTotal": 20000, "done": false},
		                                                            "public.customers": {"rowsRead": 300, "rowsTotal": 300, "done": true}}},
		 "enumerator": {"splitsAssigned": 4, "splitsPending": ["public.orders:3", "public.orders:4"]}},
		{"operator": "Source: orders", "subtask": 1, "status": {"phase": "snapshot", "offsets": [{"partition": 0, "offset": 42}]}, "enumerator": null}]}`))
	post := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			f.mu.Lock()
			f.posts = append(f.posts, fmt.Sprintf("%s %s %s", r.URL.EscapedPath(), r.Header.Get("Content-Type"), b))
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			io.WriteString(w, body)
		}
	}
	mux.Handle("POST /v1/jobs/{id}/savepoints", post(http.StatusConflict, `{"error": "a savepoint is in progress: wait for it"}`))
	mux.Handle("POST /v1/jobs/{id}/cancel", post(http.StatusOK, `{"state": "CANCELED"}`))
	return mux
}

// TestDashboardSectionsInBrowser shows a fixed job in headless Chromium:
// the layout by depth, backpressure, side outputs, the failed checkpoint,
// exceptions, connectors' status as nested tables, markup in names shown as
// text, an error answer, and cancelling after the confirmation.
func TestDashboardSectionsInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	api := &fakeAPI{}
	srv := httptest.NewServer(api.handler())
	defer srv.Close()
	b := newBrowser(t, chromium)
	if err := chromedp.Do(b.tab, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatalf("opening the dashboard: %v", err)
	}
	b.waitFor("the connectors", `document.querySelector('#connectors [data-connector]') ? "yes" : ""`)
	b.waitFor("the graph", `document.querySelector('#graph [data-vertex="3"]') ? "yes" : ""`)

	var got struct {
		X             []float64
		Backpressured []string
		Header        string
		Side          string
		Failed        int
		Bars          int
		Exceptions    []string
		Tables        []string
		Markup        int
		Lag           string
		Uptime        string
	}
	err := b.eval(`(() => {
		const q = (s) => document.querySelector(s), qa = (s) => [...document.querySelectorAll(s)];
		return {
			X: [0, 1, 2, 3].map((i) => q('#graph [data-vertex="' + i + '"]').getBoundingClientRect().x),
			Backpressured: qa('#graph [data-vertex]').map((g) => g.dataset.backpressured),
			Header: q('#graph [data-vertex="0"] .vertex-header').getAttribute('fill'),
			Side: q('#graph .edge-label[data-edge="0-3"]').textContent,
			Failed: qa('#checkpoint-chart [data-status="failed"]').length,
			Bars: qa('#checkpoint-chart [data-checkpoint]').length,
			Exceptions: qa('#exceptions tbody tr').map((r) => r.textContent),
			Tables: qa('#connectors [data-key="tables"] [data-key]').map((r) => r.dataset.key),
			Markup: qa('main b, main script').length,
			Lag: q('#graph [data-vertex="0"] [data-metric="watermarkLagMs"]').textContent,
			Uptime: q('#job-uptime').textContent,
		};
	})()`, &got)
	if err != nil {
		t.Fatal(err)
	}
	if !(got.X[0] < got.X[1] && got.X[1] < got.X[2] && got.X[3] == got.X[1]) {
		t.Errorf("vertices at x %v: want the source first, the join and the side output's sink next, the upsert sink last", got.X)
	}
	if !slices.Equal(got.Backpressured, []string{"true", "false", "false", "false"}) || got.Header != "url(#bp-stripes)" {
		t.Errorf("backpressured %v, header fill %q: want only the source striped", got.Backpressured, got.Header)
	}
	if got.Side != "REBALANCE (late)" {
		t.Errorf("the side output's edge is labelled %q", got.Side)
	}
	if got.Failed != 2 || got.Bars != 2*12 {
		t.Errorf("the chart has %d bars, %d failed: want 24 (duration and size of 12), 2 of them failed", got.Bars, got.Failed)
	}
	if len(got.Exceptions) != 2 || !strings.Contains(got.Exceptions[0], "<script>alert(1)</script>") {
		t.Errorf("exceptions %q", got.Exceptions)
	}
	if !slices.Contains(got.Tables, "public.orders") || !slices.Contains(got.Tables, "public.customers") {
		t.Errorf("the connectors' tables %q", got.Tables)
	}
	if got.Markup != 0 {
		t.Errorf("markup in names became %d elements", got.Markup)
	}
	if got.Lag != "lag 1.50 s" || got.Uptime != "1h 02m" {
		t.Errorf("watermark %q, uptime %q", got.Lag, got.Uptime)
	}

	if err := chromedp.Do(b.tab, chromedp.Click(chromedp.CSS(`#graph [data-vertex="1"] .vertex-box`))); err != nil {
		t.Fatalf("clicking vertex 1: %v", err)
	}
	b.waitFor("the subtasks", `document.querySelectorAll('#subtasks tbody tr[data-subtask]').length === 2 ? "yes" : ""`)
	b.shot("sections")

	// An error answer is shown.
	if err := chromedp.Do(b.tab, chromedp.WaitEnabled(chromedp.CSS(`#savepoint-button`)), chromedp.Click(chromedp.CSS(`#savepoint-button`))); err != nil {
		t.Fatal(err)
	}
	msg := b.waitFor("the savepoint's error", `(() => { const r = document.getElementById('savepoint-result'); return r.dataset.status === 'error' ? r.textContent : ""; })()`)
	if !strings.Contains(msg, "a savepoint is in progress: wait for it") {
		t.Errorf("the savepoint's error shows as %q", msg)
	}

	// Cancelling asks first.
	dialogs := chromedp.Events(b.tab, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			if ev.Type == page.DialogTypeConfirm {
				if _, err := chromedp.Call(b.tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true}); err != nil {
					t.Errorf("accepting %q: %v", ev.Message, err)
				}
			}
		}
	}()
	if err := chromedp.Do(b.tab, chromedp.WaitEnabled(chromedp.CSS(`#cancel-button`)), chromedp.Click(chromedp.CSS(`#cancel-button`))); err != nil {
		t.Fatal(err)
	}
	msg = b.waitFor("the cancellation", `(() => { const r = document.getElementById('savepoint-result'); return r.dataset.status === 'ok' ? r.textContent : ""; })()`)
	if !strings.Contains(msg, "CANCELED") {
		t.Errorf("the cancellation shows as %q", msg)
	}
	api.mu.Lock()
	want := []string{"/v1/jobs/fake%20job/savepoints application/json {}", "/v1/jobs/fake%20job/cancel application/json {}"}
	if !slices.Equal(api.posts, want) {
		t.Errorf("the page sent %q, want %q", api.posts, want)
	}
	api.mu.Unlock()
	b.checkConsole("/savepoints:1: Failed to load resource: the server responded with a status of 409")
}

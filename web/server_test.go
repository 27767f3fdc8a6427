package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
)

// post sends body to the savepoint endpoint and decodes the answer.
func post(t *testing.T, url, body string) (int, string, string) {
	t.Helper()
	resp, err := http.Post(url+"/jobs/current/savepoints", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct{ Path, Error string }
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, answer.Path, answer.Error
}

func TestStatusAndSavepointErrors(t *testing.T) {
	env := eddy.NewEnvironment()
	eddy.Discard(eddy.FromSlice(env, []int{1, 2, 3}, eddy.NoWatermarks[int]()))
	if err := env.Execute(context.Background(), "tiny"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(env, "tiny", SavepointDir(t.TempDir())))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/jobs/current")
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		Name      string
		Operators []struct {
			Name       string
			RecordsOut int64
		}
	}
	json.NewDecoder(resp.Body).Decode(&status)
	resp.Body.Close()
	var out int64
	for _, op := range status.Operators {
		out += op.RecordsOut
	}
	if status.Name != "tiny" || out != 3 {
		t.Fatalf("status %+v", status)
	}
	if code, _, msg := post(t, srv.URL, `{}`); code != http.StatusConflict || msg == "" {
		t.Fatalf("savepoint of a finished job: %d %q", code, msg)
	}
}

// TestStatusCountsRetractionsWithoutState checks that the operator view
// shows the relational operators' count of retractions of rows they hold no
// state for, as Environment.Metrics does.
func TestStatusCountsRetractionsWithoutState(t *testing.T) {
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
	var api int64
	for _, m := range env.Metrics() {
		api += m.RetractionsWithoutState
	}
	if api != 2 {
		t.Fatalf("Environment.Metrics counts %d retractions without state, want 2: %+v", api, env.Metrics())
	}
	srv := httptest.NewServer(Handler(env, "retractions"))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/jobs/current")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var status struct {
		Operators []map[string]any
	}
	if err := json.NewDecoder(resp.Body).Decode(&status); err != nil {
		t.Fatal(err)
	}
	var rest float64
	for _, op := range status.Operators {
		n, ok := op["retractionsWithoutState"].(float64)
		if !ok {
			t.Fatalf("operator %v has no retractionsWithoutState", op)
		}
		rest += n
	}
	if rest != 2 {
		t.Fatalf("the operator view counts %v retractions without state, want 2: %v", rest, status.Operators)
	}
}

// TestSavepointPathsComeFromTheServer checks that no path of a request
// reaches the file system: a request naming a directory is refused, a name
// must be one safe path element, and without a configured directory the
// endpoint refuses savepoints.
func TestSavepointPathsComeFromTheServer(t *testing.T) {
	env := eddy.NewEnvironment()
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	srv := httptest.NewServer(Handler(env, "job", SavepointDir(filepath.Join(root, "sp"))))
	defer srv.Close()
	for _, body := range []string{
		`{"dir": "` + outside + `"}`,
		`{"stop": true, "path": "/tmp"}`,
		`{"name": "../outside"}`,
		`{"name": "a/b"}`,
		`{"name": ".."}`,
		`{"name": "."}`,
		`{"name": ".hidden"}`,
		`{"name": "/abs"}`,
		`{"name": "` + strings.Repeat("x", 101) + `"}`,
		`not json`,
	} {
		code, path, msg := post(t, srv.URL, body)
		if code != http.StatusBadRequest || path != "" || msg == "" {
			t.Errorf("%s: %d %q %q, want 400 with an error", body, code, path, msg)
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("a request created a directory outside the savepoint directory")
	}

	off := httptest.NewServer(Handler(env, "job"))
	defer off.Close()
	code, _, msg := post(t, off.URL, `{"stop": true}`)
	if code != http.StatusForbidden || !strings.Contains(msg, "--savepoint-dir") {
		t.Fatalf("without a savepoint directory: %d %q", code, msg)
	}
}

// TestSavepointUnderTheConfiguredDirectory takes a savepoint of a running
// job with a name, stopping it, and checks where it was written.
func TestSavepointUnderTheConfiguredDirectory(t *testing.T) {
	env := eddy.NewEnvironment()
	eddy.Discard(eddy.FromGenerator(env, eddy.GeneratorOptions{Count: -1, RatePerSecond: 1000},
		func(i int64) int64 { return i }, eddy.NoWatermarks[int64]()))
	done := make(chan error, 1)
	go func() { done <- env.Execute(context.Background(), "endless") }()
	dir := filepath.Join(t.TempDir(), "savepoints")
	srv := httptest.NewServer(Handler(env, "endless", SavepointDir(dir)))
	defer srv.Close()
	var path string
	for i := 0; path == ""; i++ {
		code, p, msg := post(t, srv.URL, `{"stop": true, "name": "before-upgrade_1.2"}`)
		switch {
		case code == http.StatusOK:
			path = p
		case code != http.StatusConflict || i > 2000:
			t.Fatalf("savepoint: %d %q", code, msg)
		default:
			time.Sleep(5 * time.Millisecond) // the job is starting
		}
	}
	if filepath.Dir(path) != filepath.Join(dir, "before-upgrade_1.2") {
		t.Fatalf("savepoint written to %s, want under %s", path, filepath.Join(dir, "before-upgrade_1.2"))
	}
	if _, err := os.Stat(filepath.Join(path, "_metadata")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestServesSubscriptions checks that the REST API serves the published
// tables, under /v1/subscriptions.
func TestServesSubscriptions(t *testing.T) {
	env := eddy.NewEnvironment()
	srv := httptest.NewServer(Handler(env, "job"))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/subscriptions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Tables []any }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK || body.Tables == nil {
		t.Fatalf("GET /v1/subscriptions: status %d, %v, %+v", resp.StatusCode, err, body)
	}
	resp2, err := http.Get(srv.URL + "/v1/subscriptions/none/events")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusNotFound {
		t.Fatalf("events of a table not published: status %d", resp2.StatusCode)
	}
}

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRESTRescaleExactlyOnce runs `eddy run hot-items` at parallelism 2
// with exactly-once file output, rescales it to 3 through its REST API
// (POST /v1/jobs/current/rescale), checks that the API then shows the job
// running at parallelism 3, and that once it has ended its committed output
// equals that of a run without a rescale: no result lost or repeated.
func TestRESTRescaleExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the eddy binary")
	}
	bin := buildEddy(t)
	root := t.TempDir()
	// 20M events: the job runs for seconds even on an idle machine, so that
	// it outlasts the rescale request on a loaded one.
	base := []string{"run", "hot-items", "--events", "20000000", "--checkpoint-interval", "500ms"}
	ref := filepath.Join(root, "ref")
	if out, err := exec.Command(bin, append(base, "--parallelism", "2", "--output", ref, "--rest-address", "none")...).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	want := committed(t, ref)

	out := filepath.Join(root, "out")
	cmd := exec.Command(bin, append(base, "--parallelism", "2", "--output", out, "--rest-address", "127.0.0.1:0",
		"--checkpoint-dir", filepath.Join(root, "chk"))...)
	proc := startREST(t, cmd)
	addr := proc.addr

	// The rescale is refused until the job runs (and answers 501 for a
	// job that cannot be rescaled, which fails the test at once).
	var answer struct {
		Path        string
		Parallelism int
		Error       string
	}
	var seen []string
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); {
		resp, err := http.Post(addr+"/v1/jobs/current/rescale", "application/json", strings.NewReader(`{"parallelism": 3}`))
		if err != nil {
			t.Fatalf("POST rescale: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal(body, &answer); err != nil {
				t.Fatalf("the rescale's answer %s: %v", body, err)
			}
			break
		}
		if resp.StatusCode == http.StatusNotImplemented {
			t.Fatalf("the job cannot be rescaled: %s", body)
		}
		if a := resp.Status + " " + strings.TrimSpace(string(body)); !slices.Contains(seen, a) {
			seen = append(seen, a)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if answer.Path == "" || answer.Parallelism != 3 {
		t.Fatalf("no rescale: answer %+v; the refused attempts said %q", answer, seen)
	}
	t.Logf("rescaled from the savepoint %s; refused attempts before said %q", answer.Path, seen)

	// The API shows the new execution, at parallelism 3 (except the
	// vertices of a WindowAll, which run one subtask).
	resp, err := http.Get(addr + "/v1/jobs/current")
	if err != nil {
		t.Fatalf("GET the job: %v", err)
	}
	var job struct {
		Vertices []struct {
			Name        string
			Parallelism int
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("GET the job: %v", err)
	}
	three := 0
	for _, v := range job.Vertices {
		if v.Parallelism == 3 {
			three++
		}
		if v.Parallelism == 2 {
			t.Errorf("after the rescale, the vertex %q runs at parallelism 2", v.Name)
		}
	}
	if three == 0 {
		t.Errorf("after the rescale no vertex runs at parallelism 3: %+v", job.Vertices)
	}

	if err := proc.Wait(); err != nil {
		t.Fatalf("the rescaled job exited with %v\n%s", err, proc.Logs())
	}
	if l := proc.Logs(); !strings.Contains(l, "rescaling: restarting the job from its savepoint") {
		t.Errorf("the job's log does not tell of the rescale:\n%s", l)
	}
	got := committed(t, out)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("output after the rescale: %d lines, a run without it %d (first differences: %s)", len(got), len(want), firstDiff(got, want))
	}
}

// firstDiff describes the first line where sorted a and b differ.
func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " | " + b[i]
		}
	}
	return "one is a prefix of the other"
}

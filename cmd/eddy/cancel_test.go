package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRESTCancelAnswered runs `eddy run hot-items`, cancels it through its
// REST API once it runs, and checks that the cancel request is answered
// with the job's final state although the process exits as the job ends.
func TestRESTCancelAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the eddy binary")
	}
	bin := buildEddy(t)
	root := t.TempDir()
	cmd := exec.Command(bin, "run", "hot-items", "--events", "2000000000", "--parallelism", "2",
		"--output", filepath.Join(root, "out"), "--rest-address", "127.0.0.1:0")
	proc := startREST(t, cmd)
	running := false
	for deadline := time.Now().Add(5 * time.Minute); !running && time.Now().Before(deadline); {
		resp, err := http.Get(proc.addr + "/v1/jobs/current")
		if err != nil {
			t.Fatalf("GET the job: %v", err)
		}
		var job struct{ State string }
		err = json.NewDecoder(resp.Body).Decode(&job)
		resp.Body.Close()
		running = err == nil && job.State == "RUNNING"
		if !running {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !running {
		t.Fatalf("the job never ran:\n%s", proc.Logs())
	}
	resp, err := http.Post(proc.addr+"/v1/jobs/current/cancel", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("the cancel request got no answer: %v\n%s", err, proc.Logs())
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("the cancel request's answer was cut: %v", err)
	}
	var answer struct{ State string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &answer) != nil || answer.State != "CANCELED" {
		t.Fatalf("the cancel request was answered %s %s, want 200 with the state CANCELED", resp.Status, body)
	}
	proc.Wait() // a cancelled job's exit status is the command's business
}

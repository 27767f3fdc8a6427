package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSavepointFromCLIAndRescale runs the demo at parallelism 2 with a
// savepoint directory, stops it with a savepoint taken by `eddy savepoint
// --stop`, checks the savepoint is under that directory, resumes it from
// the savepoint at parallelism 3, and checks the committed output equals a
// run without interruption.
func TestSavepointFromCLIAndRescale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the eddy binary")
	}
	bin := buildEddy(t)
	root := t.TempDir()
	// 20M events: the job runs for seconds even on an idle machine, so that
	// it outlasts the savepoint request (a process start of the eddy binary)
	// on a loaded one; with 6M it could end first.
	base := []string{"demo", "--events", "20000000", "--top", "10"}
	ref := filepath.Join(root, "ref")
	if out, err := exec.Command(bin, append(base, "--parallelism", "2", "--output", ref)...).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	want := committed(t, ref)

	out := filepath.Join(root, "out")
	spDir := filepath.Join(root, "sp")
	cmd := exec.Command(bin, append(base, "--parallelism", "2", "--output", out, "--rest-address", "127.0.0.1:0", "--savepoint-dir", spDir)...)
	job := startREST(t, cmd)
	addr := job.addr
	var path string
	var last []byte
	var seen []string // the distinct answers of the failed attempts
	for deadline := time.Now().Add(5 * time.Minute); path == "" && time.Now().Before(deadline); {
		sp := exec.Command(bin, "savepoint", "--address", addr, "--name", "rescale", "--stop")
		var errOut bytes.Buffer
		sp.Stderr = &errOut
		b, err := sp.Output()
		if err == nil {
			path = strings.TrimSpace(string(b))
			break
		}
		last = errOut.Bytes()
		if a := strings.TrimSpace(string(last)); !slices.Contains(seen, a) {
			seen = append(seen, a)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("savepoint %s; failed attempts before it said: %q", path, seen)
	if path == "" {
		t.Fatalf("no savepoint could be taken; the attempts said:\n%s", strings.Join(seen, "\n"))
	}
	if err := job.Wait(); err != nil {
		t.Fatalf("the stopped job exited with %v", err)
	}
	if filepath.Dir(path) != filepath.Join(spDir, "rescale") {
		t.Fatalf("savepoint at %s, want under %s", path, filepath.Join(spDir, "rescale"))
	}
	if b, err := exec.Command(bin, append(base, "--parallelism", "3", "--output", out, "--from-savepoint", path)...).CombinedOutput(); err != nil {
		t.Fatalf("resuming at parallelism 3: %v\n%s", err, b)
	}
	if got := committed(t, out); !slices.Equal(got, want) {
		t.Fatalf("output after savepoint and rescale: %d lines, uninterrupted run %d", len(got), len(want))
	}
}

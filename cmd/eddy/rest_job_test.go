package main

import (
	"bufio"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// restJob is an eddy process serving its REST API, its standard error
// collected as it runs.
type restJob struct {
	cmd  *exec.Cmd
	addr string        // the API's base URL, http://host:port
	done chan struct{} // closed when standard error ends

	mu   sync.Mutex
	logs strings.Builder // standard error after the address line
}

// startREST starts cmd, which must serve the REST API on an address it
// announces on standard error, and returns once it has announced it. The
// process is killed when the test ends.
func startREST(t *testing.T, cmd *exec.Cmd) *restJob {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	j := &restJob{cmd: cmd, done: make(chan struct{})}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-j.done
		cmd.Wait()
	})
	// A process that neither announces its address nor exits is killed.
	hung := time.AfterFunc(5*time.Minute, func() { cmd.Process.Kill() })
	defer hung.Stop()
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	re := regexp.MustCompile(`REST API on (http://\S+)`)
	var before strings.Builder
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			j.addr = m[1]
			break
		}
		before.WriteString(sc.Text() + "\n")
	}
	go func() {
		defer close(j.done)
		for sc.Scan() {
			j.mu.Lock()
			j.logs.WriteString(sc.Text() + "\n")
			j.mu.Unlock()
		}
	}()
	if j.addr == "" {
		<-j.done
		t.Fatalf("%s did not announce its REST address:\n%s", cmd.Path, before.String())
	}
	return j
}

// Logs returns what the process has written to standard error since it
// announced its address.
func (j *restJob) Logs() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.logs.String()
}

// Wait waits for the process to exit and returns its error.
func (j *restJob) Wait() error {
	<-j.done
	return j.cmd.Wait()
}

package web

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestShutdownAnswersCancel cancels a running job through the API while
// its runner, as eddy's CLI does, shuts the server down once the job has
// ended: the cancel request still gets its reply, and Serve returns nil.
func TestShutdownAnswersCancel(t *testing.T) {
	env, cancel, wait := endless(t, "shutdown")
	s := newServer(t, Cancel(cancel))
	s.Set("shutdown", env)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	shut := make(chan error, 1)
	go func() {
		wait()
		shut <- s.Shutdown(context.Background())
	}()
	code, body := call(t, http.MethodPost, "http://"+ln.Addr().String()+"/v1/jobs/current/cancel", "{}")
	if code != http.StatusOK || !strings.Contains(string(body), "CANCELED") {
		t.Fatalf("cancel: status %d: %s", code, body)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after Shutdown: %v", err)
	}
}

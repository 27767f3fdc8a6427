package main

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestRESTFlags checks the REST API's default address, turning it off, the
// default address being taken, and the token printed on a non-loopback
// address.
func TestRESTFlags(t *testing.T) {
	newCmd := func() (*cobra.Command, *restFlags, *bytes.Buffer) {
		var r restFlags
		cmd := &cobra.Command{Use: "x"}
		r.register(cmd)
		var out bytes.Buffer
		cmd.SetErr(&out)
		return cmd, &r, &out
	}
	cmd, r, _ := newCmd()
	if r.addr != "127.0.0.1:8081" {
		t.Fatalf("default --rest-address %q", r.addr)
	}
	for _, off := range []string{"", "none"} {
		cmd, r, _ = newCmd()
		cmd.Flags().Set("rest-address", off)
		if err := r.listen(cmd); err != nil || r.start(cmd, "job") != nil {
			t.Fatalf("--rest-address %q serves", off)
		}
	}
	// The default address taken: no server, a message, no error.
	ln, err := net.Listen("tcp", "127.0.0.1:8081")
	if err == nil {
		defer ln.Close()
		cmd, r, out := newCmd()
		if err := r.listen(cmd); err != nil || !r.disabled() || !strings.Contains(out.String(), "taken") {
			t.Fatalf("default address taken: %v, %q", err, out)
		}
	}
	cmd, r, out := newCmd()
	cmd.Flags().Set("rest-address", "0.0.0.0:0")
	srv := r.start(cmd, "job")
	if srv == nil {
		t.Fatalf("no server: %s", out)
	}
	defer srv.Close()
	if tok := srv.Token(); len(tok) != 64 || !strings.Contains(out.String(), "?token="+tok) {
		t.Fatalf("token %q not printed: %s", tok, out)
	}
	cmd, r, out = newCmd()
	cmd.Flags().Set("rest-address", "127.0.0.1:0")
	srv = r.start(cmd, "job")
	if srv == nil || srv.Token() != "" || strings.Contains(out.String(), "token=") {
		t.Fatalf("loopback: %v %s", srv, out)
	}
	srv.Close()
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/web"
)

// serveREST serves the REST API of the job on env at addr, in the
// background, for as long as the process runs.
func serveREST(cmd *cobra.Command, addr string, env *eddy.Environment, name string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "eddy: cannot serve the REST API on %s: %v\n", addr, err)
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "REST API on http://%s\n", ln.Addr())
	go http.Serve(ln, web.Handler(env, name))
}

func newSavepointCmd() *cobra.Command {
	var addr, dir string
	var stop bool
	cmd := &cobra.Command{
		Use:   "savepoint",
		Short: "Take a savepoint of a running job (optionally stopping it)",
		Long: `Take a savepoint of the job running with --rest-address at --address. The
savepoint is a portable checkpoint in a new directory under --dir; restore it
with --from-savepoint, at any parallelism. With --stop the job stops once the
savepoint is complete.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("--dir is required: the directory to write the savepoint under")
			}
			if !strings.Contains(addr, "://") {
				addr = "http://" + addr
			}
			body, _ := json.Marshal(map[string]any{"dir": dir, "stop": stop})
			client := &http.Client{Timeout: 15 * time.Minute}
			resp, err := client.Post(strings.TrimSuffix(addr, "/")+"/jobs/current/savepoints", "application/json", bytes.NewReader(body))
			if err != nil {
				return fmt.Errorf("reaching the job at %s (is it running with --rest-address?): %w", addr, err)
			}
			defer resp.Body.Close()
			var out struct{ Path, Error string }
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				return fmt.Errorf("reading the job's answer: %w", err)
			}
			if out.Error != "" {
				return fmt.Errorf("savepoint failed: %s", out.Error)
			}
			fmt.Fprintln(cmd.OutOrStdout(), out.Path)
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "address", "localhost:8081", "the job's REST address")
	cmd.Flags().StringVar(&dir, "dir", "", "directory to write the savepoint under")
	cmd.Flags().BoolVar(&stop, "stop", false, "stop the job once the savepoint is complete")
	return cmd
}

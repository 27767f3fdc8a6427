package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/web"
)

// restFlags are the REST API flags of `eddy run` and `eddy demo`.
type restFlags struct {
	addr         string
	savepointDir string
}

func (r *restFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.addr, "rest-address", "", "serve the job's REST API (status, savepoints) on this address, e.g. localhost:8081")
	f.StringVar(&r.savepointDir, "savepoint-dir", "", "with --rest-address, the directory savepoints requested through the API are written under (without it the API refuses savepoints)")
}

// check reports a combination of the REST flags that cannot work.
func (r *restFlags) check() error {
	if r.savepointDir != "" && r.addr == "" {
		return errors.New("--savepoint-dir needs --rest-address: savepoints are requested through the REST API (eddy savepoint)")
	}
	return nil
}

// serve serves the REST API of the job on env, if an address is set, in
// the background, for as long as the process runs.
func (r *restFlags) serve(cmd *cobra.Command, env *eddy.Environment, name string) {
	if r.addr == "" {
		return
	}
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "eddy: cannot serve the REST API on %s: %v\n", r.addr, err)
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "REST API on http://%s\n", ln.Addr())
	var opts []web.Option
	if r.savepointDir != "" {
		opts = append(opts, web.SavepointDir(r.savepointDir))
	}
	go http.Serve(ln, web.Handler(env, name, opts...))
}

func newSavepointCmd() *cobra.Command {
	var addr, dir, name string
	var stop bool
	cmd := &cobra.Command{
		Use:   "savepoint",
		Short: "Take a savepoint of a running job (optionally stopping it)",
		Long: `Take a savepoint of the job running with --rest-address at --address. The
savepoint is a portable checkpoint in a new directory under the job's
--savepoint-dir (in its subdirectory --name, if given), chosen when the job
started; the command prints its path. Restore it with --from-savepoint, at any
parallelism. With --stop the job stops once the savepoint is complete.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir != "" {
				return errors.New("--dir is no longer accepted: the job writes savepoints under the --savepoint-dir it was started with; give --name to choose a subdirectory")
			}
			if !strings.Contains(addr, "://") {
				addr = "http://" + addr
			}
			req := map[string]any{"stop": stop}
			if name != "" {
				req["name"] = name
			}
			body, _ := json.Marshal(req)
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
	cmd.Flags().StringVar(&name, "name", "", "write the savepoint in this subdirectory of the job's savepoint directory (letters, digits, '.', '_', '-')")
	cmd.Flags().StringVar(&dir, "dir", "", "no longer accepted: the job's --savepoint-dir decides")
	cmd.Flags().MarkHidden("dir")
	cmd.Flags().BoolVar(&stop, "stop", false, "stop the job once the savepoint is complete")
	return cmd
}

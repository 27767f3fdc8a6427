package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/web"
)

// defaultRESTAddress is where jobs serve their REST API and dashboard
// unless --rest-address says otherwise.
const defaultRESTAddress = "127.0.0.1:8081"

// tokenEnv is the environment variable holding the REST API's token.
const tokenEnv = "EDDY_REST_TOKEN"

// restFlags are the REST API flags of `eddy run`, `eddy pipeline` and
// `eddy demo`.
type restFlags struct {
	addr         string
	savepointDir string
	token        string
	// checkpointDir, set by the command, is where savepoints go by default
	// (in its subdirectory savepoints).
	checkpointDir string
	// ln is the listener opened by listen before the job is built.
	ln net.Listener
	// off records that listen found the default address taken.
	off bool
}

func (r *restFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.addr, "rest-address", defaultRESTAddress, "serve the job's REST API and dashboard on this address ('' or none: not at all); on an address other than loopback every request needs the token")
	f.StringVar(&r.savepointDir, "savepoint-dir", "", "the directory savepoints requested through the REST API are written under (default: <checkpoint-dir>/savepoints; without either the API refuses savepoints)")
	f.StringVar(&r.token, "rest-token", "", "the token REST requests must present (default: $"+tokenEnv+"; generated and printed when the address is not loopback)")
}

// disabled reports whether --rest-address turns the server off.
func (r *restFlags) disabled() bool { return r.addr == "" || r.addr == "none" || r.off }

// check reports a combination of the REST flags that cannot work.
func (r *restFlags) check() error {
	if r.savepointDir != "" && (r.addr == "" || r.addr == "none") {
		return errors.New("--savepoint-dir needs --rest-address: savepoints are requested through the REST API (eddy savepoint), which --rest-address " + fmt.Sprintf("%q", r.addr) + " turns off")
	}
	if r.token == "" {
		r.token = os.Getenv(tokenEnv)
	}
	return nil
}

// listen opens the REST address before the job is built, so that an
// address that cannot be served fails the command at once; the default
// address being taken (by another job) only turns the server off, saying
// so.
func (r *restFlags) listen(cmd *cobra.Command) error {
	if r.disabled() || r.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		if r.addr == defaultRESTAddress && !cmd.Flags().Changed("rest-address") {
			fmt.Fprintf(cmd.ErrOrStderr(), "eddy: not serving the REST API and dashboard: the default address %s is taken (another job?): %v; choose another with --rest-address\n", r.addr, err)
			r.off = true
			return nil
		}
		return fmt.Errorf("serving the REST API on --rest-address %s: %w (choose another address, or none)", r.addr, err)
	}
	r.ln = ln
	return nil
}

// savepoints returns the directory savepoints are written under: the
// --savepoint-dir, else the checkpoint directory's savepoints.
func (r *restFlags) savepoints() string {
	switch {
	case r.savepointDir != "":
		return r.savepointDir
	case r.checkpointDir != "":
		return filepath.Join(r.checkpointDir, "savepoints")
	}
	return ""
}

// start serves the REST API, with opts, in the background for as long as
// the process runs, and prints its address (with the token on an address
// other than loopback). It returns nil when the server is off.
func (r *restFlags) start(cmd *cobra.Command, name string, opts ...web.Option) *web.Server {
	if err := r.listen(cmd); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "eddy: %v\n", err)
		return nil
	}
	if r.disabled() || r.ln == nil {
		return nil
	}
	addr := r.ln.Addr().String()
	opts = append([]web.Option{web.Address(addr), web.Logger(slog.Default())}, opts...)
	if dir := r.savepoints(); dir != "" {
		opts = append(opts, web.SavepointDir(dir))
	}
	if r.token != "" {
		opts = append(opts, web.Token(r.token))
	}
	srv, err := web.NewServer(opts...)
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "eddy: not serving the REST API: %v\n", err)
		return nil
	}
	if tok := srv.Token(); tok != "" && !web.IsLoopback(addr) {
		fmt.Fprintf(cmd.ErrOrStderr(), "REST API on http://%s (dashboard: http://%s/?token=%s; API clients send 'Authorization: Bearer %s', eddy savepoint --token)\n", addr, addr, tok, tok)
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "REST API on http://%s (dashboard: http://%s/)\n", addr, addr)
	}
	ln := r.ln
	go func() {
		if err := srv.Serve(ln); err != nil {
			jobLogger(name).Error("the REST API stopped", "error", err)
		}
	}()
	return srv
}

// serve serves the REST API of the job on env (without cancel or rescale
// actions), if it is on.
func (r *restFlags) serve(cmd *cobra.Command, env *eddy.Environment, name string) {
	if srv := r.start(cmd, name); srv != nil {
		srv.Set(name, env)
	}
}

// builder builds the job at a parallelism, restoring the savepoint restore
// when it is not empty.
type builder func(parallelism int, restore string) (*eddy.Environment, error)

// run builds the job, serves it (with a cancel action, and a rescale action
// when rescalable) and executes it; a rescale stops it with a savepoint and
// runs it again, rebuilt at the new parallelism, from the savepoint.
func (r *restFlags) run(cmd *cobra.Command, name string, parallelism int, build builder, rescalable bool) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	type request struct {
		parallelism int
		path        chan string // the savepoint, "" when it failed
		restarted   chan error
	}
	var (
		mu      sync.Mutex
		current *eddy.Environment
		pending *request
		srv     *web.Server
	)
	// On a terminal, a status line follows the job (progress.go); it
	// starts before the job is built, which may capture standard output.
	stopProgress := startJobProgress(cmd.ErrOrStderr(), name, func() *eddy.Environment {
		mu.Lock()
		defer mu.Unlock()
		return current
	})
	defer stopProgress()
	env, err := build(parallelism, "")
	if err != nil {
		return err
	}
	mu.Lock()
	current = env
	mu.Unlock()
	rescale := func(rctx context.Context, n int) (string, error) {
		dir := srv.SavepointDir()
		if dir == "" {
			return "", errors.New("a rescale stops the job with a savepoint, and the job has no savepoint directory: start it with --savepoint-dir or --checkpoint-dir")
		}
		req := &request{parallelism: n, path: make(chan string, 1), restarted: make(chan error, 1)}
		mu.Lock()
		if pending != nil {
			mu.Unlock()
			return "", errors.New("a rescale is in progress; try again when it is done")
		}
		pending = req
		e := current
		mu.Unlock()
		// The savepoint stops the job even if the client gives up waiting:
		// it must not be tied to the request.
		sctx, cancelSavepoint := context.WithTimeout(context.WithoutCancel(rctx), 10*time.Minute)
		path, err := e.TriggerSavepoint(sctx, dir, true)
		cancelSavepoint()
		req.path <- path
		if err != nil {
			mu.Lock()
			if pending == req {
				pending = nil
			}
			mu.Unlock()
			return "", fmt.Errorf("stopping the job with a savepoint: %w", err)
		}
		select {
		case err := <-req.restarted:
			if err != nil {
				return path, fmt.Errorf("restarting the job from %s at parallelism %d: %w", path, n, err)
			}
		case <-rctx.Done():
		}
		return path, nil
	}
	opts := []web.Option{web.Cancel(cancel)}
	if rescalable {
		opts = append(opts, web.Rescale(rescale))
	}
	srv = r.start(cmd, name, opts...)
	if srv != nil {
		// The request that ended the job (a cancel, a stop with a
		// savepoint) is answered before the process exits.
		defer func() {
			sctx, done := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer done()
			_ = srv.Shutdown(sctx) // closes what is left when sctx ends
		}()
	}
	for {
		if srv != nil {
			srv.Set(name, env)
		}
		err := env.Execute(ctx, name)
		mu.Lock()
		req := pending
		pending = nil
		mu.Unlock()
		if req == nil {
			return err
		}
		path := <-req.path
		if err != nil || path == "" || ctx.Err() != nil {
			req.restarted <- errors.New("the job ended")
			return err
		}
		jobLogger(name).Info("rescaling: restarting the job from its savepoint", "parallelism", req.parallelism, "savepoint", path)
		if env, err = build(req.parallelism, path); err != nil {
			req.restarted <- err
			return fmt.Errorf("rescaling %s to parallelism %d from the savepoint %s: %w", name, req.parallelism, path, err)
		}
		mu.Lock()
		current = env
		mu.Unlock()
		if srv != nil {
			srv.Set(name, env)
		}
		req.restarted <- nil
	}
}

func newSavepointCmd() *cobra.Command {
	var addr, dir, name, job, token string
	var stop bool
	cmd := &cobra.Command{
		Use:   "savepoint",
		Short: "Take a savepoint of a running job (optionally stopping it)",
		Long: `Take a savepoint of the job serving its REST API at --address (eddy run and
eddy pipeline serve it on 127.0.0.1:8081 by default). The savepoint is a
portable checkpoint in a new directory under the job's savepoint directory
(its --savepoint-dir, or <checkpoint-dir>/savepoints), in its subdirectory
--name if given, chosen when the job started; the command prints its path.
Restore it with --from-savepoint, at any parallelism. With --stop the job
stops once the savepoint is complete. A job on an address other than loopback
needs its token: --token, or $` + tokenEnv + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir != "" {
				return errors.New("--dir is no longer accepted: the job writes savepoints under the --savepoint-dir it was started with; give --name to choose a subdirectory")
			}
			if token == "" {
				token = os.Getenv(tokenEnv)
			}
			if !strings.Contains(addr, "://") {
				addr = "http://" + addr
			}
			req := map[string]any{}
			if name != "" {
				req["name"] = name
			}
			body, _ := json.Marshal(req)
			action := "savepoints"
			if stop {
				action = "stop"
			}
			endpoint := strings.TrimSuffix(addr, "/") + "/v1/jobs/" + url.PathEscape(job) + "/" + action
			hr, err := http.NewRequestWithContext(cmd.Context(), http.MethodPost, endpoint, bytes.NewReader(body))
			if err != nil {
				return fmt.Errorf("the job's --address %s: %w", addr, err)
			}
			hr.Header.Set("Content-Type", "application/json")
			if token != "" {
				hr.Header.Set("Authorization", "Bearer "+token)
			}
			client := &http.Client{Timeout: 15 * time.Minute}
			what := "waiting for the savepoint of job " + job
			if stop {
				what = "waiting for the savepoint stopping job " + job
			}
			start := time.Now()
			stopSpinner := startStatus(cmd.ErrOrStderr(), func(now time.Time) (string, []string) {
				return spinner(what, now.Sub(start)), nil
			})
			resp, err := client.Do(hr)
			stopSpinner()
			if err != nil {
				return fmt.Errorf("reaching the job at %s (is it running, serving its REST API there?): %w", addr, err)
			}
			defer resp.Body.Close()
			var out struct{ Path, Error string }
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				return fmt.Errorf("reading the job's answer (status %s): %w", resp.Status, err)
			}
			if resp.StatusCode == http.StatusUnauthorized {
				return fmt.Errorf("savepoint refused: %s (give the token printed when the job started with --token or $%s)", out.Error, tokenEnv)
			}
			if out.Error != "" || resp.StatusCode != http.StatusOK {
				return fmt.Errorf("savepoint failed (%s): %s", resp.Status, out.Error)
			}
			fmt.Fprintln(cmd.OutOrStdout(), out.Path)
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "address", "localhost:8081", "the job's REST address")
	cmd.Flags().StringVar(&job, "job", "current", "the job's name")
	cmd.Flags().StringVar(&token, "token", "", "the token of the job's REST API (default: $"+tokenEnv+")")
	cmd.Flags().StringVar(&name, "name", "", "write the savepoint in this subdirectory of the job's savepoint directory (letters, digits, '.', '_', '-')")
	cmd.Flags().StringVar(&dir, "dir", "", "no longer accepted: the job's --savepoint-dir decides")
	cmd.Flags().MarkHidden("dir")
	cmd.Flags().BoolVar(&stop, "stop", false, "stop the job once the savepoint is complete")
	return cmd
}

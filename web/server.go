// Package web serves a running job over HTTP: the REST API (its status,
// graph, metrics, checkpoints, exceptions and connectors, and the actions
// savepoint, stop, cancel and rescale), the Prometheus metrics at /metrics,
// the dashboard at /, and the published tables under /v1/subscriptions.
//
// docs/rest-api.md describes the endpoints and their security: a bearer
// token on non-loopback addresses, cross-site POSTs refused, small JSON
// bodies only, and no path taken from a request.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/subscribe"
)

// Option configures a Server.
type Option func(*config)

type config struct {
	savepointDir string
	token        string
	public       bool
	cancel       func()
	rescale      func(ctx context.Context, parallelism int) (string, error)
	log          *slog.Logger
}

// SavepointDir lets the API take savepoints, each in a new directory under
// dir (Flink's state.savepoints.dir). It is fixed when the server starts:
// requests choose no path, only, optionally, a name for a subdirectory of
// dir. Without it the API refuses savepoints.
func SavepointDir(dir string) Option { return func(c *config) { c.savepointDir = dir } }

// Token makes every request present token, as the header
// "Authorization: Bearer <token>" or as the cookie eddy_token (which the
// server sets when the dashboard is opened as /?token=<token>), whatever the
// address. Without it a server on a non-loopback address (see Address)
// generates one: Server.Token returns it.
func Token(token string) Option { return func(c *config) { c.token = token } }

// Address tells the server the address it listens on. On an address that is
// not loopback (0.0.0.0, :8081, a host name other than localhost, an
// interface's address), every request needs the token (Token, or one the
// server generates). Without it the server assumes a loopback address.
func Address(addr string) Option { return func(c *config) { c.public = !IsLoopback(addr) } }

// Cancel lets the API cancel the job (POST /v1/jobs/{id}/cancel): cancel
// cancels the job's context. Without it the API answers 501.
func Cancel(cancel func()) Option { return func(c *config) { c.cancel = cancel } }

// Rescale lets the API change the job's parallelism (POST
// /v1/jobs/{id}/rescale): rescale stops the job with a savepoint, starts it
// again from the savepoint with the new parallelism (Setting the new
// environment on the server's Jobs), and returns the savepoint's path.
// Without it the API answers 501.
func Rescale(rescale func(ctx context.Context, parallelism int) (string, error)) Option {
	return func(c *config) { c.rescale = rescale }
}

// Logger sets the logger of the server (default slog.Default()).
func Logger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// IsLoopback reports whether the listen address addr (host:port) only
// accepts connections from this machine: localhost or a loopback IP. An
// empty host (":8081") listens on every interface, so it is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server serves the jobs of its Jobs: the REST API, /metrics, the dashboard
// and the published tables.
type Server struct {
	jobs    *Jobs
	cfg     config
	handler http.Handler

	mu      sync.Mutex
	servers []*http.Server
	stop    chan struct{}
	started bool
	closed  bool
}

// NewServer returns a server showing no job yet: Set one with Set (or
// Jobs().Set). It fails only when it cannot generate a token.
func NewServer(opts ...Option) (*Server, error) {
	s := &Server{jobs: &Jobs{}, stop: make(chan struct{})}
	for _, o := range opts {
		o(&s.cfg)
	}
	if s.cfg.log == nil {
		s.cfg.log = slog.Default()
	}
	if s.cfg.savepointDir != "" {
		abs, err := filepath.Abs(s.cfg.savepointDir)
		if err != nil {
			return nil, fmt.Errorf("web: the savepoint directory %s: %w", s.cfg.savepointDir, err)
		}
		s.cfg.savepointDir = abs
	}
	if s.cfg.public && s.cfg.token == "" {
		t, err := NewToken()
		if err != nil {
			return nil, err
		}
		s.cfg.token = t
	}
	s.handler = s.secure(s.routes())
	return s, nil
}

// Jobs returns the jobs the server shows.
func (s *Server) Jobs() *Jobs { return s.jobs }

// Set shows env as the job called name, replacing a job of that name (as
// a rescale does with the new execution).
func (s *Server) Set(name string, env *eddy.Environment) { s.jobs.Set(name, env) }

// Token returns the token every request must present, given by Token or
// generated for a non-loopback address; empty when none is needed.
func (s *Server) Token() string { return s.cfg.token }

// SavepointDir returns the directory savepoints are written under (empty
// when the server refuses them).
func (s *Server) SavepointDir() string { return s.cfg.savepointDir }

// Handler returns the server's HTTP handler. The per-second rates are
// computed while Serve (or ListenAndServe) runs; a handler served otherwise
// shows them as 0 unless Sample runs.
func (s *Server) Handler() http.Handler { return s.handler }

// Sample computes the jobs' per-second rates every second until Close.
// Serve calls it; call it when serving Handler on another server.
func (s *Server) Sample() {
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return
	}
	s.started = true
	s.mu.Unlock()
	go s.jobs.run(time.Second, s.stop)
}

// Serve serves the server on ln until Close, sampling the jobs' rates
// every second. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.cfg.log.Handler(), slog.LevelWarn),
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	s.Sample()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("web: serving on %s: %w", ln.Addr(), err)
	}
	return nil
}

// ListenAndServe listens on addr and serves the server there until Close.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("web: listening on %s: %w", addr, err)
	}
	return s.Serve(ln)
}

// Close stops serving and sampling.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	close(s.stop)
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Close())
	}
	return errors.Join(errs...)
}

// Shutdown stops serving and sampling like Close, but first lets the
// requests in progress finish (the reply to a cancel request, say) until
// ctx is done, when it closes what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	servers := s.servers
	s.mu.Unlock()
	var errs []error
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("web: shutting down: %w", err), srv.Close())
		}
	}
	return errors.Join(errs...)
}

// Handler returns the handler of a server showing the one job executing on
// env as name (see NewServer and Server.Handler; its rates stay 0, as
// nothing samples them). It panics only when a token cannot be generated.
func Handler(env *eddy.Environment, name string, opts ...Option) http.Handler {
	s, err := NewServer(opts...)
	if err != nil {
		panic(err)
	}
	s.Set(name, env)
	return s.Handler()
}

// routes is the server's mux, behind the checks of secure.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	// The tables the job publishes ('publish' connector), for subscribers.
	subs := subscribe.Default.Handler()
	mux.Handle("GET /v1/subscriptions", subs)
	mux.Handle("GET /v1/subscriptions/", subs)
	s.api(mux)
	mux.Handle("GET /metrics", prometheusHandler(s.jobs))
	dash := dashboardHandler()
	mux.Handle("GET /{$}", dash)
	mux.Handle("GET /assets/", dash)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// A path served for another method is a 405 (as the mux would
		// answer without this catch-all).
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
			if _, p := mux.Handler(probe); p != "/" && p != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s: use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
			return
		}
		s.writeError(w, http.StatusNotFound, "not found: the REST API is under /v1/ (docs/rest-api.md), the dashboard at /, the metrics at /metrics")
	})
	return mux
}

// version is eddy's module version, "(devel)" for a build from a checkout.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/eddystream/eddy" {
				return d.Version
			}
		}
		if bi.Main.Path == "github.com/eddystream/eddy" && bi.Main.Version != "" {
			return bi.Main.Version
		}
	}
	return "(devel)"
}

// Package eddy is the Go API of the eddy stream processing engine: build a
// dataflow of typed streams from sources through transformations, keyed
// state, windows and joins to sinks, then execute it.
//
//	env := eddy.NewEnvironment(eddy.WithParallelism(2))
//	words := eddy.FromSlice(env, []string{"a", "b", "a"}, eddy.NoWatermarks[string]())
//	counts := eddy.Map(words, strings.ToUpper)
//	eddy.Print(counts)
//	err := env.Execute(ctx, "upper")
//
// Records are plain Go values; every transformation is a generic function
// (Map, Filter, KeyBy, Process, Window, …) because Go methods cannot add type
// parameters. Streams move between operators in batches; operators run one
// goroutine per parallel subtask.
package eddy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/eddystream/eddy/internal/runtime"
)

// Environment holds a job under construction and its settings.
type Environment struct {
	cfg   runtime.Config
	graph *runtime.Graph
	job   *runtime.Job
	errs  []error
}

// Option configures an Environment.
type Option func(*Environment)

// WithParallelism sets the default number of parallel subtasks of every
// operator (default 1).
func WithParallelism(n int) Option { return func(e *Environment) { e.cfg.Parallelism = n } }

// WithMaxParallelism sets the number of key groups of keyed operators
// (default 128), the upper bound of their parallelism.
func WithMaxParallelism(n int) Option { return func(e *Environment) { e.cfg.MaxParallelism = n } }

// WithBatchSize sets how many records travel together between subtasks
// (default 1024).
func WithBatchSize(n int) Option { return func(e *Environment) { e.cfg.BatchSize = n } }

// WithLinger sets how long a partly filled batch may wait before it is sent
// (default 10ms). Lower values lower latency at some cost in throughput.
func WithLinger(d time.Duration) Option { return func(e *Environment) { e.cfg.Linger = d } }

// WithChannelCapacity sets how many batches an exchange buffers before its
// sender blocks (default 4).
func WithChannelCapacity(n int) Option { return func(e *Environment) { e.cfg.ChannelCapacity = n } }

// WithoutChaining runs every operator in its own subtasks instead of fusing
// forward-connected operators.
func WithoutChaining() Option { return func(e *Environment) { e.cfg.DisableChaining = true } }

// WithLogger sets the logger of the job.
func WithLogger(l *slog.Logger) Option { return func(e *Environment) { e.cfg.Log = l } }

// NewEnvironment returns an environment for building one job.
func NewEnvironment(opts ...Option) *Environment {
	e := &Environment{graph: &runtime.Graph{}}
	for _, o := range opts {
		o(e)
	}
	e.cfg.EnsureDefaults()
	return e
}

// Parallelism returns the default parallelism of the environment.
func (e *Environment) Parallelism() int { return e.cfg.Parallelism }

// Plan compiles the job and describes its chains and exchanges.
func (e *Environment) Plan() (string, error) {
	p, err := runtime.Compile(e.graph, e.cfg)
	if err != nil {
		return "", fmt.Errorf("eddy: %w", err)
	}
	return p.String(), nil
}

// Execute runs the job until its bounded sources end, an operator fails, or
// ctx is cancelled. A failure is returned as an error naming the operator and
// subtask (a *runtime.OperatorError underneath); a cancelled job returns nil.
// An environment executes once.
func (e *Environment) Execute(ctx context.Context, name string) error {
	if e.job != nil {
		return fmt.Errorf("eddy: job %q: an environment executes once; build a new one", name)
	}
	if len(e.errs) > 0 {
		return fmt.Errorf("eddy: job %q: %w", name, errors.Join(e.errs...))
	}
	if len(e.graph.Nodes) == 0 {
		return fmt.Errorf("eddy: job %q has no operators; add a source and a sink", name)
	}
	job, err := runtime.NewJob(e.graph, e.cfg)
	if err != nil {
		return fmt.Errorf("eddy: job %q: %w", name, err)
	}
	e.job = job
	if err := job.Run(ctx); err != nil {
		return fmt.Errorf("eddy: job %q failed: %w", name, err)
	}
	return nil
}

// Metrics returns the counters of the operators of the executing or
// executed job, one entry per operator subtask.
func (e *Environment) Metrics() []*runtime.OperatorMetrics {
	if e.job == nil {
		return nil
	}
	return e.job.Metrics()
}

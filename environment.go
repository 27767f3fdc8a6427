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
	"os"
	"sync"
	"time"

	"github.com/eddystream/eddy/internal/checkpoint"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// maxKeyGroups bounds the max parallelism, and so the parallelism.
const maxKeyGroups = state.MaxKeyGroups

// Environment holds a job under construction and its settings.
type Environment struct {
	cfg   runtime.Config
	graph *runtime.Graph
	job   *runtime.Job
	errs  []error

	backend StateBackend

	checkpointDir string
	restorePath   string
	fresh         bool
	restartSet    bool

	// compileMu serialises compiling the graph, which resolves its nodes'
	// parallelism and edges in place (Plan and JobGraph may run while
	// Execute starts).
	compileMu sync.Mutex
	mu        sync.Mutex
	running   *runtime.Job
	// state, started and ended describe the execution (JobState).
	state   JobState
	started time.Time
	ended   time.Time
	failure error
}

// Option configures an Environment. An option given a value out of its
// range records an error that Plan and Execute return, naming the option
// and the valid range; the setting keeps its default.
type Option func(*Environment)

// badOption records that option was given value, outside valid.
func (e *Environment) badOption(option string, value any, valid string) {
	e.fail(fmt.Errorf("eddy.%s(%v): %s", option, value, valid))
}

// WithParallelism sets the default number of parallel subtasks of every
// operator (default 1): from 1 to the max parallelism.
func WithParallelism(n int) Option {
	return func(e *Environment) {
		if n < 1 || n > maxKeyGroups {
			e.badOption("WithParallelism", n, fmt.Sprintf("the parallelism must be between 1 and %d (and at most the max parallelism)", maxKeyGroups))
			return
		}
		e.cfg.Parallelism = n
	}
}

// WithMaxParallelism sets the number of key groups of keyed operators
// (default 128), the upper bound of their parallelism: from 1 to 32768.
func WithMaxParallelism(n int) Option {
	return func(e *Environment) {
		if n < 1 || n > maxKeyGroups {
			e.badOption("WithMaxParallelism", n, fmt.Sprintf("the max parallelism (the number of key groups) must be between 1 and %d", maxKeyGroups))
			return
		}
		e.cfg.MaxParallelism = n
	}
}

// WithBatchSize sets how many records travel together between subtasks
// (default 1024): at least 1.
func WithBatchSize(n int) Option {
	return func(e *Environment) {
		if n < 1 {
			e.badOption("WithBatchSize", n, "the batch size must be at least 1 record")
			return
		}
		e.cfg.BatchSize = n
	}
}

// WithLinger sets how long a partly filled batch may wait before it is sent
// (default 10ms). Lower values lower latency at some cost in throughput; 0
// sends a partly filled batch as soon as the subtask has handled the input
// that filled it. d must not be negative.
func WithLinger(d time.Duration) Option {
	return func(e *Environment) {
		switch {
		case d < 0:
			e.badOption("WithLinger", d, "the linger must be 0 or more")
		case d == 0:
			e.cfg.Linger = time.Nanosecond // the runtime reads 0 as its default
		default:
			e.cfg.Linger = d
		}
	}
}

// WithChannelCapacity sets how many batches an exchange buffers before its
// sender blocks (default 4): at least 1.
func WithChannelCapacity(n int) Option {
	return func(e *Environment) {
		if n < 1 {
			e.badOption("WithChannelCapacity", n, "the channel capacity must be at least 1 batch")
			return
		}
		e.cfg.ChannelCapacity = n
	}
}

// WithoutChaining runs every operator in its own subtasks instead of fusing
// forward-connected operators.
func WithoutChaining() Option { return func(e *Environment) { e.cfg.DisableChaining = true } }

// WithLogger sets the logger of the job.
func WithLogger(l *slog.Logger) Option { return func(e *Environment) { e.cfg.Log = l } }

// WithCheckpointing starts a checkpoint every interval (which must be
// positive; see WithMinPauseBetweenCheckpoints), into the directory set by WithCheckpointDir. With checkpoints,
// a failed job restarts from the latest one (see WithRestartStrategy) and
// exactly-once sinks commit when one completes.
func WithCheckpointing(interval time.Duration) Option {
	return func(e *Environment) {
		if interval <= 0 {
			e.badOption("WithCheckpointing", interval, "the checkpoint interval must be positive")
			return
		}
		e.cfg.Checkpoints.Interval = interval
	}
}

// WithMinPauseBetweenCheckpoints sets the least time between the end of
// one checkpoint and the start of the next (default 0), as Flink's
// 'execution.checkpointing.min-pause' does: checkpoints start every
// interval, and one that takes longer than the interval is followed by the
// next once it ends and the pause has passed.
func WithMinPauseBetweenCheckpoints(d time.Duration) Option {
	return func(e *Environment) {
		if d < 0 {
			e.badOption("WithMinPauseBetweenCheckpoints", d, "the pause must not be negative")
			return
		}
		e.cfg.Checkpoints.MinPause = d
	}
}

// WithCheckpointDir sets where checkpoints are kept. A job started on a
// directory that holds checkpoints of an earlier run resumes from the latest
// valid one, unless WithFreshStart is given.
func WithCheckpointDir(dir string) Option { return func(e *Environment) { e.checkpointDir = dir } }

// WithRetainedCheckpoints keeps the newest n completed checkpoints (default
// 3): at least 1.
func WithRetainedCheckpoints(n int) Option {
	return func(e *Environment) {
		if n < 1 {
			e.badOption("WithRetainedCheckpoints", n, "at least 1 checkpoint must be retained")
			return
		}
		e.cfg.Checkpoints.Retain = n
	}
}

// WithCheckpointTimeout aborts checkpoints that take longer than d (default
// 10 minutes), which must be positive.
func WithCheckpointTimeout(d time.Duration) Option {
	return func(e *Environment) {
		if d <= 0 {
			e.badOption("WithCheckpointTimeout", d, "the checkpoint timeout must be positive")
			return
		}
		e.cfg.Checkpoints.Timeout = d
	}
}

// WithFreshStart ignores (and deletes) the checkpoints of earlier runs in
// the checkpoint directory, so the job starts from the beginning.
func WithFreshStart() Option { return func(e *Environment) { e.fresh = true } }

// WithRestoreFrom starts the job from the savepoint or checkpoint in
// directory path. Its parallelism may differ from the job's that took it;
// its max parallelism may not.
func WithRestoreFrom(path string) Option { return func(e *Environment) { e.restorePath = path } }

// WithAllowNonRestoredState lets a job start from a savepoint that holds
// state for operators it no longer has.
func WithAllowNonRestoredState() Option {
	return func(e *Environment) { e.cfg.AllowNonRestoredState = true }
}

// RestartStrategy says how often and how soon a failed job restarts from its
// latest checkpoint (or the checkpoint or savepoint it started from), so
// that sources replay what followed it.
type RestartStrategy struct {
	// MaxAttempts is the number of restarts allowed; 0 means none, a
	// negative number means no limit.
	MaxAttempts int
	// Delay is the wait before the first restart.
	Delay time.Duration
	// Multiplier grows the delay after each restart (exponential back-off);
	// values below 1 keep it fixed.
	Multiplier float64
	// MaxDelay caps the delay; 0 means no cap.
	MaxDelay time.Duration
}

// NoRestart fails the job on its first failure.
func NoRestart() RestartStrategy { return RestartStrategy{} }

// FixedDelayRestart restarts up to attempts times (negative: without limit),
// waiting delay before each.
func FixedDelayRestart(attempts int, delay time.Duration) RestartStrategy {
	return RestartStrategy{MaxAttempts: attempts, Delay: delay}
}

// ExponentialDelayRestart restarts up to attempts times (negative: without
// limit), waiting initial before the first and multiplying the wait by
// multiplier each time, up to maxDelay.
func ExponentialDelayRestart(attempts int, initial, maxDelay time.Duration, multiplier float64) RestartStrategy {
	return RestartStrategy{MaxAttempts: attempts, Delay: initial, MaxDelay: maxDelay, Multiplier: multiplier}
}

// WithRestartStrategy sets the restart strategy. The default is no restart
// without checkpoints, and with them exponential back-off from 1 s to 1 min
// without limit.
func WithRestartStrategy(r RestartStrategy) Option {
	return func(e *Environment) {
		if r.Delay < 0 || r.MaxDelay < 0 {
			e.badOption("WithRestartStrategy", fmt.Sprintf("%+v", r), "the delays must be 0 or more")
			return
		}
		e.cfg.Restart, e.restartSet = runtime.RestartStrategy(r), true
	}
}

// NewEnvironment returns an environment for building one job.
func NewEnvironment(opts ...Option) *Environment {
	e := &Environment{graph: &runtime.Graph{}, backend: HeapState()}
	for _, o := range opts {
		o(e)
	}
	e.cfg.EnsureDefaults()
	return e
}

// Parallelism returns the default parallelism of the environment.
func (e *Environment) Parallelism() int { return e.cfg.Parallelism }

// Plan compiles the job and describes its chains and exchanges. It returns
// the errors Execute would: bad options and mistakes in building the job.
func (e *Environment) Plan() (string, error) {
	if len(e.errs) > 0 {
		return "", fmt.Errorf("eddy: %w", errors.Join(e.errs...))
	}
	e.compileMu.Lock()
	p, err := runtime.Compile(e.graph, e.cfg)
	e.compileMu.Unlock()
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
	err := e.execute(ctx, name)
	e.mu.Lock()
	if e.state == "" {
		// The job ended before it ran: a mistake in it, or nothing left
		// to do.
		e.ended = time.Now()
		if err != nil {
			e.state, e.failure = JobFailed, err
		} else {
			e.state = JobFinished
		}
	}
	e.mu.Unlock()
	return err
}

func (e *Environment) execute(ctx context.Context, name string) error {
	if e.job != nil {
		return fmt.Errorf("eddy: job %q: an environment executes once; build a new one", name)
	}
	if err := e.checkBackend(); err != nil {
		e.fail(err)
	}
	if len(e.errs) > 0 {
		return fmt.Errorf("eddy: job %q: %w", name, errors.Join(e.errs...))
	}
	if len(e.graph.Nodes) == 0 {
		return fmt.Errorf("eddy: job %q has no operators; add a source and a sink", name)
	}
	cfg := e.cfg
	cfg.Name = name
	if e.checkpointDir != "" {
		if err := os.MkdirAll(e.checkpointDir, 0o755); err != nil {
			return fmt.Errorf("eddy: job %q: checkpoint directory: %w", name, err)
		}
		lock, err := checkpoint.LockDir(e.checkpointDir)
		if err != nil {
			return fmt.Errorf("eddy: job %q: %w", name, err)
		}
		defer lock.Unlock()
	}
	finished, err := e.prepareCheckpoints(&cfg)
	if err != nil {
		return fmt.Errorf("eddy: job %q: %w", name, err)
	}
	if finished {
		return nil
	}
	e.compileMu.Lock()
	job, err := runtime.NewJob(e.graph, cfg)
	e.compileMu.Unlock()
	if err != nil {
		return fmt.Errorf("eddy: job %q: %w", name, err)
	}
	e.job = job
	e.mu.Lock()
	e.running = job
	e.state, e.started = JobRunning, time.Now()
	e.mu.Unlock()
	err = job.Run(ctx)
	e.mu.Lock()
	e.ended = time.Now()
	switch {
	case err != nil:
		e.state, e.failure = JobFailed, err
	case ctx.Err() != nil:
		e.state = JobCanceled
	default:
		e.state = JobFinished
	}
	e.mu.Unlock()
	if err != nil {
		return fmt.Errorf("eddy: job %q failed: %w", name, err)
	}
	return nil
}

// prepareCheckpoints sets up checkpoint storage and what to restore. A job
// whose latest checkpoint is its final one restores it: every operator is
// finished, so nothing runs again, but the sinks commit the transactions it
// holds (the process may have died before they did), and the job ends. It
// reports finished, so that nothing runs at all, for a final checkpoint that
// holds no operators (earlier versions wrote final checkpoints without
// state): restoring one would run the job again from the beginning.
func (e *Environment) prepareCheckpoints(cfg *runtime.Config) (finished bool, err error) {
	if cfg.Checkpoints.Interval > 0 && e.checkpointDir == "" {
		return false, errors.New("checkpointing needs a directory: add eddy.WithCheckpointDir")
	}
	if e.checkpointDir != "" {
		d, err := checkpoint.NewDir(e.checkpointDir)
		if err != nil {
			return false, err
		}
		cfg.Checkpoints.Storage = d
		if !e.restartSet && cfg.Checkpoints.Interval > 0 {
			cfg.Restart = runtime.RestartStrategy(ExponentialDelayRestart(-1, time.Second, time.Minute, 2))
		}
		refs, err := d.List()
		if err != nil {
			return false, err
		}
		if e.fresh {
			if len(refs) > 0 {
				cfg.Log.Info("starting fresh: deleting the checkpoints of an earlier run", "dir", e.checkpointDir, "checkpoints", len(refs))
			}
			for _, r := range refs {
				if err := d.Delete(r); err != nil {
					return false, err
				}
			}
		} else if e.restorePath == "" {
			latest, err := checkpoint.LatestValid(d, cfg.Log)
			if err != nil {
				return false, err
			}
			if latest != nil {
				switch {
				case latest.Metadata.Final && len(latest.Metadata.Operators) == 0:
					cfg.Log.Info("the job has already finished; nothing to do (start fresh to run it again)", "job", cfg.Name, "checkpoint", latest.Ref.Path)
					return true, nil
				case latest.Metadata.Final:
					cfg.Log.Info("the job has already finished; restoring its final checkpoint to commit what it holds, then ending (start fresh to run it again)", "job", cfg.Name, "checkpoint", latest.Ref.Path)
				default:
					cfg.Log.Info("resuming from the latest checkpoint (start fresh to ignore it)", "job", cfg.Name, "checkpoint", latest.Ref.Path)
				}
				cfg.Restore = latest
			}
		}
	}
	if e.restorePath != "" {
		l, err := checkpoint.LoadPath(e.restorePath)
		if err != nil {
			return false, err
		}
		cfg.Log.Info("restoring", "job", cfg.Name, "from", l.Ref.Path)
		cfg.Restore = l
	}
	return false, nil
}

// TriggerSavepoint takes a savepoint of the running job into the directory
// dir and returns its path. With stop, the job stops once the savepoint is
// complete, and Execute returns nil.
func (e *Environment) TriggerSavepoint(ctx context.Context, dir string, stop bool) (string, error) {
	e.mu.Lock()
	j := e.running
	e.mu.Unlock()
	if j == nil {
		return "", errors.New("eddy: the job is not running")
	}
	return j.TriggerSavepoint(ctx, dir, stop)
}

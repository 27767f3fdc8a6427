package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/eddystream/eddy/internal/checkpoint"
	"github.com/eddystream/eddy/internal/state"
)

// Config holds the settings of a job run.
type Config struct {
	// Parallelism is the default number of subtasks per operator, from 1
	// to state.MaxKeyGroups (0: DefaultParallelism).
	Parallelism int
	// MaxParallelism is the default number of key groups, from 1 to
	// state.MaxKeyGroups (0: state.DefaultMaxParallelism).
	MaxParallelism int
	// BatchSize is the number of records an exchange batch holds before it
	// is sent, at least 1 (0: DefaultBatchSize).
	BatchSize int
	// Linger is how long a partly filled batch may wait before it is sent
	// (0: DefaultLinger).
	Linger time.Duration
	// ChannelCapacity is the number of batches an exchange channel buffers
	// before its sender blocks, at least 1 (0: DefaultChannelCapacity).
	ChannelCapacity int
	// DisableChaining runs every operator in its own subtasks.
	DisableChaining bool
	// Log receives the job's log records.
	Log *slog.Logger
	// Clock supplies processing time; nil means time.Now.
	Clock func() time.Time

	// Name names the job in checkpoints and logs.
	Name string
	// Checkpoints configures checkpointing; the zero value takes none.
	Checkpoints CheckpointConfig
	// Restart says whether and when a failed job restarts from its latest
	// checkpoint.
	Restart RestartStrategy
	// Restore, if set, is the checkpoint or savepoint the job starts from.
	Restore *checkpoint.Loaded
	// AllowNonRestoredState lets a job start from a checkpoint that holds
	// state for operators the job no longer has.
	AllowNonRestoredState bool
}

// CheckpointConfig configures checkpointing.
type CheckpointConfig struct {
	// Interval is the time between the starts of two checkpoints; 0
	// disables periodic checkpoints. A checkpoint that takes longer than
	// Interval is followed by the next once it ends (and MinPause passed).
	Interval time.Duration
	// MinPause is the least time between the end of one checkpoint and the
	// start of the next.
	MinPause time.Duration
	// Timeout aborts a checkpoint that has not completed in this time.
	Timeout time.Duration
	// Storage keeps completed checkpoints; required when Interval > 0.
	Storage *checkpoint.Dir
	// Retain is how many completed checkpoints to keep.
	Retain int
}

// RestartStrategy says how often and how soon a failed job restarts. A
// restart restores the latest completed checkpoint (or the one the job
// started from), so sources replay what followed it.
type RestartStrategy struct {
	// MaxAttempts is the number of restarts allowed; 0 means none, a
	// negative number means no limit.
	MaxAttempts int
	// Delay is the wait before the first restart.
	Delay time.Duration
	// Multiplier grows the delay after each restart (exponential back-off);
	// values below 1 keep it fixed.
	Multiplier float64
	// MaxDelay caps the delay.
	MaxDelay time.Duration
}

// delay returns the wait before restart attempt n (0-based).
func (r RestartStrategy) delay(n int) time.Duration {
	d := r.Delay
	for i := 0; i < n && r.Multiplier > 1; i++ {
		d = time.Duration(float64(d) * r.Multiplier)
		if r.MaxDelay > 0 && d > r.MaxDelay {
			return r.MaxDelay
		}
	}
	return d
}

// Defaults of the Config fields that are left zero.
const (
	DefaultParallelism       = 1
	DefaultBatchSize         = 1024
	DefaultLinger            = 10 * time.Millisecond
	DefaultChannelCapacity   = 4
	DefaultCheckpointTimeout = 10 * time.Minute
	DefaultRetain            = 3
)

// EnsureDefaults fills the fields left zero with their defaults. It leaves
// invalid values (negative ones) for Validate to report.
func (c *Config) EnsureDefaults() {
	if c.Parallelism == 0 {
		c.Parallelism = DefaultParallelism
	}
	if c.MaxParallelism == 0 {
		c.MaxParallelism = state.DefaultMaxParallelism
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.Linger == 0 {
		c.Linger = DefaultLinger
	}
	if c.ChannelCapacity == 0 {
		c.ChannelCapacity = DefaultChannelCapacity
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Name == "" {
		c.Name = "job"
	}
	if c.Checkpoints.Timeout == 0 {
		c.Checkpoints.Timeout = DefaultCheckpointTimeout
	}
	if c.Checkpoints.Retain == 0 {
		c.Checkpoints.Retain = DefaultRetain
	}
}

// Validate reports the settings that are out of range, each naming the
// field, the value and the valid range. It expects EnsureDefaults to have
// run (zero values are reported too).
func (c *Config) Validate() error {
	var errs []error
	bad := func(field string, v any, valid string) {
		errs = append(errs, fmt.Errorf("runtime: Config.%s is %v; it must be %s", field, v, valid))
	}
	if c.Parallelism < 1 || c.Parallelism > state.MaxKeyGroups {
		bad("Parallelism", c.Parallelism, fmt.Sprintf("between 1 and %d", state.MaxKeyGroups))
	}
	if c.MaxParallelism < 1 || c.MaxParallelism > state.MaxKeyGroups {
		bad("MaxParallelism", c.MaxParallelism, fmt.Sprintf("between 1 and %d", state.MaxKeyGroups))
	}
	if c.BatchSize < 1 {
		bad("BatchSize", c.BatchSize, "at least 1")
	}
	if c.Linger < 0 {
		bad("Linger", c.Linger, "positive")
	}
	if c.ChannelCapacity < 1 {
		bad("ChannelCapacity", c.ChannelCapacity, "at least 1")
	}
	if c.Checkpoints.Interval < 0 {
		bad("Checkpoints.Interval", c.Checkpoints.Interval, "positive, or 0 for no checkpoints")
	}
	if c.Checkpoints.Timeout < 0 {
		bad("Checkpoints.Timeout", c.Checkpoints.Timeout, "positive")
	}
	if c.Checkpoints.Retain < 1 {
		bad("Checkpoints.Retain", c.Checkpoints.Retain, "at least 1")
	}
	if c.Restart.Delay < 0 {
		bad("Restart.Delay", c.Restart.Delay, "0 or more")
	}
	if c.Restart.MaxDelay < 0 {
		bad("Restart.MaxDelay", c.Restart.MaxDelay, "0 (no cap) or more")
	}
	return errors.Join(errs...)
}

// Plan is the physical form of a graph: chains of operators and their
// parallelism. It is what a job graph view shows.
type Plan struct {
	Chains []*Chain
}

// Chain is a group of operators fused into one subtask.
type Chain struct {
	Nodes       []*Node
	Parallelism int
}

// Name joins the names of the chain's operators.
func (c *Chain) Name() string {
	names := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		names[i] = n.Name
	}
	return strings.Join(names, " -> ")
}

// String renders the plan, one chain a line, with the exchanges between.
func (p *Plan) String() string {
	var b strings.Builder
	for _, c := range p.Chains {
		fmt.Fprintf(&b, "%s (parallelism %d)\n", c.Name(), c.Parallelism)
		for _, n := range c.Nodes {
			for _, e := range n.Outputs {
				if !e.chained {
					fmt.Fprintf(&b, "  %s\n", e)
				}
			}
		}
	}
	return b.String()
}

// Compile resolves parallelism and partitioning and fuses chainable
// operators.
func Compile(g *Graph, cfg Config) (*Plan, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, n := range g.Nodes {
		if n.Parallelism < 0 {
			return nil, fmt.Errorf("runtime: operator %q has parallelism %d; it must be at least 1 (or 0 for the job's default)", n.Name, n.Parallelism)
		}
		if n.MaxParallelism < 0 || n.MaxParallelism > state.MaxKeyGroups {
			return nil, fmt.Errorf("runtime: operator %q has max parallelism %d; it must be between 1 and %d (or 0 for the job's default)", n.Name, n.MaxParallelism, state.MaxKeyGroups)
		}
		n.parallelism = n.Parallelism
		if n.parallelism == 0 {
			n.parallelism = cfg.Parallelism
		}
		n.maxParallelism = n.MaxParallelism
		if n.maxParallelism == 0 {
			n.maxParallelism = cfg.MaxParallelism
		}
		if n.parallelism > n.maxParallelism {
			return nil, fmt.Errorf("runtime: operator %q has parallelism %d above its max parallelism %d; lower the parallelism or raise the max parallelism", n.Name, n.parallelism, n.maxParallelism)
		}
		if n.Source == nil && n.Build == nil {
			return nil, fmt.Errorf("runtime: operator %q has neither a source nor a build function", n.Name)
		}
		if n.Source == nil && len(n.Inputs) == 0 {
			return nil, fmt.Errorf("runtime: operator %q has no input", n.Name)
		}
	}
	for _, n := range g.Nodes {
		for _, e := range n.Outputs {
			if e.Partition == Forward && e.From.parallelism != e.To.parallelism {
				if e.KeepOrder != "" {
					return nil, fmt.Errorf("runtime: operator %q runs with parallelism %d and its input %q with %d: %s",
						e.To.Name, e.To.parallelism, e.From.Name, e.From.parallelism, e.KeepOrder)
				}
				e.Partition = Rebalance
			}
			e.chained = !cfg.DisableChaining && e.Partition == Forward && !e.From.NoChain && !e.To.NoChain &&
				e.To.Source == nil && len(e.To.Inputs) == 1 && e.To.NumInputs == 1
		}
	}
	p := &Plan{}
	for _, n := range g.Nodes {
		if len(n.Inputs) == 1 && n.Inputs[0].chained {
			continue
		}
		c := &Chain{Parallelism: n.parallelism}
		var walk func(*Node)
		walk = func(m *Node) {
			c.Nodes = append(c.Nodes, m)
			for _, e := range m.Outputs {
				if e.chained {
					walk(e.To)
				}
			}
		}
		walk(n)
		p.Chains = append(p.Chains, c)
	}
	return p, nil
}

// Job is a compiled graph ready to run.
type Job struct {
	Plan  *Plan
	cfg   Config
	graph *Graph

	mu      sync.Mutex
	metrics []*OperatorMetrics
	coord   *coordinator
	// Restarts counts the restarts of the job so far.
	restarts int
	// exceptions holds the latest failures, oldest first.
	exceptions []Exception
	// restarting is set while the job waits to restart after a failure.
	restarting bool
}

// Restarting reports whether the job waits to restart after a failure.
func (j *Job) Restarting() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.restarting
}

// Exception is a failure of the job: the operator subtask it came from (if
// one did), and whether the job restarted after it.
type Exception struct {
	Time time.Time
	// Operator and Subtask name where the failure happened; Operator is
	// empty for failures outside the operators (checkpoint storage, say).
	Operator string
	// OperatorID identifies the operator in the job graph; -1 when
	// Operator is empty or unknown.
	OperatorID int
	Subtask    int
	Err        error
	// Restarted reports that the job restarted after the failure; a
	// failure it did not restart after ended it.
	Restarted bool
}

// maxExceptions bounds the failures a job remembers.
const maxExceptions = 100

// recordException remembers a failure.
func (j *Job) recordException(err error, restarted bool) {
	e := Exception{Time: time.Now(), OperatorID: -1, Subtask: -1, Err: err, Restarted: restarted}
	var oe *OperatorError
	if errors.As(err, &oe) {
		e.Operator, e.OperatorID, e.Subtask = oe.Operator, oe.OperatorID, oe.Subtask
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.exceptions) == maxExceptions {
		copy(j.exceptions, j.exceptions[1:])
		j.exceptions = j.exceptions[:maxExceptions-1]
	}
	j.exceptions = append(j.exceptions, e)
}

// Exceptions returns the job's latest failures, oldest first.
func (j *Job) Exceptions() []Exception {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Exception(nil), j.exceptions...)
}

// Metrics returns the counters of every operator subtask of the current (or
// last) run of the job.
func (j *Job) Metrics() []*OperatorMetrics {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]*OperatorMetrics(nil), j.metrics...)
}

// Restarts returns how many times the job has restarted after a failure.
func (j *Job) Restarts() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.restarts
}

// NewJob compiles g.
func NewJob(g *Graph, cfg Config) (*Job, error) {
	cfg.EnsureDefaults()
	p, err := Compile(g, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Checkpoints.Interval > 0 && cfg.Checkpoints.Storage == nil {
		return nil, errors.New("runtime: checkpointing needs a checkpoint storage; set a checkpoint directory")
	}
	if cfg.Restore != nil {
		if err := checkRestore(g, cfg); err != nil {
			return nil, err
		}
	}
	return &Job{Plan: p, cfg: cfg, graph: g}, nil
}

// checkRestore verifies that the checkpoint to restore fits the graph.
func checkRestore(g *Graph, cfg Config) error {
	m := cfg.Restore.Metadata
	byUID := map[string]*Node{}
	for _, n := range g.Nodes {
		byUID[n.StateUID()] = n
	}
	for _, op := range m.Operators {
		n, ok := byUID[op.UID]
		if !ok {
			if cfg.AllowNonRestoredState {
				continue
			}
			return fmt.Errorf("runtime: %s holds state of operator %q (uid %s) that this job does not have; restore it with the job that wrote it, give the operator the same UID, or allow non-restored state", cfg.Restore.Ref, op.Name, op.UID)
		}
		keyed := false
		for _, st := range op.Subtasks {
			keyed = keyed || len(st.KeyGroups) > 0
		}
		if keyed && op.MaxParallelism != n.maxParallelism {
			return fmt.Errorf("runtime: operator %q was checkpointed with max parallelism %d and now has %d; keyed state is divided into that many key groups and cannot be re-divided: keep the max parallelism at %d", n.Name, op.MaxParallelism, n.maxParallelism, op.MaxParallelism)
		}
	}
	return nil
}

// Run executes the job until its bounded inputs end, it fails beyond what
// its restart strategy allows, or ctx is cancelled (which returns nil). After
// a failure it restores the latest completed checkpoint and runs again.
func (j *Job) Run(ctx context.Context) error {
	cfg := j.cfg
	restore := cfg.Restore
	for attempt := 0; ; attempt++ {
		err := j.runOnce(ctx, restore)
		if err == nil || ctx.Err() != nil || errors.Is(err, errStopped) {
			return nil
		}
		var se *setupError
		if errors.As(err, &se) {
			// The job cannot even start: restarting would not help.
			j.recordException(se.err, false)
			return se.err
		}
		if cfg.Restart.MaxAttempts >= 0 && attempt >= cfg.Restart.MaxAttempts {
			j.recordException(err, false)
			if attempt > 0 {
				return fmt.Errorf("%w (after %d restarts)", err, attempt)
			}
			return err
		}
		d := cfg.Restart.delay(attempt)
		if s := cfg.Checkpoints.Storage; s != nil {
			latest, lerr := checkpoint.LatestValid(s, cfg.Log)
			if lerr != nil {
				j.recordException(err, false)
				return fmt.Errorf("%w; then reading checkpoints to restart failed: %v", err, lerr)
			}
			if latest != nil {
				restore = latest
			}
		}
		from := "the beginning"
		if restore != nil {
			from = restore.Ref.Path
		}
		cfg.Log.Warn("job failed; restarting", "job", cfg.Name, "error", err, "attempt", attempt+1, "delay", d, "restore", from)
		j.recordException(err, true)
		j.mu.Lock()
		j.restarts++
		j.restarting = true
		j.mu.Unlock()
		select {
		case <-time.After(d):
			j.mu.Lock()
			j.restarting = false
			j.mu.Unlock()
		case <-ctx.Done():
			return nil
		}
	}
}

// runOnce builds the subtasks, restoring state from restore if set, and
// runs them until they all finish or one fails.
func (j *Job) runOnce(parent context.Context, restore *checkpoint.Loaded) error {
	cfg := j.cfg
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	done := ctx.Done()
	j.mu.Lock()
	j.metrics = nil
	j.mu.Unlock()

	// One gate per subtask of each chain head that has inputs.
	gates := map[*Node][]*gate{}
	for _, c := range j.Plan.Chains {
		head := c.Nodes[0]
		if head.Source != nil {
			continue
		}
		gs := make([]*gate, c.Parallelism)
		for i := range gs {
			gs[i] = newGate()
		}
		gates[head] = gs
	}
	// Channels: for each network edge, sender subtask and receiver subtask.
	type chanKey struct {
		e        *Edge
		from, to int
	}
	channels := map[chanKey]*inChannel{}
	pools := map[*Edge]any{}
	for _, c := range j.Plan.Chains {
		head := c.Nodes[0]
		for _, e := range head.Inputs {
			ot := e.From.OutTypes[e.Tag]
			if ot == nil {
				return fmt.Errorf("runtime: operator %q has no output %q", e.From.Name, e.Tag)
			}
			pool, recycle := ot.newPool(cfg.BatchSize)
			pools[e] = pool
			for to := 0; to < head.parallelism; to++ {
				for from := 0; from < e.From.parallelism; from++ {
					if e.Partition == Forward && from != to {
						continue
					}
					ch := gates[head][to].addChannel(e.Input, cfg.ChannelCapacity,
						fmt.Sprintf("%s#%d", e.From.Name, from), recycle, done)
					channels[chanKey{e, from, to}] = ch
				}
			}
		}
	}
	for _, gs := range gates {
		for _, g := range gs {
			g.finish()
		}
	}

	coord := newCoordinator(cfg, restore, done)
	var tasks []*task
	closeAll := func() {
		for _, pt := range tasks {
			for _, c := range pt.closers {
				c.Close()
			}
			if pt.source != nil {
				pt.source.Close()
			}
		}
	}
	for _, c := range j.Plan.Chains {
		head := c.Nodes[0]
		for i := 0; i < c.Parallelism; i++ {
			t := &task{name: c.Name(), subtask: i, linger: cfg.Linger, clock: cfg.Clock, done: done, coord: coord,
				metrics: &TaskMetrics{Chain: c.Name(), Started: time.Now()}}
			t.notifySig = make(chan struct{}, 1)
			if gs := gates[head]; gs != nil {
				t.gate = gs[i]
			}
			built := map[*Node]*Built{}
			retainsNoInput := map[*Node]bool{}
			var build func(n *Node) error
			build = func(n *Node) error {
				ctx := &Context{
					Operator: n.Name, Subtask: i, Parallelism: n.parallelism, MaxParallelism: n.maxParallelism,
					Log: cfg.Log.With("job", cfg.Name, "operator", n.Name, "subtask", i), Metrics: NewOperatorMetrics(n.ID, n.Name, i, t.metrics),
					now: t.now, done: done, Checkpointing: cfg.Checkpoints.Interval > 0,
					savepoint: coord.isSavepoint,
				}
				if cfg.Checkpoints.Storage != nil {
					ctx.Shared = cfg.Checkpoints.Storage
				}
				ctx.wakeAt = func(ts int64, fn func(int64) error) { t.timers.add(ts, fn, ctx) }
				if restore != nil {
					kgs := state.RangeOf(i, n.parallelism, n.maxParallelism)
					union := map[string]bool{}
					for _, name := range n.UnionLists {
						union[name] = true
					}
					rs, err := restore.Redistribute(n.StateUID(), i, n.parallelism, kgs.Start, kgs.End, union)
					if err != nil {
						return fmt.Errorf("restoring operator %q from %s: %w", n.Name, restore.Ref.Path, err)
					}
					// An operator the checkpoint does not know starts fresh.
					ctx.Restored = rs
				}
				// A subtask that had finished is built, so that it restores
				// its state (sinks commit what it pre-committed), but does
				// not run: it sets no timers, takes no input, and ends its
				// outputs as it did.
				finished := ctx.Restored != nil && ctx.Restored.Finished
				if finished {
					ctx.wakeAt = func(int64, func(int64) error) {}
				}
				j.mu.Lock()
				j.metrics = append(j.metrics, ctx.Metrics)
				j.mu.Unlock()
				outs := map[string][]any{}
				for _, e := range n.Outputs {
					if e.chained {
						if err := build(e.To); err != nil {
							return err
						}
						outs[e.Tag] = append(outs[e.Tag], built[e.To].Inputs[0])
						continue
					}
					var targets []*inChannel
					for to := 0; to < e.To.parallelism; to++ {
						if ch, ok := channels[chanKey{e, i, to}]; ok {
							targets = append(targets, ch)
						}
					}
					w, f := n.OutTypes[e.Tag].newWriter(e, targets, pools[e], cfg.BatchSize, e.To.maxParallelism, t.metrics)
					t.writers = append(t.writers, f)
					outs[e.Tag] = append(outs[e.Tag], w)
				}
				combined := map[string]any{}
				for tag, ot := range n.OutTypes {
					combined[tag] = ot.combine(outs[tag])
					if tag == "" {
						combined[tag] = ot.counted(combined[tag], &ctx.Metrics.RecordsOut)
					}
				}
				// The operators of n's outputs are built: n learns whether
				// they keep what it emits.
				ctx.RecordsReused = len(n.Outputs) > 0
				for _, e := range n.Outputs {
					ctx.RecordsReused = ctx.RecordsReused && e.chained && retainsNoInput[e.To]
				}
				if n.Source != nil {
					d, err := n.Source(ctx, combined)
					if err != nil {
						return ctx.wrap(err)
					}
					t.addOp(n, ctx, d)
					if finished {
						d = &finishedSource{d: d, outs: combined}
					}
					t.source = d
					t.headCtx = ctx
					return nil
				}
				b, err := buildGuarded(ctx, n, combined)
				if err != nil {
					return err
				}
				raw := b.Control
				if raw == nil {
					raw, _ = b.Inputs[0].(Control)
				}
				if c, ok := b.Inputs[0].(Closer); ok {
					t.closers = append(t.closers, c)
				}
				if c, ok := b.Control.(Closer); ok {
					t.closers = append(t.closers, c)
				}
				if finished {
					stub := &finishedOp{outs: combined}
					for k := range b.Inputs {
						b.Inputs[k] = n.InTypes[k].finished(stub, b.Control == nil)
					}
					if b.Control != nil {
						b.Control = stub
					}
				}
				for k, in := range b.Inputs {
					b.Inputs[k] = n.InTypes[k].guard(in, ctx)
				}
				if b.Control == nil {
					b.Control = b.Inputs[0].(Control)
				} else {
					b.Control = &guardControl{c: b.Control, ctx: ctx}
				}
				t.addOp(n, ctx, raw)
				built[n] = b
				if r, ok := raw.(InputRetainer); ok && !finished {
					retainsNoInput[n] = r.RetainsNoInput()
				}
				if f, ok := raw.(InputForwarder); ok && !finished && !retainsNoInput[n] && f.ForwardsInputOnly() {
					// It retains none if the operators of its outputs,
					// built before it, retain none.
					retains := len(n.Outputs) == 0
					for _, e := range n.Outputs {
						retains = retains || !e.chained || !retainsNoInput[e.To]
					}
					retainsNoInput[n] = !retains
				}
				if n == head {
					t.headCtx = ctx
					t.control = b.Control
					t.deliver = make([]func(any) error, len(b.Inputs))
					for k, in := range b.Inputs {
						t.deliver[k] = n.InTypes[k].bind(in)
					}
				}
				return nil
			}
			if err := build(head); err != nil {
				tasks = append(tasks, t)
				closeAll()
				return &setupError{err}
			}
			// Snapshots go in chain order: upstream operators first.
			t.reverseOps()
			tasks = append(tasks, t)
		}
	}
	coord.tasks = tasks
	j.mu.Lock()
	j.coord = coord
	j.mu.Unlock()

	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		cancel()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := coord.run(ctx); err != nil {
			fail(err)
		}
	}()
	for _, t := range tasks {
		wg.Add(1)
		go func(t *task) {
			defer wg.Done()
			defer func() { t.metrics.Ended.Store(time.Now().UnixNano()) }()
			// Waiting for the other subtasks to be built is not work.
			t.metrics.Idle.Add(int64(time.Since(t.metrics.Started)))
			if err := t.run(); err != nil {
				fail(err)
			}
		}(t)
	}
	wg.Wait()
	return firstErr
}

// CheckpointStats returns the completed checkpoints of the current run.
func (j *Job) CheckpointStats() []CheckpointStats {
	j.mu.Lock()
	c := j.coord
	j.mu.Unlock()
	if c == nil {
		return nil
	}
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	return append([]CheckpointStats(nil), c.stats...)
}

// CheckpointCounts counts the checkpoints of the current run.
func (j *Job) CheckpointCounts() CheckpointCounts {
	j.mu.Lock()
	c := j.coord
	j.mu.Unlock()
	if c == nil {
		return CheckpointCounts{}
	}
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	return c.counts
}

// setupError is a failure to build the job's operators, which no restart
// can cure (a misconfigured source, state that does not fit the job).
type setupError struct{ err error }

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// TriggerSavepoint takes a savepoint of the running job into dir and
// returns its path. With stop, the job ends once the savepoint is complete.
func (j *Job) TriggerSavepoint(ctx context.Context, dir string, stop bool) (string, error) {
	j.mu.Lock()
	c := j.coord
	j.mu.Unlock()
	if c == nil {
		return "", errors.New("runtime: the job is not running")
	}
	return c.savepoint(ctx, dir, stop)
}

func buildGuarded(ctx *Context, n *Node, outs map[string]any) (b *Built, err error) {
	defer ctx.recoverInto(&err)
	b, err = n.Build(ctx, outs)
	if err != nil {
		return nil, ctx.wrap(err)
	}
	if b == nil || len(b.Inputs) != len(n.InTypes) {
		return nil, ctx.wrap(errors.New("runtime: build returned the wrong number of inputs"))
	}
	return b, nil
}

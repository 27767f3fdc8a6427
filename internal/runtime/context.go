package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/eddystream/eddy/internal/checkpoint"
)

// Context gives an operator subtask its identity and the services of the
// subtask it runs in. Its methods are called on the subtask's goroutine.
type Context struct {
	// Operator is the operator's name, as errors and metrics show it.
	Operator string
	// Subtask is the index of this parallel instance, in [0, Parallelism).
	Subtask int
	// Parallelism is the number of parallel instances of the operator.
	Parallelism int
	// MaxParallelism is the number of key groups of the operator.
	MaxParallelism int
	// Log is the operator's logger.
	Log *slog.Logger
	// Metrics counts what the operator does.
	Metrics *OperatorMetrics
	// Restored is the operator's state when the job restores from a
	// checkpoint or savepoint; nil on a fresh start.
	Restored *RestoredState
	// Checkpointing reports whether the job takes checkpoints, so that
	// sources that cannot be checkpointed refuse to run.
	Checkpointing bool
	// RecordsReused reports whether every one of the operator's outputs
	// is chained to an operator that keeps nothing of its input
	// (RetainsNoInput), so that the records it emits are consumed by the
	// time the call that passed them on returns, and their memory may be
	// reused: by a source for the records of its next step, by another
	// operator for those it emits after its outputs' calls return.
	RecordsReused bool
	// Shared is the shared area of the checkpoint storage, where state
	// backends with incremental snapshots put the files that checkpoints
	// share; nil when the job has no checkpoint storage.
	Shared checkpoint.SharedStorage

	savepoint func(id int64) bool
	now       func() int64
	wakeAt    func(ts int64, fn func(now int64) error)
	done      <-chan struct{}
}

// NewContext returns a context for driving an operator outside a job, as
// test harnesses do: now supplies processing time in milliseconds and wakeAt
// registers a processing-time callback.
func NewContext(operator string, subtask, parallelism, maxParallelism int, now func() int64, wakeAt func(ts int64, fn func(now int64) error)) *Context {
	return &Context{
		Operator: operator, Subtask: subtask, Parallelism: parallelism, MaxParallelism: maxParallelism,
		Log: slog.Default().With("operator", operator, "subtask", subtask), Metrics: NewOperatorMetrics(-1, operator, subtask, nil),
		now: now, wakeAt: wakeAt, done: make(chan struct{}),
	}
}

// ProcessingTime returns the current processing time in milliseconds since
// the Unix epoch.
func (c *Context) ProcessingTime() int64 { return c.now() }

// WakeAt asks the subtask to call fn, on its goroutine, once processing time
// has reached ts (milliseconds). fn receives the processing time of the call.
func (c *Context) WakeAt(ts int64, fn func(now int64) error) { c.wakeAt(ts, fn) }

// IsSavepoint reports whether snapshot id is a savepoint, which must be
// self-contained and portable (no shared files, key groups in the canonical
// encoding), rather than a checkpoint.
func (c *Context) IsSavepoint(id int64) bool { return c.savepoint != nil && c.savepoint(id) }

// Done is closed when the job is cancelled or failed.
func (c *Context) Done() <-chan struct{} { return c.done }

// OperatorError is a failure of one operator subtask. Jobs fail with it.
type OperatorError struct {
	Operator string
	// OperatorID identifies the operator in the job graph (names repeat);
	// -1 when unknown.
	OperatorID  int
	Subtask     int
	Parallelism int
	Err         error
}

// Error names the operator and subtask, then the cause.
func (e *OperatorError) Error() string {
	return fmt.Sprintf("operator %q (subtask %d/%d): %v", e.Operator, e.Subtask+1, e.Parallelism, e.Err)
}

// Unwrap returns the cause.
func (e *OperatorError) Unwrap() error { return e.Err }

// PanicError is the cause of an OperatorError raised by a panic.
type PanicError struct {
	Value any
	Stack []byte
}

// Error renders the panic value: an error raised as a panic on purpose
// (one with a RaisedAsPanic method, such as a SQL expression's) as itself,
// others after "panic: ".
func (e *PanicError) Error() string {
	if err, ok := e.Value.(interface {
		error
		RaisedAsPanic()
	}); ok {
		return err.Error()
	}
	return fmt.Sprintf("panic: %v", e.Value)
}

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// wrap attributes err to the context's operator unless it is attributed
// already or is a cancellation.
func (c *Context) wrap(err error) error {
	if err == nil || errors.Is(err, errCanceled) {
		return err
	}
	var oe *OperatorError
	if errors.As(err, &oe) {
		return err
	}
	return &OperatorError{Operator: c.Operator, OperatorID: c.operatorID(), Subtask: c.Subtask, Parallelism: c.Parallelism, Err: err}
}

// operatorID is the id of the context's operator in the job graph, -1 when
// it has no metrics to carry it.
func (c *Context) operatorID() int {
	if c.Metrics == nil {
		return -1
	}
	return c.Metrics.ID
}

// recoverInto turns a panic into an OperatorError of this operator. Use as
// `defer c.recoverInto(&err)`.
func (c *Context) recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = &OperatorError{Operator: c.Operator, OperatorID: c.operatorID(), Subtask: c.Subtask, Parallelism: c.Parallelism,
			Err: &PanicError{Value: r, Stack: debug.Stack()}}
	}
}

// guard attributes the errors and panics of one operator's input to it.
type guard[T any] struct {
	in  Input[T]
	ctx *Context
}

func (g *guard[T]) ProcessBatch(b *Batch[T]) (err error) {
	defer g.ctx.recoverInto(&err)
	g.ctx.Metrics.RecordsIn.Add(int64(len(b.Data)))
	return g.ctx.wrap(g.in.ProcessBatch(b))
}

func (g *guard[T]) ProcessWatermark(wm int64) (err error) {
	defer g.ctx.recoverInto(&err)
	g.ctx.Metrics.Watermark.Store(wm)
	return g.ctx.wrap(g.in.ProcessWatermark(wm))
}

func (g *guard[T]) EndInput() (err error) {
	defer g.ctx.recoverInto(&err)
	return g.ctx.wrap(g.in.EndInput())
}

// guardControl does for an operator's Control what guard does for an input.
type guardControl struct {
	c   Control
	ctx *Context
}

func (g *guardControl) ProcessWatermark(wm int64) (err error) {
	defer g.ctx.recoverInto(&err)
	g.ctx.Metrics.Watermark.Store(wm)
	return g.ctx.wrap(g.c.ProcessWatermark(wm))
}

func (g *guardControl) EndInput() (err error) {
	defer g.ctx.recoverInto(&err)
	return g.ctx.wrap(g.c.EndInput())
}

func millis(t time.Time) int64 { return t.UnixMilli() }

package runtime

import (
	"errors"
	"sync/atomic"
	"time"
)

// task is one subtask of an operator chain: a goroutine that reads its gate
// (or drives its source), runs the chain, and writes to its exchanges.
type task struct {
	name    string // the chain's name, for logs
	subtask int

	gate    *gate
	deliver []func(payload any) error // per input index
	control Control
	headCtx *Context
	source  SourceDriver

	writers []flusher
	closers []Closer
	timers  procTimers

	linger time.Duration
	clock  func() time.Time
	done   <-chan struct{}
	// metrics measures the subtask's idle and backpressured time.
	metrics *TaskMetrics

	// Checkpointing. ops lists the chain's operators, upstream first.
	ops       []chainOp
	coord     *coordinator
	triggered atomic.Int64  // the newest checkpoint a source was asked to take
	taken     int64         // the newest checkpoint this task has taken
	completed atomic.Int64  // the newest completed checkpoint
	final     atomic.Bool   // the job has ended and its last checkpoint completed
	notified  int64         // the newest completion passed to listeners
	notifySig chan struct{} // signalled when completed, final or triggered change
	// align is how long the latest barrier alignment took, from the first
	// barrier to the last.
	align time.Duration
	// ended is set once the task's input has ended and it has emitted
	// everything: from then on it acknowledges checkpoints with its final
	// state and sends no barriers.
	ended bool
}

// chainOp is an operator of the chain, for snapshots and notifications.
type chainOp struct {
	node *Node
	ctx  *Context
	op   any
	// snapshotting, if not nil, is closed when the asynchronous part of
	// the operator's latest snapshot has run. An operator takes one
	// snapshot at a time: the next waits for it, since a checkpoint that is
	// aborted (superseded by the final one, say) still runs its
	// asynchronous parts to release what they froze.
	snapshotting chan struct{}
}

// awaitSnapshot waits until the asynchronous part of operator o's previous
// snapshot has run.
func (t *task) awaitSnapshot(o *chainOp) error {
	if o.snapshotting == nil {
		return nil
	}
	select {
	case <-o.snapshotting:
		o.snapshotting = nil
		return nil
	case <-t.done:
		return errCanceled
	}
}

// tracked returns f, which closes the operator's snapshotting channel when
// it has run.
func (o *chainOp) tracked(f func() (*OperatorSnapshot, error)) func() (*OperatorSnapshot, error) {
	if f == nil {
		return nil
	}
	done := make(chan struct{})
	o.snapshotting = done
	return func() (*OperatorSnapshot, error) {
		defer close(done)
		return f()
	}
}

func (t *task) addOp(n *Node, ctx *Context, op any) {
	t.ops = append(t.ops, chainOp{node: n, ctx: ctx, op: op})
}

// reverseOps puts the operators in chain order: they are added as the chain
// is built, downstream first.
func (t *task) reverseOps() {
	for i, j := 0, len(t.ops)-1; i < j; i, j = i+1, j-1 {
		t.ops[i], t.ops[j] = t.ops[j], t.ops[i]
	}
}

// signal wakes the task to look at its checkpoint state.
func (t *task) signal() {
	select {
	case t.notifySig <- struct{}{}:
	default:
	}
}

// checkpoint snapshots every operator of the chain, passes the barrier
// downstream, and acknowledges the checkpoint to the coordinator. A task
// that has ended passes no barrier: its channels have ended, which counts as
// delivering every barrier.
func (t *task) checkpoint(id int64) error {
	if id <= t.taken {
		return nil
	}
	t.taken = id
	start := time.Now()
	align := t.align
	t.align = 0
	states := make([]*OperatorSnapshot, len(t.ops))
	futures := make([]func() (*OperatorSnapshot, error), len(t.ops))
	for i := range t.ops {
		o := &t.ops[i]
		if a, ok := o.op.(AsyncStateful); ok {
			if err := t.awaitSnapshot(o); err != nil {
				return err
			}
			err := callGuarded(o.ctx, func() error {
				f, err := a.SnapshotStateAsync(id)
				futures[i] = o.tracked(f)
				return err
			})
			if err != nil {
				return err
			}
			continue
		}
		s, ok := o.op.(Stateful)
		if !ok {
			continue
		}
		var snap *OperatorSnapshot
		err := callGuarded(o.ctx, func() error {
			var err error
			snap, err = s.SnapshotState(id)
			return err
		})
		if err != nil {
			return err
		}
		states[i] = snap
	}
	if !t.ended {
		for _, w := range t.writers {
			if err := w.broadcastBarrier(id); err != nil {
				return err
			}
		}
	}
	return t.coord.ack(ack{task: t, id: id, states: states, futures: futures, finished: t.ended, sync: time.Since(start), align: align})
}

// checkState reacts to checkpoint triggers (sources and ended tasks) and
// completions.
func (t *task) checkState() error {
	if t.source != nil || t.ended {
		if id := t.triggered.Load(); id > t.taken {
			if err := t.checkpoint(id); err != nil {
				return err
			}
		}
	}
	if c := t.completed.Load(); c > t.notified {
		t.notified = c
		for _, o := range t.ops {
			if l, ok := o.op.(CheckpointListener); ok {
				if err := callGuarded(o.ctx, func() error { return l.NotifyCheckpointComplete(c) }); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// finish reports the end of the task's input to the coordinator and waits
// until the job's last checkpoint completes, so that transactional sinks
// commit what they wrote last only once nothing can be replayed. Meanwhile
// the task acknowledges the checkpoints of the rest of the job with its
// final state, and passes their completions to its operators.
func (t *task) finish() error {
	if err := t.flushAll(); err != nil {
		return err
	}
	t.ended = true
	// A checkpoint triggered before the end whose barrier did not reach the
	// task is acknowledged now, before the coordinator hears of the end.
	if err := t.checkState(); err != nil {
		return err
	}
	if err := t.coord.ack(ack{task: t, ended: true}); err != nil {
		return err
	}
	for {
		// completed is set before final: seeing final first means the
		// checkState below sees the final checkpoint.
		final := t.final.Load()
		if err := t.checkState(); err != nil {
			return err
		}
		if final {
			return nil
		}
		start := t.metrics.beginWait(false)
		select {
		case <-t.notifySig:
		case <-t.done:
			t.metrics.endWait(start)
			return errCanceled
		}
		t.metrics.endWait(start)
	}
}

func (t *task) now() int64 { return millis(t.clock()) }

// run executes the subtask until its input ends, it fails, or the job is
// cancelled.
func (t *task) run() (err error) {
	defer func() {
		for _, c := range t.closers {
			if cerr := c.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}
		if t.source != nil {
			if cerr := t.source.Close(); cerr != nil && err == nil {
				err = t.headCtx.wrap(cerr)
			}
		}
	}()
	if t.source != nil {
		err = t.runSource()
	} else {
		err = t.runInputs()
	}
	if errors.Is(err, errCanceled) {
		return nil
	}
	return err
}

// flushAll sends every partly filled batch.
func (t *task) flushAll() error {
	for _, w := range t.writers {
		if err := w.flush(); err != nil {
			return err
		}
	}
	return nil
}

func (t *task) setIdle(idle bool) error {
	for _, w := range t.writers {
		if err := w.setIdle(idle); err != nil {
			return err
		}
	}
	return nil
}

// fireTimers runs the processing-time callbacks that are due.
func (t *task) fireTimers() error {
	if ts, ok := t.timers.next(); ok && ts <= t.now() {
		return t.timers.fire(t.now())
	}
	return nil
}

func (t *task) runSource() error {
	lastFlush := t.clock()
	idle := false
	for {
		select {
		case <-t.done:
			return errCanceled
		default:
		}
		if err := t.checkState(); err != nil {
			return err
		}
		start, bp := time.Now(), t.metrics.BackPressured.Load()
		res, err := callStep(t.headCtx, t.source)
		if err != nil {
			return err
		}
		if res.N == 0 && !res.Done {
			// A step that found nothing to emit waited for input, but for
			// the time it was blocked passing on a watermark.
			t.metrics.Idle.Add(max(0, int64(time.Since(start))-(t.metrics.BackPressured.Load()-bp)))
		}
		if res.Done {
			return t.finish()
		}
		if res.Idle != idle {
			idle = res.Idle
			if err := t.setIdle(idle); err != nil {
				return err
			}
		}
		if err := t.fireTimers(); err != nil {
			return err
		}
		if res.N == 0 {
			if err := t.flushAll(); err != nil {
				return err
			}
			lastFlush = t.clock()
		} else if now := t.clock(); now.Sub(lastFlush) >= t.linger {
			if err := t.flushAll(); err != nil {
				return err
			}
			lastFlush = now
		}
	}
}

func callStep(ctx *Context, s SourceDriver) (res StepResult, err error) {
	defer ctx.recoverInto(&err)
	res, err = s.Step()
	return res, ctx.wrap(err)
}

func (t *task) runInputs() error {
	g := t.gate
	lastFlush := t.clock()
	var wake *time.Timer
	for {
		c, m, ok := g.poll()
		if !ok {
			// Nothing waiting: send what is buffered, then block.
			if err := t.flushAll(); err != nil {
				return err
			}
			lastFlush = t.clock()
			var wakeC <-chan time.Time
			if ts, ok := t.timers.next(); ok {
				d := time.Duration(ts-t.now()) * time.Millisecond
				if d <= 0 {
					if err := t.timers.fire(t.now()); err != nil {
						return err
					}
					continue
				}
				if wake == nil {
					wake = time.NewTimer(d)
				} else {
					wake.Reset(d)
				}
				wakeC = wake.C
			}
			start := t.metrics.beginWait(false)
			select {
			case idx := <-g.ready:
				t.metrics.endWait(start)
				if c, m, ok = g.take(idx); !ok {
					continue
				}
			case <-t.notifySig:
				t.metrics.endWait(start)
				if err := t.checkState(); err != nil {
					return err
				}
				continue
			case <-wakeC:
				t.metrics.endWait(start)
				if err := t.timers.fire(t.now()); err != nil {
					return err
				}
				continue
			case <-t.done:
				t.metrics.endWait(start)
				return errCanceled
			}
		}
		finished, err := t.handle(c, m)
		if err != nil {
			return err
		}
		if finished {
			return t.finish()
		}
		if t.completed.Load() > t.notified {
			if err := t.checkState(); err != nil {
				return err
			}
		}
		if err := t.fireTimers(); err != nil {
			return err
		}
		if now := t.clock(); now.Sub(lastFlush) >= t.linger {
			if err := t.flushAll(); err != nil {
				return err
			}
			lastFlush = now
		}
	}
}

// handle processes one message from channel c. It reports whether all
// inputs have ended.
func (t *task) handle(c *inChannel, m message) (finished bool, err error) {
	g := t.gate
	i := int(c.idx)
	switch m.kind {
	case msgData:
		err = t.deliver[c.input](m.payload)
		c.recycle(m.payload)
		return false, err
	case msgWatermark:
		if m.val > g.wm[i] {
			g.wm[i] = m.val
		}
		return false, t.advance()
	case msgIdle, msgActive:
		g.idle[i] = m.kind == msgIdle
		if idle, changed := g.status(); changed {
			if err := t.setIdle(idle); err != nil {
				return false, err
			}
		}
		return false, t.advance()
	case msgBarrier:
		if g.blockForBarrier(i, m.val) {
			return false, t.aligned()
		}
		return false, nil
	case msgEnd:
		g.ended[i] = true
		g.nEnded++
		if err := t.advance(); err != nil {
			return false, err
		}
		if g.alignedLater() {
			if err := t.aligned(); err != nil {
				return false, err
			}
		}
		if g.nEnded == len(g.chans) {
			return true, t.control.EndInput()
		}
		return false, nil
	}
	panic("runtime: unknown message kind")
}

// advance passes the combined watermark on if it moved.
func (t *task) advance() error {
	if wm, moved := t.gate.watermark(); moved {
		return t.control.ProcessWatermark(wm)
	}
	return nil
}

// aligned is called when every live channel has delivered the barrier of
// the checkpoint being aligned: the chain snapshots its state, the barrier
// goes downstream, and the channels are released.
func (t *task) aligned() error {
	t.align = time.Since(t.gate.alignStart)
	if err := t.checkpoint(t.gate.barrier); err != nil {
		return err
	}
	t.gate.unblockAll()
	return nil
}

package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/eddystream/eddy/internal/checkpoint"
)

// ack is a task's message to the coordinator: its snapshot for a
// checkpoint, or that its input has ended.
type ack struct {
	task   *task
	id     int64
	states []*OperatorSnapshot // per chain operator, nil if stateless
	// futures complete the asynchronous parts of the snapshots; a non-nil
	// future fills the state of its operator.
	futures []func() (*OperatorSnapshot, error)
	// finished marks the snapshot of a task that had finished: the state
	// it held at the end of its input.
	finished bool
	// ended reports that the task's input has ended (and carries no
	// snapshot).
	ended bool
	// sync is the time the task spent on its part of the snapshot, during
	// which it did not process records.
	sync time.Duration
	// align is the time from the first barrier to reach the task to the
	// last, during which the channels that had delivered it were blocked.
	align time.Duration
}

// resolution reports that a task's asynchronous snapshot parts are done.
type resolution struct {
	id   int64
	task *task
	err  error
}

// savepointRequest asks the coordinator for a savepoint.
type savepointRequest struct {
	// ctx is the asker's: a request queued behind a checkpoint is dropped
	// if the asker gave up meanwhile.
	ctx   context.Context
	dir   string
	stop  bool
	reply chan savepointReply
}

type savepointReply struct {
	path string
	err  error
}

// pending is a checkpoint in flight.
type pending struct {
	id        int64
	started   time.Time
	acks      map[*task][]*OperatorSnapshot
	finished  map[*task]bool // the tasks that acknowledged as finished
	resolved  int
	failed    error
	maxSync   time.Duration
	maxAlign  time.Duration
	savepoint *savepointRequest
	// final marks the job's final checkpoint, taken once every task has
	// finished.
	final bool
}

// coordinator triggers checkpoints at the sources, collects the tasks'
// acknowledgements, writes completed checkpoints, and tells the tasks when
// one completes. It also ends the job: once every task's input has ended it
// takes a final checkpoint, on which transactional sinks commit their last
// output. At most one checkpoint is in flight.
//
// The final checkpoint holds every task's end state, as in Flink
// (FLIP-147): above all the transactions the sinks pre-committed at the end
// of their input, which they commit only once it is durable. If the process
// dies between writing it and those commits, a run restored from it (see
// Redistribute: every operator is fully finished) commits them on restore,
// runs nothing again, and ends at once. Without checkpoint storage there is
// nothing to write, and the final checkpoint only notifies the tasks.
//
// Checkpoints go on while part of the job has finished (as in Flink since
// FLIP-147). A trigger reaches every task: the sources still running inject
// barriers, which align downstream over the channels that have not ended;
// a task that has finished, or finishes before a barrier reaches it,
// acknowledges with the state it held at the end of its input, marked
// finished, and sends no barrier (its channels have ended, which alignment
// counts as delivered). That state is what keeps a restore correct: a source
// whose splits are done has none left to read, a keyed operator that flushed
// at end of input has nothing left to fire, and a two-phase-commit sink
// keeps the transaction it pre-committed at end of input until a checkpoint
// that holds it completes (or a restore commits it). A restore does not run
// a fully finished operator again (see Redistribute), so nothing it emitted
// at the end is emitted twice. Finished tasks keep receiving completion
// notifications, so their sinks commit before the job ends.
type coordinator struct {
	cfg        Config
	tasks      []*task
	done       <-chan struct{}
	acks       chan ack
	resolved   chan resolution
	savepoints chan savepointRequest
	nextID     int64
	finished   map[*task]bool
	pending    *pending
	lastDone   time.Time
	// lastTriggered is when the last checkpoint started (the job's start
	// before the first).
	lastTriggered time.Time
	// queued is a savepoint asked for while a checkpoint was in flight: it
	// starts when that one ends, before the next periodic checkpoint.
	queued *savepointRequest
	stop   bool

	statsMu sync.Mutex
	stats   []CheckpointStats // the latest, oldest first
	counts  CheckpointCounts

	savepointsMu sync.Mutex
	savepointIDs map[int64]bool
}

// CheckpointStats describes a completed or failed checkpoint.
type CheckpointStats struct {
	ID int64
	// Triggered is when the checkpoint started.
	Triggered time.Time
	// Duration is the time from triggering the checkpoint at the sources to
	// its metadata being durable.
	Duration time.Duration
	// Write is the part of Duration spent writing files, while the tasks go
	// on processing.
	Write time.Duration
	// Sync is the longest time a subtask stopped processing to take its
	// part of the snapshot (the copy-on-write freeze, or a synchronous
	// encoding).
	Sync time.Duration
	// Alignment is the longest time a subtask spent aligning the
	// checkpoint's barriers, from the first to reach it to the last.
	Alignment time.Duration
	// Bytes is the size of the checkpoint: its state files and every
	// shared file it references.
	Bytes int64
	// Uploaded is what the checkpoint wrote: its state files and the shared
	// files that no earlier checkpoint had stored. With incremental
	// snapshots it is a fraction of Bytes.
	Uploaded  int64
	Savepoint bool
	// Failed is the cause of a checkpoint that failed or was aborted; nil
	// for a completed one.
	Failed error
}

// CheckpointCounts counts a job's checkpoints since it started.
type CheckpointCounts struct {
	Completed, Failed int64
}

// maxCheckpointStats bounds the checkpoints the coordinator remembers.
const maxCheckpointStats = 1000

// record remembers a checkpoint's statistics.
func (c *coordinator) record(st CheckpointStats) {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	if st.Failed != nil {
		c.counts.Failed++
	} else {
		c.counts.Completed++
	}
	if len(c.stats) == maxCheckpointStats {
		copy(c.stats, c.stats[1:])
		c.stats = c.stats[:maxCheckpointStats-1]
	}
	c.stats = append(c.stats, st)
}

// recordFailure remembers a checkpoint that failed or was aborted.
func (c *coordinator) recordFailure(p *pending, cause error) {
	c.record(CheckpointStats{ID: p.id, Triggered: p.started, Duration: time.Since(p.started), Sync: p.maxSync,
		Alignment: p.maxAlign, Savepoint: p.savepoint != nil, Failed: cause})
}

func newCoordinator(cfg Config, restore *checkpoint.Loaded, done <-chan struct{}) *coordinator {
	c := &coordinator{
		done: done,
		cfg:  cfg, acks: make(chan ack, 64), resolved: make(chan resolution, 64), savepoints: make(chan savepointRequest),
		nextID: 1, finished: map[*task]bool{}, lastTriggered: time.Now(),
	}
	if restore != nil {
		c.nextID = restore.Metadata.ID + 1
	}
	if s := cfg.Checkpoints.Storage; s != nil {
		if refs, err := s.List(); err == nil && len(refs) > 0 && refs[0].ID >= c.nextID {
			c.nextID = refs[0].ID + 1
		}
	}
	return c
}

// isSavepoint reports whether checkpoint id is a savepoint. Tasks call it.
func (c *coordinator) isSavepoint(id int64) bool {
	c.savepointsMu.Lock()
	defer c.savepointsMu.Unlock()
	return c.savepointIDs[id]
}

// ack delivers a task's message; it gives up if the job is cancelled.
func (c *coordinator) ack(a ack) error {
	select {
	case c.acks <- a:
		return nil
	case <-a.task.done:
		return errCanceled
	}
}

// savepoint asks for a savepoint and waits for it.
func (c *coordinator) savepoint(ctx context.Context, dir string, stop bool) (string, error) {
	r := savepointRequest{ctx: ctx, dir: dir, stop: stop, reply: make(chan savepointReply, 1)}
	select {
	case c.savepoints <- r:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.done:
		return "", errors.New("runtime: the job is not running")
	}
	select {
	case rep := <-r.reply:
		return rep.path, rep.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.done:
		select {
		case rep := <-r.reply: // completed as the job stopped
			return rep.path, rep.err
		default:
			return "", errors.New("runtime: the job stopped before the savepoint completed")
		}
	}
}

func (c *coordinator) run(ctx context.Context) error {
	interval := c.cfg.Checkpoints.Interval
	tick := time.NewTicker(time.Second) // for timeouts
	if interval > 0 {
		tick.Reset(min(interval, 100*time.Millisecond))
	}
	defer tick.Stop()
	// due fires when the next periodic checkpoint is due: interval after
	// the start of the last one, and at least the minimum pause after its
	// end.
	due := time.NewTimer(time.Hour)
	defer due.Stop()
	for {
		if c.pending == nil && c.queued != nil {
			sp := c.queued
			c.queued = nil
			if err := sp.ctx.Err(); err != nil {
				sp.reply <- savepointReply{err: err}
			} else {
				c.trigger(sp)
			}
		}
		var dueC <-chan time.Time
		if interval > 0 && c.pending == nil {
			at := c.lastTriggered.Add(interval)
			if p := c.lastDone.Add(c.cfg.Checkpoints.MinPause); p.After(at) {
				at = p
			}
			due.Reset(time.Until(at))
			dueC = due.C
		}
		select {
		case <-dueC:
			if c.pending == nil {
				c.trigger(nil)
			}
		case <-ctx.Done():
			c.abort("the job stopped")
			if c.queued != nil {
				c.queued.reply <- savepointReply{err: errors.New("runtime: savepoint aborted: the job stopped")}
			}
			return nil
		case r := <-c.savepoints:
			if q := c.queued; q != nil && q.ctx.Err() != nil {
				q.reply <- savepointReply{err: q.ctx.Err()} // its asker gave up
				c.queued = nil
			}
			switch {
			case r.ctx.Err() != nil:
				r.reply <- savepointReply{err: r.ctx.Err()}
			case c.pending == nil:
				c.trigger(&r)
			case c.queued != nil || c.pending.savepoint != nil:
				r.reply <- savepointReply{err: errors.New("runtime: cannot take a savepoint now: another savepoint is in progress; try again when it completes")}
			default:
				c.queued = &r // after the checkpoint in flight
			}
		case now := <-tick.C:
			if p := c.pending; p != nil && now.Sub(p.started) > c.cfg.Checkpoints.Timeout {
				if p.final {
					return fmt.Errorf("runtime: the final checkpoint %d of job %q timed out after %v; raise the checkpoint timeout (eddy.WithCheckpointTimeout)", p.id, c.cfg.Name, c.cfg.Checkpoints.Timeout)
				}
				c.abort(fmt.Sprintf("checkpoint %d timed out after %v", p.id, c.cfg.Checkpoints.Timeout))
			}
		case a := <-c.acks:
			if a.ended {
				c.finished[a.task] = true
				if len(c.finished) == len(c.tasks) {
					// Every task has finished: the final checkpoint
					// supersedes one in flight, and a savepoint asked
					// for.
					c.abort("the job finished")
					if c.queued != nil {
						c.queued.reply <- savepointReply{err: errors.New("runtime: savepoint aborted: the job finished")}
						c.queued = nil
					}
					if c.cfg.Checkpoints.Storage == nil {
						return c.complete(c.nextID, nil, true)
					}
					c.trigger(nil)
					c.pending.final = true
				}
				continue
			}
			p := c.pending
			if p == nil || a.id != p.id {
				// An aborted checkpoint: its asynchronous parts still run,
				// to release what they froze.
				c.resolve(a)
				continue
			}
			p.acks[a.task] = a.states
			if a.finished {
				p.finished[a.task] = true
			}
			p.maxSync = max(p.maxSync, a.sync)
			p.maxAlign = max(p.maxAlign, a.align)
			c.resolve(a)
		case r := <-c.resolved:
			p := c.pending
			if p == nil || r.id != p.id {
				continue // an aborted checkpoint
			}
			p.resolved++
			if r.err != nil && p.failed == nil {
				p.failed = r.err
			}
			if p.resolved < len(c.tasks) {
				continue
			}
			c.pending = nil
			if p.failed != nil {
				if p.final {
					return fmt.Errorf("runtime: the final checkpoint %d of job %q failed: %w", p.id, c.cfg.Name, p.failed)
				}
				c.abortFailed(p, p.failed)
				continue
			}
			if err := c.complete(p.id, p, p.final); err != nil {
				return err
			}
			if p.final {
				return nil
			}
			if c.stop {
				return errStopped
			}
		}
	}
}

// resolve runs the asynchronous parts of a task's snapshots on a goroutine
// of their own and reports when they are done. They run even if the
// checkpoint is aborted meanwhile, because they release what the operators
// froze for them.
func (c *coordinator) resolve(a ack) {
	go func() {
		var err error
		for i, f := range a.futures {
			if f == nil {
				continue
			}
			snap, ferr := f()
			if ferr != nil && err == nil {
				err = fmt.Errorf("snapshot of operator %q: %w", a.task.ops[i].node.Name, ferr)
			}
			a.states[i] = snap
		}
		select {
		case c.resolved <- resolution{id: a.id, task: a.task, err: err}:
		case <-c.done:
		}
	}()
}

// abortFailed gives up a checkpoint whose snapshot failed.
func (c *coordinator) abortFailed(p *pending, err error) {
	c.lastDone = time.Now()
	c.cfg.Log.Warn("checkpoint failed", "job", c.cfg.Name, "checkpoint", p.id, "error", err)
	c.recordFailure(p, err)
	if p.savepoint != nil {
		p.savepoint.reply <- savepointReply{err: fmt.Errorf("runtime: savepoint failed: %w", err)}
	}
}

// errStopped ends a job stopped with a savepoint.
var errStopped = errors.New("runtime: job stopped with a savepoint")

func (c *coordinator) trigger(sp *savepointRequest) {
	id := c.nextID
	c.nextID++
	c.lastTriggered = time.Now()
	c.pending = &pending{id: id, started: c.lastTriggered, acks: map[*task][]*OperatorSnapshot{}, finished: map[*task]bool{}, savepoint: sp}
	if sp != nil {
		c.savepointsMu.Lock()
		if c.savepointIDs == nil {
			c.savepointIDs = map[int64]bool{}
		}
		c.savepointIDs[id] = true
		c.savepointsMu.Unlock()
	}
	// Running sources inject the barrier; finished tasks, and tasks that
	// finish before its barrier reaches them, acknowledge with their final
	// state. Every task is signalled, because one may have finished without
	// the coordinator knowing yet.
	for _, t := range c.tasks {
		t.triggered.Store(id)
		t.signal()
	}
}

func (c *coordinator) abort(why string) {
	p := c.pending
	if p == nil {
		return
	}
	c.pending = nil
	c.lastDone = time.Now()
	c.cfg.Log.Warn("checkpoint aborted", "job", c.cfg.Name, "checkpoint", p.id, "reason", why)
	c.recordFailure(p, errors.New(why))
	if p.savepoint != nil {
		p.savepoint.reply <- savepointReply{err: fmt.Errorf("runtime: savepoint aborted: %s", why)}
	}
}

// complete writes checkpoint id (unless there is nowhere to write it) and
// notifies the tasks. final marks the checkpoint at the end of the job; if
// it cannot be written, the job fails (and restarts from its latest
// checkpoint) instead of letting the sinks commit what no checkpoint holds.
func (c *coordinator) complete(id int64, p *pending, final bool) error {
	var ops []checkpoint.OperatorState
	if p != nil {
		byUID := map[string]*checkpoint.OperatorState{}
		var order []string
		for _, t := range c.tasks {
			for i, o := range t.ops {
				n := o.node
				st := byUID[n.StateUID()]
				if st == nil {
					st = &checkpoint.OperatorState{UID: n.StateUID(), Name: n.Name,
						Parallelism: n.parallelism, MaxParallelism: n.maxParallelism, Subtasks: make([]*checkpoint.SubtaskState, n.parallelism)}
					byUID[n.StateUID()] = st
					order = append(order, n.StateUID())
				}
				snaps := p.acks[t]
				var snap *OperatorSnapshot
				if snaps != nil {
					snap = snaps[i]
				}
				if p.finished[t] {
					if snap == nil {
						snap = &OperatorSnapshot{}
					}
					snap.Finished = true
				}
				st.Subtasks[o.ctx.Subtask] = snap
			}
		}
		for _, uid := range order {
			ops = append(ops, *byUID[uid])
		}
	}
	savepoint := p != nil && p.savepoint != nil
	var storage *checkpoint.Dir
	switch {
	case savepoint:
		d, err := checkpoint.NewSavepointDir(p.savepoint.dir)
		if err != nil {
			c.lastDone = time.Now()
			c.recordFailure(p, err)
			p.savepoint.reply <- savepointReply{err: err}
			return nil
		}
		storage = d
	default:
		storage = c.cfg.Checkpoints.Storage
	}
	if storage != nil {
		start := time.Now()
		m, files := checkpoint.Assemble(c.cfg.Name, id, savepoint, final, ops)
		ref, err := storage.Write(m, files)
		if err != nil {
			if p != nil {
				c.recordFailure(p, err)
			}
			if savepoint {
				c.lastDone = time.Now()
				p.savepoint.reply <- savepointReply{err: err}
				return nil
			}
			if final {
				return fmt.Errorf("runtime: writing the final checkpoint %d of job %q: %w", id, c.cfg.Name, err)
			}
			c.cfg.Log.Error("writing checkpoint failed", "checkpoint", id, "error", err)
			c.lastDone = time.Now()
			return nil
		}
		var size, uploaded int64
		for _, f := range files {
			size += int64(len(f))
		}
		uploaded = size
		for _, op := range ops {
			for _, st := range op.Subtasks {
				if st == nil {
					continue
				}
				for _, b := range st.Backends {
					for _, f := range b.Files {
						if f.Shared != "" {
							size += f.Size
							if f.Uploaded {
								uploaded += f.Size
							}
						}
					}
				}
			}
		}
		c.cfg.Log.Debug("checkpoint complete", "checkpoint", id, "path", ref.Path, "bytes", size, "uploaded", uploaded, "write", time.Since(start))
		if p != nil {
			c.record(CheckpointStats{ID: id, Triggered: p.started, Duration: time.Since(p.started), Write: time.Since(start),
				Sync: p.maxSync, Alignment: p.maxAlign, Bytes: size, Uploaded: uploaded, Savepoint: savepoint})
			c.recordStateSizes(p)
		}
		if savepoint {
			p.savepoint.reply <- savepointReply{path: ref.Path}
			c.stop = p.savepoint.stop
		} else if err := checkpoint.Retain(c.cfg.Checkpoints.Storage, c.cfg.Checkpoints.Retain); err != nil {
			c.cfg.Log.Warn("deleting old checkpoints failed", "error", err)
		}
	}
	c.lastDone = time.Now()
	for _, t := range c.tasks {
		if id > t.completed.Load() {
			t.completed.Store(id)
		}
		if final {
			t.final.Store(true)
		}
		t.signal()
	}
	return nil
}

// recordStateSizes sets each operator subtask's state size from the
// snapshots of a completed checkpoint.
func (c *coordinator) recordStateSizes(p *pending) {
	for _, t := range c.tasks {
		snaps := p.acks[t]
		if snaps == nil {
			continue
		}
		for i, o := range t.ops {
			o.ctx.Metrics.StateBytes.Store(stateSize(snaps[i]))
		}
	}
}

// stateSize is the size of a subtask's snapshot: its keyed state, its
// operator-state lists and its state backend's files.
func stateSize(s *OperatorSnapshot) int64 {
	if s == nil {
		return 0
	}
	var n int64
	for _, b := range s.KeyGroups {
		n += int64(len(b))
	}
	for _, l := range s.Lists {
		for _, b := range l {
			n += int64(len(b))
		}
	}
	for _, b := range s.Backends {
		for _, f := range b.Files {
			n += f.Size
		}
	}
	return n
}

package ops

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/runtime"
)

// EnumeratorList is the operator-state list of a source that holds its
// enumerator's state. Every subtask receives it whole on restore (it is a
// union list); the entry of the newest checkpoint wins.
const EnumeratorList = "enumerator"

// encodeEnumeratorState tags an enumerator snapshot with its checkpoint.
func encodeEnumeratorState(id int64, state []byte) []byte {
	b := binary.AppendVarint(nil, id)
	return append(b, state...)
}

// restoredEnumeratorState picks the newest enumerator snapshot of a
// restored union list. A checkpoint without one (of the first format, whose
// sources kept every split in their readers) gives an empty state: a
// restored enumerator has nothing left to assign.
func restoredEnumeratorState(entries [][]byte) ([]byte, error) {
	best := []byte{}
	bestID := int64(-1)
	for _, e := range entries {
		id, n := binary.Varint(e)
		if n <= 0 {
			return nil, fmt.Errorf("enumerator state is corrupt")
		}
		if id > bestID {
			bestID, best = id, e[n:]
		}
	}
	return best, nil
}

// EnumeratorHosts makes one EnumeratorHost per run of a job for a source
// node. Each subtask of the source asks for it when it is built; the first
// one of a run creates it.
type EnumeratorHosts struct {
	mu    sync.Mutex
	hosts map[<-chan struct{}]*EnumeratorHost
}

// get returns the host of the run ctx belongs to (a run is identified by its
// cancellation channel), creating it and its enumerator if needed.
func (h *EnumeratorHosts) get(ctx *runtime.Context, src enumeratorSource) (*EnumeratorHost, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hosts == nil {
		h.hosts = map[<-chan struct{}]*EnumeratorHost{}
	}
	done := ctx.Done()
	if host := h.hosts[done]; host != nil {
		host.mu.Lock()
		host.refs++
		host.mu.Unlock()
		return host, nil
	}
	var restored []byte
	if rs := ctx.Restored; rs != nil {
		var err error
		if restored, err = restoredEnumeratorState(rs.Lists[EnumeratorList]); err != nil {
			return nil, fmt.Errorf("restoring the enumerator of source %q: %w", ctx.Operator, err)
		}
	}
	host := newEnumeratorHost(ctx.Operator, ctx.Parallelism, ctx.Log, done)
	host.checkpointing = ctx.Checkpointing
	if err := host.start(src, restored); err != nil {
		return nil, err
	}
	host.refs = 1
	host.forget = func() {
		h.mu.Lock()
		delete(h.hosts, done)
		h.mu.Unlock()
	}
	h.hosts[done] = host
	return host, nil
}

// enumeratorSource is what a host needs of a source: its enumerator.
type enumeratorSource interface {
	NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error)
}

// mail is a message from the enumerator to a reader, stamped with the
// newest enumerator snapshot taken before it was sent: a reader applies it
// only once it has taken its own snapshot of that checkpoint, so that a
// split is in the enumerator's state or in the reader's, never both.
type mail struct {
	stamp  int64
	splits []connector.Split
	noMore bool
	event  []byte
}

// EnumeratorHost runs a source's enumerator on a goroutine of its own and
// passes messages between it and the readers.
type EnumeratorHost struct {
	name          string
	parallelism   int
	checkpointing bool
	log           *slog.Logger
	done          <-chan struct{}
	work          chan func()

	enum connector.Enumerator
	// status is the enumerator's latest progress report, if it reports
	// any (connector.StatusReporter).
	status atomic.Pointer[map[string]any]

	// epoch is the newest checkpoint the enumerator has snapshotted. Only
	// the enumerator goroutine uses it.
	epoch int64
	// snapshots holds the enumerator's recent snapshots by checkpoint.
	// Only the enumerator goroutine uses it.
	snapshots map[int64][]byte
	notified  int64 // newest completion passed on; enumerator goroutine only

	mu      sync.Mutex // guards the fields below
	inbox   [][]mail   // per subtask
	err     error      // the enumerator's first error
	refs    int        // subtasks holding the host
	closed  bool
	forget  func()
	stopped chan struct{}
}

func newEnumeratorHost(name string, p int, log *slog.Logger, done <-chan struct{}) *EnumeratorHost {
	return &EnumeratorHost{
		name: name, parallelism: p, log: log, done: done, work: make(chan func(), 64),
		snapshots: map[int64][]byte{}, inbox: make([][]mail, p), stopped: make(chan struct{}),
	}
}

// start creates the enumerator on the host's goroutine and runs it.
func (h *EnumeratorHost) start(src enumeratorSource, restored []byte) error {
	created := make(chan error, 1)
	go func() {
		defer close(h.stopped)
		err := h.guard(func() error {
			e, err := src.NewEnumerator(&enumContext{h}, restored)
			h.enum = e
			return err
		})
		created <- err
		if err != nil {
			return
		}
		h.loop()
	}()
	return <-created
}

// guard runs fn, turning a panic into an error.
func (h *EnumeratorHost) guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the enumerator of source %q panicked: %v", h.name, r)
		}
	}()
	return fn()
}

func (h *EnumeratorHost) loop() {
	defer func() {
		if h.enum != nil {
			if err := h.guard(h.enum.Close); err != nil {
				h.log.Warn("closing the enumerator failed", "source", h.name, "error", err)
			}
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case fn := <-h.work:
			fn()
		case <-tick.C:
			if r, ok := h.enum.(connector.StatusReporter); ok {
				var st map[string]any
				if err := h.guard(func() error { st = r.Status(); return nil }); err == nil {
					h.status.Store(&st)
				}
			}
		case <-h.done:
			return
		}
	}
}

// run queues fn for the enumerator's goroutine; an error it returns fails
// the source's readers.
func (h *EnumeratorHost) run(fn func() error) {
	select {
	case h.work <- func() {
		if err := h.guard(fn); err != nil {
			h.setErr(err)
		}
	}:
	case <-h.done:
	case <-h.stopped:
	}
}

func (h *EnumeratorHost) setErr(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.err = fmt.Errorf("enumerator: %w", err)
	}
}

// failure returns the enumerator's error, if it failed.
func (h *EnumeratorHost) failure() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

func (h *EnumeratorHost) send(subtask int, m mail) {
	if subtask < 0 || subtask >= h.parallelism {
		h.setErr(fmt.Errorf("source %q has no reader %d (parallelism %d)", h.name, subtask, h.parallelism))
		return
	}
	m.stamp = h.epoch
	h.mu.Lock()
	h.inbox[subtask] = append(h.inbox[subtask], m)
	h.mu.Unlock()
}

// take removes and returns the messages for subtask stamped at or before
// limit, in the order they were sent.
func (h *EnumeratorHost) take(subtask int, limit int64) []mail {
	h.mu.Lock()
	defer h.mu.Unlock()
	box := h.inbox[subtask]
	k := 0
	for k < len(box) && box[k].stamp <= limit {
		k++
	}
	if k == 0 {
		return nil
	}
	out := append([]mail(nil), box[:k]...)
	h.inbox[subtask] = append(box[:0], box[k:]...)
	return out
}

func (h *EnumeratorHost) addReader(subtask int) {
	h.run(func() error { return h.enum.AddReader(subtask) })
}

func (h *EnumeratorHost) requestSplit(subtask int) {
	h.run(func() error { return h.enum.HandleSplitRequest(subtask) })
}

func (h *EnumeratorHost) readerEvent(subtask int, e []byte) {
	e = append([]byte(nil), e...)
	h.run(func() error { return h.enum.HandleEvent(subtask, e) })
}

// snapshot returns the enumerator's snapshot for checkpoint id, taking it if
// this is the first subtask to ask; first reports whether it was.
func (h *EnumeratorHost) snapshot(id int64) (state []byte, first bool, err error) {
	type reply struct {
		state []byte
		first bool
		err   error
	}
	ch := make(chan reply, 1)
	select {
	case h.work <- func() {
		if s, ok := h.snapshots[id]; ok {
			ch <- reply{state: s}
			return
		}
		var s []byte
		err := h.guard(func() error {
			var err error
			s, err = h.enum.SnapshotState(id)
			return err
		})
		if err != nil {
			ch <- reply{err: fmt.Errorf("snapshot of the enumerator: %w", err)}
			return
		}
		if s == nil {
			s = []byte{}
		}
		h.epoch = max(h.epoch, id)
		h.snapshots[id] = s
		for old := range h.snapshots {
			if old < id-8 {
				delete(h.snapshots, old)
			}
		}
		ch <- reply{state: s, first: true}
	}:
	case <-h.done:
		return nil, false, fmt.Errorf("the job stopped")
	case <-h.stopped:
		return nil, false, h.failure()
	}
	select {
	case r := <-ch:
		return r.state, r.first, r.err
	case <-h.done:
		return nil, false, fmt.Errorf("the job stopped")
	}
}

// checkpointComplete passes a completed checkpoint to the enumerator once.
func (h *EnumeratorHost) checkpointComplete(id int64) {
	h.run(func() error {
		if id <= h.notified {
			return nil
		}
		h.notified = id
		return connector.NotifyIfListening(h.enum, id)
	})
}

// release drops a subtask's hold on the host; the last one stops the
// enumerator.
func (h *EnumeratorHost) release() error {
	h.mu.Lock()
	h.refs--
	last := h.refs == 0 && !h.closed
	if last {
		h.closed = true
	}
	h.mu.Unlock()
	if !last {
		return nil
	}
	h.forget()
	return nil
}

// enumContext is the connector.EnumeratorContext of a host. Its methods run
// on the enumerator's goroutine.
type enumContext struct{ h *EnumeratorHost }

func (c *enumContext) SourceName() string  { return c.h.name }
func (c *enumContext) Parallelism() int    { return c.h.parallelism }
func (c *enumContext) Log() *slog.Logger   { return c.h.log }
func (c *enumContext) Checkpointing() bool { return c.h.checkpointing }

func (c *enumContext) AssignSplits(subtask int, splits ...connector.Split) {
	if len(splits) > 0 {
		c.h.send(subtask, mail{splits: append([]connector.Split(nil), splits...)})
	}
}

func (c *enumContext) SignalNoMoreSplits(subtask int) { c.h.send(subtask, mail{noMore: true}) }

func (c *enumContext) SendEvent(subtask int, e []byte) {
	c.h.send(subtask, mail{event: append([]byte{}, e...)})
}

func (c *enumContext) CallAsync(fn func() (any, error), handler func(result any, err error) error) {
	go func() {
		var res any
		err := c.h.guard(func() error {
			var err error
			res, err = fn()
			return err
		})
		c.h.run(func() error { return handler(res, err) })
	}()
}

func (c *enumContext) Every(interval time.Duration, fn func() error) {
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				c.h.run(fn)
			case <-c.h.done:
				return
			case <-c.h.stopped:
				return
			}
		}
	}()
}

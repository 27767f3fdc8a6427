package connectortest

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// control watches and steers the source under test in one job: it counts
// the records the readers emit, pauses them after a given number (a paused
// reader returns from Read without reading, as a reader with nothing to
// emit does, so checkpoints and savepoints go on), and checks what the
// readers do with their splits against the reader contract.
type control[T any] struct {
	seq func(T) int64

	emitted atomic.Int64
	at      atomic.Int64 // the count at which reached closes; 0: never
	pause   bool         // whether reaching at pauses the readers

	mu           sync.Mutex
	reached      chan struct{} // closed when at records were emitted
	isReached    bool
	paused       bool
	firstPaused  int64         // the first checkpoint snapshotted while paused
	checkpointed chan struct{} // closed when such a checkpoint completes
	isCkpt       bool
	owner        map[string]*readerWrap[T] // split -> reader holding it
	added        map[string]int            // split -> times given to a reader
	finished     map[string]int            // split -> times finished
	problems     []string
}

// newControl returns the control of one job. With at > 0, reached closes
// once the readers have emitted at records, and with pause they stop there.
func newControl[T any](at int, pause bool, seq func(T) int64) *control[T] {
	c := &control[T]{
		seq: seq, pause: pause && at > 0,
		reached: make(chan struct{}), checkpointed: make(chan struct{}),
		owner: map[string]*readerWrap[T]{}, added: map[string]int{}, finished: map[string]int{},
	}
	c.at.Store(int64(at))
	return c
}

// pauseAgain releases the readers and pauses them again once they have
// emitted at records in all (at above the count so far).
func (c *control[T]) pauseAgain(at int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reached, c.isReached = make(chan struct{}), false
	c.checkpointed, c.isCkpt, c.firstPaused = make(chan struct{}), false, 0
	c.pause = true
	c.at.Store(int64(at))
	c.paused = false
}

func (c *control[T]) problem(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.problems) < 20 {
		c.problems = append(c.problems, fmt.Sprintf(format, args...))
	}
}

// Problems returns the breaches of the reader contract seen.
func (c *control[T]) Problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.problems...)
}

// room is how many more records the readers may emit before the pause.
func (c *control[T]) room() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.pause:
		return math.MaxInt
	case c.paused:
		return 0
	case c.isReached:
		return math.MaxInt
	}
	return int(max(c.at.Load()-c.emitted.Load(), 0))
}

func (c *control[T]) count() {
	n := c.emitted.Add(1)
	if at := c.at.Load(); at > 0 && n >= at {
		c.mu.Lock()
		if !c.isReached && n >= c.at.Load() {
			c.isReached = true
			c.paused = c.pause
			close(c.reached)
		}
		c.mu.Unlock()
	}
}

func (c *control[T]) isPaused() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// release lets the readers go on after a pause.
func (c *control[T]) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused = false
}

// snapshotted notes that a reader snapshotted checkpoint id.
func (c *control[T]) snapshotted(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused && c.firstPaused == 0 {
		c.firstPaused = id
	}
}

// completed notes that checkpoint id completed.
func (c *control[T]) completed(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.firstPaused > 0 && id >= c.firstPaused && !c.isCkpt {
		c.isCkpt = true
		close(c.checkpointed)
	}
}

// splitSets returns the splits given to readers and those finished.
func (c *control[T]) splitSets() (added, finished map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	added, finished = map[string]int{}, map[string]int{}
	for k, v := range c.added {
		added[k] = v
	}
	for k, v := range c.finished {
		finished[k] = v
	}
	return added, finished
}

// wrap returns src with its readers watched and steered by c.
func wrap[T any](src connector.Source[T], c *control[T]) connector.Source[T] {
	w := &sourceWrap[T]{src: src, c: c}
	if cs, ok := src.(connector.ChangelogSource); ok {
		return changelogSourceWrap[T]{w, cs.ChangelogMode()}
	}
	return w
}

type sourceWrap[T any] struct {
	src connector.Source[T]
	c   *control[T]
}

type changelogSourceWrap[T any] struct {
	*sourceWrap[T]
	mode changelog.Mode
}

func (s changelogSourceWrap[T]) ChangelogMode() changelog.Mode { return s.mode }

func (s *sourceWrap[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return s.src.NewEnumerator(ctx, restored)
}

func (s *sourceWrap[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	r, err := s.src.NewReader(ctx)
	if err != nil {
		return nil, err
	}
	return &readerWrap[T]{r: r, c: s.c, subtask: ctx.Subtask(), owned: map[string]bool{}, done: map[string]bool{},
		last: map[string]int64{}, outs: map[string]*splitWrap[T]{}}, nil
}

// readerWrap is the reader of the source under test as the suite sees it.
type readerWrap[T any] struct {
	r       connector.Reader[T]
	c       *control[T]
	subtask int
	owned   map[string]bool // splits given and not finished
	done    map[string]bool // splits finished and not given again
	unnamed bool            // a split without ID was given: no checks
	last    map[string]int64
	out     connector.Output[T]
	outs    map[string]*splitWrap[T]
}

func (r *readerWrap[T]) AddSplits(splits []connector.Split) error {
	c := r.c
	c.mu.Lock()
	for _, s := range splits {
		if s.ID == "" {
			r.unnamed = true
			continue
		}
		if o := c.owner[s.ID]; o != nil && o != r {
			c.problems = append(c.problems, fmt.Sprintf("split %q was given to the reader of subtask %d while the reader of subtask %d held it", s.ID, r.subtask, o.subtask))
		} else if o == r {
			c.problems = append(c.problems, fmt.Sprintf("split %q was given twice to the reader of subtask %d", s.ID, r.subtask))
		}
		c.owner[s.ID] = r
		c.added[s.ID]++
		r.owned[s.ID] = true
		delete(r.done, s.ID)
		delete(r.last, s.ID)
	}
	c.mu.Unlock()
	return r.r.AddSplits(splits)
}

func (r *readerWrap[T]) Read(out connector.Output[T]) error {
	if r.c.isPaused() {
		time.Sleep(time.Millisecond)
		return nil
	}
	r.out = out
	return r.r.Read(outputWrap[T]{r})
}

func (r *readerWrap[T]) SnapshotState(id int64) ([]connector.Split, error) {
	splits, err := r.r.SnapshotState(id)
	if err != nil {
		return nil, err
	}
	r.c.snapshotted(id)
	if !r.unnamed {
		got := map[string]bool{}
		for _, s := range splits {
			if got[s.ID] {
				r.c.problem("checkpoint %d: the reader of subtask %d snapshotted split %q twice", id, r.subtask, s.ID)
			}
			got[s.ID] = true
			if !r.owned[s.ID] {
				r.c.problem("checkpoint %d: the reader of subtask %d snapshotted split %q, which it does not hold (finished, or never given)", id, r.subtask, s.ID)
			}
		}
		var missing []string
		for id := range r.owned {
			if !got[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			r.c.problem("checkpoint %d: the reader of subtask %d left out splits it holds and has not finished: %q", id, r.subtask, missing)
		}
	}
	return splits, nil
}

func (r *readerWrap[T]) Close() error {
	r.c.mu.Lock()
	for id := range r.owned {
		if r.c.owner[id] == r {
			delete(r.c.owner, id)
		}
	}
	r.c.mu.Unlock()
	return r.r.Close()
}

func (r *readerWrap[T]) NoMoreSplits() {
	if h, ok := r.r.(connector.NoMoreSplitsHandler); ok {
		h.NoMoreSplits()
	}
}

func (r *readerWrap[T]) HandleEvent(e []byte) error {
	h, ok := r.r.(connector.ReaderEventHandler)
	if !ok {
		return fmt.Errorf("the enumerator sent an event but the %T reader handles none", r.r)
	}
	return h.HandleEvent(e)
}

func (r *readerWrap[T]) NotifyCheckpointComplete(id int64) error {
	r.c.completed(id)
	return connector.NotifyIfListening(r.r, id)
}

type outputWrap[T any] struct{ r *readerWrap[T] }

func (o outputWrap[T]) Room() int { return min(o.r.out.Room(), o.r.c.room()) }

func (o outputWrap[T]) BadRecord(d connector.DeadLetter) error { return o.r.out.BadRecord(d) }

func (o outputWrap[T]) Split(id string) connector.SplitOutput[T] {
	s := o.r.outs[id]
	if s == nil {
		s = &splitWrap[T]{r: o.r, id: id}
		o.r.outs[id] = s
	}
	return s
}

type splitWrap[T any] struct {
	r  *readerWrap[T]
	id string
}

func (s *splitWrap[T]) check(what string) bool {
	r := s.r
	if r.unnamed || r.owned[s.id] {
		return true
	}
	r.c.problem("the reader of subtask %d %s split %q, which it does not hold (finished, or never given)", r.subtask, what, s.id)
	return false
}

func (s *splitWrap[T]) emitted(v T) {
	r := s.r
	s.check("emitted a record of")
	r.c.count()
	if r.c.seq != nil {
		q := r.c.seq(v)
		if last, ok := r.last[s.id]; ok && q < last {
			r.c.problem("split %q emitted a record of sequence %d after one of %d: out of order", s.id, q, last)
		}
		r.last[s.id] = q
	}
}

func (s *splitWrap[T]) Emit(v T) {
	s.emitted(v)
	s.r.out.Split(s.id).Emit(v)
}

func (s *splitWrap[T]) EmitAt(v T, ts int64) {
	s.emitted(v)
	s.r.out.Split(s.id).EmitAt(v, ts)
}

func (s *splitWrap[T]) Finish() {
	r := s.r
	if r.done[s.id] {
		r.out.Split(s.id).Finish() // finishing twice does no harm
		return
	}
	if s.check("finished") && !r.unnamed {
		delete(r.owned, s.id)
		r.done[s.id] = true
		r.c.mu.Lock()
		r.c.finished[s.id]++
		if r.c.owner[s.id] == r {
			delete(r.c.owner, s.id)
		}
		r.c.mu.Unlock()
	}
	r.out.Split(s.id).Finish()
}

package ops

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
)

// LookupJoinLogic is a processing-time lookup join: each change of the
// input joins the rows an external table returns for its key when the
// change is processed.
type LookupJoinLogic[T any, K comparable, R, O any] struct {
	// Key is the lookup key of an input row.
	Key func(T) K
	// Lookup returns the rows of the external table for a key. It is called
	// on goroutines of its own, several at once, unless Sync is set.
	Lookup func(ctx context.Context, key K) ([]R, error)
	// Sync says that Lookup returns at once, without waiting on I/O (a
	// table held in memory): it is called on the operator's goroutine, one
	// key at a time, and Timeout does not apply.
	Sync bool
	// LeftOuter keeps input rows that find no row, with a nil match.
	LeftOuter bool
	// Output makes the result row of an input row and a row found (nil if
	// none). The pointer is valid only during the call.
	Output func(row T, match *R) O
	// Rewind, if set, is called after each input batch once its results
	// have gone to the output (not after a failed one): Output may then
	// write later results into the memory of earlier ones.
	Rewind func()
	// Match, if set, tells whether a row found joins the input row (the
	// rest of a join condition): only those that do give result rows, and
	// with LeftOuter an input row none of whose rows match is kept, with
	// a nil match. The pointer is valid only during the call.
	Match func(row T, found *R) bool
	// Concurrency is the number of lookups in flight per subtask (at least
	// 1).
	Concurrency int
	// CacheRows, if positive, caches the results of lookups, up to that many
	// rows in all (a key that finds nothing counts as one row), evicting the
	// least recently used keys; CacheTTL, if positive, is how long a result
	// stays cached after its lookup.
	CacheRows int
	CacheTTL  time.Duration
	// Timeout, if positive, bounds each attempt of a lookup. Retries is the
	// number of attempts after the first failed one, RetryBackoff the pause
	// before each.
	Timeout      time.Duration
	Retries      int
	RetryBackoff time.Duration
	// Stats, if set, counts what the operator does.
	Stats *LookupCounters
}

// LookupCounters counts what lookup joins do; all subtasks of an operator
// may share one. Its fields may be read at any time.
type LookupCounters struct {
	// Hits counts input changes whose rows came from the cache or from a
	// lookup of the same key already in flight; Misses counts those that
	// started a lookup.
	Hits, Misses atomic.Int64
	// Attempts counts calls of the lookup function, Retries the calls after
	// a failed one.
	Attempts, Retries atomic.Int64
	// InFlight is the number of lookups running now, MaxInFlight the most
	// seen at once in one subtask.
	InFlight, MaxInFlight atomic.Int64
}

// lookupCall is one lookup of a key: its result once it is done.
type lookupCall[K comparable, R any] struct {
	key  K
	rows []R
	err  error
	done bool
	// pooled marks the call of a Sync lookup, which one change alone
	// holds (its queue item, or processSync) and which is used again
	// once the change's results are emitted.
	pooled bool
}

// lookupItem is an input change waiting for its lookup, or a watermark
// waiting for the changes before it.
type lookupItem[T any, K comparable, R any] struct {
	kind changelog.Kind
	row  T
	ts   int64
	call *lookupCall[K, R] // the lookup that gives its rows
	// pairNext is set on a -U followed, in its batch, by the +U of its
	// update: the two go out as one.
	pairNext bool
	isWM     bool
	wm       int64
}

// LookupJoin runs a LookupJoinLogic. It keeps the order of its input: the
// results of a change go out after those of every change before it, and a
// watermark after the results of the changes before it. Lookups run
// asynchronously, up to Concurrency at once per subtask; the operator waits
// for them (and emits their results) before a checkpoint barrier passes, so
// that no lookup is in flight across a checkpoint and the operator has no
// state to keep. A failed lookup (after its retries) fails the job, naming
// the key.
type LookupJoin[T any, K comparable, R, O any] struct {
	ctx   *runtime.Context
	logic LookupJoinLogic[T, K, R, O]
	out   *Emitter[changelog.Change[O]]
	outs  map[string]any

	queue    []lookupItem[T, K, R] // in input order, from head on
	head     int
	inFlight int
	pending  map[K]*lookupCall[K, R] // lookups in flight by key, with a cache
	done     chan *lookupCall[K, R]
	cache    *lookupCache[K, R]
	lctx     context.Context
	cancel   context.CancelFunc
	polling  bool
	stats    *LookupCounters
	rets     []O
	adds     []O
	// failed is the error of a Sync lookup that failed.
	failed error
	// free holds the calls of Sync lookups whose items went out.
	free []*lookupCall[K, R]
}

// maxLookupQueue bounds the input changes an operator holds, waiting for
// lookups, beyond its lookups in flight.
const maxLookupQueue = 1024

// NewLookupJoin returns the operator.
func NewLookupJoin[T any, K comparable, R, O any](ctx *runtime.Context, logic LookupJoinLogic[T, K, R, O], outs map[string]any) *LookupJoin[T, K, R, O] {
	logic.Concurrency = max(logic.Concurrency, 1)
	j := &LookupJoin[T, K, R, O]{ctx: ctx, logic: logic, out: NewEmitter(outs[""].(runtime.Input[changelog.Change[O]])), outs: outs,
		done: make(chan *lookupCall[K, R], logic.Concurrency), stats: logic.Stats}
	if j.stats == nil {
		j.stats = &LookupCounters{}
	}
	if logic.CacheRows > 0 {
		j.cache = newLookupCache[K, R](logic.CacheRows, logic.CacheTTL.Milliseconds())
		j.pending = map[K]*lookupCall[K, R]{}
	}
	j.lctx, j.cancel = context.WithCancel(context.Background())
	go func() {
		select {
		case <-ctx.Done():
			j.cancel()
		case <-j.lctx.Done():
		}
	}()
	return j
}

// ProcessBatch starts the lookups of the batch's changes (or finds their
// rows in the cache) and emits the results that are ready, in order.
func (j *LookupJoin[T, K, R, O]) ProcessBatch(b *runtime.Batch[changelog.Change[T]]) error {
	if j.logic.Sync && j.head == len(j.queue) {
		return j.processSync(b)
	}
	for i := range b.Data {
		c := &b.Data[i]
		for j.inFlight >= j.logic.Concurrency || len(j.queue)-j.head >= maxLookupQueue+j.logic.Concurrency {
			ok, err := j.await(true)
			if !ok || err != nil {
				return err
			}
			if err := j.emitReady(); err != nil {
				return err
			}
		}
		pair := c.Kind == changelog.UpdateBefore && i+1 < len(b.Data) && b.Data[i+1].Kind == changelog.UpdateAfter
		j.queue = append(j.queue, lookupItem[T, K, R]{kind: c.Kind, row: c.Row, ts: b.TS[i], call: j.start(j.logic.Key(c.Row)), pairNext: pair})
		if j.failed != nil {
			return j.failed
		}
	}
	if _, err := j.await(false); err != nil {
		return err
	}
	if err := j.emitReady(); err != nil {
		return err
	}
	j.poll()
	if err := j.out.Flush(); err != nil {
		return err
	}
	if j.logic.Rewind != nil {
		j.logic.Rewind()
	}
	return nil
}

// processSync is ProcessBatch for a Sync logic with nothing queued: each
// lookup is done as it starts, so the results of each change go out at
// once, in input order, without queueing the change. The -U and +U of an
// update go out together, as emitReady sends them.
func (j *LookupJoin[T, K, R, O]) processSync(b *runtime.Batch[changelog.Change[T]]) error {
	for i := 0; i < len(b.Data); i++ {
		c := &b.Data[i]
		it := lookupItem[T, K, R]{kind: c.Kind, row: c.Row, ts: b.TS[i], call: j.start(j.logic.Key(c.Row))}
		if j.failed != nil {
			return j.failed
		}
		if c.Kind == changelog.UpdateBefore && i+1 < len(b.Data) && b.Data[i+1].Kind == changelog.UpdateAfter {
			i++
			n := &b.Data[i]
			next := lookupItem[T, K, R]{kind: n.Kind, row: n.Row, ts: b.TS[i], call: j.start(j.logic.Key(n.Row))}
			if j.failed != nil {
				return j.failed
			}
			j.results(&it, true)
			j.results(&next, false)
			j.emitResults(true, next.ts)
			j.release(it.call)
			j.release(next.call)
			continue
		}
		j.results(&it, it.kind.IsRetraction())
		j.emitResults(false, it.ts)
		j.release(it.call)
	}
	if err := j.out.Flush(); err != nil {
		return err
	}
	if j.logic.Rewind != nil {
		j.logic.Rewind()
	}
	return nil
}

// start returns the lookup of key: a done one from the cache, the one in
// flight for key, or a new one.
func (j *LookupJoin[T, K, R, O]) start(key K) *lookupCall[K, R] {
	if j.cache != nil {
		if rows, ok := j.cache.get(key, j.ctx.ProcessingTime()); ok {
			j.stats.Hits.Add(1)
			return &lookupCall[K, R]{key: key, rows: rows, done: true}
		}
		if c, ok := j.pending[key]; ok {
			j.stats.Hits.Add(1)
			return c
		}
	}
	j.stats.Misses.Add(1)
	if j.logic.Sync {
		var c *lookupCall[K, R]
		if n := len(j.free); n > 0 {
			c, j.free = j.free[n-1], j.free[:n-1]
		} else {
			c = &lookupCall[K, R]{pooled: true}
		}
		c.key = key
		return j.startSync(c)
	}
	c := &lookupCall[K, R]{key: key}
	if j.pending != nil {
		j.pending[key] = c
	}
	j.inFlight++
	j.stats.InFlight.Add(1)
	for n := int64(j.inFlight); ; {
		m := j.stats.MaxInFlight.Load()
		if n <= m || j.stats.MaxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	go func() {
		c.rows, c.err = j.lookup(key)
		j.stats.InFlight.Add(-1)
		j.done <- c
	}()
	return c
}

// startSync runs the lookup of a Sync logic on the operator's goroutine:
// the call is done when it returns, with no channel between, and a failure
// is kept in failed for ProcessBatch to return.
func (j *LookupJoin[T, K, R, O]) startSync(c *lookupCall[K, R]) *lookupCall[K, R] {
	if j.stats.MaxInFlight.Load() < 1 {
		j.stats.MaxInFlight.CompareAndSwap(0, 1)
	}
	c.rows, c.err = j.lookup(c.key)
	c.done = true
	switch {
	case c.err != nil:
		if !errors.Is(c.err, context.Canceled) || j.lctx.Err() == nil {
			j.failed = c.err
		}
	case j.cache != nil:
		j.cache.put(c.key, c.rows, j.ctx.ProcessingTime())
	}
	return c
}

// lookup calls the lookup function for key, with the timeout and retries of
// the logic.
func (j *LookupJoin[T, K, R, O]) lookup(key K) ([]R, error) {
	attempts := 1 + max(j.logic.Retries, 0)
	var err error
	for a := 1; a <= attempts; a++ {
		if a > 1 {
			j.stats.Retries.Add(1)
			if d := j.logic.RetryBackoff; d > 0 {
				select {
				case <-time.After(d):
				case <-j.lctx.Done():
					return nil, j.lctx.Err()
				}
			}
		}
		j.stats.Attempts.Add(1)
		var rows []R
		rows, err = j.attempt(key)
		if err == nil {
			return rows, nil
		}
		if j.lctx.Err() != nil {
			return nil, j.lctx.Err()
		}
	}
	return nil, fmt.Errorf("lookup join: the lookup of key %v failed after %d attempt(s): %w; make the lookup succeed, or allow for failures with LookupRetries and LookupTimeout", key, attempts, err)
}

// attempt makes one call of the lookup function, abandoning it (on its
// goroutine) if it outlives the timeout.
func (j *LookupJoin[T, K, R, O]) attempt(key K) ([]R, error) {
	if j.logic.Timeout <= 0 || j.logic.Sync {
		return j.logic.Lookup(j.lctx, key)
	}
	ctx, cancel := context.WithTimeout(j.lctx, j.logic.Timeout)
	defer cancel()
	type result struct {
		rows []R
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		rows, err := j.logic.Lookup(ctx, key)
		ch <- result{rows, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil && ctx.Err() == context.DeadlineExceeded && j.lctx.Err() == nil {
			return nil, fmt.Errorf("timed out after %v: %w", j.logic.Timeout, r.err)
		}
		return r.rows, r.err
	case <-ctx.Done():
		if j.lctx.Err() != nil {
			return nil, j.lctx.Err()
		}
		return nil, fmt.Errorf("timed out after %v", j.logic.Timeout)
	}
}

// await takes the completed lookups: with block, at least one (if any is in
// flight). It reports false if the job is cancelled meanwhile, and returns
// the error of a failed lookup.
func (j *LookupJoin[T, K, R, O]) await(block bool) (bool, error) {
	if block && j.inFlight > 0 {
		select {
		case c := <-j.done:
			if err := j.complete(c); err != nil {
				return true, err
			}
		case <-j.ctx.Done():
			return false, nil
		}
	}
	for {
		select {
		case c := <-j.done:
			if err := j.complete(c); err != nil {
				return true, err
			}
		default:
			return true, nil
		}
	}
}

// complete records the result of a lookup.
func (j *LookupJoin[T, K, R, O]) complete(c *lookupCall[K, R]) error {
	j.inFlight--
	c.done = true
	if j.pending != nil {
		delete(j.pending, c.key)
	}
	if c.err != nil {
		if errors.Is(c.err, context.Canceled) && j.lctx.Err() != nil {
			return nil
		}
		return c.err
	}
	if j.cache != nil {
		j.cache.put(c.key, c.rows, j.ctx.ProcessingTime())
	}
	return nil
}

// emitReady emits the results of the changes at the head of the queue
// whose lookups are done, and the watermarks among them. The -U and +U of
// an update go out together, as updates of the result rows.
func (j *LookupJoin[T, K, R, O]) emitReady() error {
	for j.head < len(j.queue) {
		it := &j.queue[j.head]
		if it.isWM {
			if err := j.out.Flush(); err != nil {
				return err
			}
			if err := j.out.Out().ProcessWatermark(it.wm); err != nil {
				return err
			}
			if err := ForwardWatermark(j.outs, it.wm); err != nil {
				return err
			}
			j.pop(1)
			continue
		}
		if !it.call.done {
			break
		}
		if !it.pairNext {
			j.results(it, it.kind.IsRetraction())
			j.emitResults(false, it.ts)
			j.pop(1)
			continue
		}
		// The +U is queued right after its -U, in the same batch.
		if j.head+1 == len(j.queue) || !j.queue[j.head+1].call.done {
			break
		}
		next := &j.queue[j.head+1]
		j.results(it, true)
		j.results(next, false)
		j.emitResults(true, next.ts)
		j.pop(2)
	}
	if j.head == len(j.queue) {
		j.queue, j.head = j.queue[:0], 0
	}
	return nil
}

// pop drops n items from the head of the queue.
func (j *LookupJoin[T, K, R, O]) pop(n int) {
	for _, it := range j.queue[j.head : j.head+n] {
		j.release(it.call)
	}
	clear(j.queue[j.head : j.head+n])
	j.head += n
}

// release keeps the call of a Sync lookup for another, once its change
// went out.
func (j *LookupJoin[T, K, R, O]) release(c *lookupCall[K, R]) {
	if c != nil && c.pooled {
		*c = lookupCall[K, R]{pooled: true}
		j.free = append(j.free, c)
	}
}

// results collects the result rows of a change: retractions if retract,
// additions otherwise.
func (j *LookupJoin[T, K, R, O]) results(it *lookupItem[T, K, R], retract bool) {
	dst := &j.adds
	if retract {
		dst = &j.rets
	}
	matched := false
	for i := range it.call.rows {
		if j.logic.Match != nil && !j.logic.Match(it.row, &it.call.rows[i]) {
			continue
		}
		matched = true
		*dst = append(*dst, j.logic.Output(it.row, &it.call.rows[i]))
	}
	if !matched && j.logic.LeftOuter {
		*dst = append(*dst, j.logic.Output(it.row, nil))
	}
}

// emitResults sends the collected results: with update, pairs of a
// retraction and an addition as -U/+U, then the rest as -D and +I.
func (j *LookupJoin[T, K, R, O]) emitResults(update bool, ts int64) {
	p := 0
	if update {
		p = min(len(j.rets), len(j.adds))
		for i := range p {
			j.out.Emit(changelog.Change[O]{Kind: changelog.UpdateBefore, Row: j.rets[i]}, ts)
			j.out.Emit(changelog.Change[O]{Kind: changelog.UpdateAfter, Row: j.adds[i]}, ts)
		}
	}
	for _, v := range j.rets[p:] {
		j.out.Emit(changelog.Change[O]{Kind: changelog.Delete, Row: v}, ts)
	}
	for _, v := range j.adds[p:] {
		j.out.Emit(changelog.Change[O]{Kind: changelog.Insert, Row: v}, ts)
	}
	clear(j.rets)
	clear(j.adds)
	j.rets, j.adds = j.rets[:0], j.adds[:0]
}

// poll makes sure that results waiting for lookups go out when the lookups
// complete, even if no input comes: while some wait, it checks every
// millisecond.
func (j *LookupJoin[T, K, R, O]) poll() {
	if j.polling || j.head == len(j.queue) {
		return
	}
	j.polling = true
	j.ctx.WakeAt(j.ctx.ProcessingTime()+1, func(int64) error {
		j.polling = false
		if _, err := j.await(false); err != nil {
			return err
		}
		if err := j.emitReady(); err != nil {
			return err
		}
		j.poll()
		return j.out.Flush()
	})
}

// drain waits for every lookup in flight and emits every result. It
// reports false if the job is cancelled meanwhile.
func (j *LookupJoin[T, K, R, O]) drain() (bool, error) {
	for j.inFlight > 0 {
		ok, err := j.await(true)
		if !ok || err != nil {
			return ok, err
		}
	}
	if err := j.emitReady(); err != nil {
		return true, err
	}
	return true, j.out.Flush()
}

// ProcessWatermark forwards wm after the results of the changes before it.
func (j *LookupJoin[T, K, R, O]) ProcessWatermark(wm int64) error {
	if j.head == len(j.queue) {
		if err := j.out.Flush(); err != nil {
			return err
		}
		if err := j.out.Out().ProcessWatermark(wm); err != nil {
			return err
		}
		return ForwardWatermark(j.outs, wm)
	}
	j.queue = append(j.queue, lookupItem[T, K, R]{isWM: true, wm: wm})
	if err := j.emitReady(); err != nil {
		return err
	}
	j.poll()
	return j.out.Flush()
}

// SnapshotState waits for the lookups in flight and emits their results
// ahead of the barrier: the operator has nothing left to keep.
func (j *LookupJoin[T, K, R, O]) SnapshotState(int64) (*runtime.OperatorSnapshot, error) {
	_, err := j.drain()
	return nil, err
}

// EndInput emits every result and ends the output.
func (j *LookupJoin[T, K, R, O]) EndInput() error {
	if ok, err := j.drain(); !ok || err != nil {
		return err
	}
	if err := j.out.Out().EndInput(); err != nil {
		return err
	}
	return ForwardEnd(j.outs)
}

// Close abandons the lookups in flight.
func (j *LookupJoin[T, K, R, O]) Close() error {
	j.cancel()
	return nil
}

// lookupCache is a cache of lookup results: at most maxRows rows, the
// least recently used keys evicted first, each result kept for ttl ms
// (forever if 0).
type lookupCache[K comparable, R any] struct {
	maxRows, rows int
	ttl           int64
	m             map[K]*cacheNode[K, R]
	lru           cacheNode[K, R] // sentinel: lru.next is the most recent
}

type cacheNode[K comparable, R any] struct {
	key        K
	rows       []R
	at         int64
	prev, next *cacheNode[K, R]
}

func newLookupCache[K comparable, R any](maxRows int, ttl int64) *lookupCache[K, R] {
	c := &lookupCache[K, R]{maxRows: maxRows, ttl: ttl, m: map[K]*cacheNode[K, R]{}}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	return c
}

func weight[R any](rows []R) int { return max(len(rows), 1) }

func (c *lookupCache[K, R]) unlink(n *cacheNode[K, R]) {
	n.prev.next, n.next.prev = n.next, n.prev
}

func (c *lookupCache[K, R]) pushFront(n *cacheNode[K, R]) {
	n.prev, n.next = &c.lru, c.lru.next
	c.lru.next.prev = n
	c.lru.next = n
}

func (c *lookupCache[K, R]) remove(n *cacheNode[K, R]) {
	c.unlink(n)
	delete(c.m, n.key)
	c.rows -= weight(n.rows)
}

// get returns the cached rows of key at processing time now.
func (c *lookupCache[K, R]) get(key K, now int64) ([]R, bool) {
	n, ok := c.m[key]
	if !ok {
		return nil, false
	}
	if c.ttl > 0 && n.at+c.ttl <= now {
		c.remove(n)
		return nil, false
	}
	c.unlink(n)
	c.pushFront(n)
	return n.rows, true
}

// put caches the rows of key, looked up at now.
func (c *lookupCache[K, R]) put(key K, rows []R, now int64) {
	if n, ok := c.m[key]; ok {
		c.remove(n)
	}
	w := weight(rows)
	if w > c.maxRows {
		return
	}
	for c.rows+w > c.maxRows {
		c.remove(c.lru.prev)
	}
	n := &cacheNode[K, R]{key: key, rows: rows, at: now}
	c.m[key] = n
	c.pushFront(n)
	c.rows += w
}

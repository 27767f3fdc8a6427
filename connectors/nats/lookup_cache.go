package nats

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/eddystream/eddy/sql/types"
)

// partialCache is the cache of 'lookup.cache' = 'PARTIAL', Flink's partial
// lookup cache: the rows of the keys looked up, the least recently used
// evicted first beyond maxRows rows (a key without rows counting as one),
// each expiring a time after it was read or last used. Each entry keeps
// the revision it was read at, so that a watcher of the bucket drops the
// entries its changes make stale (changed), including those of reads in
// flight when the change comes (begin, end).
type partialCache struct {
	maxRows              int64
	afterWrite, afterUse time.Duration
	cacheMissing         bool
	now                  func() time.Time

	mu       sync.Mutex
	order    *list.List // of *cacheEntry, most recently used first
	byKey    map[string]*list.Element
	rows     int64
	inflight map[string]*inflight
}

type cacheEntry struct {
	key           string
	rows          []types.Row
	rev           uint64 // 0: the bucket did not hold the key
	written, used time.Time
}

// inflight are the reads of a key under way, and the latest revision of
// the key a change announced while they ran.
type inflight struct {
	n      int
	latest uint64
}

func newPartialCache(c *config, now func() time.Time) *partialCache {
	return &partialCache{maxRows: c.cacheRows, afterWrite: c.expireWrite, afterUse: c.expireAccess, cacheMissing: c.cacheMissing,
		now: now, order: list.New(), byKey: map[string]*list.Element{}, inflight: map[string]*inflight{}}
}

func weight(rows []types.Row) int64 { return max(int64(len(rows)), 1) }

// get returns the cached rows of k.
func (c *partialCache) get(k string) ([]types.Row, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	now := c.now()
	if (c.afterWrite > 0 && now.Sub(e.written) >= c.afterWrite) || (c.afterUse > 0 && now.Sub(e.used) >= c.afterUse) {
		c.remove(el)
		return nil, false
	}
	e.used = now
	c.order.MoveToFront(el)
	return e.rows, true
}

// begin notes a read of k starting; end takes its token.
func (c *partialCache) begin(k string) *inflight {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.inflight[k]
	if f == nil {
		f = &inflight{}
		c.inflight[k] = f
	}
	f.n++
	return f
}

// end caches the rows of k read at revision rev (if ok), unless a change
// to a later revision came while the read ran.
func (c *partialCache) end(f *inflight, k string, rows []types.Row, rev uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.n--; f.n == 0 {
		delete(c.inflight, k)
	}
	if !ok || f.latest > rev || (len(rows) == 0 && !c.cacheMissing) {
		return
	}
	if el, ok := c.byKey[k]; ok {
		if el.Value.(*cacheEntry).rev > rev {
			return // a later read got there first
		}
		c.remove(el)
	}
	now := c.now()
	c.byKey[k] = c.order.PushFront(&cacheEntry{key: k, rows: rows, rev: rev, written: now, used: now})
	c.rows += weight(rows)
	for c.maxRows > 0 && c.rows > c.maxRows && c.order.Len() > 1 {
		c.remove(c.order.Back())
	}
}

// changed drops the entry of k if the change to revision rev supersedes
// it, and marks the reads of k in flight.
func (c *partialCache) changed(k string, rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.inflight[k]; f != nil && rev > f.latest {
		f.latest = rev
	}
	if el, ok := c.byKey[k]; ok && el.Value.(*cacheEntry).rev < rev {
		c.remove(el)
	}
}

func (c *partialCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.byKey, e.key)
	c.rows -= weight(e.rows)
}

// errClosed is the error of a lookup whose connection closed under it.
var errClosed = errors.New("the connection to the bucket closed")

// fullTable is the bucket of 'lookup.cache' = 'FULL': the rows of every
// key (or the error decoding its value), loaded by a watcher and kept up
// to date by it.
type fullTable struct {
	loaded chan struct{}
	once   sync.Once
	mu     sync.RWMutex
	byKey  map[string]fullEntry
}

type fullEntry struct {
	rows []types.Row
	err  error
}

func newFullTable() *fullTable {
	return &fullTable{loaded: make(chan struct{}), byKey: map[string]fullEntry{}}
}

func (t *fullTable) markLoaded() { t.once.Do(func() { close(t.loaded) }) }

// set sets the rows of k; no rows and no error remove it.
func (t *fullTable) set(k string, rows []types.Row, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(rows) == 0 && err == nil {
		delete(t.byKey, k)
		return
	}
	t.byKey[k] = fullEntry{rows, err}
}

func (t *fullTable) remove(k string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byKey, k)
}

// get returns the rows of k once the bucket is loaded.
func (t *fullTable) get(ctx context.Context, k string, closed <-chan struct{}) ([]types.Row, error) {
	select {
	case <-t.loaded:
	default:
		select {
		case <-t.loaded:
		case <-closed:
			return nil, errClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	e := t.byKey[k]
	return e.rows, e.err
}

package jdbc

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// Lookups: a parameterised query per lookup (WHERE k1 = $1 AND k2 = $2),
// prepared once per connection, on connections of a small pool shared by
// the subtasks of the join (a lookup function is not told its subtask).
// With 'lookup.cache' = 'PARTIAL' the rows of a key are kept, as the
// 'lookup.partial-cache.*' options say.

// maxLookupConns bounds the connections of one lookup join: lookups beyond
// wait for a free one.
const maxLookupConns = 8

// lookupIdle is how long an idle lookup connection is kept: a lookup
// function is not told when its job ends, so its connections close once
// unused for this long.
const lookupIdle = 30 * time.Second

// NewLookup returns the lookup of the table's rows by the columns keys
// (any declared columns). It connects once and checks that the table's
// columns read as declared.
func (s *Source) NewLookup(keys []int) (connector.LookupFunc, error) {
	l, err := s.newLookup(keys)
	if err != nil {
		return nil, err
	}
	return l.lookup, nil
}

func (s *Source) newLookup(keys []int) (*lookup, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("jdbc: a lookup in %s needs at least one key column", s.cfg.where())
	}
	names := s.table.Schema.Names()
	var where []string
	var fs []types.Field
	for j, k := range keys {
		if k < 0 || k >= len(names) {
			return nil, fmt.Errorf("jdbc: lookup key column %d is not a column of %s (it has %d)", k, s.cfg.where(), len(names))
		}
		where = append(where, s.d.quote(names[k])+" = "+s.d.param(j+1))
		fs = append(fs, types.F(names[k], s.table.Schema.FieldType(k).Nullable()))
	}
	sel := make([]string, len(names))
	for i, n := range names {
		sel[i] = s.d.quote(n)
	}
	l := &lookup{
		src: s, keyRT: types.MustRowType(fs...), sem: make(chan struct{}, maxLookupConns), idle: make(chan *lookupConn, maxLookupConns),
		query: "SELECT " + strings.Join(sel, ", ") + " FROM " + s.d.quoteTable(s.cfg.table) + " WHERE " + strings.Join(where, " AND "),
	}
	kcols := make([]int, len(keys))
	for j := range kcols {
		kcols[j] = j
	}
	l.keyEnc = types.NewKeyEncoder(l.keyRT, kcols...)
	if s.cfg.cache {
		l.cache = newRowCache(s.cfg.cacheRows, s.cfg.expireWrite, s.cfg.expireAccess, time.Now)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.connectTimeout+time.Minute)
	defer cancel()
	c, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	l.put(c)
	return l, nil
}

// lookup is the lookup function of one join.
type lookup struct {
	src    *Source
	query  string
	keyRT  *types.RowType
	keyEnc *types.KeyEncoder
	cache  *rowCache
	// sem holds a token per open connection; idle holds the connections
	// not in use (it has room for all).
	sem  chan struct{}
	idle chan *lookupConn

	mu      sync.Mutex
	dbCols  map[string]dbColumn
	janitor bool

	// hits and misses count the lookups answered by the cache and those
	// that queried the database.
	hits, misses atomic.Int64
}

// lookupConn is a connection of the pool with its decoder.
type lookupConn struct {
	conn readConn
	dec  *decoder
	used time.Time
}

// open opens a connection; the first checks the table's columns.
func (l *lookup) open(ctx context.Context) (*lookupConn, error) {
	s := l.src
	cctx, cancel := context.WithTimeout(ctx, s.cfg.connectTimeout)
	defer cancel()
	conn, err := connectRead(cctx, s.cfg.config)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	cols := l.dbCols
	l.mu.Unlock()
	if cols == nil {
		if cols, err = conn.columns(ctx); err != nil {
			conn.close()
			return nil, err
		}
		l.mu.Lock()
		l.dbCols = cols
		l.mu.Unlock()
	}
	all := make([]int, s.table.Schema.Len())
	for i := range all {
		all[i] = i
	}
	dec, err := newDecoder(s.cfg.config, s.table, all, cols, types.NewArena(1<<14))
	if err != nil {
		conn.close()
		return nil, err
	}
	return &lookupConn{conn: conn, dec: dec}, nil
}

// get returns an idle connection, or a new one while fewer than
// maxLookupConns are open, or waits for one of those.
func (l *lookup) get(ctx context.Context) (*lookupConn, error) {
	select {
	case c := <-l.idle:
		return c, nil
	default:
	}
	select {
	case c := <-l.idle:
		return c, nil
	case l.sem <- struct{}{}:
		c, err := l.open(ctx)
		if err != nil {
			<-l.sem
		}
		return c, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// put returns a connection to the pool.
func (l *lookup) put(c *lookupConn) {
	c.used = time.Now()
	l.idle <- c // never blocks: it has room for every open connection
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.janitor {
		l.janitor = true
		time.AfterFunc(lookupIdle, l.sweep)
	}
}

// drop closes a connection that failed and frees its slot.
func (l *lookup) drop(c *lookupConn) {
	c.conn.close()
	<-l.sem
}

// sweep closes the connections idle for lookupIdle, and runs again while
// some stay open.
func (l *lookup) sweep() {
	var keep []*lookupConn
	for more := true; more; {
		select {
		case c := <-l.idle:
			if time.Since(c.used) >= lookupIdle {
				l.drop(c)
			} else {
				keep = append(keep, c)
			}
		default:
			more = false
		}
	}
	for _, c := range keep {
		l.idle <- c
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.sem) > 0 {
		time.AfterFunc(lookupIdle, l.sweep)
	} else {
		l.janitor = false
	}
}

// lookup returns the rows whose key columns equal key. A key with a NULL
// finds nothing, as '=' in SQL.
func (l *lookup) lookup(ctx context.Context, key types.Row) ([]types.Row, error) {
	if key.AnyNull() {
		return nil, nil
	}
	var k string
	if l.cache != nil {
		k = l.keyEnc.Key(key)
		if rows, ok := l.cache.get(k); ok {
			l.hits.Add(1)
			return rows, nil
		}
	}
	l.misses.Add(1)
	args := make([]any, l.keyRT.Len())
	for j := range args {
		args[j] = goValue(l.keyRT, key, j, l.src.d.mysql)
	}
	var err error
	for attempt := 0; attempt <= l.src.cfg.lookupRetries; attempt++ {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		var rows []types.Row
		rows, err = l.once(ctx, args)
		if err == nil {
			if l.cache != nil && (len(rows) > 0 || l.src.cfg.cacheMissing) {
				l.cache.put(k, rows)
			}
			return rows, nil
		}
		var fe *fieldError
		if errors.As(err, &fe) || ctx.Err() != nil {
			break // reading it again gives the same
		}
	}
	return nil, fmt.Errorf("jdbc: looking up %v in %s (after %d retries, 'lookup.max-retries'): %w",
		types.RowValues(l.keyRT, key), l.src.cfg.where(), l.src.cfg.lookupRetries, err)
}

// once runs the lookup's query on a connection of the pool; a connection
// that fails is closed, so that a retry connects anew.
func (l *lookup) once(ctx context.Context, args []any) ([]types.Row, error) {
	c, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	var rows []types.Row
	err = c.conn.query(ctx, l.query, args, 0, c.dec, func(r types.Row) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		l.drop(c)
		return nil, err
	}
	l.put(c)
	return rows, nil
}

// rowCache is the partial cache of a lookup: the rows of keys, the least
// recently used evicted first beyond maxRows rows (a key without rows
// counting as one), each expiring a time after it was written or last
// read.
type rowCache struct {
	maxRows              int64
	afterWrite, afterUse time.Duration
	now                  func() time.Time

	mu    sync.Mutex
	order *list.List // of *cacheEntry, most recently used first
	byKey map[string]*list.Element
	rows  int64
}

type cacheEntry struct {
	key           string
	rows          []types.Row
	written, used time.Time
}

func newRowCache(maxRows int64, afterWrite, afterUse time.Duration, now func() time.Time) *rowCache {
	return &rowCache{maxRows: maxRows, afterWrite: afterWrite, afterUse: afterUse, now: now, order: list.New(), byKey: map[string]*list.Element{}}
}

func weight(rows []types.Row) int64 { return max(int64(len(rows)), 1) }

func (c *rowCache) get(k string) ([]types.Row, bool) {
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

func (c *rowCache) put(k string, rows []types.Row) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.remove(el)
	}
	now := c.now()
	c.byKey[k] = c.order.PushFront(&cacheEntry{key: k, rows: rows, written: now, used: now})
	c.rows += weight(rows)
	for c.maxRows > 0 && c.rows > c.maxRows && c.order.Len() > 1 {
		c.remove(c.order.Back())
	}
}

func (c *rowCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.byKey, e.key)
	c.rows -= weight(e.rows)
}

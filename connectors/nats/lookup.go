package nats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// Lookups of a bucket: 'NONE' gets each key from the bucket (a direct get,
// one round trip); 'PARTIAL' keeps the rows of the keys looked up in a
// cache (lookup_cache.go) that a watcher of the bucket's changes keeps
// fresh; 'FULL' holds the whole bucket, loaded and kept up to date by a
// watcher. A lookup function is not told when its job ends: its connection
// (and watcher, and cache) closes once unused for lookupIdle, and the next
// lookup opens them again.

// lookupIdle is how long an unused lookup keeps its connection.
var lookupIdle = time.Minute

// bucketSource is the source of a bucket's table: looked up by key, never
// read whole.
type bucketSource struct {
	cfg *config
	bt  *bucketTable
	// newValueDecoder makes the decoders of values: the table's columns,
	// the key nullable (a value need not hold it).
	newValueDecoder func() connector.Decoder[connector.TableRecord]
}

func newBucketSource(c *config, ctx connector.Context) (any, error) {
	bt, err := c.newBucketTable(ctx)
	if err != nil {
		return nil, err
	}
	fs := ctx.Table.Schema.Fields()
	fs[bt.keyCol].Type = fs[bt.keyCol].Type.Nullable()
	vctx := ctx
	vctx.Table = &connector.Table{Name: ctx.Table.Name, Schema: types.MustRowType(fs...)}
	newDec, err := connector.DecoderMaker[connector.TableRecord](vctx)
	if err != nil {
		return nil, err
	}
	return &bucketSource{cfg: c, bt: bt, newValueDecoder: newDec}, nil
}

// ChangelogMode says that the table's rows are insertions.
func (s *bucketSource) ChangelogMode() changelog.Mode { return changelog.InsertOnly }

func (s *bucketSource) notScanned() error {
	return fmt.Errorf("nats %q: the table of bucket %q is looked up by key in lookup joins (JOIN ... FOR SYSTEM_TIME AS OF <proctime> ON ... = <key>), not read whole; to read the bucket's changes, read its stream: 'stream' = 'KV_%s'", s.cfg.name, s.cfg.bucket, s.cfg.bucket)
}

// NewEnumerator fails: a bucket's table is not scanned.
func (s *bucketSource) NewEnumerator(connector.EnumeratorContext, []byte) (connector.Enumerator, error) {
	return nil, s.notScanned()
}

// NewReader fails: a bucket's table is not scanned.
func (s *bucketSource) NewReader(connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	return nil, s.notScanned()
}

// SyncLookup says that the lookups of a full cache return at once (after
// the load at the first).
func (s *bucketSource) SyncLookup() bool { return s.cfg.cache == cacheFull }

// NewLookup returns the lookup of the table's rows by the columns keys,
// which must include the key; the rows found for the key are compared
// with the other columns. It opens the bucket once, to check it exists.
func (s *bucketSource) NewLookup(keys []int) (connector.LookupFunc, error) {
	l, err := s.newLookup(keys)
	if err != nil {
		return nil, err
	}
	return l.lookup, nil
}

func (s *bucketSource) newLookup(keys []int) (*kvLookup, error) {
	schema := s.bt.table.Schema
	pos := -1
	var fs []types.Field
	for j, k := range keys {
		if k < 0 || k >= schema.Len() {
			return nil, fmt.Errorf("nats %q: lookup column %d is not a column of the table of bucket %q (it has %d)", s.cfg.name, k, s.cfg.bucket, schema.Len())
		}
		if k == s.bt.keyCol {
			pos = j
		}
		fs = append(fs, types.F(schema.Field(k).Name, schema.FieldType(k).Nullable()))
	}
	if pos < 0 {
		name := schema.Field(s.bt.keyCol).Name
		return nil, fmt.Errorf("nats %q: bucket %q is looked up by its key, column %s; join on it (ON ... = %s.%s)", s.cfg.name, s.cfg.bucket, name, s.bt.table.Name, name)
	}
	l := &kvLookup{src: s, keys: keys, pos: pos, keyRT: types.MustRowType(fs...)}
	l.builders.New = func() any { return l.src.newBuilder() }
	if _, err := l.conn(); err != nil {
		return nil, err
	}
	return l, nil
}

// rowBuilder makes the rows of values.
type rowBuilder struct {
	bt   *bucketTable
	dec  connector.Decoder[connector.TableRecord]
	w    *types.RowWriter
	rows []types.Row
	err  error
	key  func(w *types.RowWriter) bool // sets the key column
	emit func(connector.TableRecord)
}

func (s *bucketSource) newBuilder() *rowBuilder {
	b := &rowBuilder{bt: s.bt, dec: s.newValueDecoder(), w: types.NewRowWriter(s.bt.table.Schema, types.NewScratchArena())}
	n := s.bt.table.Schema.Len()
	b.emit = func(v connector.TableRecord) {
		if v.Kind.IsRetraction() || b.err != nil {
			return
		}
		for i := 0; i < n; i++ {
			if i != b.bt.keyCol {
				b.w.CopyField(i, v.Row, i)
			}
		}
		if !b.key(b.w) {
			b.w.Reset()
			return
		}
		b.rows = append(b.rows, b.w.Finish().Clone())
	}
	return b
}

// build returns the rows of a value, the key column set by key (which
// returns false for a key no lookup finds).
func (b *rowBuilder) build(data []byte, key func(w *types.RowWriter) bool) ([]types.Row, error) {
	b.rows, b.err, b.key = nil, nil, key
	if err := b.dec.Decode(data, b.emit); err != nil {
		return nil, err
	}
	return b.rows, b.err
}

// kvLookup is the lookup function of one lookup join, shared by its
// subtasks.
type kvLookup struct {
	src      *bucketSource
	keys     []int          // the looked-up columns
	pos      int            // the position of the key in keys
	keyRT    *types.RowType // the type of key rows
	builders sync.Pool      // of *rowBuilder

	cur     atomic.Pointer[kvConn]
	used    atomic.Int64 // when a lookup last ran, in Unix nanoseconds
	mu      sync.Mutex   // held while opening and by the janitor
	janitor bool
}

// kvConn is the open bucket of a lookup, with its cache and watcher.
type kvConn struct {
	l      *kvLookup
	nc     *natsgo.Conn
	kv     jetstream.KeyValue
	w      jetstream.KeyWatcher
	cache  *partialCache // 'PARTIAL'
	full   *fullTable    // 'FULL'
	done   chan struct{} // closed when the connection is closed
	once   sync.Once
	closed atomic.Bool
}

// conn returns the open bucket, opening it if need be.
func (l *kvLookup) conn() (*kvConn, error) {
	l.used.Store(time.Now().UnixNano())
	if c := l.cur.Load(); c != nil && !c.closed.Load() {
		return c, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.cur.Load(); c != nil && !c.closed.Load() {
		return c, nil
	}
	c, err := l.open()
	if err != nil {
		return nil, err
	}
	l.cur.Store(c)
	if !l.janitor {
		l.janitor = true
		time.AfterFunc(lookupIdle, l.sweep)
	}
	return c, nil
}

// sweep closes the connection once unused for lookupIdle, and runs again
// while it is open.
func (l *kvLookup) sweep() {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cur.Load()
	if c == nil || c.closed.Load() {
		l.janitor = false
		return
	}
	idle := time.Since(time.Unix(0, l.used.Load()))
	if idle >= lookupIdle {
		c.close()
		l.janitor = false
		return
	}
	time.AfterFunc(lookupIdle-idle, l.sweep)
}

// open connects, opens the bucket and, with a watched cache, starts the
// watcher.
func (l *kvLookup) open() (*kvConn, error) {
	cfg := l.src.cfg
	c := &kvConn{l: l, done: make(chan struct{})}
	watched := cfg.cache == cacheFull || (cfg.cache == cachePartial && cfg.watch)
	var extra []natsgo.Option
	if watched {
		// A watcher cut off may miss changes: the cache it keeps fresh is
		// dropped with the connection, and the next lookup starts anew.
		extra = append(extra, natsgo.DisconnectErrHandler(func(*natsgo.Conn, error) { go c.close() }))
	}
	nc, _, kv, err := cfg.keyValue("lookup of "+cfg.name, nil, extra...)
	if err != nil {
		return nil, err
	}
	c.nc, c.kv = nc, kv
	// The watcher's subscription lives as long as its context.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-c.done
		cancel()
	}()
	switch cfg.cache {
	case cachePartial:
		c.cache = newPartialCache(cfg, time.Now)
		if cfg.watch {
			w, err := kv.WatchAll(ctx, jetstream.UpdatesOnly(), jetstream.MetaOnly())
			if err != nil {
				c.close()
				return nil, fmt.Errorf("nats %q: watching bucket %q: %w", cfg.name, cfg.bucket, err)
			}
			c.w = w
			go c.invalidate()
		}
	case cacheFull:
		c.full = newFullTable()
		w, err := kv.WatchAll(ctx)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("nats %q: watching bucket %q: %w", cfg.name, cfg.bucket, err)
		}
		c.w = w
		go c.load()
	}
	return c, nil
}

// close closes the connection: lookups after it open a new one.
func (c *kvConn) close() {
	c.once.Do(func() {
		c.closed.Store(true)
		close(c.done)
		if c.w != nil {
			_ = c.w.Stop()
		}
		c.nc.Close()
	})
}

// invalidate drops from the partial cache the keys the bucket's changes
// change, until the watcher ends.
func (c *kvConn) invalidate() {
	defer c.close()
	for e := range c.w.Updates() {
		if e != nil {
			c.cache.changed(e.Key(), e.Revision())
		}
	}
}

// load keeps the full table: the bucket's keys first, then every change.
func (c *kvConn) load() {
	defer c.close()
	b := c.l.src.newBuilder()
	kt := c.l.src.bt.keyT
	col := c.l.src.bt.keyCol
	for e := range c.w.Updates() {
		if e == nil {
			c.full.markLoaded()
			continue
		}
		k := e.Key()
		if e.Operation() != jetstream.KeyValuePut {
			c.full.remove(k)
			continue
		}
		rows, err := b.build(e.Value(), func(w *types.RowWriter) bool { return parseKey(kt, w, col, k) })
		if err != nil {
			err = fmt.Errorf("decoding the value of key %q (revision %d): %w", k, e.Revision(), err)
		}
		c.full.set(k, rows, err)
	}
}

// lookup returns the rows of the key. A NULL key, and a key that no
// bucket can hold, find nothing.
func (l *kvLookup) lookup(ctx context.Context, key types.Row) ([]types.Row, error) {
	if key.AnyNull() {
		return nil, nil
	}
	k, _ := renderKey(l.keyRT.FieldType(l.pos), key, l.pos)
	if !validKey(k) {
		return nil, nil
	}
	cfg := l.src.cfg
	var err error
	for attempt := 0; attempt <= cfg.lookupRetries; attempt++ {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		var rows []types.Row
		if rows, err = l.once(ctx, k, key); err == nil {
			return l.match(rows, key), nil
		}
		var de *decodeError
		if errors.As(err, &de) || ctx.Err() != nil {
			break // reading it again gives the same
		}
	}
	return nil, fmt.Errorf("nats %q: looking up key %q in bucket %q (after %d retries, 'lookup.max-retries'): %w", cfg.name, k, cfg.bucket, cfg.lookupRetries, err)
}

// decodeError is a value the format cannot decode.
type decodeError struct{ err error }

// Error says what the format found wrong.
func (e *decodeError) Error() string { return e.err.Error() }

// Unwrap returns the format's error.
func (e *decodeError) Unwrap() error { return e.err }

// once looks the key k (of the key row key) up once.
func (l *kvLookup) once(ctx context.Context, k string, key types.Row) ([]types.Row, error) {
	c, err := l.conn()
	if err != nil {
		return nil, err
	}
	if c.full != nil {
		rows, err := c.full.get(ctx, k, c.done)
		if err != nil && !errors.Is(err, errClosed) && ctx.Err() == nil {
			return nil, &decodeError{err}
		}
		return rows, err
	}
	var tok *inflight
	if c.cache != nil {
		if rows, ok := c.cache.get(k); ok {
			return rows, nil
		}
		tok = c.cache.begin(k)
	}
	rows, rev, err := l.get(ctx, c, k, key)
	if c.cache != nil {
		c.cache.end(tok, k, rows, rev, err == nil)
	}
	return rows, err
}

// get reads the key from the bucket: its rows and revision (0 if the
// bucket does not hold it).
func (l *kvLookup) get(ctx context.Context, c *kvConn, k string, key types.Row) ([]types.Row, uint64, error) {
	gctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	e, err := c.kv.Get(gctx, k)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	}
	b := l.builders.Get().(*rowBuilder)
	defer l.builders.Put(b)
	col, pos := l.src.bt.keyCol, l.pos
	rows, err := b.build(e.Value(), func(w *types.RowWriter) bool {
		w.CopyField(col, key, pos)
		return true
	})
	if err != nil {
		return nil, 0, &decodeError{fmt.Errorf("decoding the value of revision %d: %w", e.Revision(), err)}
	}
	return rows, e.Revision(), nil
}

// match keeps the rows whose other looked-up columns equal the key's.
func (l *kvLookup) match(rows []types.Row, key types.Row) []types.Row {
	if len(l.keys) == 1 || len(rows) == 0 {
		return rows
	}
	schema := l.src.bt.table.Schema
	var out []types.Row
next:
	for _, r := range rows {
		for j, col := range l.keys {
			if j == l.pos {
				continue
			}
			a := types.FieldValue(schema, r, col)
			if a == nil {
				continue next
			}
			c, err := types.CompareValues(schema.FieldType(col).Nullable(), a, types.FieldValue(l.keyRT, key, j))
			if err != nil || c != 0 {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

package kv

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"
)

// CacheHost is implemented by a Store (of a bytes backend) that hosts a
// write-back cache of decoded entries in front of the typed tables made on
// it (state.NewValueTable, state.NewMapTable). On a host, table reads that
// hit the cache neither encode nor decode nor touch the store, and writes
// stay in the cache, marked dirty, until they are flushed or evicted. On a
// Store that does not implement CacheHost, every table call goes to the
// store.
//
// CacheOf attaches one Cache to a host, when the first table is made on
// it, if CacheBudget is positive then. The host keeps the cache
// coherent with the calls it receives directly, from snapshot code say:
//
//   - Scan(prefix) first calls Flush(prefix) on every attached cache, so that
//     it reads every write made before it;
//   - DeletePrefix(prefix), Set(key) and Delete(key) first call
//     Invalidate(prefix or key) on every attached cache, so that no cached
//     entry survives the write it is superseded by;
//   - Get does neither: it does not see writes still in a cache;
//   - before the host persists its state by other means than Scan (a Pebble
//     checkpoint, say), it calls Flush(nil) on every attached cache.
//
// Concurrency: like every backend, on the subtask's goroutine only, except
// TableCache.Bytes.
type CacheHost interface {
	Store
	// CacheBudget returns the bytes that the caches attached to the host may
	// hold together, as estimated (see TableCache.Bytes). A cache asks again
	// now and then, so the budget may change while the host is open; 0 or
	// less when the first table is made means no cache.
	CacheBudget() int64
	// AttachCache registers c; from then on the host calls it as the type
	// comment says.
	AttachCache(c TableCache)
	// Caches returns the attached caches, in the order they were attached.
	Caches() []TableCache
	// NewWriteBatch returns an empty batch of writes, which caches use to
	// write dirty entries back in one go.
	NewWriteBatch() WriteBatch
}

// TableCache is the view a CacheHost has of a cache of its tables' entries.
// Keys and prefixes are the store's (see Store).
type TableCache interface {
	// Flush writes every dirty cached entry whose key starts with prefix to
	// the host, in one WriteBatch; a nil or empty prefix flushes all. It may
	// write more than asked (a superset of the prefix), never less.
	Flush(prefix []byte)
	// Invalidate drops every cached entry whose key starts with prefix,
	// dirty or not, without writing it: the host is about to overwrite or
	// delete those keys. A nil or empty prefix drops all.
	Invalidate(prefix []byte)
	// Bytes returns the estimated bytes the cache holds: per entry, the
	// encoded lengths of its key and value as last seen when the entry was
	// read from or written to the host, plus a fixed overhead. It is safe
	// for concurrent use and may lag the cache by a few entries.
	Bytes() int64
}

// SortedWriteHost is implemented by a CacheHost that takes a large set of
// writes more cheaply in key order than in any order (Pebble writes them
// as a table file and ingests it, with no memtable inserts). A cache writes
// back all its dirty entries through it.
type SortedWriteHost interface {
	// NewSortedBatch returns an empty batch whose Set and Delete calls must
	// come in strictly increasing key order.
	NewSortedBatch() WriteBatch
}

// WriteBatch is a set of writes a CacheHost applies together. Failures
// panic with a *BackendError, as the Store methods do.
type WriteBatch interface {
	// Set stores value under key. The batch does not retain key or value.
	Set(key, value []byte)
	// Delete removes key.
	Delete(key []byte)
	// Commit applies the writes, without syncing. The batch must not be
	// used after.
	Commit()
}

// CacheEntryOverhead is the bytes a cached entry is charged beyond the
// encoded lengths of its key and value: its slot, its share of the index
// maps and the headers of its decoded value.
const CacheEntryOverhead = 96

// Cache tuning.
const (
	// cacheLowWater is the fraction of the budget an eviction frees down
	// to (budget − budget/cacheLowWater), so that evictions come in rounds
	// whose writes share a batch.
	cacheLowWater = 8
	// cacheRefreshEvery is the number of admissions after which a cache
	// asks its host for the budget again.
	cacheRefreshEvery = 4096
	// cacheMeasureEvery is the least number of Puts of cached entries of a
	// table after which the table re-encodes the entry put, to update its
	// size.
	cacheMeasureEvery = 64
	// cacheMeasureBytesPerPut bounds the re-encoding each Put pays for: after
	// measuring an entry of s bytes, the next measure comes s /
	// cacheMeasureBytesPerPut Puts later (at least cacheMeasureEvery), so
	// that tables of large values (window accumulators holding maps) do
	// not spend their time encoding.
	cacheMeasureBytesPerPut = 8
)

// measureInterval returns the number of Puts until the next measure after
// one found an entry of size bytes.
func measureInterval(size int) int {
	return max(cacheMeasureEvery, size/cacheMeasureBytesPerPut)
}

// Cache is the write-back cache of the typed tables of one CacheHost: one
// cachedTable per table, a shared byte budget, and eviction across the
// tables. It is the TableCache the host sees. CacheOf makes it, and
// NewCachedValueTable, NewCachedVoidTable and NewCachedMapTable add the
// cached tables.
//
// Eviction never runs while a cache structure is being iterated: Flush,
// Invalidate and eviction itself call no user code and admit no entries,
// and the scans of Range, Entries and IsEmpty iterate the host (after
// Flush), not the cache, so entries their callbacks admit may evict at will.
//
// Concurrency: on the subtask's goroutine, except Bytes.
type Cache struct {
	host   CacheHost
	kgs    keyGroups
	budget int64 // bytes the entries may take, refreshed from the host
	bytes  int64 // estimated bytes of all entries
	shown  atomic.Int64
	tables map[uint32]cachedTable // by table id
	order  []cachedTable          // in the order they were made
	cursor int                    // next table to evict from
	admits int                    // admissions since the budget was refreshed
	w      cacheWriter
	busy   bool // flushing, invalidating or evicting: no eviction
}

var _ TableCache = (*Cache)(nil)

// cachedTable is a table's cache as Cache drives it. i is a key
// group's index in the backend's range; rest is what a prefix holds after
// the key group and table id.
type cachedTable interface {
	tableID() uint32
	// size returns the estimated bytes of the table's entries.
	size() int64
	// flush writes the dirty entries under rest in key group index i to w
	// (all of them if rest is empty).
	flush(i int, rest []byte, w *cacheWriter)
	// invalidate drops the entries under rest in key group index i. If it
	// cannot tell which those are, it writes the key group's dirty entries
	// to w and drops all of them.
	invalidate(i int, rest []byte, w *cacheWriter)
	// evict frees at least need bytes if it holds that much, by CLOCK,
	// writing dirty victims to w; with cleanOnly, it frees clean entries
	// only, as many as it finds up to need.
	evict(need int64, cleanOnly bool, w *cacheWriter)
}

// pair is a key and a namespace, the key of the maps of the table caches.
type pair[K, N comparable] struct {
	k K
	n N
}

// CacheOf returns the cache of s, whose backend holds the key groups
// [start, end), attaching one if s is a CacheHost with a positive budget
// and has none yet, or nil.
func CacheOf(s Store, start, end int) *Cache {
	h, ok := s.(CacheHost)
	if !ok {
		return nil
	}
	for _, c := range h.Caches() {
		if m, ok := c.(*Cache); ok {
			return m
		}
	}
	budget := h.CacheBudget()
	if budget <= 0 {
		return nil
	}
	m := &Cache{host: h, kgs: keyGroups{start, end}, budget: budget, tables: map[uint32]cachedTable{}}
	m.w.host = h
	h.AttachCache(m)
	return m
}

// Table returns the cached table with id, made by NewCachedValueTable,
// NewCachedVoidTable or NewCachedMapTable, if there is one, so that every
// declaration of a table shares one cache.
func (m *Cache) Table(id uint32) (any, bool) {
	t, ok := m.tables[id]
	return t, ok
}

// add registers the cache of a new table.
func (m *Cache) add(t cachedTable) {
	m.tables[t.tableID()] = t
	m.order = append(m.order, t)
}

// Bytes returns the estimated bytes of the cached entries.
func (m *Cache) Bytes() int64 { return m.shown.Load() }

// admit charges size bytes for an entry just added and evicts if the cache
// is over budget. Lock: the subtask's goroutine.
func (m *Cache) admit(size int64) {
	m.bytes += size
	if m.admits++; m.admits&63 == 0 {
		m.shown.Store(m.bytes)
		if m.admits >= cacheRefreshEvery {
			m.admits = 0
			m.budget = m.host.CacheBudget()
		}
	}
	if m.bytes > m.budget {
		m.evict()
	}
}

// resized charges the change of an entry's size, evicting if the cache is
// over budget and not busy.
func (m *Cache) resized(delta int64) {
	m.bytes += delta
	if m.bytes > m.budget && !m.busy {
		m.evict()
	}
}

// evict frees entries until the cache holds at most budget − budget/8,
// taking from each table in proportion to its size. It evicts clean entries
// only, as long as enough of them are unused (CLOCK); when they are not, it
// writes back every dirty entry of the cache in one batch, so that the
// host gets write-backs in few large batches rather than one per eviction
// (on Pebble, a batch of at least half a memtable skips the memtable and is
// written to L0 directly, and fewer, larger L0 files mean less compaction),
// and then evicts by CLOCK among the now clean entries.
func (m *Cache) evict() {
	if m.busy {
		return
	}
	m.busy = true
	target := max(m.budget-m.budget/cacheLowWater, 0)
	m.evictRound(target, true)
	if m.bytes > target {
		m.writeBackAll()
		m.evictRound(target, false)
	}
	m.w.commit()
	m.busy = false
	m.shown.Store(m.bytes)
}

// evictRound evicts down to target bytes, or as far as it can, taking from
// each table in proportion to its size; cleanOnly leaves dirty entries
// cached.
func (m *Cache) evictRound(target int64, cleanOnly bool) {
	stalled := 0 // tables in a row that freed nothing
	for m.bytes > target && stalled <= len(m.order) {
		t := m.order[m.cursor%len(m.order)]
		m.cursor++
		before := m.bytes
		if tb := t.size(); tb > 0 {
			need := int64(float64(m.bytes-target)*float64(tb)/float64(m.bytes)) + 1
			t.evict(need, cleanOnly, &m.w)
		}
		if m.bytes < before {
			stalled = 0
		} else {
			stalled++
		}
	}
	if !cleanOnly && m.bytes > target {
		var held int64
		for _, t := range m.order {
			held += t.size()
		}
		if held <= 0 {
			panic(fmt.Sprintf("state: cache accounts %d bytes but its tables hold none", m.bytes))
		}
	}
}

// writeBackAll writes every dirty entry to the host, in key order through
// a sorted batch if the host takes one (SortedWriteHost), else to m.w.
func (m *Cache) writeBackAll() {
	sh, ok := m.host.(SortedWriteHost)
	if !ok {
		m.each(nil, func(t cachedTable, i int, _ []byte) { t.flush(i, nil, &m.w) })
		return
	}
	m.w.commit()
	// Keys are key group | table id | ...: by key group, then by table id,
	// then each table's entries sorted.
	tables := slices.SortedFunc(slices.Values(m.order), func(a, b cachedTable) int { return cmp.Compare(a.tableID(), b.tableID()) })
	b := sh.NewSortedBatch()
	m.w.sorting = true
	for i := 0; i < m.kgs.Len(); i++ {
		for _, t := range tables {
			t.flush(i, nil, &m.w)
			m.w.drain(b)
		}
	}
	m.w.sorting = false
	b.Commit()
}

// Flush writes the dirty entries under prefix to the host in one batch.
func (m *Cache) Flush(prefix []byte) {
	m.busy = true
	if len(prefix) == 0 {
		m.writeBackAll()
	} else {
		m.each(prefix, func(t cachedTable, i int, rest []byte) { t.flush(i, rest, &m.w) })
	}
	m.w.commit()
	m.busy = false
	if len(prefix) == 0 {
		m.budget = m.host.CacheBudget()
	}
	if m.bytes > m.budget {
		m.evict() // flushing measured the entries anew
	}
	m.shown.Store(m.bytes)
}

// Invalidate drops the entries under prefix without writing them.
func (m *Cache) Invalidate(prefix []byte) {
	m.busy = true
	m.each(prefix, func(t cachedTable, i int, rest []byte) { t.invalidate(i, rest, &m.w) })
	m.w.commit()
	m.busy = false
	m.shown.Store(m.bytes)
}

// each calls fn for every table and key group that keys under prefix can
// belong to, with the rest of the prefix after the key group and table id
// (nil if the prefix ends before).
func (m *Cache) each(prefix []byte, fn func(t cachedTable, i int, rest []byte)) {
	if len(prefix) < 2 {
		for kg := m.kgs.Start; kg < m.kgs.End; kg++ {
			if len(prefix) == 1 && byte(kg>>8) != prefix[0] {
				continue
			}
			for _, t := range m.order {
				fn(t, kg-m.kgs.Start, nil)
			}
		}
		return
	}
	kg := int(binary.BigEndian.Uint16(prefix))
	if !m.kgs.Contains(kg) {
		return
	}
	i := kg - m.kgs.Start
	if len(prefix) >= tablePrefixLen {
		if t := m.tables[binary.BigEndian.Uint32(prefix[2:])]; t != nil {
			fn(t, i, prefix[tablePrefixLen:])
		}
		return
	}
	for _, t := range m.order {
		if bytes.HasPrefix(binary.BigEndian.AppendUint32(nil, t.tableID()), prefix[2:]) {
			fn(t, i, nil)
		}
	}
}

// cacheWriter collects the writes of a flush or an eviction in one batch of
// the host, made on the first write; or, while sorting, in a buffer that
// drain writes to a sorted batch in key order.
type cacheWriter struct {
	host CacheHost
	b    WriteBatch

	sorting bool
	buf     []byte        // keys and values of the buffered writes
	writes  []sortedWrite // the buffered writes
}

// sortedWrite is a buffered write: its key is buf[at:at+klen], its value
// the vlen bytes after; vlen < 0 is a delete.
type sortedWrite struct {
	at, klen, vlen int32
}

func (w *cacheWriter) set(key, value []byte) {
	if w.sorting {
		w.writes = append(w.writes, sortedWrite{int32(len(w.buf)), int32(len(key)), int32(len(value))})
		w.buf = append(append(w.buf, key...), value...)
		return
	}
	if w.b == nil {
		w.b = w.host.NewWriteBatch()
	}
	w.b.Set(key, value)
}

func (w *cacheWriter) delete(key []byte) {
	if w.sorting {
		w.writes = append(w.writes, sortedWrite{int32(len(w.buf)), int32(len(key)), -1})
		w.buf = append(w.buf, key...)
		return
	}
	if w.b == nil {
		w.b = w.host.NewWriteBatch()
	}
	w.b.Delete(key)
}

// drain writes the buffered writes to b in key order and empties the
// buffer. The keys are distinct: a flush writes an entry once.
func (w *cacheWriter) drain(b WriteBatch) {
	key := func(x sortedWrite) []byte { return w.buf[x.at : x.at+x.klen] }
	slices.SortFunc(w.writes, func(x, y sortedWrite) int { return bytes.Compare(key(x), key(y)) })
	for _, x := range w.writes {
		if x.vlen < 0 {
			b.Delete(key(x))
		} else {
			b.Set(key(x), w.buf[x.at+x.klen:x.at+x.klen+x.vlen])
		}
	}
	w.writes = w.writes[:0]
	w.buf = w.buf[:0]
	if cap(w.buf) > 1<<20 {
		w.buf, w.writes = nil, nil
	}
}

// commit applies the writes collected, if any.
func (w *cacheWriter) commit() {
	if w.b != nil {
		b := w.b
		w.b = nil
		b.Commit()
	}
}

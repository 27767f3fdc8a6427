package pebble

import (
	"fmt"
	"runtime"
	"sync"

	lsm "github.com/cockroachdb/pebble/v2"

	"github.com/eddystream/eddy/internal/sysmem"
)

// DefaultMemoryBudgetCap bounds the default memory budget.
const DefaultMemoryBudgetCap = 1 << 30

// minMemoryBudget is the smallest budget accepted.
const minMemoryBudget = 16 << 20

const (
	memTableStopWrites = 2
	// memTableDivisor: each of n backends gets memtables of
	// B/(memTableDivisor·n) (see the package comment).
	memTableDivisor = 16
	minMemTableSize = 1 << 20
	maxMemTableSize = 64 << 20
	// maxOpenFiles is the size of the shared table-file cache.
	maxOpenFiles = 4096
	// objectCacheEighths: the object caches of all backends get
	// objectCacheEighths·B/8 of the budget B (see the package comment).
	objectCacheEighths = 5
	// l0CompactionThreshold and l0StopWrites are Pebble's
	// L0CompactionThreshold and L0StopWritesThreshold: L0 compacts from 4
	// sublevels on (Pebble's default is 2), so that an L0 compaction
	// rewrites the overlapping part of the base level for two times more
	// input; writes stall at 24.
	l0CompactionThreshold = 8
	l0StopWrites          = 24
)

// DefaultMemoryBudget returns min(25% of the physical memory, 1 GiB), where
// physical memory is MemTotal of /proc/meminfo or the cgroup memory limit if
// lower. If neither can be read it returns 256 MiB.
func DefaultMemoryBudget() int64 {
	phys := sysmem.Physical()
	if phys <= 0 {
		return 256 << 20
	}
	return max(min(phys/4, DefaultMemoryBudgetCap), minMemoryBudget)
}

// shared is the process-wide memory budget: the block cache and file cache
// every open backend uses, and the reservation in the block cache that
// stands for the object caches. It exists while at least one backend is
// open.
//
// Concurrency: guarded by mu; safe for concurrent Open and Close.
var shared struct {
	mu        sync.Mutex
	budget    int64
	cache     *lsm.Cache
	fileCache *lsm.FileCache
	open      int
	// unreserve releases the object caches' share of cache.
	unreserve func()
	// backends are the open backends, whose object caches Budget adds up.
	backends map[*Backend]struct{}
}

// lease is one backend's share of the process budget.
type lease struct {
	cache        *lsm.Cache
	fileCache    *lsm.FileCache
	memTableSize uint64
}

// acquire joins the process budget, creating the shared caches for the first
// backend, and returns the caches and memtable size the new backend uses.
func acquire(opts Options) (lease, error) {
	budget := opts.MemoryBudget
	if budget < 0 {
		return lease{}, fmt.Errorf("pebble: negative memory budget %d", budget)
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.open == 0 {
		if budget == 0 {
			budget = DefaultMemoryBudget()
		}
		budget = max(budget, minMemoryBudget)
		shared.budget = budget
		shared.cache = lsm.NewCache(budget)
		shared.unreserve = shared.cache.Reserve(int(objectCacheBudget(budget)))
		shared.fileCache = lsm.NewFileCache(2*runtime.GOMAXPROCS(0), maxOpenFiles)
		shared.backends = map[*Backend]struct{}{}
	} else if budget != 0 && max(budget, minMemoryBudget) != shared.budget {
		return lease{}, fmt.Errorf("pebble: memory budget %d differs from the process budget %d fixed by the %d open backends (use one budget per process)", budget, shared.budget, shared.open)
	}
	shared.open++
	n := max(opts.Backends, shared.open)
	return lease{cache: shared.cache, fileCache: shared.fileCache, memTableSize: memTableSize(shared.budget, n)}, nil
}

// release leaves the process budget; the last backend frees the caches.
// Pebble holds its own references to the caches while a DB is open, so
// release may run before or after the DB is closed.
func release() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.open--
	if shared.open == 0 {
		shared.unreserve()
		shared.cache.Unref()
		shared.fileCache.Unref()
		shared.cache, shared.fileCache, shared.budget, shared.unreserve, shared.backends = nil, nil, 0, nil, nil
	}
}

// reserveBlocks reserves n bytes of the shared block cache for memory held
// outside it (a value log's index and active segment) and returns the
// function that releases them. Call it while the calling backend is open.
func reserveBlocks(n int) func() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return shared.cache.Reserve(n)
}

// register adds an opened backend to those whose object caches Budget
// counts; Close unregisters it.
func register(b *Backend) {
	shared.mu.Lock()
	shared.backends[b] = struct{}{}
	shared.mu.Unlock()
}

func unregister(b *Backend) {
	shared.mu.Lock()
	delete(shared.backends, b)
	shared.mu.Unlock()
}

// cacheShare returns the object cache budget of a backend that expects
// expect backends (Options.Backends), 5B / (8n), and the memory its value
// log may take from the blocks' part, B / (4n), where n = max(expect,
// backends open).
func cacheShare(expect int) (objects, log int64) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	n := max(expect, shared.open, 1)
	return objectCacheShare(shared.budget, n), shared.budget / int64(4*n)
}

// objectCacheShare returns the object cache budget of each of n backends
// sharing budget bytes.
func objectCacheShare(budget int64, n int) int64 {
	return objectCacheBudget(budget) / int64(n)
}

// objectCacheBudget returns the part of budget kept for the object caches.
func objectCacheBudget(budget int64) int64 { return budget / 8 * objectCacheEighths }

// memTableSize returns the memtable size of a backend when n backends share
// budget bytes: clamp(budget / (16·n), 1 MiB, 64 MiB).
func memTableSize(budget int64, n int) uint64 {
	s := budget / int64(memTableDivisor*n)
	return uint64(min(max(s, minMemTableSize), maxMemTableSize))
}

// BudgetStats describes the process-wide memory budget.
type BudgetStats struct {
	// Budget is the byte budget of block cache plus memtables; 0 if no
	// backend is open.
	Budget int64
	// Backends is the number of open backends.
	Backends int
	// CacheSize is the bytes held by cached blocks.
	CacheSize int64
	// CacheMaxSize is the capacity of the shared cache (the budget). The
	// memtables and the object caches' share are reserved in it.
	CacheMaxSize int64
	// CacheHits and CacheMisses count block cache lookups since the cache was
	// created.
	CacheHits, CacheMisses int64
	// ObjectCacheBudget is the part of Budget kept for the object caches
	// of the typed tables (5/8 of Budget), reserved in the block cache.
	ObjectCacheBudget int64
	// ObjectCacheBytes is the estimated bytes the object caches of all open
	// backends hold.
	ObjectCacheBytes int64
	// MemTableBytes is the bytes the memtables of all open backends take
	// (mutable, being flushed, and kept for reuse).
	MemTableBytes int64
	// ValueLogBytes is the memory the value logs of all open backends hold
	// (index and active segment), reserved in the block cache.
	ValueLogBytes int64
}

// Budget returns the state of the process-wide memory budget. It is safe for
// concurrent use.
func Budget() BudgetStats {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	s := BudgetStats{Budget: shared.budget, Backends: shared.open, ObjectCacheBudget: objectCacheBudget(shared.budget)}
	if shared.cache != nil {
		m := shared.cache.Metrics()
		s.CacheSize, s.CacheMaxSize, s.CacheHits, s.CacheMisses = m.Size, shared.cache.MaxSize(), m.Hits, m.Misses
	}
	for b := range shared.backends {
		s.ObjectCacheBytes += b.cacheBytes()
		s.MemTableBytes += int64(b.db.Metrics().MemTable.Size)
		s.ValueLogBytes += b.res.seen.Load()
	}
	return s
}

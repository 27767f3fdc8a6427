// Package memtest is a BytesBackend kept in memory: a map from key to value
// plus a sorted index of keys rebuilt when a scan finds it stale. It runs the
// bytes path of the typed tables (the one the Pebble backend will take)
// without a disk, in tests and benchmarks. New makes a backend whose tables
// encode every call; NewCached one that hosts a table cache
// (kv.CacheHost), as the Pebble backend does.
package memtest

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/kv"
)

// Backend is an in-memory BytesBackend.
//
// Concurrency: used on its subtask's goroutine only.
type Backend struct {
	kgs    state.KeyGroupRange
	maxP   int
	data   map[string]*entry
	sorted []string // every key in data, in order, and maybe deleted ones
	stale  bool     // keys were added since sorted was built
	tables map[string]table
	nextID uint32

	cacheBudget int64           // see NewCached; 0: no cache
	caches      []kv.TableCache // attached by the typed tables
}

type entry struct{ value []byte }

type table struct {
	id   uint32
	kind string
}

var (
	_ state.BytesBackend = (*Backend)(nil)
	_ kv.CacheHost       = (*Backend)(nil)
)

// New returns an empty backend for the key groups kgs of an operator with
// maxParallelism key groups. It panics if kgs does not lie within
// [0, maxParallelism) or maxParallelism is out of [1, state.MaxKeyGroups].
func New(kgs state.KeyGroupRange, maxParallelism int) *Backend {
	if maxParallelism < 1 || maxParallelism > state.MaxKeyGroups || kgs.Start < 0 || kgs.End < kgs.Start || kgs.End > maxParallelism {
		panic(fmt.Sprintf("memtest: key groups %v do not fit max parallelism %d", kgs, maxParallelism))
	}
	return &Backend{kgs: kgs, maxP: maxParallelism, data: map[string]*entry{}, tables: map[string]table{}}
}

// NewCached returns an empty backend like New whose typed tables keep a
// write-back cache of at most cacheBudget bytes (see kv.CacheHost).
func NewCached(kgs state.KeyGroupRange, maxParallelism int, cacheBudget int64) *Backend {
	b := New(kgs, maxParallelism)
	b.cacheBudget = cacheBudget
	return b
}

// CacheBudget returns the budget given to NewCached, or 0.
func (b *Backend) CacheBudget() int64 { return b.cacheBudget }

// AttachCache registers a table cache, which Scan, Set, Delete and
// DeletePrefix keep coherent.
func (b *Backend) AttachCache(c kv.TableCache) { b.caches = append(b.caches, c) }

// Caches returns the attached table caches.
func (b *Backend) Caches() []kv.TableCache { return b.caches }

// FlushCaches writes the dirty entries of every attached cache.
func (b *Backend) FlushCaches() {
	for _, c := range b.caches {
		c.Flush(nil)
	}
}

// CacheBytes returns the estimated bytes the attached caches hold.
func (b *Backend) CacheBytes() int64 {
	var n int64
	for _, c := range b.caches {
		n += c.Bytes()
	}
	return n
}

// NewWriteBatch returns a batch that applies its writes as they come.
func (b *Backend) NewWriteBatch() kv.WriteBatch { return batch{b} }

// batch writes to the map directly, bypassing the invalidation of caches:
// the caches write through it.
type batch struct{ b *Backend }

func (w batch) Set(key, value []byte) { w.b.set(key, value) }
func (w batch) Delete(key []byte)     { delete(w.b.data, string(key)) }
func (w batch) Commit()               {}

func (b *Backend) invalidate(prefix []byte) {
	for _, c := range b.caches {
		c.Invalidate(prefix)
	}
}

// KeyGroups returns the key groups the backend holds state for.
func (b *Backend) KeyGroups() state.KeyGroupRange { return b.kgs }

// MaxParallelism returns the total number of key groups of the operator.
func (b *Backend) MaxParallelism() int { return b.maxP }

// Close drops all data.
func (b *Backend) Close() error {
	b.data, b.sorted = nil, nil
	return nil
}

// TableID returns the id of the table called name, allocating one on first
// use, or an error wrapping state.ErrIncompatibleTable if name has another
// kind.
func (b *Backend) TableID(name, kind string) (uint32, error) {
	if t, ok := b.tables[name]; ok {
		if t.kind != kind {
			return 0, state.IncompatibleTableError(name, t.kind, kind)
		}
		return t.id, nil
	}
	b.nextID++
	b.tables[name] = table{b.nextID, kind}
	return b.nextID, nil
}

// TableIDs returns the id of every table declared on the backend, by name
// (state.TableLister).
func (b *Backend) TableIDs() map[string]uint32 {
	out := make(map[string]uint32, len(b.tables))
	for name, t := range b.tables {
		out[name] = t.id
	}
	return out
}

// TableKinds returns the kind of every table declared on the backend, by
// name (state.TableKindLister).
func (b *Backend) TableKinds() map[string]string {
	out := make(map[string]string, len(b.tables))
	for name, t := range b.tables {
		out[name] = t.kind
	}
	return out
}

// Len returns the number of keys stored.
func (b *Backend) Len() int { return len(b.data) }

// Get returns the value stored under key, or ok=false.
func (b *Backend) Get(key []byte) ([]byte, bool) {
	e, ok := b.data[string(key)]
	if !ok {
		return nil, false
	}
	return e.value, true
}

// Set stores a copy of value under a copy of key.
func (b *Backend) Set(key, value []byte) {
	b.invalidate(key)
	b.set(key, value)
}

func (b *Backend) set(key, value []byte) {
	if e, ok := b.data[string(key)]; ok {
		e.value = append(e.value[:0], value...)
		return
	}
	b.data[string(key)] = &entry{value: bytes.Clone(value)}
	b.stale = true
}

// Delete removes key.
func (b *Backend) Delete(key []byte) {
	b.invalidate(key)
	delete(b.data, string(key))
}

// DeletePrefix removes every key that starts with prefix, in the attached
// caches too.
func (b *Backend) DeletePrefix(prefix []byte) {
	b.invalidate(prefix)
	for _, k := range b.keys(prefix) {
		if !strings.HasPrefix(k, string(prefix)) {
			break
		}
		delete(b.data, k)
	}
}

// Scan calls fn for each key starting with prefix, in key order, until fn
// returns false. Keys fn adds are not visited. It first flushes the
// attached caches under prefix.
func (b *Backend) Scan(prefix []byte, fn func(key, value []byte) bool) {
	for _, c := range b.caches {
		c.Flush(prefix)
	}
	for _, k := range b.keys(prefix) {
		if !strings.HasPrefix(k, string(prefix)) {
			return
		}
		e, ok := b.data[k]
		if !ok {
			continue
		}
		if !fn([]byte(k), e.value) {
			return
		}
	}
}

// keys returns the sorted keys from the first one not before prefix, first
// rebuilding the index if it is stale or mostly deleted keys. A rebuild
// makes a new slice, so scans in progress keep theirs.
func (b *Backend) keys(prefix []byte) []string {
	if b.stale || len(b.sorted) > 2*len(b.data)+64 {
		sorted := make([]string, 0, len(b.data))
		for k := range b.data {
			sorted = append(sorted, k)
		}
		slices.Sort(sorted)
		b.sorted, b.stale = sorted, false
	}
	i := sort.Search(len(b.sorted), func(i int) bool { return b.sorted[i] >= string(prefix) })
	return b.sorted[i:]
}

package kv

import (
	"fmt"
	"reflect"

	"github.com/eddystream/eddy/internal/state/codec"
)

// cachedValueTable is a state.ValueTable in a Cache, the write-back cache of a
// CacheHost, of decoded values: per key group, a Go map from (key, namespace)
// to a slot of the table's slab. A hit neither encodes nor decodes; a miss
// reads the host and caches what it found, a value or its absence; Put and
// Delete change only the cache. Get returns the cached value itself, as the
// heap backend does: a caller that changes it must Put it back.
type cachedValueTable[K, N comparable, V any, P comparable, X valueKeyer[K, N, P]] struct {
	m      *Cache
	host   CacheHost
	name   string
	id     uint32
	kgs    keyGroups
	kc     codec.Codec[K]
	nc     codec.Codec[N]
	vc     codec.Codec[V]
	groups []map[P]int32 // per key group index, allocated on first use
	slab   cacheSlab[P, V]
	key    []byte // scratch
	val    []byte // scratch
	est    sizeEstimate
	x      X
}

// CachedValueTable is the value table of a Cache that NewCachedValueTable
// makes (see cachedValueTable), for a namespace type N with more than one
// value: its index maps are keyed by (key, namespace).
type CachedValueTable[K, N comparable, V any] = cachedValueTable[K, N, V, pair[K, N], pairKeyer[K, N]]

// CachedVoidTable is the value table of a Cache that NewCachedVoidTable
// makes (see cachedValueTable), for a namespace type N with one value, a
// type of size zero such as state.VoidNamespace: its index maps are keyed
// by the key alone.
type CachedVoidTable[K, N comparable, V any] = cachedValueTable[K, N, V, K, voidKeyer[K, N]]

// NewCachedValueTable returns the value table with id, called name, in
// cache m, and adds it to m (see Cache.Table).
func NewCachedValueTable[K, N comparable, V any](m *Cache, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V]) *CachedValueTable[K, N, V] {
	t := newCachedValueTable[K, N, V, pair[K, N], pairKeyer[K, N]](m, name, id, kc, nc, vc)
	m.add(t)
	return t
}

// NewCachedVoidTable returns the value table with id, called name, in cache
// m, indexed by the key alone, and adds it to m (see Cache.Table). It
// panics if N has a size other than zero.
func NewCachedVoidTable[K, N comparable, V any](m *Cache, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V]) *CachedVoidTable[K, N, V] {
	if reflect.TypeFor[N]().Size() != 0 {
		panic(fmt.Sprintf("kv: CachedVoidTable of namespace %s, which has more than one value", reflect.TypeFor[N]()))
	}
	t := newCachedValueTable[K, N, V, K, voidKeyer[K, N]](m, name, id, kc, nc, vc)
	m.add(t)
	return t
}

// valueKeyer maps the (key, namespace) of a cached value table to the key P
// of its index maps and back. The namespace of most tables is
// state.VoidNamespace, and indexing them by the key alone lets Go's maps
// take their fast paths (for int64 or string keys, say).
type valueKeyer[K, N, P comparable] interface {
	key(k K, n N) P
	split(p P) (K, N)
}

// pairKeyer indexes by (key, namespace).
type pairKeyer[K, N comparable] struct{}

func (pairKeyer[K, N]) key(k K, n N) pair[K, N]   { return pair[K, N]{k, n} }
func (pairKeyer[K, N]) split(p pair[K, N]) (K, N) { return p.k, p.n }

// voidKeyer indexes by the key alone, for a namespace N of one value.
type voidKeyer[K, N comparable] struct{}

func (voidKeyer[K, N]) key(k K, _ N) K { return k }
func (voidKeyer[K, N]) split(k K) (K, N) {
	var n N
	return k, n
}

// newCachedValueTable returns a cached value table indexed by X.
func newCachedValueTable[K, N comparable, V any, P comparable, X valueKeyer[K, N, P]](m *Cache, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V]) *cachedValueTable[K, N, V, P, X] {
	return &cachedValueTable[K, N, V, P, X]{
		m: m, host: m.host, name: name, id: id, kgs: m.kgs, kc: kc, nc: nc, vc: vc,
		groups: make([]map[P]int32, m.kgs.Len()),
		slab:   newCacheSlab[P, V](m),
	}
}

func (t *cachedValueTable[K, N, V, P, X]) tableID() uint32 { return t.id }
func (t *cachedValueTable[K, N, V, P, X]) size() int64     { return t.slab.bytes }

// index returns the index of key group kg, panicking if the subtask does not
// own it.
func (t *cachedValueTable[K, N, V, P, X]) index(kg int) int {
	i := kg - t.kgs.Start
	if uint(i) >= uint(len(t.groups)) {
		checkKeyGroup(kg, t.kgs)
	}
	return i
}

func (t *cachedValueTable[K, N, V, P, X]) encodeKey(kg int, k K, n N) []byte {
	t.key = t.nc.Append(t.kc.Append(AppendTablePrefix(t.key[:0], kg, t.id), k), n)
	return t.key
}

// lookup returns the slot of (k, n) in key group index i, or -1.
func (t *cachedValueTable[K, N, V, P, X]) lookup(i int, p P) int32 {
	if s := t.slab.memo; s >= 0 && t.slab.memoKey == p && int(t.slab.at(s).kgi) == i {
		return s
	}
	if g := t.groups[i]; g != nil {
		if s, ok := g[p]; ok {
			t.slab.memo, t.slab.memoKey = s, p
			return s
		}
	}
	return -1
}

// Get returns the value for (k, n), or ok=false.
func (t *cachedValueTable[K, N, V, P, X]) Get(kg int, k K, n N) (V, bool) {
	i := t.index(kg)
	if s := t.lookup(i, t.x.key(k, n)); s >= 0 {
		e := t.slab.at(s)
		e.flags |= slotRef
		return e.val, e.flags&slotPresent != 0
	}
	return t.load(kg, i, k, n)
}

// load reads (k, n) from the host and caches it, clean.
func (t *cachedValueTable[K, N, V, P, X]) load(kg, i int, k K, n N) (v V, ok bool) {
	key := t.encodeKey(kg, k, n)
	raw, ok := t.host.Get(key)
	size := len(key)
	flags := slotRef
	if ok {
		var err error
		if v, _, err = t.vc.Decode(raw); err != nil {
			corrupt(t.name, err)
		}
		size += len(raw)
		flags |= slotPresent | slotStored
		t.est.observe(len(key), len(raw))
	}
	t.insert(i, t.x.key(k, n), v, flags, size+CacheEntryOverhead)
	return v, ok
}

// insert caches a new entry and charges it, which may evict it at once.
func (t *cachedValueTable[K, N, V, P, X]) insert(i int, p P, v V, flags uint8, size int) {
	s := t.slab.alloc(i, p, v, flags, size)
	g := t.groups[i]
	if g == nil {
		g = map[P]int32{}
		t.groups[i] = g
	}
	g[p] = s
	t.m.admit(int64(size))
}

// Put stores v for (k, n) in the cache.
func (t *cachedValueTable[K, N, V, P, X]) Put(kg int, k K, n N, v V) {
	i := t.index(kg)
	p := t.x.key(k, n)
	if s := t.lookup(i, p); s >= 0 {
		if t.slab.overwrite(s, v) {
			t.slab.measured(t.measure(s))
		}
		return
	}
	if !t.est.known() {
		t.est.observe(len(t.encodeKey(kg, k, n)), len(t.vc.Append(t.val[:0], v)))
	}
	t.insert(i, p, v, slotPresent|slotDirty|slotStored|slotRef, t.est.entry())
}

// measure re-encodes the entry in slot s to update its size.
func (t *cachedValueTable[K, N, V, P, X]) measure(s int32) int {
	e := t.slab.at(s)
	k, n := t.x.split(e.key)
	size := len(t.encodeKey(t.kgs.Start+int(e.kgi), k, n)) + CacheEntryOverhead
	if e.flags&slotPresent != 0 {
		t.val = t.vc.Append(t.val[:0], e.val)
		size += len(t.val)
	}
	t.slab.resize(s, size)
	return size
}

// Delete removes the value for (k, n), if any, in the cache.
func (t *cachedValueTable[K, N, V, P, X]) Delete(kg int, k K, n N) {
	i := t.index(kg)
	p := t.x.key(k, n)
	if s := t.lookup(i, p); s >= 0 {
		e := t.slab.at(s)
		var zero V
		e.val = zero
		e.flags = e.flags&^slotPresent | slotRef
		if e.flags&slotStored != 0 {
			t.slab.markDirty(s)
		} else {
			e.flags &^= slotDirty // the host never had it
		}
		return
	}
	var zero V
	t.insert(i, p, zero, slotDirty|slotStored|slotRef, t.est.key+CacheEntryOverhead)
}

// Range calls fn for every entry of key group kg until fn returns false. It
// scans the host, which first flushes the key group's dirty entries.
func (t *cachedValueTable[K, N, V, P, X]) Range(kg int, fn func(k K, n N, v V) bool) {
	scanValues(t.host, t.name, t.id, t.kgs, t.kc, t.nc, t.vc, kg, fn)
}

// writeSlot writes the dirty entry in slot s to w.
func (t *cachedValueTable[K, N, V, P, X]) writeSlot(s int32, w *cacheWriter) {
	e := t.slab.at(s)
	k, n := t.x.split(e.key)
	key := t.encodeKey(t.kgs.Start+int(e.kgi), k, n)
	writeBack(&t.slab, s, key, t.vc, &t.val, &t.est, w)
}

func (t *cachedValueTable[K, N, V, P, X]) unlinkSlot(s int32) {
	e := t.slab.at(s)
	g := t.groups[e.kgi]
	delete(g, e.key)
	if len(g) == 0 {
		t.groups[e.kgi] = nil
	}
}

// decodeRest decodes a (key, namespace) that fills rest exactly.
func (t *cachedValueTable[K, N, V, P, X]) decodeRest(rest []byte) (p P, ok bool) {
	var k K
	var n N
	pos, err := codec.DecodeAt(t.kc, rest, 0, &k)
	if err == nil {
		pos, err = codec.DecodeAt(t.nc, rest, pos, &n)
	}
	return t.x.key(k, n), err == nil && pos == len(rest)
}

func (t *cachedValueTable[K, N, V, P, X]) flush(i int, rest []byte, w *cacheWriter) {
	if t.groups[i] == nil {
		return // nothing cached in the key group
	}
	if len(rest) > 0 {
		if p, ok := t.decodeRest(rest); ok {
			if s := t.lookup(i, p); s >= 0 && t.slab.at(s).flags&slotDirty != 0 {
				t.writeSlot(s, w)
			}
			return
		}
	}
	t.slab.flushKG(t, i, w)
}

func (t *cachedValueTable[K, N, V, P, X]) invalidate(i int, rest []byte, w *cacheWriter) {
	if t.groups[i] == nil {
		return // nothing cached in the key group
	}
	if len(rest) > 0 {
		if p, ok := t.decodeRest(rest); ok {
			if s := t.lookup(i, p); s >= 0 {
				t.slab.drop(t, s)
			}
			return
		}
		t.slab.flushKG(t, i, w) // a partial key: drop the whole key group, clean
	}
	for _, s := range t.groups[i] {
		t.slab.release(s)
	}
	t.groups[i] = nil
	t.slab.dirty[i] = t.slab.dirty[i][:0]
}

func (t *cachedValueTable[K, N, V, P, X]) evict(need int64, cleanOnly bool, w *cacheWriter) {
	t.slab.evict(t, need, cleanOnly, w)
}

// sizeEstimate is a running estimate of the encoded key and value lengths
// of a table's entries, from those seen when entries are read or written,
// for entries that are put without either.
type sizeEstimate struct {
	key, val int
	seen     bool
}

func (e *sizeEstimate) known() bool { return e.seen }

func (e *sizeEstimate) observe(key, val int) {
	if !e.seen {
		e.key, e.val, e.seen = key, val, true
		return
	}
	e.key += (key - e.key) / 4
	e.val += (val - e.val) / 4
}

// entry returns the estimated size of a new entry with a value.
func (e *sizeEstimate) entry() int { return e.key + e.val + CacheEntryOverhead }

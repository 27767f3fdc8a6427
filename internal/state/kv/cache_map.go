package kv

import "github.com/eddystream/eddy/internal/state/codec"

// mapKey is the key of a cached map entry.
type mapKey[K, N, UK comparable] struct {
	k  K
	n  N
	uk UK
}

// CachedMapTable is a state.MapTable in a Cache, the write-back cache of a
// CacheHost, of single entries: per key group, a Go map from (key, namespace)
// to the cached user entries of that map, each in a slot of the table's slab.
// Get, Put and Delete work on the cache as in cachedValueTable. Entries,
// IsEmpty and Range scan the host, which first flushes the dirty entries under
// the scanned prefix; Clear drops the map's cached entries and deletes its
// prefix in the host.
type CachedMapTable[K, N, UK comparable, UV any] struct {
	m      *Cache
	host   CacheHost
	name   string
	id     uint32
	kgs    keyGroups
	kc     codec.Codec[K]
	nc     codec.Codec[N]
	ukc    codec.Codec[UK]
	uvc    codec.Codec[UV]
	groups []map[pair[K, N]]map[UK]int32 // per key group index, allocated on first use
	slab   cacheSlab[mapKey[K, N, UK], UV]
	key    []byte // scratch
	val    []byte // scratch
	est    sizeEstimate
}

// NewCachedMapTable returns the map table with id, called name, in cache m,
// and adds it to m (see Cache.Table).
func NewCachedMapTable[K, N, UK comparable, UV any](m *Cache, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N], ukc codec.Codec[UK], uvc codec.Codec[UV]) *CachedMapTable[K, N, UK, UV] {
	t := &CachedMapTable[K, N, UK, UV]{
		m: m, host: m.host, name: name, id: id, kgs: m.kgs, kc: kc, nc: nc, ukc: ukc, uvc: uvc,
		groups: make([]map[pair[K, N]]map[UK]int32, m.kgs.Len()),
		slab:   newCacheSlab[mapKey[K, N, UK], UV](m),
	}
	m.add(t)
	return t
}

func (t *CachedMapTable[K, N, UK, UV]) tableID() uint32 { return t.id }
func (t *CachedMapTable[K, N, UK, UV]) size() int64     { return t.slab.bytes }

func (t *CachedMapTable[K, N, UK, UV]) index(kg int) int {
	i := kg - t.kgs.Start
	if uint(i) >= uint(len(t.groups)) {
		checkKeyGroup(kg, t.kgs)
	}
	return i
}

// appendMapPrefix appends the prefix of the map of (k, n).
func (t *CachedMapTable[K, N, UK, UV]) appendMapPrefix(dst []byte, kg int, k K, n N) []byte {
	return t.nc.Append(t.kc.Append(AppendTablePrefix(dst, kg, t.id), k), n)
}

func (t *CachedMapTable[K, N, UK, UV]) encodeKey(kg int, k K, n N, uk UK) []byte {
	t.key = t.ukc.Append(t.appendMapPrefix(t.key[:0], kg, k, n), uk)
	return t.key
}

func (t *CachedMapTable[K, N, UK, UV]) decodeValue(raw []byte) UV {
	return decodeOrCorrupt(t.uvc, t.name, raw)
}

// lookup returns the slot of uk in the map of (k, n) in key group index i,
// or -1.
func (t *CachedMapTable[K, N, UK, UV]) lookup(i int, k K, n N, uk UK) int32 {
	if g := t.groups[i]; g != nil {
		if s, ok := g[pair[K, N]{k, n}][uk]; ok {
			return s
		}
	}
	return -1
}

// Get returns the value for uk in the map of (k, n).
func (t *CachedMapTable[K, N, UK, UV]) Get(kg int, k K, n N, uk UK) (uv UV, ok bool) {
	i := t.index(kg)
	if s := t.lookup(i, k, n, uk); s >= 0 {
		e := t.slab.at(s)
		e.flags |= slotRef
		return e.val, e.flags&slotPresent != 0
	}
	key := t.encodeKey(kg, k, n, uk)
	raw, ok := t.host.Get(key)
	size := len(key)
	flags := slotRef
	if ok {
		uv = t.decodeValue(raw)
		size += len(raw)
		flags |= slotPresent | slotStored
		t.est.observe(len(key), len(raw))
	}
	t.insert(i, mapKey[K, N, UK]{k, n, uk}, uv, flags, size+CacheEntryOverhead)
	return uv, ok
}

// insert caches a new entry and charges it, which may evict it at once.
func (t *CachedMapTable[K, N, UK, UV]) insert(i int, mk mapKey[K, N, UK], uv UV, flags uint8, size int) {
	s := t.slab.alloc(i, mk, uv, flags, size)
	g := t.groups[i]
	if g == nil {
		g = map[pair[K, N]]map[UK]int32{}
		t.groups[i] = g
	}
	p := pair[K, N]{mk.k, mk.n}
	um := g[p]
	if um == nil {
		um = map[UK]int32{}
		g[p] = um
	}
	um[mk.uk] = s
	t.m.admit(int64(size))
}

// Put sets uk to uv in the map of (k, n), in the cache.
func (t *CachedMapTable[K, N, UK, UV]) Put(kg int, k K, n N, uk UK, uv UV) {
	i := t.index(kg)
	if s := t.lookup(i, k, n, uk); s >= 0 {
		if t.slab.overwrite(s, uv) {
			t.slab.measured(t.measure(s))
		}
		return
	}
	if !t.est.known() {
		t.est.observe(len(t.encodeKey(kg, k, n, uk)), len(t.uvc.Append(t.val[:0], uv)))
	}
	t.insert(i, mapKey[K, N, UK]{k, n, uk}, uv, slotPresent|slotDirty|slotStored|slotRef, t.est.entry())
}

// measure re-encodes the entry in slot s to update its size.
func (t *CachedMapTable[K, N, UK, UV]) measure(s int32) int {
	e := t.slab.at(s)
	size := len(t.encodeKey(t.kgs.Start+int(e.kgi), e.key.k, e.key.n, e.key.uk)) + CacheEntryOverhead
	if e.flags&slotPresent != 0 {
		t.val = t.uvc.Append(t.val[:0], e.val)
		size += len(t.val)
	}
	t.slab.resize(s, size)
	return size
}

// Delete removes uk from the map of (k, n), in the cache.
func (t *CachedMapTable[K, N, UK, UV]) Delete(kg int, k K, n N, uk UK) {
	i := t.index(kg)
	var zero UV
	if s := t.lookup(i, k, n, uk); s >= 0 {
		e := t.slab.at(s)
		e.val = zero
		e.flags = e.flags&^slotPresent | slotRef
		if e.flags&slotStored != 0 {
			t.slab.markDirty(s)
		} else {
			e.flags &^= slotDirty // the host never had it
		}
		return
	}
	t.insert(i, mapKey[K, N, UK]{k, n, uk}, zero, slotDirty|slotStored|slotRef, t.est.key+CacheEntryOverhead)
}

// Clear removes the whole map of (k, n): it drops the map's cached entries
// and deletes its prefix in the host.
func (t *CachedMapTable[K, N, UK, UV]) Clear(kg int, k K, n N) {
	i := t.index(kg)
	t.dropMap(i, pair[K, N]{k, n})
	t.host.DeletePrefix(t.appendMapPrefix(nil, kg, k, n))
}

// IsEmpty reports whether the map of (k, n) has no entries: at once if a
// value of it is cached, else by a scan of the host.
func (t *CachedMapTable[K, N, UK, UV]) IsEmpty(kg int, k K, n N) bool {
	i := t.index(kg)
	if g := t.groups[i]; g != nil {
		for _, s := range g[pair[K, N]{k, n}] {
			if t.slab.at(s).flags&slotPresent != 0 {
				return false
			}
		}
	}
	empty := true
	t.host.Scan(t.appendMapPrefix(nil, kg, k, n), func(_, _ []byte) bool {
		empty = false
		return false
	})
	return empty
}

// Entries calls fn for each entry of the map of (k, n) until it returns
// false.
func (t *CachedMapTable[K, N, UK, UV]) Entries(kg int, k K, n N, fn func(uk UK, uv UV) bool) {
	t.index(kg)
	scanMapEntries(t.host, t.name, t.appendMapPrefix(nil, kg, k, n), t.ukc, t.uvc, fn)
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *CachedMapTable[K, N, UK, UV]) Range(kg int, fn func(k K, n N, uk UK, uv UV) bool) {
	scanMaps(t.host, t.name, t.id, t.kgs, t.kc, t.nc, t.ukc, t.uvc, kg, fn)
}

// writeSlot writes the dirty entry in slot s to w.
func (t *CachedMapTable[K, N, UK, UV]) writeSlot(s int32, w *cacheWriter) {
	e := t.slab.at(s)
	key := t.encodeKey(t.kgs.Start+int(e.kgi), e.key.k, e.key.n, e.key.uk)
	writeBack(&t.slab, s, key, t.uvc, &t.val, &t.est, w)
}

func (t *CachedMapTable[K, N, UK, UV]) unlinkSlot(s int32) {
	e := t.slab.at(s)
	g := t.groups[e.kgi]
	p := pair[K, N]{e.key.k, e.key.n}
	um := g[p]
	delete(um, e.key.uk)
	if len(um) == 0 {
		delete(g, p)
		if len(g) == 0 {
			t.groups[e.kgi] = nil
		}
	}
}

// dropMap drops the cached entries of the map of p without writing them.
func (t *CachedMapTable[K, N, UK, UV]) dropMap(i int, p pair[K, N]) {
	g := t.groups[i]
	um, ok := g[p]
	if !ok {
		return
	}
	for _, s := range um {
		t.slab.release(s)
	}
	delete(g, p)
	if len(g) == 0 {
		t.groups[i] = nil
	}
}

// decodeRest decodes a (key, namespace) or a (key, namespace, user key)
// that fills rest exactly; full tells which.
func (t *CachedMapTable[K, N, UK, UV]) decodeRest(rest []byte) (mk mapKey[K, N, UK], full, ok bool) {
	pos, err := codec.DecodeAt(t.kc, rest, 0, &mk.k)
	if err == nil {
		pos, err = codec.DecodeAt(t.nc, rest, pos, &mk.n)
	}
	if err != nil {
		return mk, false, false
	}
	if pos == len(rest) {
		return mk, false, true
	}
	pos, err = codec.DecodeAt(t.ukc, rest, pos, &mk.uk)
	return mk, true, err == nil && pos == len(rest)
}

func (t *CachedMapTable[K, N, UK, UV]) flush(i int, rest []byte, w *cacheWriter) {
	if t.groups[i] == nil {
		return // nothing cached in the key group
	}
	if len(rest) > 0 {
		if mk, full, ok := t.decodeRest(rest); ok {
			g := t.groups[i]
			if g == nil {
				return
			}
			um := g[pair[K, N]{mk.k, mk.n}]
			if full {
				if s, ok := um[mk.uk]; ok && t.slab.at(s).flags&slotDirty != 0 {
					t.writeSlot(s, w)
				}
				return
			}
			for _, s := range um {
				if t.slab.at(s).flags&slotDirty != 0 {
					t.writeSlot(s, w)
				}
			}
			return
		}
	}
	t.slab.flushKG(t, i, w)
}

func (t *CachedMapTable[K, N, UK, UV]) invalidate(i int, rest []byte, w *cacheWriter) {
	if t.groups[i] == nil {
		return // nothing cached in the key group
	}
	if len(rest) > 0 {
		if mk, full, ok := t.decodeRest(rest); ok {
			if !full {
				t.dropMap(i, pair[K, N]{mk.k, mk.n})
			} else if s := t.lookup(i, mk.k, mk.n, mk.uk); s >= 0 {
				t.slab.drop(t, s)
			}
			return
		}
		t.slab.flushKG(t, i, w) // a partial key: drop the whole key group, clean
	}
	for _, um := range t.groups[i] {
		for _, s := range um {
			t.slab.release(s)
		}
	}
	t.groups[i] = nil
	t.slab.dirty[i] = t.slab.dirty[i][:0]
}

func (t *CachedMapTable[K, N, UK, UV]) evict(need int64, cleanOnly bool, w *cacheWriter) {
	t.slab.evict(t, need, cleanOnly, w)
}

package kv

import (
	"slices"

	"github.com/eddystream/eddy/internal/state/codec"
)

// Flags of a cache slot.
const (
	slotLive    uint8 = 1 << iota // the slot holds an entry
	slotPresent                   // the entry has a value; else it is a tombstone: the key is absent
	slotDirty                     // the entry differs from the host
	slotStored                    // the host may hold the key (else it surely does not)
	slotRef                       // used since the clock hand last passed
)

// cacheSlot is one cached entry of a table: its typed key P, its decoded
// value (the zero V in a tombstone), its estimated size, and the index of
// its key group in the backend's range.
type cacheSlot[P comparable, V any] struct {
	key   P
	val   V
	size  int32
	kgi   int32
	flags uint8
}

// slotOwner is the table a slab belongs to: it writes an entry back and
// removes it from its index maps.
type slotOwner interface {
	// writeSlot writes the dirty entry in slot s to w, updates its size and
	// marks it clean.
	writeSlot(s int32, w *cacheWriter)
	// unlinkSlot removes the entry in slot s from the table's index maps.
	unlinkSlot(s int32)
}

// cacheSlab holds the entries of one cached table in one slice, so that
// caching an entry does not allocate, with a CLOCK over the slots and, per
// key group, the slots that became dirty since the key group was last
// flushed.
//
// The dirty lists may hold stale slot numbers (of entries flushed alone,
// evicted or dropped, or of slots since reused); readers check that a slot
// is live, dirty and of the key group. Every dirty entry is on its key
// group's list.
type cacheSlab[P comparable, V any] struct {
	m *Cache
	// chunks hold the slots, slabChunk each, so that the slab grows
	// without copying (or making the garbage collector rescan) the slots
	// it has.
	chunks [][]cacheSlot[P, V]
	n      int // slots in use or free
	// measureIn is the number of overwrites until one re-encodes its
	// entry to update its size.
	measureIn int
	free      []int32
	hand      int
	dirty     [][]int32 // per key group index
	bytes     int64
	live      int

	// memo is the slot last looked up or added, and memoKey its key, or
	// -1: a Put after a Get of the same key skips the map.
	memo    int32
	memoKey P
}

// slabChunk is the number of slots of a chunk of a slab.
const slabChunk = 1024

// at returns slot s.
func (sl *cacheSlab[P, V]) at(s int32) *cacheSlot[P, V] {
	return &sl.chunks[s/slabChunk][s%slabChunk]
}

func newCacheSlab[P comparable, V any](m *Cache) cacheSlab[P, V] {
	return cacheSlab[P, V]{m: m, dirty: make([][]int32, m.kgs.Len()), memo: -1}
}

// alloc stores a new entry and returns its slot. The caller links it into
// its index maps, then calls m.admit(size).
func (sl *cacheSlab[P, V]) alloc(kgi int, key P, val V, flags uint8, size int) int32 {
	var s int32
	if n := len(sl.free); n > 0 {
		s = sl.free[n-1]
		sl.free = sl.free[:n-1]
	} else {
		s = int32(sl.n)
		if sl.n%slabChunk == 0 {
			sl.chunks = append(sl.chunks, make([]cacheSlot[P, V], slabChunk))
		}
		sl.n++
	}
	*sl.at(s) = cacheSlot[P, V]{key: key, val: val, size: int32(size), kgi: int32(kgi), flags: flags | slotLive}
	if flags&slotDirty != 0 {
		sl.dirty[kgi] = append(sl.dirty[kgi], s)
	}
	sl.bytes += int64(size)
	sl.live++
	sl.memo, sl.memoKey = s, key
	return s
}

// release frees slot s, which the caller has unlinked.
func (sl *cacheSlab[P, V]) release(s int32) {
	e := sl.at(s)
	sl.bytes -= int64(e.size)
	sl.m.bytes -= int64(e.size)
	*e = cacheSlot[P, V]{}
	sl.free = append(sl.free, s)
	if s == sl.memo {
		sl.memo = -1
	}
	sl.live--
}

// markDirty marks the entry in slot s dirty.
func (sl *cacheSlab[P, V]) markDirty(s int32) {
	e := sl.at(s)
	if e.flags&slotDirty != 0 {
		return
	}
	e.flags |= slotDirty
	l := sl.dirty[e.kgi]
	if len(l) == cap(l) && len(l) >= 256 {
		l = sl.compact(int(e.kgi), l)
	}
	sl.dirty[e.kgi] = append(l, s)
}

// compact removes the stale slots from the dirty list of key group index i.
func (sl *cacheSlab[P, V]) compact(i int, l []int32) []int32 {
	out := l[:0]
	for _, s := range l {
		if e := sl.at(s); e.flags&(slotLive|slotDirty) == slotLive|slotDirty && int(e.kgi) == i {
			out = append(out, s)
		}
	}
	// A slot dirtied twice since the last flush is listed twice; removing
	// duplicates would need a set, and they are rare enough to leave.
	if len(out) > cap(out)/2 {
		out = slices.Grow(out, cap(out)) // so that compactions stay amortized O(1)
	}
	return out
}

// resize sets the size of the entry in slot s.
func (sl *cacheSlab[P, V]) resize(s int32, size int) {
	e := sl.at(s)
	d := int64(size) - int64(e.size)
	if d == 0 {
		return
	}
	e.size = int32(size)
	sl.bytes += d
	sl.m.resized(d)
}

// flushKG writes the dirty entries of key group index i.
func (sl *cacheSlab[P, V]) flushKG(o slotOwner, i int, w *cacheWriter) {
	for _, s := range sl.dirty[i] {
		if e := sl.at(s); e.flags&(slotLive|slotDirty) == slotLive|slotDirty && int(e.kgi) == i {
			o.writeSlot(s, w)
		}
	}
	sl.dirty[i] = sl.dirty[i][:0]
}

// drop unlinks and frees slot s without writing it.
func (sl *cacheSlab[P, V]) drop(o slotOwner, s int32) {
	o.unlinkSlot(s)
	sl.release(s)
}

// evict frees at least need bytes, or everything, by CLOCK: the hand
// clears the reference bit of used entries and evicts the first unused one
// it meets, writing it to w first if it is dirty. With cleanOnly it passes
// dirty entries by, so it may free less than need.
func (sl *cacheSlab[P, V]) evict(o slotOwner, need int64, cleanOnly bool, w *cacheWriter) {
	var freed int64
	for steps := 2*sl.n + 1; freed < need && sl.live > 0 && steps > 0; steps-- {
		if sl.hand >= sl.n {
			sl.hand = 0
		}
		s := int32(sl.hand)
		sl.hand++
		e := sl.at(s)
		if e.flags&slotLive == 0 {
			continue
		}
		if e.flags&slotRef != 0 {
			e.flags &^= slotRef
			continue
		}
		if e.flags&slotDirty != 0 {
			if cleanOnly {
				continue
			}
			o.writeSlot(s, w)
		}
		freed += int64(e.size)
		sl.drop(o, s)
	}
}

// writeBack writes the dirty entry in slot s, whose encoded key is key, to
// w (its value encoded with vc into the table's scratch buffer *buf), marks
// it clean and updates its size and the table's size estimate.
func writeBack[P comparable, V any](sl *cacheSlab[P, V], s int32, key []byte, vc codec.Codec[V], buf *[]byte, est *sizeEstimate, w *cacheWriter) {
	e := sl.at(s)
	size := len(key) + CacheEntryOverhead
	if e.flags&slotPresent != 0 {
		*buf = vc.Append((*buf)[:0], e.val)
		w.set(key, *buf)
		size += len(*buf)
		e.flags |= slotStored
		est.observe(len(key), len(*buf))
	} else {
		w.delete(key)
		e.flags &^= slotStored
	}
	e.flags &^= slotDirty
	if cap(*buf) > 1<<16 {
		*buf = nil
	}
	sl.resize(s, size)
}

// overwrite sets the value of the cached entry in slot s and marks it
// present, used and dirty. It reports whether the entry is due to be
// measured; the table then re-encodes it and calls measured.
func (sl *cacheSlab[P, V]) overwrite(s int32, v V) bool {
	e := sl.at(s)
	e.val = v
	e.flags |= slotPresent | slotRef
	sl.markDirty(s)
	sl.measureIn--
	return sl.measureIn <= 0
}

// measured schedules the next measure after one found an entry of size
// bytes.
func (sl *cacheSlab[P, V]) measured(size int) { sl.measureIn = measureInterval(size) }

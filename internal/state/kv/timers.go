package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/eddystream/eddy/internal/state/codec"
)

// Key layout of the timers of a Timers, one store entry per timer with an
// empty value:
//
//	key group (2 bytes) | table id (4 bytes) | domain (1 byte) | timestamp (8 bytes) | key | namespace
//
// The timestamp is big-endian with its sign bit flipped, so that the keys of
// one key group and domain sort by timestamp, then by encoded key and
// namespace.

// Timer domains: the byte after the table id, and the first byte of a
// timer's key in the canonical format (state.TimerService writes it too).
const (
	// DomainEvent is the domain of event-time timers.
	DomainEvent = iota
	// DomainProc is the domain of processing-time timers.
	DomainProc
	numDomains
)

// timerPrefixLen is the length of the key group, table id and domain.
const timerPrefixLen = tablePrefixLen + 1

// maxPendingTimers bounds the timer writes a Timers on a CacheHost holds
// back; beyond it, it writes them all to the host.
const maxPendingTimers = 1 << 15

// maxTimerBatch bounds the timers read from the backend by one scan of
// Advance*; the rest are read by the next scan.
const maxTimerBatch = 1024

// Head states of a key group and domain.
const (
	headStale  = iota // unknown: scan the backend
	headEmpty         // known to hold no timer
	headLoaded        // ts is the earliest timer
)

// timerHead caches the earliest timer of one key group and domain.
type timerHead struct {
	ts    int64
	state uint8
}

// Timers keeps the timers of one subtask of a keyed operator in the Store of
// a bytes backend, as Flink's RocksDB backend does, so that they are part of
// the backend's tables: its snapshots (canonical and native) and restores
// include them, and they need not fit in memory. Only the earliest timestamp
// of each key group and domain is cached in memory, loaded lazily.
//
// Firing order: timers fire in timestamp order across key groups: the key
// group with the earliest due timer fires its timers up to the next key
// group's earliest, by timestamp and then by encoded key and namespace; then
// the key group with the earliest left, and so on. Unlike state.TimerService,
// timers of equal timestamps fire in key order (and key groups in any
// order) rather than in registration order; Flink's RocksDB timers order
// equal timestamps by key too.
//
// Heads start unknown, so the backend may be filled behind the service's
// back (by a restore) before its first read. On a CacheHost, t is attached
// as a TableCache: it holds timer writes back until the host flushes them
// (so that timers registered and fired in between never reach the
// backend), and the host's Invalidate calls tell it of direct writes (a
// restore, the drop of a key group). On another backend, writes go
// straight to it; call Invalidate(nil) after changing the timers' entries
// other than through t.
//
// Concurrency: used on the subtask's goroutine only, like its backend.
type Timers[K, N comparable] struct {
	b     Store
	name  string
	id    uint32
	kgs   keyGroups
	kc    codec.Codec[K]
	nc    codec.Codec[N]
	heads [numDomains][]timerHead
	key   []byte // scratch for Register and Delete

	// On a CacheHost, writes are held back in pend, per domain and key
	// group index: backend key → true for a Set, false for a Delete, so
	// that a timer registered and fired between two flushes never reaches
	// the backend. The host flushes them (TableCache) before it scans or
	// persists; the scans of t itself merge them instead, with the
	// domain and key group being scanned held (not flushed).
	cached bool
	pend   [numDomains][]map[string]bool
	npend  int
	bytes  int64
	shown  atomic.Int64
	held   int // domain*len(heads[0]) + index + 1 of the held pair, or 0

	// firing is set while Advance* calls fire; deleted then holds the keys
	// of timers deleted since the batch was read, which must not fire.
	firing  bool
	deleted map[string]struct{}
}

var _ TableCache = (*Timers[int64, struct{}])(nil)

// NewTimers returns the timers stored in s under the table with id, called
// name, for the key groups [start, end) of the backend; kc and nc encode
// their keys and namespaces. state.NewBytesTimers makes them, with the
// table's id and the default codecs.
func NewTimers[K, N comparable](s Store, start, end int, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N]) *Timers[K, N] {
	kgs := keyGroups{start, end}
	t := &Timers[K, N]{b: s, name: name, id: id, kgs: kgs, kc: kc, nc: nc}
	for d := range t.heads {
		t.heads[d] = make([]timerHead, kgs.Len()) // all stale
		t.pend[d] = make([]map[string]bool, kgs.Len())
	}
	if h, ok := s.(CacheHost); ok && h.CacheBudget() > 0 {
		t.cached = true
		h.AttachCache(t)
	}
	return t
}

// Name returns the name of the timers' table.
func (t *Timers[K, N]) Name() string { return t.name }

func (t *Timers[K, N]) prefix(dst []byte, kg int, d int) []byte {
	return append(AppendTablePrefix(dst, kg, t.id), byte(d))
}

func (t *Timers[K, N]) encode(kg, d int, k K, n N, ts int64) []byte {
	checkKeyGroup(kg, t.kgs)
	b := codec.AppendInt64(t.prefix(t.key[:0], kg, d), ts)
	t.key = t.nc.Append(t.kc.Append(b, k), n)
	return t.key
}

// write sets (set) or deletes key, in domain d and key group index i: on
// a CacheHost, in pend; else in the backend.
func (t *Timers[K, N]) write(d, i int, key []byte, set bool) {
	if !t.cached {
		if set {
			t.b.Set(key, nil)
		} else {
			t.b.Delete(key)
		}
		return
	}
	p := t.pend[d][i]
	if p == nil {
		p = map[string]bool{}
		t.pend[d][i] = p
	}
	if _, ok := p[string(key)]; !ok {
		t.npend++
		t.bytes += int64(len(key)) + CacheEntryOverhead
		t.shown.Store(t.bytes)
	}
	p[string(key)] = set
	if t.npend > maxPendingTimers {
		t.Flush(nil)
	}
}

// forget drops the held-back write of key, which need not reach the
// backend, and reports whether there was one.
func (t *Timers[K, N]) forget(d, i int, key []byte) bool {
	p := t.pend[d][i]
	if _, ok := p[string(key)]; !ok {
		return false
	}
	delete(p, string(key))
	t.npend--
	t.bytes -= int64(len(key)) + CacheEntryOverhead
	t.shown.Store(t.bytes)
	return true
}

func (t *Timers[K, N]) register(d, kg int, k K, n N, ts int64) {
	key := t.encode(kg, d, k, n, ts)
	i := kg - t.kgs.Start
	t.write(d, i, key, true)
	if t.firing && len(t.deleted) > 0 {
		delete(t.deleted, string(key))
	}
	h := &t.heads[d][i]
	switch h.state {
	case headEmpty:
		*h = timerHead{ts: ts, state: headLoaded}
	case headLoaded:
		h.ts = min(h.ts, ts)
	}
}

func (t *Timers[K, N]) remove(d, kg int, k K, n N, ts int64) {
	key := t.encode(kg, d, k, n, ts)
	i := kg - t.kgs.Start
	t.write(d, i, key, false)
	if t.firing {
		if t.deleted == nil {
			t.deleted = map[string]struct{}{}
		}
		t.deleted[string(key)] = struct{}{}
	}
	h := &t.heads[d][i]
	if h.state == headLoaded && h.ts == ts {
		h.state = headStale
	}
}

// RegisterEventTime registers an event-time timer at ts for (k, n) in key
// group kg. Registering an existing timer does nothing.
func (t *Timers[K, N]) RegisterEventTime(kg int, k K, n N, ts int64) {
	t.register(DomainEvent, kg, k, n, ts)
}

// DeleteEventTime deletes the event-time timer at ts for (k, n), if any.
func (t *Timers[K, N]) DeleteEventTime(kg int, k K, n N, ts int64) {
	t.remove(DomainEvent, kg, k, n, ts)
}

// RegisterProcessingTime registers a processing-time timer at ts (ms) for
// (k, n) in key group kg. Registering an existing timer does nothing.
func (t *Timers[K, N]) RegisterProcessingTime(kg int, k K, n N, ts int64) {
	t.register(DomainProc, kg, k, n, ts)
}

// DeleteProcessingTime deletes the processing-time timer at ts for (k, n),
// if any.
func (t *Timers[K, N]) DeleteProcessingTime(kg int, k K, n N, ts int64) {
	t.remove(DomainProc, kg, k, n, ts)
}

// timerTS decodes the timestamp of a timer's backend key.
func (t *Timers[K, N]) timerTS(key []byte) int64 {
	if len(key) < timerPrefixLen+8 {
		corrupt(t.name, fmt.Errorf("timer key of %d bytes", len(key)))
	}
	return codec.ReadInt64(key[timerPrefixLen:])
}

// scan scans the backend's timers of domain d in key group index i, with
// the held-back writes of that pair held back from the host's flush.
func (t *Timers[K, N]) scan(d, i int, prefix []byte, fn func(key []byte) bool) {
	t.held = d*len(t.heads[0]) + i + 1
	defer func() { t.held = 0 }()
	t.b.Scan(prefix, func(key, _ []byte) bool { return fn(key) })
}

// head returns the earliest timer of domain d in the key group at index i,
// reading the backend if it is not known.
func (t *Timers[K, N]) head(d, i int) *timerHead {
	h := &t.heads[d][i]
	if h.state != headStale {
		return h
	}
	*h = timerHead{state: headEmpty}
	p := t.pend[d][i]
	t.scan(d, i, t.prefix(make([]byte, 0, timerPrefixLen), t.kgs.Start+i, d), func(key []byte) bool {
		if set, ok := p[string(key)]; ok && !set {
			return true // deleted
		}
		*h = timerHead{ts: t.timerTS(key), state: headLoaded}
		return false
	})
	for k, set := range p {
		if ts := t.timerTS([]byte(k)); set && (h.state != headLoaded || ts < h.ts) {
			*h = timerHead{ts: ts, state: headLoaded}
		}
	}
	return h
}

func (t *Timers[K, N]) next(d int) (ts int64, ok bool) {
	for i := range t.heads[d] {
		if h := t.head(d, i); h.state == headLoaded && (!ok || h.ts < ts) {
			ts, ok = h.ts, true
		}
	}
	return ts, ok
}

// NextEventTime returns the earliest timestamp of an event-time timer, or
// ok=false if there is none.
func (t *Timers[K, N]) NextEventTime() (ts int64, ok bool) { return t.next(DomainEvent) }

// NextProcessingTime returns the earliest timestamp of a processing-time
// timer, or ok=false if there is none.
func (t *Timers[K, N]) NextProcessingTime() (ts int64, ok bool) { return t.next(DomainProc) }

// AdvanceWatermark fires every event-time timer with a timestamp at or
// before wm, in the order of the type comment, deleting each before calling
// fire. fire may register and delete timers; new ones at or before wm fire
// in the same call. It stops at the first error fire returns and returns it.
func (t *Timers[K, N]) AdvanceWatermark(wm int64, fire func(kg int, k K, n N, ts int64) error) error {
	return t.advance(DomainEvent, wm, fire)
}

// AdvanceProcessingTime fires every processing-time timer with a timestamp
// at or before now, as AdvanceWatermark does for event time.
func (t *Timers[K, N]) AdvanceProcessingTime(now int64, fire func(kg int, k K, n N, ts int64) error) error {
	return t.advance(DomainProc, now, fire)
}

// dueTimer is a timer read by advance, to be fired.
type dueTimer[K, N comparable] struct {
	key    []byte // the backend key
	stored bool   // in the backend, not only held back
	ts     int64
	k      K
	n      N
}

func (t *Timers[K, N]) decodeDue(key []byte, ts int64, stored bool) dueTimer[K, N] {
	e := dueTimer[K, N]{ts: ts, stored: stored}
	pos, err := codec.DecodeAt(t.kc, key, timerPrefixLen+8, &e.k)
	if err == nil {
		pos, err = codec.DecodeAt(t.nc, key, pos, &e.n)
	}
	if err == nil && pos != len(key) {
		err = fmt.Errorf("%d trailing bytes in a timer key", len(key)-pos)
	}
	if err != nil {
		corrupt(t.name, err)
	}
	return e
}

func (t *Timers[K, N]) advance(d int, limit int64, fire func(kg int, k K, n N, ts int64) error) error {
	if t.firing {
		panic("state: timers advanced from a timer's fire function")
	}
	var (
		batch []dueTimer[K, N]
		pfx   []byte
		stop  []byte
	)
	for {
		// The key group with the earliest due timer fires its timers up to
		// the next key group's earliest, so that timers fire in timestamp
		// order across key groups.
		best, bestTS, upTo := -1, int64(0), limit
		for i := range t.heads[d] {
			h := t.head(d, i)
			if h.state != headLoaded || h.ts > limit {
				continue
			}
			if best < 0 || h.ts < bestTS {
				if best >= 0 {
					upTo = min(upTo, bestTS)
				}
				best, bestTS = i, h.ts
			} else {
				upTo = min(upTo, h.ts)
			}
		}
		if best < 0 {
			return nil
		}
		kg := t.kgs.Start + best
		batch = batch[:0]
		pfx = t.prefix(pfx[:0], kg, d)
		p := t.pend[d][best]
		// The first timer after the batch is the key group's head once the
		// batch has fired, unless fire registers or deletes timers.
		rest := timerHead{state: headEmpty}
		capped := false
		t.scan(d, best, pfx, func(key []byte) bool {
			if set, ok := p[string(key)]; ok && !set {
				return true // deleted
			}
			ts := t.timerTS(key)
			if ts > upTo || len(batch) == maxTimerBatch {
				if ts <= upTo {
					capped, stop = true, append(stop[:0], key...)
				}
				rest = timerHead{ts: ts, state: headLoaded}
				return false
			}
			e := t.decodeDue(key, ts, true)
			e.key = slices.Clone(key)
			batch = append(batch, e)
			return true
		})
		stored := len(batch)
		for k, set := range p {
			if !set {
				continue
			}
			key := []byte(k)
			ts := t.timerTS(key)
			if ts > upTo || (capped && bytes.Compare(key, stop) >= 0) {
				if rest.state != headLoaded || ts < rest.ts {
					rest = timerHead{ts: ts, state: headLoaded}
				}
				continue
			}
			if _, found := slices.BinarySearchFunc(batch[:stored], key, func(e dueTimer[K, N], key []byte) int {
				return bytes.Compare(e.key, key)
			}); found {
				continue
			}
			e := t.decodeDue(key, ts, false)
			e.key = key
			batch = append(batch, e)
		}
		if len(batch) > stored {
			slices.SortFunc(batch, func(a, b dueTimer[K, N]) int { return bytes.Compare(a.key, b.key) })
		}
		// Register and Delete, called by fire, keep the head up to date
		// from here: a timer registered at or before limit makes it due
		// again, and the loop reads the key group again.
		t.heads[d][best] = rest
		if err := t.fireBatch(d, best, batch, fire); err != nil {
			return err
		}
	}
}

// fireBatch deletes and fires the timers of batch, of domain d and key
// group index i, skipping those that fire deleted meanwhile.
func (t *Timers[K, N]) fireBatch(d, i int, batch []dueTimer[K, N], fire func(kg int, k K, n N, ts int64) error) error {
	t.firing = true
	defer func() {
		t.firing = false
		clear(t.deleted)
	}()
	kg := t.kgs.Start + i
	for j := range batch {
		e := &batch[j]
		if len(t.deleted) > 0 {
			if _, gone := t.deleted[string(e.key)]; gone {
				continue
			}
		}
		// A timer only held back is forgotten, unless a flush (when fire
		// held back too many writes, or scanned) has written it since the
		// batch was read.
		if e.stored || !t.forget(d, i, e.key) {
			t.write(d, i, e.key, false)
		}
		if err := fire(kg, e.k, e.n, e.ts); err != nil {
			return err
		}
	}
	return nil
}

// Len returns the number of registered timers of both kinds. It counts them
// by scanning the backend, in time proportional to their number: it is for
// tests and occasional metrics.
func (t *Timers[K, N]) Len() int {
	t.Flush(nil)
	n := 0
	var pfx []byte
	for kg := t.kgs.Start; kg < t.kgs.End; kg++ {
		pfx = AppendTablePrefix(pfx[:0], kg, t.id)
		t.b.Scan(pfx, func(_, _ []byte) bool {
			n++
			return true
		})
	}
	return n
}

// each calls fn for each domain and key group index that keys under prefix
// can belong to.
func (t *Timers[K, N]) each(prefix []byte, fn func(d, i int)) {
	from, to := t.kgs.Start, t.kgs.End
	if len(prefix) >= 2 {
		kg := int(binary.BigEndian.Uint16(prefix))
		if !t.kgs.Contains(kg) {
			return
		}
		from, to = kg, kg+1
	}
	if len(prefix) >= tablePrefixLen && binary.BigEndian.Uint32(prefix[2:]) != t.id {
		return
	}
	ds, de := 0, numDomains
	if len(prefix) > tablePrefixLen {
		if int(prefix[tablePrefixLen]) >= numDomains {
			return
		}
		ds, de = int(prefix[tablePrefixLen]), int(prefix[tablePrefixLen])+1
	}
	for d := ds; d < de; d++ {
		for kg := from; kg < to; kg++ {
			if len(prefix) == 1 && byte(kg>>8) != prefix[0] {
				continue
			}
			fn(d, kg-t.kgs.Start)
		}
	}
}

// Flush implements TableCache: it writes the held-back timer writes under
// prefix (or more) to the host in one batch. The host calls it.
func (t *Timers[K, N]) Flush(prefix []byte) {
	if t.npend == 0 {
		return
	}
	var w WriteBatch
	t.each(prefix, func(d, i int) {
		p := t.pend[d][i]
		if len(p) == 0 || t.held == d*len(t.heads[0])+i+1 {
			return
		}
		if w == nil {
			w = t.b.(CacheHost).NewWriteBatch()
		}
		for k, set := range p {
			if set {
				w.Set([]byte(k), nil)
			} else {
				w.Delete([]byte(k))
			}
			t.bytes -= int64(len(k)) + CacheEntryOverhead
		}
		t.npend -= len(p)
		clear(p)
	})
	if w != nil {
		w.Commit()
		t.shown.Store(t.bytes)
	}
}

// Invalidate implements TableCache: it drops the held-back timer writes
// under prefix, which the host is about to overwrite, and forgets the
// earliest timers of the key groups concerned.
func (t *Timers[K, N]) Invalidate(prefix []byte) {
	t.each(prefix, func(d, i int) {
		t.heads[d][i].state = headStale
		p := t.pend[d][i]
		for k := range p {
			if len(prefix) <= timerPrefixLen || bytes.HasPrefix([]byte(k), prefix) {
				delete(p, k)
				t.npend--
				t.bytes -= int64(len(k)) + CacheEntryOverhead
			}
		}
	})
	t.shown.Store(t.bytes)
}

// Bytes implements TableCache: the estimated bytes of the held-back writes.
// It is safe for concurrent use.
func (t *Timers[K, N]) Bytes() int64 { return t.shown.Load() }

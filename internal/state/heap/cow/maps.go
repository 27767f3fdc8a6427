package cow

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddystream/eddy/internal/state/codec"
)

// kgMaps is the storage of the tables: one Go map per key group, with
// copy-on-write snapshots (state.AsyncSnapshotter).
//
// Normally groups holds the table's entries, snap is nil, and fast is groups;
// the hot paths of the tables test only fast.
//
// BeginSnapshot hands the maps in groups to a cowSnap as its frozen maps and
// starts groups afresh: from then on groups holds the delta, the entries put
// (or copied, see below) since, and snap.dead the keys of frozen entries
// deleted since. Reads look in the delta, then in dead, then in frozen. The
// owning goroutine never writes a frozen map nor hands out a value of one that
// could be mutated in place: a value of a type that can share memory (see
// mayShare) is copied with copyV when a read finds it in frozen, and the copy
// is stored in the delta. The snapshot goroutine reads only frozen maps.
//
// Once the snapshot is released, the owner folds the delta and the
// tombstones of each key group back into its frozen map, which becomes the
// key group's map again, at the key group's first access; each access also
// folds one more key group, so that all are folded after as many accesses as
// there are key groups and no access folds more than two. Folding takes
// time proportional to the key group's delta. Settle folds all at once.
type kgMaps[P comparable, V any] struct {
	groups []map[P]V      // the entries; during a snapshot, the delta
	fast   []map[P]V      // groups when snap is nil, else nil: for fast paths
	snap   *cowSnap[P, V] // the snapshot in progress or not yet settled, or nil
	copyV  func(V) V      // deep copy of a value; nil if V cannot share memory
}

// cowSnap is the state of a copy-on-write snapshot of a kgMaps.
type cowSnap[P comparable, V any] struct {
	frozen   []map[P]V        // the maps at BeginSnapshot; read-only until settled
	dead     []map[P]struct{} // per key group: keys of frozen deleted since
	dropped  []bool           // per key group: dropped since, frozen is void
	n        []int            // per key group: live entries, until settled
	settled  []bool           // per key group: folded back after the release
	left     int              // key groups not settled
	cursor   int              // next key group to try to settle
	ranging  int              // Range calls in progress, which settling would upset
	released atomic.Bool      // set by release, on the snapshot goroutine
}

func newKGMaps[P comparable, V any](groups int, vc codec.Codec[V]) kgMaps[P, V] {
	m := kgMaps[P, V]{groups: make([]map[P]V, groups), copyV: codecCopier(vc)}
	m.fast = m.groups
	return m
}

// get returns the value of p in key group index i for the caller to keep,
// change in place and put back.
func (m *kgMaps[P, V]) get(i int, p P) (V, bool) {
	if m.snap != nil {
		return m.snapGet(i, p, true)
	}
	v, ok := m.groups[i][p]
	return v, ok
}

// peek returns the value of p in key group index i for reading only: it may
// be a value of a frozen map.
func (m *kgMaps[P, V]) peek(i int, p P) (V, bool) {
	if m.snap != nil {
		return m.snapGet(i, p, false)
	}
	v, ok := m.groups[i][p]
	return v, ok
}

func (m *kgMaps[P, V]) put(i int, p P, v V) {
	if m.snap != nil && m.snapPut(i, p, v) {
		return
	}
	g := m.groups[i]
	if g == nil {
		g = make(map[P]V)
		m.groups[i] = g
	}
	g[p] = v
}

func (m *kgMaps[P, V]) del(i int, p P) {
	if m.snap != nil && m.snapDel(i, p) {
		return
	}
	delete(m.groups[i], p)
}

// active reports whether key group index i is in a snapshot: whether it
// must take the snapshot paths. Once the snapshot is released it settles i,
// and one more key group, unless a Range is in progress.
func (m *kgMaps[P, V]) active(i int) bool {
	s := m.snap
	if s == nil {
		return false
	}
	if !s.released.Load() {
		return true
	}
	if !s.settled[i] {
		if s.ranging > 0 {
			return true
		}
		m.settleKG(i)
	}
	if s.ranging == 0 {
		for s.left > 0 && s.settled[s.cursor] {
			s.cursor = (s.cursor + 1) % len(s.settled)
		}
		if s.left > 0 {
			m.settleKG(s.cursor)
		}
	}
	return false
}

// frozenGet returns the frozen value of p unless it has been deleted or its
// key group dropped since the snapshot began.
func (s *cowSnap[P, V]) frozenGet(i int, p P) (V, bool) {
	if s.dropped[i] {
		var zero V
		return zero, false
	}
	if _, dead := s.dead[i][p]; dead {
		var zero V
		return zero, false
	}
	v, ok := s.frozen[i][p]
	return v, ok
}

// inFrozen reports whether frozen holds p and counts for the live contents
// (it may have been deleted since: dead is not consulted).
func (s *cowSnap[P, V]) inFrozen(i int, p P) bool {
	if s.dropped[i] {
		return false
	}
	_, ok := s.frozen[i][p]
	return ok
}

func (m *kgMaps[P, V]) delta(i int) map[P]V {
	d := m.groups[i]
	if d == nil {
		d = make(map[P]V)
		m.groups[i] = d
	}
	return d
}

func (m *kgMaps[P, V]) snapGet(i int, p P, own bool) (V, bool) {
	// The delta (or the settled map) has the live value if it has one.
	if v, ok := m.groups[i][p]; ok {
		return v, true
	}
	if !m.active(i) {
		v, ok := m.groups[i][p]
		return v, ok
	}
	v, ok := m.snap.frozenGet(i, p)
	if !ok || !own || m.copyV == nil {
		return v, ok
	}
	v = m.copyV(v)
	m.delta(i)[p] = v
	return v, true
}

// snapPut stores v during a snapshot and returns true, or returns false if
// key group index i is not in the snapshot.
func (m *kgMaps[P, V]) snapPut(i int, p P, v V) bool {
	if !m.active(i) {
		return false
	}
	s := m.snap
	d := m.delta(i)
	before := len(d)
	d[p] = v
	if len(d) != before {
		if _, ok := s.frozenGet(i, p); !ok {
			s.n[i]++
			delete(s.dead[i], p)
		}
	}
	return true
}

// snapDel deletes p during a snapshot and returns true, or returns false if
// key group index i is not in the snapshot.
func (m *kgMaps[P, V]) snapDel(i int, p P) bool {
	if !m.active(i) {
		return false
	}
	s := m.snap
	if _, ok := m.groups[i][p]; ok {
		delete(m.groups[i], p)
		s.n[i]--
	} else if _, ok := s.frozenGet(i, p); ok {
		s.n[i]--
	} else {
		return true
	}
	if s.inFrozen(i, p) {
		if s.dead[i] == nil {
			s.dead[i] = make(map[P]struct{})
		}
		s.dead[i][p] = struct{}{}
	}
	return true
}

// rangeKG calls fn for every entry of key group index i until fn returns
// false. fn may delete or overwrite the entry it is given. If own, the values
// are the caller's to change in place (frozen values are copied into the
// delta first); otherwise they may be frozen values and fn must not change
// them.
func (m *kgMaps[P, V]) rangeKG(i int, own bool, fn func(p P, v V) bool) {
	if !m.active(i) {
		for p, v := range m.groups[i] {
			if !fn(p, v) {
				return
			}
		}
		return
	}
	s := m.snap
	s.ranging++
	defer func() { s.ranging-- }()
	// Frozen entries first, each in its current version: entries that fn
	// (or what it calls) adds to the delta meanwhile are frozen ones.
	if !s.dropped[i] {
		for p, v := range s.frozen[i] {
			if _, dead := s.dead[i][p]; dead {
				continue
			}
			if d, ok := m.groups[i][p]; ok {
				v = d
			} else if own && m.copyV != nil {
				v = m.copyV(v)
				m.delta(i)[p] = v
			}
			if !fn(p, v) {
				return
			}
		}
	}
	// Then the entries that only the delta has.
	for p, v := range m.groups[i] {
		if s.inFrozen(i, p) {
			continue
		}
		if !fn(p, v) {
			return
		}
	}
}

// count returns the number of entries of key group index i.
func (m *kgMaps[P, V]) count(i int) int {
	if s := m.snap; s != nil && !s.settled[i] {
		return s.n[i]
	}
	return len(m.groups[i])
}

// total returns the number of entries of all key groups.
func (m *kgMaps[P, V]) total() int {
	n := 0
	for i := range m.groups {
		n += m.count(i)
	}
	return n
}

// drop removes every entry of key group index i.
func (m *kgMaps[P, V]) drop(i int) {
	if m.active(i) {
		s := m.snap
		s.dead[i] = nil
		s.dropped[i] = true
		s.n[i] = 0
	}
	m.groups[i] = nil
}

// presize makes the map of key group index i, if it has none, with room for
// n entries.
func (m *kgMaps[P, V]) presize(i, n int) {
	if m.groups[i] == nil && !m.active(i) {
		m.groups[i] = make(map[P]V, n)
	}
}

// settleKG folds the delta of key group index i into its frozen map, which
// becomes its map again, after the snapshot has been released. The snapshot
// ends when every key group is settled.
func (m *kgMaps[P, V]) settleKG(i int) {
	s := m.snap
	if s.settled[i] {
		return
	}
	d := m.groups[i]
	if !s.dropped[i] {
		f := s.frozen[i]
		for p := range s.dead[i] {
			delete(f, p)
		}
		switch {
		case len(d) == 0:
			d = f
		case f == nil:
		case len(d) > len(f):
			for p, v := range f {
				if _, ok := d[p]; !ok {
					d[p] = v
				}
			}
		default:
			for p, v := range d {
				f[p] = v
			}
			d = f
		}
	}
	m.groups[i] = d
	s.frozen[i], s.dead[i] = nil, nil
	s.settled[i] = true
	if s.left--; s.left == 0 {
		m.snap = nil
		m.fast = m.groups
	}
}

// settleReleased settles every key group of a released snapshot now.
func (m *kgMaps[P, V]) settleReleased() {
	s := m.snap
	if s == nil || !s.released.Load() || s.ranging > 0 {
		return
	}
	for i := range s.settled {
		if m.snap == nil {
			return
		}
		m.settleKG(i)
	}
}

// begin starts a snapshot. start is the first key group and appendEntry
// encodes one entry; it must be safe to call on another goroutine. If
// counted, each key group's encoding starts with its number of entries.
func (m *kgMaps[P, V]) begin(start int, appendEntry func(dst []byte, p P, v V) []byte, counted bool) (encode func(dst []byte, kg int) []byte, release func()) {
	m.settleReleased()
	if m.snap != nil {
		panic("state: BeginSnapshot while a snapshot of the table is in progress")
	}
	n := len(m.groups)
	s := &cowSnap[P, V]{
		frozen:  m.groups,
		dead:    make([]map[P]struct{}, n),
		dropped: make([]bool, n),
		n:       make([]int, n),
		settled: make([]bool, n),
		left:    n,
	}
	for i, g := range s.frozen {
		s.n[i] = len(g)
	}
	m.groups = make([]map[P]V, n)
	m.fast = m.groups
	if n > 0 {
		m.snap = s
		m.fast = nil
	}
	frozen := s.frozen
	encode = func(dst []byte, kg int) []byte {
		i := kg - start
		if uint(i) >= uint(len(frozen)) {
			panic(fmt.Sprintf("state: key group %d out of range [%d,%d)", kg, start, start+len(frozen)))
		}
		if s.released.Load() {
			panic("state: snapshot encode called after release")
		}
		g := frozen[i]
		if counted {
			dst = binary.AppendUvarint(dst, uint64(len(g)))
		}
		for p, v := range g {
			dst = appendEntry(dst, p, v)
		}
		return dst
	}
	release = func() { s.released.Store(true) }
	return encode, release
}

// appendLive appends the live contents of key group index i, as a count (if
// counted) and the entries appendEntry encodes, on the owning goroutine.
func (m *kgMaps[P, V]) appendLive(dst []byte, i int, appendEntry func(dst []byte, p P, v V) []byte, counted bool) []byte {
	if counted {
		dst = binary.AppendUvarint(dst, uint64(m.count(i)))
	}
	m.rangeKG(i, false, func(p P, v V) bool {
		dst = appendEntry(dst, p, v)
		return true
	})
	return dst
}

// codecCopier returns a function that deep-copies a V by a round trip
// through c, or nil if values of V cannot share memory and need no copy.
// The function is for one goroutine: it reuses its buffer. If c does not
// decode its own encoding, the function panics with an error saying so,
// which fails the job.
func codecCopier[V any](c codec.Codec[V]) func(V) V {
	if !MayShare(reflect.TypeFor[V]()) {
		return nil
	}
	var buf []byte
	return func(v V) V {
		buf = c.Append(buf[:0], v)
		out, _, err := c.Decode(buf)
		if err != nil {
			panic(fmt.Errorf("state: copying a %s for a snapshot: its codec %T does not decode its own encoding (fix the codec): %w", reflect.TypeFor[V](), c, err))
		}
		if cap(buf) > 1<<16 {
			buf = nil
		}
		return out
	}
}

// MayShare reports whether values of t can share memory with other values:
// whether they hold a slice, map, pointer, interface, channel or function.
// time.Time counts as plain: its location is immutable. A copy of a value
// of a type that cannot share is independent of the original.
func MayShare(t reflect.Type) bool {
	if c, ok := shareCache.Load(t); ok {
		return c.(bool)
	}
	r := mayShareOf(t)
	shareCache.Store(t, r)
	return r
}

var shareCache sync.Map // reflect.Type → bool

func mayShareOf(t reflect.Type) bool {
	if t == reflect.TypeFor[time.Time]() {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return false
	case reflect.Array:
		return t.Len() > 0 && mayShareOf(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if mayShareOf(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}

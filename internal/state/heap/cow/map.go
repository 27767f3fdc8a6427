package cow

import (
	"encoding/binary"
	"fmt"

	"github.com/eddystream/eddy/internal/state/codec"
)

// MapTable is a map table of the heap backend (state.MapTable, an
// ObjectTable): per key group, a Go map from (key, namespace) to a Go map of
// user entries. An empty user map is removed, so a present (key, namespace)
// always has entries. During a copy-on-write snapshot (see kgMaps), the user
// map of a (key, namespace) is copied on its first write, or on its first
// access if user values can share memory.
type MapTable[K, N, UK comparable, UV any] struct {
	kind     string
	kgs      kgRange
	m        kgMaps[pair[K, N], map[UK]UV]
	uvShares bool // user values can share memory: copy user maps on reads too
	count    int  // user entries in all groups
	kc       codec.Codec[K]
	nc       codec.Codec[N]
	ukc      codec.Codec[UK]
	uvc      codec.Codec[UV]
}

// NewMapTable returns an empty MapTable of kind (see ValueTable) for the
// key groups [start, end).
func NewMapTable[K, N, UK comparable, UV any](kind string, start, end int, kc codec.Codec[K], nc codec.Codec[N], ukc codec.Codec[UK], uvc codec.Codec[UV]) *MapTable[K, N, UK, UV] {
	kgs := kgRange{start, end}
	t := &MapTable[K, N, UK, UV]{kind: kind, kgs: kgs, kc: kc, nc: nc, ukc: ukc, uvc: uvc}
	t.m.groups = make([]map[pair[K, N]]map[UK]UV, kgs.Len())
	t.m.fast = t.m.groups
	copyUV := codecCopier(uvc)
	t.uvShares = copyUV != nil
	t.m.copyV = func(m map[UK]UV) map[UK]UV {
		out := make(map[UK]UV, len(m))
		for uk, uv := range m {
			if copyUV != nil {
				uv = copyUV(uv)
			}
			out[uk] = uv
		}
		return out
	}
	return t
}

// index returns the position of key group kg in groups, panicking if the
// table does not hold kg.
func (t *MapTable[K, N, UK, UV]) index(kg int) int {
	i := kg - t.kgs.Start
	if uint(i) >= uint(len(t.m.groups)) {
		checkKeyGroup(kg, t.kgs)
	}
	return i
}

// read returns the user map of p for reading.
func (t *MapTable[K, N, UK, UV]) read(i int, p pair[K, N]) map[UK]UV {
	if t.uvShares {
		m, _ := t.m.get(i, p)
		return m
	}
	m, _ := t.m.peek(i, p)
	return m
}

// Get returns the value for uk in the map of (k, n).
func (t *MapTable[K, N, UK, UV]) Get(kg int, k K, n N, uk UK) (UV, bool) {
	if i := kg - t.kgs.Start; uint(i) < uint(len(t.m.fast)) {
		uv, ok := t.m.fast[i][pair[K, N]{k, n}][uk]
		return uv, ok
	}
	uv, ok := t.read(t.index(kg), pair[K, N]{k, n})[uk]
	return uv, ok
}

// Put sets uk to uv in the map of (k, n).
func (t *MapTable[K, N, UK, UV]) Put(kg int, k K, n N, uk UK, uv UV) {
	i := t.index(kg)
	p := pair[K, N]{k, n}
	var m map[UK]UV
	if t.m.fast != nil {
		m = t.m.fast[i][p]
	} else {
		m, _ = t.m.get(i, p)
	}
	if m == nil {
		m = make(map[UK]UV)
		t.m.put(i, p, m)
	}
	before := len(m)
	m[uk] = uv
	t.count += len(m) - before
}

// Delete removes uk from the map of (k, n).
func (t *MapTable[K, N, UK, UV]) Delete(kg int, k K, n N, uk UK) {
	i := t.index(kg)
	p := pair[K, N]{k, n}
	m, _ := t.m.peek(i, p)
	if _, ok := m[uk]; !ok {
		return
	}
	if t.m.snap != nil {
		m, _ = t.m.get(i, p)
	}
	delete(m, uk)
	t.count--
	if len(m) == 0 {
		t.m.del(i, p)
	}
}

// Clear removes the whole map of (k, n).
func (t *MapTable[K, N, UK, UV]) Clear(kg int, k K, n N) {
	i := t.index(kg)
	p := pair[K, N]{k, n}
	m, _ := t.m.peek(i, p)
	if m == nil {
		return
	}
	t.count -= len(m)
	t.m.del(i, p)
}

// IsEmpty reports whether the map of (k, n) has no entries.
func (t *MapTable[K, N, UK, UV]) IsEmpty(kg int, k K, n N) bool {
	m, _ := t.m.peek(t.index(kg), pair[K, N]{k, n})
	return len(m) == 0
}

// Entries calls fn for each entry of the map of (k, n) until it returns false.
func (t *MapTable[K, N, UK, UV]) Entries(kg int, k K, n N, fn func(uk UK, uv UV) bool) {
	for uk, uv := range t.read(t.index(kg), pair[K, N]{k, n}) {
		if !fn(uk, uv) {
			return
		}
	}
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *MapTable[K, N, UK, UV]) Range(kg int, fn func(k K, n N, uk UK, uv UV) bool) {
	t.m.rangeKG(t.index(kg), t.uvShares, func(p pair[K, N], m map[UK]UV) bool {
		for uk, uv := range m {
			if !fn(p.k, p.n, uk, uv) {
				return false
			}
		}
		return true
	})
}

// Kind names the table's kind and types.
func (t *MapTable[K, N, UK, UV]) Kind() string { return t.kind }

// AppendKeyGroup appends the entries of key group kg to dst: a uvarint count
// of maps, then for each its key, namespace, a uvarint count of entries and
// their user keys and values.
func (t *MapTable[K, N, UK, UV]) AppendKeyGroup(dst []byte, kg int) []byte {
	return t.m.appendLive(dst, t.index(kg), t.appendEntry, true)
}

func (t *MapTable[K, N, UK, UV]) appendEntry(dst []byte, p pair[K, N], m map[UK]UV) []byte {
	dst = t.kc.Append(dst, p.k)
	dst = t.nc.Append(dst, p.n)
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	for uk, uv := range m {
		dst = t.ukc.Append(dst, uk)
		dst = t.uvc.Append(dst, uv)
	}
	return dst
}

// BeginSnapshot freezes the table's contents for a snapshot encoded on
// another goroutine; see state.AsyncSnapshotter.
func (t *MapTable[K, N, UK, UV]) BeginSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return t.m.begin(t.kgs.Start, t.appendEntry, true)
}

// Settle finishes a released snapshot now; see state.Settler.
func (t *MapTable[K, N, UK, UV]) Settle() { t.m.settleReleased() }

// RestoreKeyGroup adds the entries encoded by AppendKeyGroup to key group kg.
func (t *MapTable[K, N, UK, UV]) RestoreKeyGroup(kg int, data []byte) error {
	t.index(kg)
	maps, pos := binary.Uvarint(data)
	if pos <= 0 || maps > uint64(len(data)) {
		return restoreErr(t.kind, kg, codec.Truncated("map count"))
	}
	for range maps {
		var k K
		var n N
		var err error
		if pos, err = codec.DecodeAt(t.kc, data, pos, &k); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		if pos, err = codec.DecodeAt(t.nc, data, pos, &n); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		count, c := binary.Uvarint(data[pos:])
		if c <= 0 || count > uint64(len(data)) {
			return restoreErr(t.kind, kg, codec.Truncated("entry count"))
		}
		pos += c
		for range count {
			var uk UK
			var uv UV
			if pos, err = codec.DecodeAt(t.ukc, data, pos, &uk); err != nil {
				return restoreErr(t.kind, kg, err)
			}
			if pos, err = codec.DecodeAt(t.uvc, data, pos, &uv); err != nil {
				return restoreErr(t.kind, kg, err)
			}
			t.Put(kg, k, n, uk, uv)
		}
	}
	if pos != len(data) {
		return restoreErr(t.kind, kg, fmt.Errorf("%d trailing bytes", len(data)-pos))
	}
	return nil
}

// DropKeyGroup removes every entry of key group kg.
func (t *MapTable[K, N, UK, UV]) DropKeyGroup(kg int) {
	i := t.index(kg)
	t.m.rangeKG(i, false, func(_ pair[K, N], m map[UK]UV) bool {
		t.count -= len(m)
		return true
	})
	t.m.drop(i)
}

// Len returns the number of user entries in the table.
func (t *MapTable[K, N, UK, UV]) Len() int { return t.count }

package state

import (
	"encoding/binary"
	"fmt"
)

// objectMapTable is a MapTable on an ObjectBackend: per key group, a Go map
// from (key, namespace) to a Go map of user entries. An empty user map is
// removed, so a present (key, namespace) always has entries.
type objectMapTable[K, N, UK comparable, UV any] struct {
	kind   string
	kgs    KeyGroupRange
	groups []map[pair[K, N]]map[UK]UV
	count  int // user entries in all groups
	kc     Codec[K]
	nc     Codec[N]
	ukc    Codec[UK]
	uvc    Codec[UV]
}

func newObjectMapTable[K, N, UK comparable, UV any](kind string, kgs KeyGroupRange, kc Codec[K], nc Codec[N], ukc Codec[UK], uvc Codec[UV]) *objectMapTable[K, N, UK, UV] {
	return &objectMapTable[K, N, UK, UV]{kind: kind, kgs: kgs, groups: make([]map[pair[K, N]]map[UK]UV, kgs.Len()), kc: kc, nc: nc, ukc: ukc, uvc: uvc}
}

func (t *objectMapTable[K, N, UK, UV]) index(kg int) int {
	i := kg - t.kgs.Start
	if uint(i) >= uint(len(t.groups)) {
		checkKeyGroup(kg, t.kgs)
	}
	return i
}

// Get returns the value for uk in the map of (k, n).
func (t *objectMapTable[K, N, UK, UV]) Get(kg int, k K, n N, uk UK) (UV, bool) {
	uv, ok := t.groups[t.index(kg)][pair[K, N]{k, n}][uk]
	return uv, ok
}

// Put sets uk to uv in the map of (k, n).
func (t *objectMapTable[K, N, UK, UV]) Put(kg int, k K, n N, uk UK, uv UV) {
	i := t.index(kg)
	g := t.groups[i]
	if g == nil {
		g = make(map[pair[K, N]]map[UK]UV)
		t.groups[i] = g
	}
	p := pair[K, N]{k, n}
	m := g[p]
	if m == nil {
		m = make(map[UK]UV)
		g[p] = m
	}
	before := len(m)
	m[uk] = uv
	t.count += len(m) - before
}

// Delete removes uk from the map of (k, n).
func (t *objectMapTable[K, N, UK, UV]) Delete(kg int, k K, n N, uk UK) {
	g := t.groups[t.index(kg)]
	p := pair[K, N]{k, n}
	m := g[p]
	if m == nil {
		return
	}
	before := len(m)
	delete(m, uk)
	t.count -= before - len(m)
	if len(m) == 0 {
		delete(g, p)
	}
}

// Clear removes the whole map of (k, n).
func (t *objectMapTable[K, N, UK, UV]) Clear(kg int, k K, n N) {
	g := t.groups[t.index(kg)]
	p := pair[K, N]{k, n}
	t.count -= len(g[p])
	delete(g, p)
}

// IsEmpty reports whether the map of (k, n) has no entries.
func (t *objectMapTable[K, N, UK, UV]) IsEmpty(kg int, k K, n N) bool {
	return len(t.groups[t.index(kg)][pair[K, N]{k, n}]) == 0
}

// Entries calls fn for each entry of the map of (k, n) until it returns false.
func (t *objectMapTable[K, N, UK, UV]) Entries(kg int, k K, n N, fn func(uk UK, uv UV) bool) {
	for uk, uv := range t.groups[t.index(kg)][pair[K, N]{k, n}] {
		if !fn(uk, uv) {
			return
		}
	}
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *objectMapTable[K, N, UK, UV]) Range(kg int, fn func(k K, n N, uk UK, uv UV) bool) {
	for p, m := range t.groups[t.index(kg)] {
		for uk, uv := range m {
			if !fn(p.k, p.n, uk, uv) {
				return
			}
		}
	}
}

// Kind names the table's kind and types.
func (t *objectMapTable[K, N, UK, UV]) Kind() string { return t.kind }

// AppendKeyGroup appends the entries of key group kg to dst: a uvarint count
// of maps, then for each its key, namespace, a uvarint count of entries and
// their user keys and values.
func (t *objectMapTable[K, N, UK, UV]) AppendKeyGroup(dst []byte, kg int) []byte {
	g := t.groups[t.index(kg)]
	dst = binary.AppendUvarint(dst, uint64(len(g)))
	for p, m := range g {
		dst = t.kc.Append(dst, p.k)
		dst = t.nc.Append(dst, p.n)
		dst = binary.AppendUvarint(dst, uint64(len(m)))
		for uk, uv := range m {
			dst = t.ukc.Append(dst, uk)
			dst = t.uvc.Append(dst, uv)
		}
	}
	return dst
}

// RestoreKeyGroup adds the entries encoded by AppendKeyGroup to key group kg.
func (t *objectMapTable[K, N, UK, UV]) RestoreKeyGroup(kg int, data []byte) error {
	t.index(kg)
	maps, pos := binary.Uvarint(data)
	if pos <= 0 || maps > uint64(len(data)) {
		return restoreErr(t.kind, kg, shortErr("map count"))
	}
	for range maps {
		var k K
		var n N
		var err error
		if pos, err = decodeAt(t.kc, data, pos, &k); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		if pos, err = decodeAt(t.nc, data, pos, &n); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		count, c := binary.Uvarint(data[pos:])
		if c <= 0 || count > uint64(len(data)) {
			return restoreErr(t.kind, kg, shortErr("entry count"))
		}
		pos += c
		for range count {
			var uk UK
			var uv UV
			if pos, err = decodeAt(t.ukc, data, pos, &uk); err != nil {
				return restoreErr(t.kind, kg, err)
			}
			if pos, err = decodeAt(t.uvc, data, pos, &uv); err != nil {
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
func (t *objectMapTable[K, N, UK, UV]) DropKeyGroup(kg int) {
	i := t.index(kg)
	for _, m := range t.groups[i] {
		t.count -= len(m)
	}
	t.groups[i] = nil
}

// Len returns the number of user entries in the table.
func (t *objectMapTable[K, N, UK, UV]) Len() int { return t.count }

package state

import (
	"encoding/binary"
	"fmt"

	"github.com/eddystream/eddy/internal/state/codec"
)

// Key layout of tables on a BytesBackend:
//
//	key group (2 bytes, big-endian) | table id (4 bytes, big-endian) | key | namespace [| user key]
//
// Codec encodings are prefix-free, so the keys of one (key, namespace) map
// share a prefix that no other pair's keys have.

// tablePrefixLen is the length of the key group and table id at the front
// of every key.
const tablePrefixLen = 6

func appendTablePrefix(dst []byte, kg int, id uint32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, byte(kg>>8), byte(kg)), id)
}

// corrupt panics with a BackendError for stored bytes that do not decode: the
// storage holds something the table did not write.
func corrupt(name string, err error) {
	panic(&BackendError{Op: fmt.Sprintf("decode table %q", name), Err: err})
}

// bytesValueTable is a ValueTable on a BytesBackend without a cache (see
// CacheHost): every call encodes and goes to the backend. key and val are
// scratch buffers reused by every call, so Get and Put of primitive types do
// not allocate.
type bytesValueTable[K, N comparable, V any] struct {
	b    BytesBackend
	name string
	id   uint32
	kgs  KeyGroupRange
	kc   codec.Codec[K]
	nc   codec.Codec[N]
	vc   codec.Codec[V]
	key  []byte
	val  []byte
}

// newBytesValueTable returns the value table with id on b: on a CacheHost
// with a cache, the cached table of that id, made on first use, so that
// every declaration of a name shares one cache; else a bytesValueTable.
func newBytesValueTable[K, N comparable, V any](b BytesBackend, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V]) ValueTable[K, N, V] {
	if m := cacheOf(b); m != nil {
		if t, ok := m.tables[id]; ok {
			ct, ok := t.(ValueTable[K, N, V])
			if !ok {
				panic(fmt.Sprintf("state: table %q (id %d) is cached as %T", name, id, t))
			}
			return ct
		}
		var t interface {
			cachedTable
			ValueTable[K, N, V]
		}
		if vnc, ok := any(nc).(codec.Codec[VoidNamespace]); ok {
			t = any(newCachedValueTable[K, VoidNamespace, V, K, voidKeyer[K]](m, name, id, kc, vnc, vc)).(interface {
				cachedTable
				ValueTable[K, N, V]
			})
		} else {
			t = newCachedValueTable[K, N, V, pair[K, N], pairKeyer[K, N]](m, name, id, kc, nc, vc)
		}
		m.add(t)
		return t
	}
	return &bytesValueTable[K, N, V]{b: b, name: name, id: id, kgs: b.KeyGroups(), kc: kc, nc: nc, vc: vc}
}

func (t *bytesValueTable[K, N, V]) encodeKey(kg int, k K, n N) []byte {
	checkKeyGroup(kg, t.kgs)
	t.key = t.nc.Append(t.kc.Append(appendTablePrefix(t.key[:0], kg, t.id), k), n)
	return t.key
}

// Get returns the value for (k, n), or ok=false.
func (t *bytesValueTable[K, N, V]) Get(kg int, k K, n N) (v V, ok bool) {
	raw, ok := t.b.Get(t.encodeKey(kg, k, n))
	if !ok {
		return v, false
	}
	v, _, err := t.vc.Decode(raw)
	if err != nil {
		corrupt(t.name, err)
	}
	return v, true
}

// Put stores v for (k, n).
func (t *bytesValueTable[K, N, V]) Put(kg int, k K, n N, v V) {
	key := t.encodeKey(kg, k, n)
	t.val = t.vc.Append(t.val[:0], v)
	t.b.Set(key, t.val)
}

// Delete removes the value for (k, n), if any.
func (t *bytesValueTable[K, N, V]) Delete(kg int, k K, n N) {
	t.b.Delete(t.encodeKey(kg, k, n))
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *bytesValueTable[K, N, V]) Range(kg int, fn func(k K, n N, v V) bool) {
	scanValues(t.b, t.name, t.id, t.kgs, t.kc, t.nc, t.vc, kg, fn)
}

// scanValues calls fn for every entry of key group kg of the value table
// (name, id) on b, decoded, until fn returns false.
func scanValues[K, N comparable, V any](b BytesBackend, name string, id uint32, kgs KeyGroupRange, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V], kg int, fn func(k K, n N, v V) bool) {
	checkKeyGroup(kg, kgs)
	prefix := appendTablePrefix(make([]byte, 0, tablePrefixLen), kg, id)
	b.Scan(prefix, func(key, raw []byte) bool {
		var k K
		var n N
		var v V
		pos, err := codec.DecodeAt(kc, key, tablePrefixLen, &k)
		if err == nil {
			pos, err = codec.DecodeAt(nc, key, pos, &n)
		}
		if err == nil && pos != len(key) {
			err = fmt.Errorf("%d trailing key bytes", len(key)-pos)
		}
		if err == nil {
			_, err = codec.DecodeAt(vc, raw, 0, &v)
		}
		if err != nil {
			corrupt(name, err)
		}
		return fn(k, n, v)
	})
}

// bytesMapTable is a MapTable on a BytesBackend without a cache: one backend
// entry per user entry, under key | namespace | user key.
type bytesMapTable[K, N, UK comparable, UV any] struct {
	b    BytesBackend
	name string
	id   uint32
	kgs  KeyGroupRange
	kc   codec.Codec[K]
	nc   codec.Codec[N]
	ukc  codec.Codec[UK]
	uvc  codec.Codec[UV]
	key  []byte
	val  []byte
}

// newBytesMapTable returns the map table with id on b, cached as in
// newBytesValueTable.
func newBytesMapTable[K, N, UK comparable, UV any](b BytesBackend, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N], ukc codec.Codec[UK], uvc codec.Codec[UV]) MapTable[K, N, UK, UV] {
	if m := cacheOf(b); m != nil {
		if t, ok := m.tables[id]; ok {
			ct, ok := t.(*cachedMapTable[K, N, UK, UV])
			if !ok {
				panic(fmt.Sprintf("state: table %q (id %d) is cached as %T", name, id, t))
			}
			return ct
		}
		t := newCachedMapTable(m, name, id, kc, nc, ukc, uvc)
		m.add(t)
		return t
	}
	return &bytesMapTable[K, N, UK, UV]{b: b, name: name, id: id, kgs: b.KeyGroups(), kc: kc, nc: nc, ukc: ukc, uvc: uvc}
}

// appendMapPrefix appends the prefix of the map of (k, n).
func (t *bytesMapTable[K, N, UK, UV]) appendMapPrefix(dst []byte, kg int, k K, n N) []byte {
	checkKeyGroup(kg, t.kgs)
	return t.nc.Append(t.kc.Append(appendTablePrefix(dst, kg, t.id), k), n)
}

func (t *bytesMapTable[K, N, UK, UV]) encodeKey(kg int, k K, n N, uk UK) []byte {
	t.key = t.ukc.Append(t.appendMapPrefix(t.key[:0], kg, k, n), uk)
	return t.key
}

func (t *bytesMapTable[K, N, UK, UV]) decodeValue(raw []byte) UV {
	return decodeOrCorrupt(t.uvc, t.name, raw)
}

// decodeOrCorrupt decodes raw, a value stored by table name, with c.
func decodeOrCorrupt[T any](c codec.Codec[T], name string, raw []byte) T {
	v, _, err := c.Decode(raw)
	if err != nil {
		corrupt(name, err)
	}
	return v
}

// Get returns the value for uk in the map of (k, n).
func (t *bytesMapTable[K, N, UK, UV]) Get(kg int, k K, n N, uk UK) (uv UV, ok bool) {
	raw, ok := t.b.Get(t.encodeKey(kg, k, n, uk))
	if !ok {
		return uv, false
	}
	return t.decodeValue(raw), true
}

// Put sets uk to uv in the map of (k, n).
func (t *bytesMapTable[K, N, UK, UV]) Put(kg int, k K, n N, uk UK, uv UV) {
	key := t.encodeKey(kg, k, n, uk)
	t.val = t.uvc.Append(t.val[:0], uv)
	t.b.Set(key, t.val)
}

// Delete removes uk from the map of (k, n).
func (t *bytesMapTable[K, N, UK, UV]) Delete(kg int, k K, n N, uk UK) {
	t.b.Delete(t.encodeKey(kg, k, n, uk))
}

// Clear removes the whole map of (k, n).
func (t *bytesMapTable[K, N, UK, UV]) Clear(kg int, k K, n N) {
	t.b.DeletePrefix(t.appendMapPrefix(nil, kg, k, n))
}

// IsEmpty reports whether the map of (k, n) has no entries.
func (t *bytesMapTable[K, N, UK, UV]) IsEmpty(kg int, k K, n N) bool {
	empty := true
	t.b.Scan(t.appendMapPrefix(nil, kg, k, n), func(_, _ []byte) bool {
		empty = false
		return false
	})
	return empty
}

// Entries calls fn for each entry of the map of (k, n) until it returns false.
func (t *bytesMapTable[K, N, UK, UV]) Entries(kg int, k K, n N, fn func(uk UK, uv UV) bool) {
	scanMapEntries(t.b, t.name, t.appendMapPrefix(nil, kg, k, n), t.ukc, t.uvc, fn)
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *bytesMapTable[K, N, UK, UV]) Range(kg int, fn func(k K, n N, uk UK, uv UV) bool) {
	scanMaps(t.b, t.name, t.id, t.kgs, t.kc, t.nc, t.ukc, t.uvc, kg, fn)
}

// scanMapEntries calls fn for each entry of the map whose keys start with
// prefix, in map table name on b, until fn returns false.
func scanMapEntries[UK comparable, UV any](b BytesBackend, name string, prefix []byte, ukc codec.Codec[UK], uvc codec.Codec[UV], fn func(uk UK, uv UV) bool) {
	b.Scan(prefix, func(key, raw []byte) bool {
		var uk UK
		var uv UV
		pos, err := codec.DecodeAt(ukc, key, len(prefix), &uk)
		if err == nil && pos != len(key) {
			err = fmt.Errorf("%d trailing key bytes", len(key)-pos)
		}
		if err == nil {
			_, err = codec.DecodeAt(uvc, raw, 0, &uv)
		}
		if err != nil {
			corrupt(name, err)
		}
		return fn(uk, uv)
	})
}

// scanMaps calls fn for every entry of key group kg of the map table
// (name, id) on b, decoded, until fn returns false.
func scanMaps[K, N, UK comparable, UV any](b BytesBackend, name string, id uint32, kgs KeyGroupRange, kc codec.Codec[K], nc codec.Codec[N], ukc codec.Codec[UK], uvc codec.Codec[UV], kg int, fn func(k K, n N, uk UK, uv UV) bool) {
	checkKeyGroup(kg, kgs)
	prefix := appendTablePrefix(make([]byte, 0, tablePrefixLen), kg, id)
	b.Scan(prefix, func(key, raw []byte) bool {
		var k K
		var n N
		var uk UK
		var uv UV
		pos, err := codec.DecodeAt(kc, key, tablePrefixLen, &k)
		if err == nil {
			pos, err = codec.DecodeAt(nc, key, pos, &n)
		}
		if err == nil {
			pos, err = codec.DecodeAt(ukc, key, pos, &uk)
		}
		if err == nil && pos != len(key) {
			err = fmt.Errorf("%d trailing key bytes", len(key)-pos)
		}
		if err == nil {
			_, err = codec.DecodeAt(uvc, raw, 0, &uv)
		}
		if err != nil {
			corrupt(name, err)
		}
		return fn(k, n, uk, uv)
	})
}

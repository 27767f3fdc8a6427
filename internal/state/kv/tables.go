package kv

import (
	"encoding/binary"
	"fmt"

	"github.com/eddystream/eddy/internal/state/codec"
)

// Key layout of tables on a Store:
//
//	key group (2 bytes, big-endian) | table id (4 bytes, big-endian) | key | namespace [| user key]
//
// Codec encodings are prefix-free, so the keys of one (key, namespace) map
// share a prefix that no other pair's keys have.

// tablePrefixLen is the length of the key group and table id at the front
// of every key.
const tablePrefixLen = 6

// AppendTablePrefix appends the prefix of the keys of key group kg of the
// table with id to dst: the key group and the table id.
func AppendTablePrefix(dst []byte, kg int, id uint32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, byte(kg>>8), byte(kg)), id)
}

// corrupt panics with a BackendError for stored bytes that do not decode: the
// storage holds something the table did not write.
func corrupt(name string, err error) {
	panic(&BackendError{Op: fmt.Sprintf("decode table %q", name), Err: err})
}

// ValueTable is a state.ValueTable on a Store without a cache (see
// CacheHost): every call encodes and goes to the store. key and val are
// scratch buffers reused by every call, so Get and Put of primitive types do
// not allocate.
type ValueTable[K, N comparable, V any] struct {
	b    Store
	name string
	id   uint32
	kgs  keyGroups
	kc   codec.Codec[K]
	nc   codec.Codec[N]
	vc   codec.Codec[V]
	key  []byte
	val  []byte
}

// NewValueTable returns the value table with id, called name, on s, without
// a cache, for the key groups [start, end) of the backend.
func NewValueTable[K, N comparable, V any](s Store, start, end int, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V]) *ValueTable[K, N, V] {
	return &ValueTable[K, N, V]{b: s, name: name, id: id, kgs: keyGroups{start, end}, kc: kc, nc: nc, vc: vc}
}

func (t *ValueTable[K, N, V]) encodeKey(kg int, k K, n N) []byte {
	checkKeyGroup(kg, t.kgs)
	t.key = t.nc.Append(t.kc.Append(AppendTablePrefix(t.key[:0], kg, t.id), k), n)
	return t.key
}

// Get returns the value for (k, n), or ok=false.
func (t *ValueTable[K, N, V]) Get(kg int, k K, n N) (v V, ok bool) {
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
func (t *ValueTable[K, N, V]) Put(kg int, k K, n N, v V) {
	key := t.encodeKey(kg, k, n)
	t.val = t.vc.Append(t.val[:0], v)
	t.b.Set(key, t.val)
}

// Delete removes the value for (k, n), if any.
func (t *ValueTable[K, N, V]) Delete(kg int, k K, n N) {
	t.b.Delete(t.encodeKey(kg, k, n))
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *ValueTable[K, N, V]) Range(kg int, fn func(k K, n N, v V) bool) {
	scanValues(t.b, t.name, t.id, t.kgs, t.kc, t.nc, t.vc, kg, fn)
}

// scanValues calls fn for every entry of key group kg of the value table
// (name, id) on b, decoded, until fn returns false.
func scanValues[K, N comparable, V any](b Store, name string, id uint32, kgs keyGroups, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V], kg int, fn func(k K, n N, v V) bool) {
	checkKeyGroup(kg, kgs)
	prefix := AppendTablePrefix(make([]byte, 0, tablePrefixLen), kg, id)
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

// MapTable is a state.MapTable on a Store without a cache: one store entry
// per user entry, under key | namespace | user key.
type MapTable[K, N, UK comparable, UV any] struct {
	b    Store
	name string
	id   uint32
	kgs  keyGroups
	kc   codec.Codec[K]
	nc   codec.Codec[N]
	ukc  codec.Codec[UK]
	uvc  codec.Codec[UV]
	key  []byte
	val  []byte
}

// NewMapTable returns the map table with id, called name, on s, without a
// cache, for the key groups [start, end) of the backend.
func NewMapTable[K, N, UK comparable, UV any](s Store, start, end int, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N], ukc codec.Codec[UK], uvc codec.Codec[UV]) *MapTable[K, N, UK, UV] {
	return &MapTable[K, N, UK, UV]{b: s, name: name, id: id, kgs: keyGroups{start, end}, kc: kc, nc: nc, ukc: ukc, uvc: uvc}
}

// appendMapPrefix appends the prefix of the map of (k, n).
func (t *MapTable[K, N, UK, UV]) appendMapPrefix(dst []byte, kg int, k K, n N) []byte {
	checkKeyGroup(kg, t.kgs)
	return t.nc.Append(t.kc.Append(AppendTablePrefix(dst, kg, t.id), k), n)
}

func (t *MapTable[K, N, UK, UV]) encodeKey(kg int, k K, n N, uk UK) []byte {
	t.key = t.ukc.Append(t.appendMapPrefix(t.key[:0], kg, k, n), uk)
	return t.key
}

func (t *MapTable[K, N, UK, UV]) decodeValue(raw []byte) UV {
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
func (t *MapTable[K, N, UK, UV]) Get(kg int, k K, n N, uk UK) (uv UV, ok bool) {
	raw, ok := t.b.Get(t.encodeKey(kg, k, n, uk))
	if !ok {
		return uv, false
	}
	return t.decodeValue(raw), true
}

// Put sets uk to uv in the map of (k, n).
func (t *MapTable[K, N, UK, UV]) Put(kg int, k K, n N, uk UK, uv UV) {
	key := t.encodeKey(kg, k, n, uk)
	t.val = t.uvc.Append(t.val[:0], uv)
	t.b.Set(key, t.val)
}

// Delete removes uk from the map of (k, n).
func (t *MapTable[K, N, UK, UV]) Delete(kg int, k K, n N, uk UK) {
	t.b.Delete(t.encodeKey(kg, k, n, uk))
}

// Clear removes the whole map of (k, n).
func (t *MapTable[K, N, UK, UV]) Clear(kg int, k K, n N) {
	t.b.DeletePrefix(t.appendMapPrefix(nil, kg, k, n))
}

// IsEmpty reports whether the map of (k, n) has no entries.
func (t *MapTable[K, N, UK, UV]) IsEmpty(kg int, k K, n N) bool {
	empty := true
	t.b.Scan(t.appendMapPrefix(nil, kg, k, n), func(_, _ []byte) bool {
		empty = false
		return false
	})
	return empty
}

// Entries calls fn for each entry of the map of (k, n) until it returns false.
func (t *MapTable[K, N, UK, UV]) Entries(kg int, k K, n N, fn func(uk UK, uv UV) bool) {
	scanMapEntries(t.b, t.name, t.appendMapPrefix(nil, kg, k, n), t.ukc, t.uvc, fn)
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *MapTable[K, N, UK, UV]) Range(kg int, fn func(k K, n N, uk UK, uv UV) bool) {
	scanMaps(t.b, t.name, t.id, t.kgs, t.kc, t.nc, t.ukc, t.uvc, kg, fn)
}

// scanMapEntries calls fn for each entry of the map whose keys start with
// prefix, in map table name on b, until fn returns false.
func scanMapEntries[UK comparable, UV any](b Store, name string, prefix []byte, ukc codec.Codec[UK], uvc codec.Codec[UV], fn func(uk UK, uv UV) bool) {
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
func scanMaps[K, N, UK comparable, UV any](b Store, name string, id uint32, kgs keyGroups, kc codec.Codec[K], nc codec.Codec[N], ukc codec.Codec[UK], uvc codec.Codec[UV], kg int, fn func(k K, n N, uk UK, uv UV) bool) {
	checkKeyGroup(kg, kgs)
	prefix := AppendTablePrefix(make([]byte, 0, tablePrefixLen), kg, id)
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

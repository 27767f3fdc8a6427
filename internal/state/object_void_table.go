package state

import (
	"encoding/binary"
	"fmt"
)

// objectVoidTable is the objectValueTable of VoidNamespace, the namespace of
// user state: its maps are keyed by K alone, which lets Go use its fast map
// paths for integer and string keys (a struct key is hashed generically, at
// about twice the cost). Snapshots are encoded exactly as objectValueTable's.
type objectVoidTable[K comparable, V any] struct {
	kind   string
	kgs    KeyGroupRange
	groups []map[K]V
	kc     Codec[K]
	nc     Codec[VoidNamespace]
	vc     Codec[V]
}

func newObjectVoidTable[K comparable, V any](kind string, kgs KeyGroupRange, kc Codec[K], nc Codec[VoidNamespace], vc Codec[V]) *objectVoidTable[K, V] {
	return &objectVoidTable[K, V]{kind: kind, kgs: kgs, groups: make([]map[K]V, kgs.Len()), kc: kc, nc: nc, vc: vc}
}

func (t *objectVoidTable[K, V]) index(kg int) int {
	i := kg - t.kgs.Start
	if uint(i) >= uint(len(t.groups)) {
		checkKeyGroup(kg, t.kgs)
	}
	return i
}

// Get returns the value for k, or ok=false.
func (t *objectVoidTable[K, V]) Get(kg int, k K, _ VoidNamespace) (V, bool) {
	v, ok := t.groups[t.index(kg)][k]
	return v, ok
}

// Put stores v for k.
func (t *objectVoidTable[K, V]) Put(kg int, k K, _ VoidNamespace, v V) {
	i := t.index(kg)
	m := t.groups[i]
	if m == nil {
		m = make(map[K]V)
		t.groups[i] = m
	}
	m[k] = v
}

// Delete removes the value for k, if any.
func (t *objectVoidTable[K, V]) Delete(kg int, k K, _ VoidNamespace) {
	delete(t.groups[t.index(kg)], k)
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *objectVoidTable[K, V]) Range(kg int, fn func(k K, n VoidNamespace, v V) bool) {
	for k, v := range t.groups[t.index(kg)] {
		if !fn(k, VoidNamespace{}, v) {
			return
		}
	}
}

// Kind names the table's kind and types.
func (t *objectVoidTable[K, V]) Kind() string { return t.kind }

// AppendKeyGroup appends the entries of key group kg to dst, as
// objectValueTable does.
func (t *objectVoidTable[K, V]) AppendKeyGroup(dst []byte, kg int) []byte {
	m := t.groups[t.index(kg)]
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	for k, v := range m {
		dst = t.kc.Append(dst, k)
		dst = t.nc.Append(dst, VoidNamespace{})
		dst = t.vc.Append(dst, v)
	}
	return dst
}

// RestoreKeyGroup adds the entries encoded by AppendKeyGroup to key group kg.
func (t *objectVoidTable[K, V]) RestoreKeyGroup(kg int, data []byte) error {
	i := t.index(kg)
	count, pos := binary.Uvarint(data)
	if pos <= 0 || count > uint64(len(data)) {
		return restoreErr(t.kind, kg, shortErr("entry count"))
	}
	m := t.groups[i]
	if m == nil {
		m = make(map[K]V, count)
		t.groups[i] = m
	}
	for range count {
		var k K
		var n VoidNamespace
		var v V
		var err error
		if pos, err = decodeAt(t.kc, data, pos, &k); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		if pos, err = decodeAt(t.nc, data, pos, &n); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		if pos, err = decodeAt(t.vc, data, pos, &v); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		m[k] = v
	}
	if pos != len(data) {
		return restoreErr(t.kind, kg, fmt.Errorf("%d trailing bytes", len(data)-pos))
	}
	return nil
}

// DropKeyGroup removes every entry of key group kg.
func (t *objectVoidTable[K, V]) DropKeyGroup(kg int) { t.groups[t.index(kg)] = nil }

// Len returns the number of entries in the table.
func (t *objectVoidTable[K, V]) Len() int {
	n := 0
	for _, m := range t.groups {
		n += len(m)
	}
	return n
}

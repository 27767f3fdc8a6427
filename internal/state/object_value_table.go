package state

import (
	"encoding/binary"
	"fmt"
)

// pair is the key of object tables: a key and a namespace.
type pair[K, N comparable] struct {
	k K
	n N
}

// objectValueTable is a ValueTable on an ObjectBackend: one Go map per key
// group, allocated on first write. Codecs are used only by snapshots.
type objectValueTable[K, N comparable, V any] struct {
	kind   string
	kgs    KeyGroupRange
	groups []map[pair[K, N]]V
	kc     Codec[K]
	nc     Codec[N]
	vc     Codec[V]
}

func newObjectValueTable[K, N comparable, V any](kind string, kgs KeyGroupRange, kc Codec[K], nc Codec[N], vc Codec[V]) *objectValueTable[K, N, V] {
	return &objectValueTable[K, N, V]{kind: kind, kgs: kgs, groups: make([]map[pair[K, N]]V, kgs.Len()), kc: kc, nc: nc, vc: vc}
}

// index returns the position of key group kg in groups, panicking if the
// subtask does not own kg.
func (t *objectValueTable[K, N, V]) index(kg int) int {
	i := kg - t.kgs.Start
	if uint(i) >= uint(len(t.groups)) {
		checkKeyGroup(kg, t.kgs)
	}
	return i
}

// Get returns the value for (k, n), or ok=false.
func (t *objectValueTable[K, N, V]) Get(kg int, k K, n N) (V, bool) {
	v, ok := t.groups[t.index(kg)][pair[K, N]{k, n}]
	return v, ok
}

// Put stores v for (k, n).
func (t *objectValueTable[K, N, V]) Put(kg int, k K, n N, v V) {
	i := t.index(kg)
	m := t.groups[i]
	if m == nil {
		m = make(map[pair[K, N]]V)
		t.groups[i] = m
	}
	m[pair[K, N]{k, n}] = v
}

// Delete removes the value for (k, n), if any.
func (t *objectValueTable[K, N, V]) Delete(kg int, k K, n N) {
	delete(t.groups[t.index(kg)], pair[K, N]{k, n})
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *objectValueTable[K, N, V]) Range(kg int, fn func(k K, n N, v V) bool) {
	for p, v := range t.groups[t.index(kg)] {
		if !fn(p.k, p.n, v) {
			return
		}
	}
}

// Kind names the table's kind and types.
func (t *objectValueTable[K, N, V]) Kind() string { return t.kind }

// AppendKeyGroup appends the entries of key group kg to dst: a uvarint count,
// then key, namespace and value of each entry, in no particular order.
func (t *objectValueTable[K, N, V]) AppendKeyGroup(dst []byte, kg int) []byte {
	m := t.groups[t.index(kg)]
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	for p, v := range m {
		dst = t.kc.Append(dst, p.k)
		dst = t.nc.Append(dst, p.n)
		dst = t.vc.Append(dst, v)
	}
	return dst
}

// RestoreKeyGroup adds the entries encoded by AppendKeyGroup to key group kg.
func (t *objectValueTable[K, N, V]) RestoreKeyGroup(kg int, data []byte) error {
	i := t.index(kg)
	count, pos := binary.Uvarint(data)
	if pos <= 0 || count > uint64(len(data)) {
		return restoreErr(t.kind, kg, shortErr("entry count"))
	}
	m := t.groups[i]
	if m == nil {
		m = make(map[pair[K, N]]V, count)
		t.groups[i] = m
	}
	for range count {
		var p pair[K, N]
		var v V
		var err error
		if pos, err = decodeAt(t.kc, data, pos, &p.k); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		if pos, err = decodeAt(t.nc, data, pos, &p.n); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		if pos, err = decodeAt(t.vc, data, pos, &v); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		m[p] = v
	}
	if pos != len(data) {
		return restoreErr(t.kind, kg, fmt.Errorf("%d trailing bytes", len(data)-pos))
	}
	return nil
}

// DropKeyGroup removes every entry of key group kg.
func (t *objectValueTable[K, N, V]) DropKeyGroup(kg int) { t.groups[t.index(kg)] = nil }

// Len returns the number of entries in the table.
func (t *objectValueTable[K, N, V]) Len() int {
	n := 0
	for _, m := range t.groups {
		n += len(m)
	}
	return n
}

// decodeAt decodes one value from data[pos:] into *v and returns the position
// after it.
func decodeAt[T any](c Codec[T], data []byte, pos int, v *T) (int, error) {
	x, n, err := c.Decode(data[pos:])
	if err != nil {
		return 0, err
	}
	*v = x
	return pos + n, nil
}

func restoreErr(kind string, kg int, err error) error {
	return fmt.Errorf("state: restoring key group %d of %s: %w", kg, kind, err)
}

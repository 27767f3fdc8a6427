package cow

import (
	"encoding/binary"
	"fmt"

	"github.com/eddystream/eddy/internal/state/codec"
)

// ValueTable is a value table of the heap backend (state.ValueTable, an
// ObjectTable): one Go map per key group from (key, namespace) to value,
// allocated on first write (see kgMaps, which also implements the
// copy-on-write snapshots). Codecs are used only by snapshots.
//
// kind names the table's kind and types, e.g. "value[int64,void,string]";
// Kind returns it, and the encodings of restores are checked against it.
type ValueTable[K, N comparable, V any] struct {
	kind string
	kgs  kgRange
	m    kgMaps[pair[K, N], V]
	kc   codec.Codec[K]
	nc   codec.Codec[N]
	vc   codec.Codec[V]
}

// NewValueTable returns an empty ValueTable of kind for the key groups
// [start, end).
func NewValueTable[K, N comparable, V any](kind string, start, end int, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V]) *ValueTable[K, N, V] {
	kgs := kgRange{start, end}
	return &ValueTable[K, N, V]{kind: kind, kgs: kgs, m: newKGMaps[pair[K, N]](kgs.Len(), vc), kc: kc, nc: nc, vc: vc}
}

// index returns the position of key group kg in groups, panicking if the
// table does not hold kg.
func (t *ValueTable[K, N, V]) index(kg int) int {
	i := kg - t.kgs.Start
	if uint(i) >= uint(len(t.m.groups)) {
		checkKeyGroup(kg, t.kgs)
	}
	return i
}

// Get returns the value for (k, n), or ok=false.
func (t *ValueTable[K, N, V]) Get(kg int, k K, n N) (V, bool) {
	// The fast path is written out, as in VoidTable.
	if i := kg - t.kgs.Start; uint(i) < uint(len(t.m.fast)) {
		v, ok := t.m.fast[i][pair[K, N]{k, n}]
		return v, ok
	}
	return t.getSlow(kg, k, n)
}

// getSlow is Get for a key group out of range or during a snapshot, kept
// out of line so that Get stays small.
//
//go:noinline
func (t *ValueTable[K, N, V]) getSlow(kg int, k K, n N) (V, bool) {
	return t.m.get(t.index(kg), pair[K, N]{k, n})
}

// Put stores v for (k, n).
func (t *ValueTable[K, N, V]) Put(kg int, k K, n N, v V) {
	if i := kg - t.kgs.Start; uint(i) < uint(len(t.m.fast)) {
		if g := t.m.fast[i]; g != nil {
			g[pair[K, N]{k, n}] = v
			return
		}
	}
	t.putSlow(kg, k, n, v)
}

// putSlow is Put for a key group out of range or without a map, or during a
// snapshot.
//
//go:noinline
func (t *ValueTable[K, N, V]) putSlow(kg int, k K, n N, v V) {
	t.m.put(t.index(kg), pair[K, N]{k, n}, v)
}

// Delete removes the value for (k, n), if any.
func (t *ValueTable[K, N, V]) Delete(kg int, k K, n N) {
	t.m.del(t.index(kg), pair[K, N]{k, n})
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *ValueTable[K, N, V]) Range(kg int, fn func(k K, n N, v V) bool) {
	t.m.rangeKG(t.index(kg), true, func(p pair[K, N], v V) bool { return fn(p.k, p.n, v) })
}

// Kind names the table's kind and types.
func (t *ValueTable[K, N, V]) Kind() string { return t.kind }

// AppendKeyGroup appends the entries of key group kg to dst: a uvarint count,
// then key, namespace and value of each entry, in no particular order.
func (t *ValueTable[K, N, V]) AppendKeyGroup(dst []byte, kg int) []byte {
	return t.m.appendLive(dst, t.index(kg), t.appendEntry, true)
}

func (t *ValueTable[K, N, V]) appendEntry(dst []byte, p pair[K, N], v V) []byte {
	dst = t.kc.Append(dst, p.k)
	dst = t.nc.Append(dst, p.n)
	return t.vc.Append(dst, v)
}

// BeginSnapshot freezes the table's contents for a snapshot encoded on
// another goroutine; see state.AsyncSnapshotter.
func (t *ValueTable[K, N, V]) BeginSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return t.m.begin(t.kgs.Start, t.appendEntry, true)
}

// Settle finishes a released snapshot now; see state.Settler.
func (t *ValueTable[K, N, V]) Settle() { t.m.settleReleased() }

// RestoreKeyGroup adds the entries encoded by AppendKeyGroup to key group kg.
func (t *ValueTable[K, N, V]) RestoreKeyGroup(kg int, data []byte) error {
	i := t.index(kg)
	count, pos := binary.Uvarint(data)
	if pos <= 0 || count > uint64(len(data)) {
		return restoreErr(t.kind, kg, codec.Truncated("entry count"))
	}
	t.m.presize(i, int(count))
	for range count {
		var p pair[K, N]
		var v V
		var err error
		if pos, err = codec.DecodeAt(t.kc, data, pos, &p.k); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		if pos, err = codec.DecodeAt(t.nc, data, pos, &p.n); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		if pos, err = codec.DecodeAt(t.vc, data, pos, &v); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		t.m.put(i, p, v)
	}
	if pos != len(data) {
		return restoreErr(t.kind, kg, fmt.Errorf("%d trailing bytes", len(data)-pos))
	}
	return nil
}

// DropKeyGroup removes every entry of key group kg.
func (t *ValueTable[K, N, V]) DropKeyGroup(kg int) { t.m.drop(t.index(kg)) }

// Len returns the number of entries in the table.
func (t *ValueTable[K, N, V]) Len() int { return t.m.total() }

package cow

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/eddystream/eddy/internal/state/codec"
)

// VoidTable is the ValueTable of a namespace type N with one value, a type
// of size zero such as the void namespace of user state: its maps are keyed
// by K alone, which lets Go use its fast map paths for integer and string
// keys (a struct key is hashed generically, at about twice the cost).
// Snapshots are encoded exactly as ValueTable's.
type VoidTable[K, N comparable, V any] struct {
	kind string
	kgs  kgRange
	m    kgMaps[K, V]
	kc   codec.Codec[K]
	nc   codec.Codec[N]
	vc   codec.Codec[V]
}

// NewVoidTable returns an empty VoidTable of kind (see ValueTable) for the
// key groups [start, end). It panics if N has a size other than zero.
func NewVoidTable[K, N comparable, V any](kind string, start, end int, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V]) *VoidTable[K, N, V] {
	if reflect.TypeFor[N]().Size() != 0 {
		panic(fmt.Sprintf("cow: VoidTable of namespace %s, which has more than one value", reflect.TypeFor[N]()))
	}
	kgs := kgRange{start, end}
	return &VoidTable[K, N, V]{kind: kind, kgs: kgs, m: newKGMaps[K](kgs.Len(), vc), kc: kc, nc: nc, vc: vc}
}

// index returns the position of key group kg in groups, panicking if the
// table does not hold kg.
func (t *VoidTable[K, N, V]) index(kg int) int {
	i := kg - t.kgs.Start
	if uint(i) >= uint(len(t.m.groups)) {
		checkKeyGroup(kg, t.kgs)
	}
	return i
}

// Get returns the value for k, or ok=false.
func (t *VoidTable[K, N, V]) Get(kg int, k K, _ N) (V, bool) {
	// The fast path, for a key group in range and no snapshot, tests only
	// kgMaps.fast (nil during a snapshot) and calls nothing but the map.
	if i := kg - t.kgs.Start; uint(i) < uint(len(t.m.fast)) {
		v, ok := t.m.fast[i][k]
		return v, ok
	}
	return t.getSlow(kg, k)
}

// getSlow is Get for a key group out of range or during a snapshot, kept
// out of line so that Get stays small.
//
//go:noinline
func (t *VoidTable[K, N, V]) getSlow(kg int, k K) (V, bool) {
	return t.m.get(t.index(kg), k)
}

// Put stores v for k.
func (t *VoidTable[K, N, V]) Put(kg int, k K, _ N, v V) {
	if i := kg - t.kgs.Start; uint(i) < uint(len(t.m.fast)) {
		if g := t.m.fast[i]; g != nil {
			g[k] = v
			return
		}
	}
	t.putSlow(kg, k, v)
}

// putSlow is Put for a key group out of range or without a map, or during a
// snapshot.
//
//go:noinline
func (t *VoidTable[K, N, V]) putSlow(kg int, k K, v V) {
	t.m.put(t.index(kg), k, v)
}

// Delete removes the value for k, if any.
func (t *VoidTable[K, N, V]) Delete(kg int, k K, _ N) {
	t.m.del(t.index(kg), k)
}

// Range calls fn for every entry of key group kg until fn returns false.
func (t *VoidTable[K, N, V]) Range(kg int, fn func(k K, n N, v V) bool) {
	var n N
	t.m.rangeKG(t.index(kg), true, func(k K, v V) bool { return fn(k, n, v) })
}

// Kind names the table's kind and types.
func (t *VoidTable[K, N, V]) Kind() string { return t.kind }

// AppendKeyGroup appends the entries of key group kg to dst, as
// ValueTable does.
func (t *VoidTable[K, N, V]) AppendKeyGroup(dst []byte, kg int) []byte {
	return t.m.appendLive(dst, t.index(kg), t.appendEntry, true)
}

func (t *VoidTable[K, N, V]) appendEntry(dst []byte, k K, v V) []byte {
	var n N
	dst = t.kc.Append(dst, k)
	dst = t.nc.Append(dst, n)
	return t.vc.Append(dst, v)
}

// BeginSnapshot freezes the table's contents for a snapshot encoded on
// another goroutine; see state.AsyncSnapshotter.
func (t *VoidTable[K, N, V]) BeginSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return t.m.begin(t.kgs.Start, t.appendEntry, true)
}

// Settle finishes a released snapshot now; see state.Settler.
func (t *VoidTable[K, N, V]) Settle() { t.m.settleReleased() }

// RestoreKeyGroup adds the entries encoded by AppendKeyGroup to key group kg.
func (t *VoidTable[K, N, V]) RestoreKeyGroup(kg int, data []byte) error {
	i := t.index(kg)
	count, pos := binary.Uvarint(data)
	if pos <= 0 || count > uint64(len(data)) {
		return restoreErr(t.kind, kg, codec.Truncated("entry count"))
	}
	t.m.presize(i, int(count))
	for range count {
		var k K
		var n N
		var v V
		var err error
		if pos, err = codec.DecodeAt(t.kc, data, pos, &k); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		if pos, err = codec.DecodeAt(t.nc, data, pos, &n); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		if pos, err = codec.DecodeAt(t.vc, data, pos, &v); err != nil {
			return restoreErr(t.kind, kg, err)
		}
		t.m.put(i, k, v)
	}
	if pos != len(data) {
		return restoreErr(t.kind, kg, fmt.Errorf("%d trailing bytes", len(data)-pos))
	}
	return nil
}

// DropKeyGroup removes every entry of key group kg.
func (t *VoidTable[K, N, V]) DropKeyGroup(kg int) { t.m.drop(t.index(kg)) }

// Len returns the number of entries in the table.
func (t *VoidTable[K, N, V]) Len() int { return t.m.total() }

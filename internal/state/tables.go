package state

import (
	"fmt"
	"reflect"

	"github.com/eddystream/eddy/internal/state/codec"
	"github.com/eddystream/eddy/internal/state/heap/cow"
	"github.com/eddystream/eddy/internal/state/kv"
)

// The tables of object backends are those of the heap backend's package cow,
// built here, where their types are known, and kept by the backend.
var (
	_ heapTable = (*cow.ValueTable[int, int, int])(nil)
	_ heapTable = (*cow.VoidTable[int, VoidNamespace, int])(nil)
	_ heapTable = (*cow.MapTable[int, int, int, int])(nil)
)

// The tables of bytes backends are those of package kv, built here too and
// kept by the backend's store (and its cache, if it hosts one).
var (
	_ ValueTable[int, int, int]           = (*kv.ValueTable[int, int, int])(nil)
	_ ValueTable[int, int, int]           = (*kv.CachedValueTable[int, int, int])(nil)
	_ ValueTable[int, VoidNamespace, int] = (*kv.CachedVoidTable[int, VoidNamespace, int])(nil)
	_ MapTable[int, int, int, int]        = (*kv.MapTable[int, int, int, int])(nil)
	_ MapTable[int, int, int, int]        = (*kv.CachedMapTable[int, int, int, int])(nil)
)

// heapTable is what the tables of object backends implement.
type heapTable interface {
	CanonicalTable
	AsyncSnapshotter
	Settler
}

// NewValueTable returns the value table called name on b, creating it on first
// use. A nil codec means codec.Default. Declaring a name again with the same
// types returns the same table (on an object backend, the same object; the
// codecs of the first declaration stay); with other types it returns an error
// that wraps ErrIncompatibleTable and names the table and both kinds.
func NewValueTable[K, N comparable, V any](b Backend, name string, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V]) (ValueTable[K, N, V], error) {
	kind := fmt.Sprintf("value[%s,%s,%s]", typeName[K](), typeName[N](), typeName[V]())
	if err := checkName(name); err != nil {
		return nil, err
	}
	var err error
	if kc, err = codecOrDefault(kc); err != nil {
		return nil, fmt.Errorf("state: table %q: key: %w", name, err)
	}
	if nc, err = codecOrDefault(nc); err != nil {
		return nil, fmt.Errorf("state: table %q: namespace: %w", name, err)
	}
	if vc, err = codecOrDefault(vc); err != nil {
		return nil, fmt.Errorf("state: table %q: value: %w", name, err)
	}
	switch b := b.(type) {
	case ObjectBackend:
		if t, ok := b.Table(name); ok {
			if vt, ok := t.(ValueTable[K, N, V]); ok && t.Kind() == kind {
				return vt, nil
			}
			return nil, incompatible(name, t.Kind(), kind)
		}
		var t interface {
			ObjectTable
			ValueTable[K, N, V]
		}
		kgs := b.KeyGroups()
		if reflect.TypeFor[N]() == reflect.TypeFor[VoidNamespace]() {
			t = cow.NewVoidTable(kind, kgs.Start, kgs.End, kc, nc, vc)
		} else {
			t = cow.NewValueTable(kind, kgs.Start, kgs.End, kc, nc, vc)
		}
		if err := b.RegisterTable(name, t); err != nil {
			return nil, err
		}
		return t, nil
	case BytesBackend:
		id, err := b.TableID(name, kind)
		if err != nil {
			return nil, err
		}
		return newBytesValueTable(b, name, id, kc, nc, vc), nil
	}
	return nil, fmt.Errorf("state: backend %T is neither an ObjectBackend nor a BytesBackend", b)
}

// NewMapTable returns the map table called name on b, creating it on first
// use, with the same rules as NewValueTable.
func NewMapTable[K, N, UK comparable, UV any](b Backend, name string, kc codec.Codec[K], nc codec.Codec[N], ukc codec.Codec[UK], uvc codec.Codec[UV]) (MapTable[K, N, UK, UV], error) {
	kind := fmt.Sprintf("map[%s,%s,%s,%s]", typeName[K](), typeName[N](), typeName[UK](), typeName[UV]())
	if err := checkName(name); err != nil {
		return nil, err
	}
	var err error
	if kc, err = codecOrDefault(kc); err != nil {
		return nil, fmt.Errorf("state: table %q: key: %w", name, err)
	}
	if nc, err = codecOrDefault(nc); err != nil {
		return nil, fmt.Errorf("state: table %q: namespace: %w", name, err)
	}
	if ukc, err = codecOrDefault(ukc); err != nil {
		return nil, fmt.Errorf("state: table %q: user key: %w", name, err)
	}
	if uvc, err = codecOrDefault(uvc); err != nil {
		return nil, fmt.Errorf("state: table %q: user value: %w", name, err)
	}
	switch b := b.(type) {
	case ObjectBackend:
		if t, ok := b.Table(name); ok {
			if mt, ok := t.(MapTable[K, N, UK, UV]); ok && t.Kind() == kind {
				return mt, nil
			}
			return nil, incompatible(name, t.Kind(), kind)
		}
		kgs := b.KeyGroups()
		t := cow.NewMapTable(kind, kgs.Start, kgs.End, kc, nc, ukc, uvc)
		if err := b.RegisterTable(name, t); err != nil {
			return nil, err
		}
		return t, nil
	case BytesBackend:
		id, err := b.TableID(name, kind)
		if err != nil {
			return nil, err
		}
		return newBytesMapTable(b, name, id, kc, nc, ukc, uvc), nil
	}
	return nil, fmt.Errorf("state: backend %T is neither an ObjectBackend nor a BytesBackend", b)
}

// newBytesValueTable returns the value table with id on b: on a kv.CacheHost
// with a cache, the cached table of that id, made on first use, so that
// every declaration of a name shares one cache; else an uncached table.
func newBytesValueTable[K, N comparable, V any](b BytesBackend, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N], vc codec.Codec[V]) ValueTable[K, N, V] {
	kgs := b.KeyGroups()
	m := kv.CacheOf(b, kgs.Start, kgs.End)
	if m == nil {
		return kv.NewValueTable(b, kgs.Start, kgs.End, name, id, kc, nc, vc)
	}
	if t, ok := m.Table(id); ok {
		ct, ok := t.(ValueTable[K, N, V])
		if !ok {
			panic(fmt.Sprintf("state: table %q (id %d) is cached as %T", name, id, t))
		}
		return ct
	}
	if reflect.TypeFor[N]() == reflect.TypeFor[VoidNamespace]() {
		return kv.NewCachedVoidTable(m, name, id, kc, nc, vc)
	}
	return kv.NewCachedValueTable(m, name, id, kc, nc, vc)
}

// newBytesMapTable returns the map table with id on b, cached as in
// newBytesValueTable.
func newBytesMapTable[K, N, UK comparable, UV any](b BytesBackend, name string, id uint32, kc codec.Codec[K], nc codec.Codec[N], ukc codec.Codec[UK], uvc codec.Codec[UV]) MapTable[K, N, UK, UV] {
	kgs := b.KeyGroups()
	m := kv.CacheOf(b, kgs.Start, kgs.End)
	if m == nil {
		return kv.NewMapTable(b, kgs.Start, kgs.End, name, id, kc, nc, ukc, uvc)
	}
	if t, ok := m.Table(id); ok {
		ct, ok := t.(*kv.CachedMapTable[K, N, UK, UV])
		if !ok {
			panic(fmt.Sprintf("state: table %q (id %d) is cached as %T", name, id, t))
		}
		return ct
	}
	return kv.NewCachedMapTable(m, name, id, kc, nc, ukc, uvc)
}

// DropKeyGroup removes all state of key group kg from b: every table of an
// object backend, or every key under kg on a bytes backend. The runtime calls
// it for key groups it restored but does not own.
func DropKeyGroup(b Backend, kg int) {
	switch b := b.(type) {
	case ObjectBackend:
		for _, name := range b.Tables() {
			t, _ := b.Table(name)
			t.DropKeyGroup(kg)
		}
	case BytesBackend:
		b.DeletePrefix([]byte{byte(kg >> 8), byte(kg)})
	default:
		panic(fmt.Sprintf("state: backend %T is neither an ObjectBackend nor a BytesBackend", b))
	}
}

// IncompatibleTableError returns the error for declaring table name, which
// has kind was, as kind now. It wraps ErrIncompatibleTable. Backends use it
// so that the message reads the same everywhere.
func IncompatibleTableError(name, was, now string) error {
	return incompatible(name, was, now)
}

func incompatible(name, was, now string) error {
	return fmt.Errorf("state: table %q is %s and cannot be declared as %s (use another name): %w", name, was, now, ErrIncompatibleTable)
}

func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("state: a table needs a name")
	}
	return nil
}

func codecOrDefault[T any](c codec.Codec[T]) (codec.Codec[T], error) {
	if c != nil {
		return c, nil
	}
	return codec.Default[T]()
}

// typeName names T in table kinds.
func typeName[T any]() string {
	t := reflect.TypeFor[T]()
	if t == reflect.TypeFor[VoidNamespace]() {
		return "void"
	}
	return t.String()
}

// checkKeyGroup panics unless kg is in r: passing a key group the subtask does
// not own is a bug in the caller.
func checkKeyGroup(kg int, r KeyGroupRange) {
	if !r.Contains(kg) {
		panic(fmt.Sprintf("state: key group %d out of range %v", kg, r))
	}
}

// Package state is the keyed state SPI shared by the heap and Pebble
// backends, the tables and handles built on it, and the timer service.
//
// Concurrency: a backend, its tables, handles and timer services belong to one
// subtask of one keyed operator and are used only on that subtask's goroutine.
// Nothing here is safe for concurrent use unless its doc comment says so.
//
// A backend failure (an I/O error in an LSM, say) is not returned by table
// methods: it panics with a *kv.BackendError, which the runtime recovers and
// turns into a failure of the job that names the operator.
//
// The tables of the backends live beside them: those of the heap backend in
// internal/state/heap/cow, those of the bytes backends, with their
// write-back cache and timers, in internal/state/kv. Neither imports this
// package; NewValueTable, NewMapTable and NewBytesTimers build their tables
// here, where the types are known.
package state

import (
	"errors"

	"github.com/eddystream/eddy/internal/state/kv"
)

// Backend is the keyed state backend of one subtask of one keyed operator. It
// owns the key groups in KeyGroups and the tables created on it.
//
// There are two kinds of backend: an ObjectBackend keeps Go values (the heap
// backend), and a BytesBackend keeps encoded keys and values (the Pebble
// backend). NewValueTable and NewMapTable build typed tables on either.
type Backend interface {
	// KeyGroups returns the key groups this backend holds state for.
	KeyGroups() KeyGroupRange
	// MaxParallelism returns the total number of key groups of the operator.
	MaxParallelism() int
	// Close releases the backend's resources. Tables must not be used after.
	Close() error
}

// ObjectBackend is a backend that keeps state as Go values in memory. Tables
// created on it are registered so that the backend can snapshot them.
type ObjectBackend interface {
	Backend
	// RegisterTable records t under name. It returns an error if a table of
	// that name already exists with a different kind or types.
	RegisterTable(name string, t ObjectTable) error
	// Table returns the table registered under name, if any.
	Table(name string) (ObjectTable, bool)
	// Tables returns the names of all registered tables in sorted order.
	// Snapshots and DropKeyGroup walk them.
	Tables() []string
}

// ObjectTable is the type-erased view of a table on an ObjectBackend that the
// backend needs for snapshots and restores: each key group is written and read
// as one encoded blob using the table's codecs.
type ObjectTable interface {
	// Kind names the table's kind and types, e.g. "value[int64,void,string]".
	// Restores check it.
	Kind() string
	// AppendKeyGroup appends an encoding of key group kg to dst.
	AppendKeyGroup(dst []byte, kg int) []byte
	// RestoreKeyGroup adds the entries of an encoding made by AppendKeyGroup
	// to key group kg.
	RestoreKeyGroup(kg int, data []byte) error
	// DropKeyGroup removes every entry of key group kg.
	DropKeyGroup(kg int)
	// Len returns the number of entries in the table, for metrics.
	Len() int
}

// AsyncSnapshotter is implemented by object tables that snapshot without stopping processing.
//
// The value and map tables of ObjectBackends implement it by copy-on-write
// (see Settler for what follows a release); TimerService by encoding every
// key group at BeginSnapshot, since timers are few.
type AsyncSnapshotter interface {
	// BeginSnapshot freezes the table's current contents, on the owning goroutine, in time
	// O(number of key groups) — not O(entries). It returns encode, which appends the encoding
	// of key group kg of the frozen contents (the same bytes AppendKeyGroup would have produced
	// at that moment, readable by RestoreKeyGroup) and may be called from another goroutine
	// while the owning goroutine goes on reading and writing the table; and release, which that
	// other goroutine calls once when it has encoded everything (after release, encode must not
	// be called). A table has at most one snapshot in progress; BeginSnapshot while one is in
	// progress panics (the runtime takes one checkpoint at a time).
	//
	// BeginSnapshot must not be called while a Range or Entries of the
	// table is in progress. Values the owner obtained from the table before
	// BeginSnapshot must not be changed in place after it (get them again):
	// the snapshot may be encoding them.
	BeginSnapshot() (encode func(dst []byte, kg int) []byte, release func())
}

// Settler is implemented by tables whose snapshots (AsyncSnapshotter) leave
// work behind after release: the copy-on-write tables keep the changes made
// during a snapshot apart from the frozen contents until the owning goroutine
// folds them back, in time proportional to the changes, at its next access to
// the table. Settle, on the owning goroutine, does it at once if the
// snapshot has been released, and nothing otherwise. Calling it is optional.
type Settler interface {
	Settle()
}

// BytesBackend is a backend that keeps state as encoded bytes, ordered by key:
// a kv.Store, in which the typed tables of internal/state/kv keep their
// entries under keys they build as
// keyGroup(2 bytes) | table id | key | namespace [| user key].
type BytesBackend interface {
	Backend
	kv.Store
	// TableID returns the stable numeric id of the table called name,
	// allocating one on first use. kind is the table's kind and types, as in
	// ObjectTable.Kind; if name already has a different kind, TableID returns
	// an error that wraps ErrIncompatibleTable and names both kinds.
	TableID(name, kind string) (uint32, error)
}

// ValueTable holds one value per (key, namespace) pair. kg is the key group
// of k; callers compute it once per record and pass it through.
type ValueTable[K, N comparable, V any] interface {
	// Get returns the value for (k, n), or ok=false.
	Get(kg int, k K, n N) (v V, ok bool)
	// Put stores v for (k, n).
	Put(kg int, k K, n N, v V)
	// Delete removes the value for (k, n), if any.
	Delete(kg int, k K, n N)
	// Range calls fn for every entry of key group kg until fn returns false.
	// fn may delete or overwrite the entry it is given, and nothing else. The
	// order is unspecified.
	Range(kg int, fn func(k K, n N, v V) bool)
}

// MapTable holds a map from user keys UK to values UV per (key, namespace).
type MapTable[K, N, UK comparable, UV any] interface {
	// Get returns the value for uk in the map of (k, n).
	Get(kg int, k K, n N, uk UK) (UV, bool)
	// Put sets uk to uv in the map of (k, n).
	Put(kg int, k K, n N, uk UK, uv UV)
	// Delete removes uk from the map of (k, n).
	Delete(kg int, k K, n N, uk UK)
	// Clear removes the whole map of (k, n).
	Clear(kg int, k K, n N)
	// IsEmpty reports whether the map of (k, n) has no entries.
	IsEmpty(kg int, k K, n N) bool
	// Entries calls fn for each entry of the map of (k, n) until it returns
	// false. fn may delete or overwrite the entry it is given, and nothing
	// else. The order is unspecified.
	Entries(kg int, k K, n N, fn func(uk UK, uv UV) bool)
	// Range calls fn for every entry of key group kg until fn returns false.
	// fn may delete or overwrite the entry it is given, and nothing else.
	Range(kg int, fn func(k K, n N, uk UK, uv UV) bool)
}

// VoidNamespace is the namespace of state that is not scoped by anything but
// its key: the state a user function declares.
type VoidNamespace struct{}

// ErrIncompatibleTable means a table was declared twice under one name with
// different kinds or types, or a restored table does not match its declaration.
var ErrIncompatibleTable = errors.New("state: incompatible table")

package state

import (
	"iter"

	istate "github.com/eddystream/eddy/internal/state"
)

// Codec encodes and decodes values of type T for snapshots and byte-oriented
// backends. See DefaultCodec for the encodings eddy uses when a descriptor
// names none.
type Codec[T any] = istate.Codec[T]

// Store is the keyed state of one parallel instance of a keyed operator, on
// which state is declared. The runtime makes it and passes it to Open.
type Store[K comparable] = istate.Store[K]

// TTLConfig sets a time to live on state, in processing time. The zero value
// means no TTL.
type TTLConfig = istate.TTLConfig

// TTLUpdate says which accesses restart an entry's time to live.
type TTLUpdate = istate.TTLUpdate

// TTLVisibility says whether an expired entry that is still stored may be
// returned.
type TTLVisibility = istate.TTLVisibility

const (
	// OnCreateAndWrite restarts the time to live when the entry is written.
	OnCreateAndWrite = istate.OnCreateAndWrite
	// OnReadAndWrite restarts the time to live when the entry is read or
	// written.
	OnReadAndWrite = istate.OnReadAndWrite
	// NeverReturnExpired hides expired entries.
	NeverReturnExpired = istate.NeverReturnExpired
	// ReturnExpiredIfNotCleanedUp returns an expired entry once if it has not
	// been deleted yet.
	ReturnExpiredIfNotCleanedUp = istate.ReturnExpiredIfNotCleanedUp
)

// DefaultCodec returns the codec used for T when a descriptor names none, or
// an error if T holds interfaces, channels or functions.
func DefaultCodec[T any]() (Codec[T], error) { return istate.DefaultCodec[T]() }

// JSONCodec returns a codec that encodes values with encoding/json.
func JSONCodec[T any]() Codec[T] { return istate.JSONCodec[T]() }

// Value is a single value per key.
type Value[T any] interface {
	// Value returns the value of the current key, or ok=false if it has
	// none.
	Value() (v T, ok bool)
	// Update sets the value of the current key.
	Update(v T)
	// Clear deletes the value of the current key.
	Clear()
}

// List is a list of values per key.
type List[T any] interface {
	// Get returns the list of the current key, nil if empty. Its elements
	// must not be changed; appending to it is safe.
	Get() []T
	// Add appends v to the list of the current key.
	Add(v T)
	// AddAll appends vs to the list of the current key.
	AddAll(vs []T)
	// Update replaces the list of the current key by a copy of vs.
	Update(vs []T)
	// Clear deletes the list of the current key.
	Clear()
}

// Map is a map per key.
type Map[K comparable, V any] interface {
	// Get returns the value of k in the map of the current key.
	Get(k K) (v V, ok bool)
	// Put sets k to v in the map of the current key.
	Put(k K, v V)
	// Delete removes k from the map of the current key.
	Delete(k K)
	// Contains reports whether k is in the map of the current key.
	Contains(k K) bool
	// Entries iterates over the map of the current key, in no particular
	// order. The loop may delete or overwrite the entry it is given.
	Entries() iter.Seq2[K, V]
	// Keys iterates over the keys of the map of the current key.
	Keys() iter.Seq[K]
	// IsEmpty reports whether the map of the current key has no entries.
	IsEmpty() bool
	// Clear deletes the map of the current key.
	Clear()
}

// Reducing keeps the reduction of the values added per key.
type Reducing[T any] interface {
	// Get returns the reduction for the current key, or ok=false if nothing
	// was added.
	Get() (v T, ok bool)
	// Add reduces v into the state of the current key.
	Add(v T)
	// Clear deletes the state of the current key.
	Clear()
}

// Aggregating keeps an aggregate of the values added per key.
type Aggregating[IN, OUT any] interface {
	// Get returns the aggregate for the current key, or ok=false if nothing
	// was added.
	Get() (v OUT, ok bool)
	// Add adds v to the aggregate of the current key.
	Add(v IN)
	// Clear deletes the state of the current key.
	Clear()
}

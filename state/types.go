package state

import (
	"fmt"
	"iter"
	"time"

	istate "github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/codec"
)

// Codec encodes and decodes values of type T for snapshots and for backends
// that store bytes. Encodings must be deterministic: equal values encode to
// equal bytes, because encoded keys are compared. They must also be
// self-delimiting (no encoding is a prefix of another), because keys,
// namespaces and user keys are concatenated and scanned by prefix. Codecs of
// keys should encode in an order that agrees with the natural order of the
// values, so that byte-ordered backends keep keys sorted.
//
// A decoded value must not share memory with src. Codecs are immutable and
// safe for concurrent use: checkpoints encode on other goroutines.
type Codec[T any] interface {
	// Append appends the encoding of v to dst and returns the extended slice.
	Append(dst []byte, v T) []byte
	// Decode decodes one value from the start of src and returns it with the
	// number of bytes it used.
	Decode(src []byte) (v T, n int, err error)
}

// Store is the keyed state of one parallel instance of a keyed operator, on
// which state is declared. The runtime makes it and passes it to the
// function's Open (KeyedContext.Store); the New functions of this package
// accept only a Store the runtime made.
//
// Concurrency: a Store and the handles declared on it are used on the
// operator's goroutine only.
type Store[K comparable] interface {
	// CurrentKey returns the key of the record or timer being processed,
	// which every handle of the store reads and writes.
	CurrentKey() K
}

// internalStore returns the runtime's store behind s, or panics with an
// error that says where a Store comes from.
func internalStore[K comparable](s Store[K]) *istate.Store[K] {
	is, ok := s.(*istate.Store[K])
	if !ok || is == nil {
		panic(fmt.Errorf("state: %T is not a store made by eddy; declare state on the Store of the function's KeyedContext", s))
	}
	return is
}

// TTLConfig sets a time to live on state, as Flink's StateTtlConfig does, in
// processing time. The zero value means no TTL. Entries of lists and maps
// expire one by one; a value, reducing or aggregating state expires as a
// whole.
//
// An expired entry is invisible (unless Visibility says otherwise) and is
// deleted when it is next accessed, or by the periodic cleanup the runtime
// runs.
type TTLConfig struct {
	// TTL is how long an entry lives after its last update (or access, with
	// OnReadAndWrite). Zero disables TTL; otherwise it must be at least a
	// millisecond, the resolution of the clock.
	TTL time.Duration
	// Update says which accesses restart an entry's time to live.
	Update TTLUpdate
	// Visibility says whether an expired entry that is still stored may be
	// returned.
	Visibility TTLVisibility
}

// Enabled reports whether c sets a time to live.
func (c TTLConfig) Enabled() bool { return c.TTL != 0 }

// Validate returns an error if c is not a valid configuration.
func (c TTLConfig) Validate() error { return c.internal().Validate() }

func (c TTLConfig) internal() istate.TTLConfig {
	return istate.TTLConfig{TTL: c.TTL, Update: istate.TTLUpdate(c.Update), Visibility: istate.TTLVisibility(c.Visibility)}
}

// TTLUpdate says which accesses restart an entry's time to live.
type TTLUpdate uint8

const (
	// OnCreateAndWrite restarts the time to live when the entry is written.
	// It is the default.
	OnCreateAndWrite TTLUpdate = iota
	// OnReadAndWrite restarts the time to live when the entry is read or
	// written.
	OnReadAndWrite
)

// String names the update type.
func (u TTLUpdate) String() string { return istate.TTLUpdate(u).String() }

// TTLVisibility says whether an expired entry that is still stored may be
// returned.
type TTLVisibility uint8

const (
	// NeverReturnExpired hides expired entries. It is the default.
	NeverReturnExpired TTLVisibility = iota
	// ReturnExpiredIfNotCleanedUp returns an expired entry once if it has not
	// been deleted yet; the access deletes it.
	ReturnExpiredIfNotCleanedUp
)

// String names the visibility.
func (v TTLVisibility) String() string { return istate.TTLVisibility(v).String() }

// DefaultCodec returns the codec used for T when a descriptor names none, or
// an error if T holds interfaces, channels or functions. Numbers, strings
// and bools, and arrays, slices, maps, pointers and structs of them, encode
// in a compact binary form that sorts like the values; types that implement
// encoding.BinaryMarshaler use it.
func DefaultCodec[T any]() (Codec[T], error) {
	c, err := codec.Default[T]()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// JSONCodec returns a codec that encodes values with encoding/json.
func JSONCodec[T any]() Codec[T] { return codec.JSON[T]() }

// Value is a single value per key.
//
// The heap backend keeps the values it is given as they are, and a
// checkpoint encodes them on another goroutine while the job goes on: what
// a value refers to (the elements of a slice, the entries of a map, what a
// pointer points to) must not be changed in place once the value has been
// given to Update or returned by Value. To change it, make a new one (a
// copy of the map with the change) and Update the key with it.
type Value[T any] interface {
	// Value returns the value of the current key, or ok=false if it has
	// none. What it refers to must not be changed in place (see Value).
	Value() (v T, ok bool)
	// Update sets the value of the current key to v, which is kept as it
	// is (see Value).
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

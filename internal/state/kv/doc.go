// Package kv holds the keyed state of the bytes backends above their
// storage: typed value and map tables whose entries are encoded keys and
// values in a Store (an ordered byte store, which state.BytesBackend
// embeds), the write-back cache of decoded entries that a CacheHost keeps
// in front of those tables, and Timers, the timers of a keyed operator kept
// in the same store.
//
// The tables implement the table interfaces of internal/state
// (state.ValueTable and state.MapTable) and Timers implements state.Timers,
// without importing it: state.NewValueTable, state.NewMapTable and
// state.NewBytesTimers build them for a bytes backend, where the key,
// namespace and value types are known. The bytes backends
// (internal/state/pebble, and internal/state/memtest for tests) implement
// Store and, to host the cache, CacheHost. The package depends on the
// codecs only.
//
// Concurrency: a store, its tables, cache and timers belong to one subtask
// of one keyed operator and are used only on that subtask's goroutine,
// except TableCache.Bytes.
//
// Stored bytes that do not decode, and failures of the store, panic with a
// *BackendError, which the runtime recovers and turns into a failure of the
// job that names the operator.
package kv

import "fmt"

// keyGroups is the key groups [Start, End) of a table, cache or timers: the
// key group range of the backend they are made on.
type keyGroups struct{ Start, End int }

// Len returns the number of key groups.
func (r keyGroups) Len() int { return r.End - r.Start }

// Contains reports whether kg lies in the range.
func (r keyGroups) Contains(kg int) bool { return kg >= r.Start && kg < r.End }

// checkKeyGroup panics unless kg is in r: passing a key group the subtask does
// not own is a bug in the caller.
func checkKeyGroup(kg int, r keyGroups) {
	if !r.Contains(kg) {
		panic(fmt.Sprintf("state: key group %d out of range [%d,%d)", kg, r.Start, r.End))
	}
}

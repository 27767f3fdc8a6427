// Package cow holds the tables of the heap backend: typed value and map
// tables of Go values, one Go map per key group, with copy-on-write
// snapshots that an owner goroutine keeps writing through while another
// goroutine encodes them (see kgMaps).
//
// The tables implement the table interfaces of internal/state
// (state.ValueTable, state.MapTable, state.ObjectTable,
// state.AsyncSnapshotter, state.Settler and state.CanonicalTable) without
// importing it: state.NewValueTable and state.NewMapTable build them for
// an object backend, where the key, namespace and value types are known,
// and the backend (internal/state/heap) keeps them by name. The package
// depends on the codecs only.
//
// Concurrency: a table is used on its owner's goroutine only, except for
// the encode and release functions its snapshots return.
package cow

import "fmt"

// kgRange is the key groups [Start, End) a table holds.
type kgRange struct{ Start, End int }

// Len returns the number of key groups.
func (r kgRange) Len() int { return r.End - r.Start }

// checkKeyGroup panics unless kg is in r: passing a key group the table
// does not hold is a bug in the caller.
func checkKeyGroup(kg int, r kgRange) {
	if kg < r.Start || kg >= r.End {
		panic(fmt.Sprintf("state: key group %d out of range [%d,%d)", kg, r.Start, r.End))
	}
}

// pair is the key of the tables: a key and a namespace.
type pair[K, N comparable] struct {
	k K
	n N
}

// restoreErr is the error of a restore of key group kg of a table of kind.
func restoreErr(kind string, kg int, err error) error {
	return fmt.Errorf("state: restoring key group %d of %s: %w", kg, kind, err)
}

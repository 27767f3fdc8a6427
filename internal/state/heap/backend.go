// Package heap is the heap state backend: keyed state kept as Go values in
// Go maps, one per key group and table, encoded only for snapshots. The
// tables, with their copy-on-write snapshots, are those of package cow
// (internal/state/heap/cow); this package keeps them by name.
package heap

import (
	"fmt"
	"slices"

	"github.com/eddystream/eddy/internal/state"
)

// Backend is an ObjectBackend: a registry of named tables that keep Go
// values. The typed tables themselves (package cow) are built by
// state.NewValueTable and state.NewMapTable, which know their types.
//
// Concurrency: used on its subtask's goroutine only.
type Backend struct {
	kgs    state.KeyGroupRange
	maxP   int
	tables map[string]state.ObjectTable
}

var _ state.ObjectBackend = (*Backend)(nil)

// New returns an empty backend for the key groups kgs of an operator with
// maxParallelism key groups. It panics if kgs does not lie within
// [0, maxParallelism) or maxParallelism is out of [1, state.MaxKeyGroups].
func New(kgs state.KeyGroupRange, maxParallelism int) *Backend {
	if maxParallelism < 1 || maxParallelism > state.MaxKeyGroups || kgs.Start < 0 || kgs.End < kgs.Start || kgs.End > maxParallelism {
		panic(fmt.Sprintf("heap: key groups %v do not fit max parallelism %d", kgs, maxParallelism))
	}
	return &Backend{kgs: kgs, maxP: maxParallelism, tables: map[string]state.ObjectTable{}}
}

// KeyGroups returns the key groups the backend holds state for.
func (b *Backend) KeyGroups() state.KeyGroupRange { return b.kgs }

// MaxParallelism returns the total number of key groups of the operator.
func (b *Backend) MaxParallelism() int { return b.maxP }

// Close drops every table.
func (b *Backend) Close() error {
	b.tables = nil
	return nil
}

// RegisterTable records t under name. It returns an error wrapping
// state.ErrIncompatibleTable if name is registered with another kind; if it
// is registered with the same kind, t replaces it.
func (b *Backend) RegisterTable(name string, t state.ObjectTable) error {
	if old, ok := b.tables[name]; ok && old.Kind() != t.Kind() {
		return state.IncompatibleTableError(name, old.Kind(), t.Kind())
	}
	b.tables[name] = t
	return nil
}

// Table returns the table registered under name, if any.
func (b *Backend) Table(name string) (state.ObjectTable, bool) {
	t, ok := b.tables[name]
	return t, ok
}

// Tables returns the names of the registered tables in sorted order.
func (b *Backend) Tables() []string {
	names := make([]string, 0, len(b.tables))
	for name := range b.tables {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

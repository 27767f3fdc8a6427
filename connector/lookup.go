package connector

import (
	"context"

	"github.com/eddystream/eddy/sql/types"
)

// LookupFunc returns the rows of a table (of its Table.RowType) whose key
// columns equal the fields of key, a row of those columns' types; none if
// it holds none. It must be safe for concurrent use.
type LookupFunc func(ctx context.Context, key types.Row) ([]types.Row, error)

// LookupSource is implemented by the sources of tables whose rows can be
// looked up by key, as SQL's processing-time lookup join (JOIN dim FOR
// SYSTEM_TIME AS OF s.proc_time ON s.k = dim.k) does.
type LookupSource interface {
	// NewLookup returns the lookup of the rows by the columns keys
	// (indexes in Table.RowType).
	NewLookup(keys []int) (LookupFunc, error)
}

// SyncLookupSource is implemented by lookup sources whose lookups return at
// once, without waiting on I/O (a table held in memory): a lookup join calls
// their LookupFunc on its own goroutine, one key at a time, as Flink calls a
// synchronous LookupFunction, instead of on goroutines of their own. The
// rows such a LookupFunc returns never change afterwards: a source that
// changes its table returns new slices for the keys it changes, so that a
// lookup join may keep what it derived from a result (the SQL planner
// projects each result once).
type SyncLookupSource interface {
	LookupSource
	// SyncLookup reports whether the lookups return at once.
	SyncLookup() bool
}

// TableLookup returns the LookupSource of a table's source (made by
// OpenTableSource), if its connector can look rows up.
func TableLookup(src Source[TableRecord]) (LookupSource, bool) {
	if l, ok := src.(LookupSource); ok {
		return l, true
	}
	if u, ok := src.(unboxedSource[TableRecord]); ok {
		l, ok := u.s.(LookupSource)
		return l, ok
	}
	return nil, false
}

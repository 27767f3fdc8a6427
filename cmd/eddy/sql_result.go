package main

import (
	"slices"
	"strings"

	"github.com/eddystream/eddy/changelog"
)

// resultTable materializes the changelog of a query's result into the
// table it describes, as the SQL client's table mode shows it: a multiset
// of rows, where +I and +U add a row and -U and -D take back one row equal
// to theirs. Rows are the texts of their fields, so two rows that look
// alike are the same row to it.
//
// Rows keep the order in which they came, and an update (-U followed by
// +U) keeps the row's place: the +U takes the slot the -U freed. A
// retraction of a row the table does not hold (the result was cut to
// maxRows, or the query retracts a row it never sent) changes nothing and
// is counted in Unmatched. With maxRows > 0 the table holds at most that
// many rows, dropping the oldest, as Flink's
// 'sql-client.execution.max-table-result.rows' does.
type resultTable struct {
	maxRows int
	// slots holds the rows in order; a nil slot is a row taken back
	// (a hole that compaction removes).
	slots [][]string
	// where lists, per row key, the slots that hold an equal row.
	where map[string][]int
	live  int
	// freed is the slot the last -U emptied, for the +U that follows;
	// -1 if none.
	freed int
	// first is the index of the first slot that may hold a row.
	first int
	// Changes counts the changes applied; Unmatched the retractions of
	// rows the table did not hold; Dropped the rows dropped for maxRows.
	Changes, Unmatched, Dropped int64
}

// newResultTable returns an empty table of at most maxRows rows (0: no
// limit).
func newResultTable(maxRows int) *resultTable {
	return &resultTable{maxRows: maxRows, where: map[string][]int{}, freed: -1}
}

// rowKey is the key of a row in the multiset: its fields, each ended by a
// NUL byte (which field texts do not hold in practice).
func rowKey(row []string) string {
	var b strings.Builder
	for _, f := range row {
		b.WriteString(f)
		b.WriteByte(0)
	}
	return b.String()
}

// Apply applies one change. row must not change afterwards.
func (t *resultTable) Apply(kind changelog.Kind, row []string) {
	t.Changes++
	key := rowKey(row)
	switch kind {
	case changelog.Insert, changelog.UpdateAfter:
		slot := len(t.slots)
		if kind == changelog.UpdateAfter && t.freed >= 0 {
			slot = t.freed
			t.slots[slot] = row
		} else {
			t.slots = append(t.slots, row)
		}
		t.freed = -1
		// A key's slots stay in order, so that its last is its latest
		// row and its first its oldest.
		at := t.where[key]
		i, _ := slices.BinarySearch(at, slot)
		t.where[key] = slices.Insert(at, i, slot)
		t.live++
		t.trim()
	case changelog.UpdateBefore, changelog.Delete:
		t.freed = -1
		at := t.where[key]
		if len(at) == 0 {
			t.Unmatched++
			return
		}
		// Take back the latest of the equal rows.
		slot := at[len(at)-1]
		if len(at) == 1 {
			delete(t.where, key)
		} else {
			t.where[key] = at[:len(at)-1]
		}
		t.slots[slot] = nil
		t.live--
		if kind == changelog.UpdateBefore {
			t.freed = slot
		}
		t.compact()
	}
}

// trim drops the oldest rows above maxRows.
func (t *resultTable) trim() {
	for t.maxRows > 0 && t.live > t.maxRows {
		for t.slots[t.first] == nil {
			t.first++
		}
		row := t.slots[t.first]
		key := rowKey(row)
		if at := t.where[key]; len(at) == 1 {
			delete(t.where, key)
		} else {
			t.where[key] = at[1:]
		}
		t.slots[t.first] = nil
		t.first++
		t.live--
		t.Dropped++
	}
	t.compact()
}

// compact removes the holes once they are most of the slots, keeping the
// order of the rows (and the slot an update freed, if any, as a hole
// still to fill).
func (t *resultTable) compact() {
	if len(t.slots) < 64 || t.live*2 > len(t.slots) {
		return
	}
	slots := make([][]string, 0, t.live+1)
	where := make(map[string][]int, len(t.where))
	freed := -1
	for i, row := range t.slots {
		if i == t.freed {
			freed = len(slots)
			slots = append(slots, nil)
			continue
		}
		if row == nil {
			continue
		}
		key := rowKey(row)
		where[key] = append(where[key], len(slots))
		slots = append(slots, row)
	}
	t.slots, t.where, t.freed, t.first = slots, where, freed, 0
}

// Len returns the number of rows in the table.
func (t *resultTable) Len() int { return t.live }

// Rows returns the rows of the table in order, at most limit of them
// (limit <= 0: all).
func (t *resultTable) Rows(limit int) [][]string {
	n := t.live
	if limit > 0 && limit < n {
		n = limit
	}
	out := make([][]string, 0, n)
	for _, row := range t.slots[t.first:] {
		if len(out) == n {
			break
		}
		if row != nil {
			out = append(out, row)
		}
	}
	return out
}

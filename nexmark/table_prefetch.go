package nexmark

import (
	"slices"
	"unsafe"
)

// copies notes that the rows of events of kind copy the field f, if it is
// a string (see prefetch).
func (tw *tableWriter) copies(kind EventType, f eventField) {
	if f.class == classString && !slices.Contains(tw.strs[kind], f.off) {
		tw.strs[kind] = append(tw.strs[kind], f.off)
	}
}

// prefetch reads the first and the last byte of every string that the rows
// of events will copy, for the events that have rows (of a kind the table
// keeps, passing its conditions), before the first row is written. The generator's strings are slices of pools too large
// for the cache (the reference's reusable padding string is 1 MiB), so
// each row's copy would wait for its own cache misses, one row after
// another; read together in this loop, whose reads depend on nothing, the
// misses overlap, and the rows then copy from the cache. It returns a
// value of the bytes read, for the caller to keep.
func (tw *tableWriter) prefetch(events []Event) byte {
	keep := tw.keep
	if keep == 0 {
		keep = 0xff
	}
	var acc byte
	for i := range events {
		e := &events[i]
		if uint(e.Type) >= uint(len(tw.strs)) || keep&(1<<e.Type) == 0 || !tw.holds(e) {
			continue
		}
		for _, off := range tw.strs[e.Type] {
			s := *(*string)(unsafe.Add(unsafe.Pointer(e), off))
			if len(s) > 0 {
				acc += s[0] ^ s[len(s)-1]
			}
		}
	}
	return acc
}

// holds tells whether e passes the conditions of the table.
func (tw *tableWriter) holds(e *Event) bool {
	for i := range tw.conds {
		if !tw.conds[i].holds(e) {
			return false
		}
	}
	return true
}

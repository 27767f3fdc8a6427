package redis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// entryID is the id of a stream entry: the milliseconds part and the
// sequence number within that millisecond. Ids grow strictly along a
// stream; the zero id (0-0) comes before every entry.
type entryID struct {
	ms, seq uint64
}

// maxID comes after every entry.
var maxID = entryID{math.MaxUint64, math.MaxUint64}

// parseID parses an id as Redis writes it: "ms-seq", or "ms" for "ms-0".
func parseID(s string) (entryID, error) {
	msPart, seqPart, hasSeq := strings.Cut(s, "-")
	ms, err := strconv.ParseUint(msPart, 10, 64)
	if err != nil {
		return entryID{}, fmt.Errorf("%q is not a stream entry id: write 'milliseconds-sequence' ('1700000000000-0') or 'milliseconds'", s)
	}
	var seq uint64
	if hasSeq {
		if seq, err = strconv.ParseUint(seqPart, 10, 64); err != nil {
			return entryID{}, fmt.Errorf("%q is not a stream entry id: write 'milliseconds-sequence' ('1700000000000-0') or 'milliseconds'", s)
		}
	}
	return entryID{ms, seq}, nil
}

// String renders the id as Redis writes it.
func (id entryID) String() string {
	return strconv.FormatUint(id.ms, 10) + "-" + strconv.FormatUint(id.seq, 10)
}

// less reports whether id comes before o.
func (id entryID) less(o entryID) bool {
	return id.ms < o.ms || (id.ms == o.ms && id.seq < o.seq)
}

// isZero reports whether id is 0-0.
func (id entryID) isZero() bool { return id.ms == 0 && id.seq == 0 }

// prev returns the id just before id (0-0 for 0-0): reading after it
// starts at id.
func (id entryID) prev() entryID {
	switch {
	case id.seq > 0:
		return entryID{id.ms, id.seq - 1}
	case id.ms > 0:
		return entryID{id.ms - 1, math.MaxUint64}
	}
	return id
}

// next returns the id just after id (maxID for maxID).
func (id entryID) next() entryID {
	switch {
	case id.seq < math.MaxUint64:
		return entryID{id.ms, id.seq + 1}
	case id.ms < math.MaxUint64:
		return entryID{id.ms + 1, 0}
	}
	return id
}

// idRange is the set of ids from lo to hi, both included.
type idRange struct {
	lo, hi entryID
}

// rangeSet is a sorted list of disjoint ranges of entry ids.
type rangeSet []idRange

// contains reports whether id is in one of the ranges.
func (s rangeSet) contains(id entryID) bool {
	lo, hi := 0, len(s)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case s[m].hi.less(id):
			lo = m + 1
		case id.less(s[m].lo):
			hi = m
		default:
			return true
		}
	}
	return false
}

// union returns the ranges of s and o, sorted and merged where they
// overlap or touch at an id and the next.
func (s rangeSet) union(o rangeSet) rangeSet {
	all := make(rangeSet, 0, len(s)+len(o))
	i, j := 0, 0
	for i < len(s) || j < len(o) {
		var r idRange
		if j >= len(o) || (i < len(s) && s[i].lo.less(o[j].lo)) {
			r, i = s[i], i+1
		} else {
			r, j = o[j], j+1
		}
		if n := len(all); n > 0 && (all[n-1].hi == maxID || !all[n-1].hi.next().less(r.lo)) {
			if all[n-1].hi.less(r.hi) {
				all[n-1].hi = r.hi
			}
			continue
		}
		all = append(all, r)
	}
	return all
}

// above returns the part of s after floor.
func (s rangeSet) above(floor entryID) rangeSet {
	var out rangeSet
	for _, r := range s {
		if !floor.less(r.hi) {
			continue
		}
		if !floor.less(r.lo) {
			r.lo = floor.next()
		}
		out = append(out, r)
	}
	return out
}

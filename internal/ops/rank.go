package ops

import (
	"fmt"
	"slices"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// RankLogic is a top-N per partition, as Flink's Rank operator computes
// ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) WHERE rn <= N: the changelog
// of the first N rows of every partition in the order Less gives.
type RankLogic[T comparable, R any] struct {
	// N is the number of rows kept per partition; at least 1.
	N int
	// Less orders the rows of a partition: a strict weak order.
	Less func(a, b T) bool
	// Row makes an output row from a row and its row number (1 for the
	// first row).
	Row func(row T, rank int64) R
	// Numbered says that output rows carry their row numbers: a row whose
	// number changes is updated (-U with the old number, +U with the new).
	// Otherwise only rows entering (+I) and leaving (-D) the top N are
	// emitted.
	Numbered bool
	// Retracting says that the input may retract rows. The operator then
	// keeps every row of a partition, so that a retraction can bring a row
	// back into the top N (Flink's RetractableTopN); otherwise it keeps the
	// top N alone (AppendOnlyTopN) and fails on a retraction.
	Retracting bool
	// TTL, if positive, drops the state of a partition not updated for that
	// long.
	TTL time.Duration
	// Prefix is the number of rows of a partition kept in order with a
	// retracting input, at least N; 0 means N + max(N, 16).
	Prefix int
	// Copy, if set, copies the rows the operator keeps: it keeps and emits
	// copies, and nothing of its input rows once ProcessBatch returns
	// (RetainsNoInput). With an insert-only input, a row that does not
	// enter the top N is not copied.
	Copy func(T) T
}

// rankPrefix is the state of a partition that the ranking reads on every
// change: the first rows of the partition in order (the top N, and with a
// retracting input up to RankLogic.Prefix rows, so that retractions from
// the top seldom need the other rows), and whether those are all its rows.
// With a retracting input the rows beyond the prefix are in a map state of
// row counts, and never precede the prefix's last row.
type rankPrefix[T any] struct {
	Rows []T
	All  bool
}

// Rank runs a RankLogic over a keyed changelog, the key being the partition.
//
// With an insert-only input its state per partition is the top N rows: an
// insertion reads them and, only if the row enters the top N, writes them
// back. With a retracting input it keeps every row: the first N + max(N,
// 16) in order in the prefix, and the rows beyond it in a map state from row
// to count. A change of a row that precedes the prefix's last row (or of
// any row while the prefix holds the whole partition) reads and writes the
// prefix alone; a change of a row beyond it reads and writes its count; an
// insertion that overflows the prefix moves the prefix's last row to the
// map; and when retractions take the prefix below N rows, the operator
// reads the map and moves the first rows beyond back into the prefix. No
// change rewrites the whole partition.
type Rank[K comparable, T comparable, R any] struct {
	*relational[K, changelog.Change[T], R]
	logic  RankLogic[T, R]
	prefix *state.ValueHandle[K, state.VoidNamespace, rankPrefix[T]]
	rows   *state.MapHandle[K, state.VoidNamespace, T, int64] // nil for an insert-only input
	cap    int                                                // rows kept in the prefix at most
	old    []T                                                // scratch: the top N before a change
	cands  []rankCandidate[T]                                 // scratch: rows a refill considers
}

type rankCandidate[T any] struct {
	row   T
	count int64
}

// NewRank returns the operator; it restores ctx.Restored.
func NewRank[K comparable, T comparable, R any](ctx *runtime.Context, spec KeySpec[K, changelog.Change[T]], newBackend BackendFactory, logic RankLogic[T, R], outs map[string]any) (*Rank[K, T, R], error) {
	if logic.N < 1 {
		return nil, fmt.Errorf("top-N with N = %d: N must be at least 1", logic.N)
	}
	rel, err := newRelational[K, changelog.Change[T], R](ctx, spec, newBackend, logic.TTL, outs)
	if err != nil {
		return nil, err
	}
	r := &Rank[K, T, R]{relational: rel, logic: logic, cap: logic.N}
	if r.prefix, err = state.NewValueHandle[K, state.VoidNamespace, rankPrefix[T]](rel.store, nil, nil, "rank-top", nil, rel.ttlConfig()); err != nil {
		rel.Close()
		return nil, err
	}
	if logic.Retracting {
		r.cap = logic.N + max(logic.N, 16)
		if logic.Prefix > 0 {
			r.cap = max(logic.Prefix, logic.N)
		}
		if r.rows, err = state.NewMapHandle[K, state.VoidNamespace, T, int64](rel.store, nil, nil, "rank-rows", nil, nil, rel.ttlConfig()); err != nil {
			rel.Close()
			return nil, err
		}
	}
	if err := rel.restore(ctx.Restored); err != nil {
		rel.Close()
		return nil, err
	}
	return r, nil
}

// ProcessBatch applies every change to its partition and emits the changes
// of the partition's top N.
func (r *Rank[K, T, R]) ProcessBatch(b *runtime.Batch[changelog.Change[T]]) error {
	for i, c := range b.Data {
		r.setKeyAt(b, i)
		r.ts = b.TS[i]
		if c.Kind.IsAddition() {
			r.add(c.Row)
			continue
		}
		if r.rows == nil {
			return fmt.Errorf("received a %v change, but the input of the top-N was declared insert-only; declare its changelog mode with eddy.AsChangelog", c.Kind)
		}
		r.retract(c.Row)
	}
	r.cleanup(b.Len())
	return r.flush()
}

// load returns the prefix of the current partition. A partition without
// one is empty, unless its rows outlived its prefix (state TTL expires them
// apart): then the prefix is rebuilt from the rows.
func (r *Rank[K, T, R]) load() rankPrefix[T] {
	p, ok := r.prefix.Value()
	if ok {
		return p
	}
	p = rankPrefix[T]{All: true}
	if r.rows != nil && r.ttl > 0 {
		p.All = false
		r.refill(&p)
	}
	return p
}

// upperBound returns the position where row goes in rows: after the rows it
// does not precede, so that rows that tie keep their order of arrival.
func (r *Rank[K, T, R]) upperBound(rows []T, row T) int {
	lo, hi := 0, len(rows)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.logic.Less(row, rows[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// beyond reports whether copies of row may lie beyond the prefix p: not
// if the prefix holds the whole partition, nor if row precedes its last
// row (rows beyond never do).
func (r *Rank[K, T, R]) beyond(p rankPrefix[T], row T) bool {
	return !p.All && (len(p.Rows) == 0 || !r.logic.Less(row, p.Rows[len(p.Rows)-1]))
}

// addBeyond adds a copy of row to the rows beyond the prefix.
func (r *Rank[K, T, R]) addBeyond(row T) {
	n, _ := r.rows.Get(row)
	r.rows.Put(row, n+1)
}

// removeBeyond removes a copy of row from the rows beyond the prefix and
// reports whether there was one.
func (r *Rank[K, T, R]) removeBeyond(row T) bool {
	n, ok := r.rows.Get(row)
	switch {
	case !ok || n <= 0:
		return false
	case n == 1:
		r.rows.Delete(row)
	default:
		r.rows.Put(row, n-1)
	}
	return true
}

// add inserts row into the current partition.
func (r *Rank[K, T, R]) add(row T) {
	if r.logic.Copy != nil && r.rows != nil {
		// A retracting input keeps every row.
		row = r.logic.Copy(row)
	}
	p := r.load()
	pos := r.upperBound(p.Rows, row)
	if pos == len(p.Rows) {
		switch {
		case r.rows == nil && len(p.Rows) >= r.cap:
			// Insert-only: the row is not among the top N, and never
			// will be.
			return
		case r.rows != nil && !p.All:
			r.addBeyond(row)
			return
		}
	}
	r.keepOld(p.Rows)
	if r.logic.Copy != nil && r.rows == nil {
		row = r.logic.Copy(row)
	}
	p.Rows = slices.Insert(p.Rows, pos, row)
	if len(p.Rows) > r.cap {
		if r.rows != nil {
			// The last row of the prefix moves beyond it.
			r.addBeyond(p.Rows[r.cap])
			p.All = false
		}
		clear(p.Rows[r.cap:])
		p.Rows = p.Rows[:r.cap]
	}
	r.prefix.Update(p)
	if pos >= r.logic.N {
		return
	}
	if r.logic.Numbered {
		r.emitDiff(pos, p.Rows)
		return
	}
	if len(r.old) == r.logic.N {
		r.emit(changelog.Delete, r.logic.Row(r.old[r.logic.N-1], int64(r.logic.N)))
	}
	r.emit(changelog.Insert, r.logic.Row(row, int64(pos+1)))
}

// retract takes row out of the current partition.
func (r *Rank[K, T, R]) retract(row T) {
	if r.logic.Copy != nil {
		// The row may become a key of the map of rows beyond the prefix
		// (a Put of a present key stores the key given), or of its cache.
		row = r.logic.Copy(row)
	}
	p := r.load()
	last := -1
	for i, v := range p.Rows {
		if v == row {
			last = i
		}
	}
	if r.beyond(p, row) && r.removeBeyond(row) {
		// A copy beyond the prefix (the row ties with the prefix's last
		// row, or follows it) is taken first: the top N stays.
		return
	}
	if last < 0 {
		r.retractedAbsent()
		return
	}
	r.keepOld(p.Rows)
	// The row emitted is the one kept (a copy, with Copy).
	row = p.Rows[last]
	p.Rows = slices.Delete(p.Rows, last, last+1)
	if !p.All && len(p.Rows) < r.logic.N {
		r.refill(&p)
	}
	if len(p.Rows) == 0 && p.All {
		r.prefix.Clear()
	} else {
		r.prefix.Update(p)
	}
	if last >= r.logic.N {
		return
	}
	if r.logic.Numbered {
		r.emitDiff(last, p.Rows)
		return
	}
	r.emit(changelog.Delete, r.logic.Row(row, int64(last+1)))
	if len(p.Rows) >= r.logic.N {
		r.emit(changelog.Insert, r.logic.Row(p.Rows[r.logic.N-1], int64(r.logic.N)))
	}
}

// refill moves into the prefix the first rows beyond it in order, up to
// its capacity: a read of the rows beyond the prefix, which happens once
// per about max(N, 16) retractions from the prefix.
func (r *Rank[K, T, R]) refill(p *rankPrefix[T]) {
	r.cands = r.cands[:0]
	for row, n := range r.rows.Entries() {
		if n > 0 {
			r.cands = append(r.cands, rankCandidate[T]{row, n})
		}
	}
	slices.SortStableFunc(r.cands, func(a, b rankCandidate[T]) int {
		switch {
		case r.logic.Less(a.row, b.row):
			return -1
		case r.logic.Less(b.row, a.row):
			return 1
		}
		return 0
	})
	p.All = true
	for _, c := range r.cands {
		take := min(c.count, int64(r.cap-len(p.Rows)))
		for range take {
			p.Rows = append(p.Rows, c.row)
		}
		if take == c.count {
			r.rows.Delete(c.row)
			continue
		}
		if take > 0 {
			r.rows.Put(c.row, c.count-take)
		}
		p.All = false
		break
	}
	clear(r.cands)
}

// keepOld copies the top N of rows into r.old, before a change.
func (r *Rank[K, T, R]) keepOld(rows []T) {
	r.old = append(r.old[:0], rows[:min(len(rows), r.logic.N)]...)
}

// emitDiff emits, for each row number from pos+1 to N, the change from the
// row it had (r.old) to the row it has (rows): an update, an insertion, a
// deletion, or nothing if the row is the same.
func (r *Rank[K, T, R]) emitDiff(pos int, rows []T) {
	n := min(r.logic.N, max(len(r.old), len(rows)))
	for i := pos; i < n; i++ {
		rank := int64(i + 1)
		switch {
		case i < len(r.old) && i < len(rows):
			if r.old[i] != rows[i] {
				r.emitUpdate(r.logic.Row(r.old[i], rank), r.logic.Row(rows[i], rank))
			}
		case i < len(r.old):
			r.emit(changelog.Delete, r.logic.Row(r.old[i], rank))
		default:
			r.emit(changelog.Insert, r.logic.Row(rows[i], rank))
		}
	}
	clear(r.old)
}

// RetainsNoInput implements runtime.InputRetainer: with Copy, the operator
// keeps copies of its input rows only.
func (r *Rank[K, T, R]) RetainsNoInput() bool { return r.logic.Copy != nil }

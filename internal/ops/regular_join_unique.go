package ops

import (
	"encoding/binary"
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/codec"
)

// uniqueJoin is the state of a regular join whose side U is unique on the
// join key and insert-only, and whose other side W is not unique
// (joinSide.untilMatched): U's row of each key in one table, and W's rows
// that wait for it in another. U's row, once there, never changes, so a
// change of W reads U's row alone and, when it is there, is joined with it
// and not stored: only an outer U's number of matches changes. When U's
// row arrives, it joins the waiting rows, which leave the state; the two
// tables never both hold a key.
//
// The waiting rows of an insert-only W (without a TTL) are a list, to which
// a row that waits is appended without reading the others; otherwise they
// are a set of distinct rows with their counts, as the general join keeps
// a side.
type uniqueJoin[K comparable, U, W comparable, T, O any] struct {
	rel    *relational[K, T, O]
	unique *state.ValueHandle[K, state.VoidNamespace, sideRow[U]]
	// Exactly one of waiting and waitList is set.
	waiting  *state.ValueHandle[K, state.VoidNamespace, rowSet[W]]
	waitList *state.ListHandle[K, state.VoidNamespace, W]
	u        *joinSide[U]
	w        *joinSide[W]
	// uset and wset are the current key's rows while a change is applied;
	// u.set and w.set point to them.
	uset rowSet[U]
	wset rowSet[W]
	onU  func(U, W) bool
	outU func(*U, *W) O
	onW  func(W, U) bool
	outW func(*W, *U) O
}

// uniqueState is a uniqueJoin seen from the join, whose sides are A and B.
type uniqueState[A, B comparable, O any] interface {
	// left and right apply a change of kind of a row of their side, or,
	// with update, the update from xo to xn; otherwise xo is the row.
	left(kind changelog.Kind, xo, xn A, update bool, res *joinOut[O]) error
	right(kind changelog.Kind, xo, xn B, update bool, res *joinOut[O]) error
	// load reads the current key's rows into the sides' sets.
	load()
}

// uniqueLeftState is a uniqueJoin whose unique side is the left one.
type uniqueLeftState[K comparable, A, B comparable, T, O any] struct {
	*uniqueJoin[K, A, B, T, O]
}

func (s uniqueLeftState[K, A, B, T, O]) left(kind changelog.Kind, xo, xn A, update bool, res *joinOut[O]) error {
	return s.changeU(kind, xo, xn, update, res)
}

func (s uniqueLeftState[K, A, B, T, O]) right(kind changelog.Kind, xo, xn B, update bool, res *joinOut[O]) error {
	return s.changeW(kind, xo, xn, update, res)
}

// uniqueRightState is a uniqueJoin whose unique side is the right one.
type uniqueRightState[K comparable, A, B comparable, T, O any] struct {
	*uniqueJoin[K, B, A, T, O]
}

func (s uniqueRightState[K, A, B, T, O]) left(kind changelog.Kind, xo, xn A, update bool, res *joinOut[O]) error {
	return s.changeW(kind, xo, xn, update, res)
}

func (s uniqueRightState[K, A, B, T, O]) right(kind changelog.Kind, xo, xn B, update bool, res *joinOut[O]) error {
	return s.changeU(kind, xo, xn, update, res)
}

// newUniqueJoin declares the two tables, "join-unique-SIDE" and
// "join-waiting-OTHER" (a set) or "join-waiting-inserts-OTHER" (a list),
// named apart from the general join's "join" and from each other, so that a
// checkpoint of one layout does not restore into another.
func newUniqueJoin[K comparable, U, W comparable, T, O any](rel *relational[K, T, O], uside, wside string, u *joinSide[U], w *joinSide[W], onU func(U, W) bool, outU func(*U, *W) O, onW func(W, U) bool, outW func(*W, *U) O) (*uniqueJoin[K, U, W, T, O], error) {
	s := &uniqueJoin[K, U, W, T, O]{rel: rel, u: u, w: w, onU: onU, outU: outU, onW: onW, outW: outW}
	u.set, w.set = &s.uset, &s.wset
	var err error
	if s.unique, err = state.NewValueHandle[K, state.VoidNamespace, sideRow[U]](rel.store, nil, nil, "join-unique-"+uside, sideRowCodec[U]{lazyCodec[U]()}, rel.ttlConfig()); err != nil {
		return nil, err
	}
	if w.insertOnly && rel.ttl == 0 {
		s.waitList, err = state.NewListHandle[K, state.VoidNamespace, W](rel.store, nil, nil, "join-waiting-inserts-"+wside, lazyCodec[W](), rel.ttlConfig())
	} else {
		s.waiting, err = state.NewValueHandle[K, state.VoidNamespace, rowSet[W]](rel.store, nil, nil, "join-waiting-"+wside, rowSetCodec[W]{lazyCodec[W]()}, rel.ttlConfig())
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func newUniqueLeft[K comparable, A, B comparable, T, O any](rel *relational[K, T, O], left *joinSide[A], right *joinSide[B], onL func(A, B) bool, outL func(*A, *B) O, onR func(B, A) bool, outR func(*B, *A) O) (uniqueState[A, B, O], error) {
	s, err := newUniqueJoin(rel, "left", "right", left, right, onL, outL, onR, outR)
	if err != nil {
		return nil, err
	}
	return uniqueLeftState[K, A, B, T, O]{s}, nil
}

func newUniqueRight[K comparable, A, B comparable, T, O any](rel *relational[K, T, O], left *joinSide[A], right *joinSide[B], onL func(A, B) bool, outL func(*A, *B) O, onR func(B, A) bool, outR func(*B, *A) O) (uniqueState[A, B, O], error) {
	s, err := newUniqueJoin(rel, "right", "left", right, left, onR, outR, onL, outL)
	if err != nil {
		return nil, err
	}
	return uniqueRightState[K, A, B, T, O]{s}, nil
}

// load reads the current key's rows of both tables into uset and wset.
func (s *uniqueJoin[K, U, W, T, O]) load() {
	s.uset = rowSet[U]{}
	if r, ok := s.unique.Value(); ok {
		s.uset.one[0], s.uset.hasOne = r, true
	}
	s.loadWaiting()
}

// loadWaiting reads the current key's waiting rows into wset.
func (s *uniqueJoin[K, U, W, T, O]) loadWaiting() {
	if s.waiting != nil {
		s.wset, _ = s.waiting.Value()
		return
	}
	s.wset = rowSet[W]{}
	switch rows := s.waitList.Get(); len(rows) {
	case 0:
	case 1:
		s.wset.one[0], s.wset.hasOne = sideRow[W]{row: rows[0], st: joinRow{N: 1}}, true
	default:
		s.wset.many = make([]sideRow[W], len(rows))
		for i, r := range rows {
			s.wset.many[i] = sideRow[W]{row: r, st: joinRow{N: 1}}
		}
	}
}

// storeWaiting writes wset as the current key's waiting rows.
func (s *uniqueJoin[K, U, W, T, O]) storeWaiting() {
	switch {
	case s.wset.len() == 0 && s.waiting != nil:
		s.waiting.Clear()
	case s.wset.len() == 0:
		s.waitList.Clear()
	case s.waiting != nil:
		s.waiting.Update(s.wset)
	default:
		var rows []W
		for _, r := range s.wset.all() {
			for range r.st.N {
				rows = append(rows, r.row)
			}
		}
		s.waitList.Update(rows)
	}
}

// changeW applies a change of a row of W (or its update from xo to xn).
func (s *uniqueJoin[K, U, W, T, O]) changeW(kind changelog.Kind, xo, xn W, update bool, res *joinOut[O]) error {
	if r, ok := s.unique.Value(); ok {
		var changed bool
		if update {
			changed = passUpdate(s.w, s.u.outer, &r, s.onW, s.outW, xo, xn, res)
		} else {
			changed = passOne(s.w, s.u.outer, &r, s.onW, s.outW, kind, xo, res)
		}
		// A write restarts the time to live of the key's state, as every
		// change of a row of the key does.
		if changed || s.rel.ttl > 0 {
			s.unique.Update(r)
		}
		return nil
	}
	if s.waitList != nil && !update && kind.IsAddition() {
		// The row waits; an outer W is padded meanwhile.
		if s.w.outer {
			s.w.cur = xo
			res.add(s.outW(&s.w.cur, nil), 1)
		}
		s.waitList.Add(xo)
		return nil
	}
	s.uset = rowSet[U]{}
	s.loadWaiting()
	var changed bool
	var err error
	if update {
		changed, err = changeUpdate(s.rel, s.w, s.u, s.onW, s.outW, xo, xn, res)
	} else {
		changed, err = changeOne(s.rel, s.w, s.u, s.onW, s.outW, kind, xo, res)
	}
	if err != nil || !changed {
		return err
	}
	s.storeWaiting()
	return nil
}

// changeU applies a change of a row of U: an insertion, which joins the
// rows of W that wait for it; U takes no retraction (changeOne and
// changeUpdate fail with errRetractedUnique), and a second row of a key
// fails with ErrJoinKeyNotUnique.
func (s *uniqueJoin[K, U, W, T, O]) changeU(kind changelog.Kind, xo, xn U, update bool, res *joinOut[O]) error {
	if s.waitList != nil && !update && kind.IsAddition() {
		return s.arrive(xo, res)
	}
	s.load()
	waited := s.wset.len() > 0
	var err error
	if update {
		_, err = changeUpdate(s.rel, s.u, s.w, s.onU, s.outU, xo, xn, res)
	} else {
		_, err = changeOne(s.rel, s.u, s.w, s.onU, s.outU, kind, xo, res)
	}
	if err != nil {
		return err
	}
	s.unique.Update(s.uset.one[0])
	if waited {
		s.storeWaiting()
	}
	return nil
}

// arrive inserts U's row x of the current key when W's waiting rows are a
// list: x joins them (as addRow and release do, without making a set of
// them), and they leave the state.
func (s *uniqueJoin[K, U, W, T, O]) arrive(x U, res *joinOut[O]) error {
	if r, ok := s.unique.Value(); ok {
		s.uset = rowSet[U]{}
		s.uset.one[0], s.uset.hasOne = r, true
		return ErrJoinKeyNotUnique
	}
	rows := s.waitList.Get()
	s.u.cur = x
	xp := &s.u.cur
	var matches int64
	for i := range rows {
		w := &rows[i]
		if s.onU != nil && !s.onU(x, *w) {
			continue
		}
		matches++
		// A waiting row of an outer W is padded: it has had no match.
		if s.w.outer {
			res.retract(s.outU(nil, w), 1)
		}
		res.add(s.outU(xp, w), 1)
	}
	if matches == 0 && s.u.outer {
		res.add(s.outU(xp, nil), 1)
	}
	if !s.u.outer {
		matches = 0
	}
	s.unique.Update(sideRow[U]{row: x, st: joinRow{N: 1, Matches: matches}})
	if len(rows) > 0 {
		s.waitList.Clear()
	}
	return nil
}

// processUnique is ProcessBatch for a join with a unique, insert-only side.
func (j *RegularJoin[K, A, B, O]) processUnique(b *runtime.Batch[Either[changelog.Change[A], changelog.Change[B]]]) error {
	n := len(b.Data)
	for i := 0; i < n; i++ {
		j.setKeyAt(b, i)
		j.ts = b.TS[i]
		e, f := &b.Data[i], &b.Data[i]
		update := i+1 < n && j.pairAt(b, i)
		if update {
			f = &b.Data[i+1]
			j.ts = b.TS[i+1]
			i++
		}
		var err error
		if e.IsRight {
			err = j.unique.right(e.Right.Kind, e.Right.Row, f.Right.Row, update, &j.res)
		} else {
			err = j.unique.left(e.Left.Kind, e.Left.Row, f.Left.Row, update, &j.res)
		}
		if err != nil {
			return j.changeError(err, e, f)
		}
		j.emitResult()
	}
	j.cleanup(n)
	return j.flush()
}

// release empties the table of side other, whose rows wait for the unique
// row x of side in, which has just been added and joined with them: x never
// changes, so their results, joined or padded, are final. If in is outer,
// x keeps its number of matches (the other side's rows it joins, with
// their multiplicity), which the other side's later changes (passOne,
// passUpdate) keep up to date and which says whether x is padded.
func release[X, Y comparable](in *joinSide[X], other *joinSide[Y], on func(X, Y) bool, x X) {
	var matches int64
	if in.outer {
		for _, y := range other.set.all() {
			if on == nil || on(x, y.row) {
				matches += y.st.N
			}
		}
	}
	in.set.all()[0].st.Matches = matches
	*other.set = rowSet[Y]{}
}

// passOne joins a change of row x of side in with y, the unique row of the
// other side, which is insert-only (in.untilMatched): x is not stored. It
// reports whether y's number of matches changed (only an outer side,
// otherOuter, keeps it).
func passOne[X, Y comparable, O any](in *joinSide[X], otherOuter bool, y *sideRow[Y], on func(X, Y) bool, out func(*X, *Y) O, kind changelog.Kind, x X, res *joinOut[O]) bool {
	in.cur = x
	xp := &in.cur
	match := on == nil || on(x, y.row)
	switch add := kind.IsAddition(); {
	case match && add:
		if otherOuter {
			if y.st.Matches == 0 {
				res.retract(out(nil, &y.row), y.st.N)
			}
			y.st.Matches++
		}
		res.add(out(xp, &y.row), y.st.N)
	case match:
		res.retract(out(xp, &y.row), y.st.N)
		if otherOuter {
			if y.st.Matches--; y.st.Matches <= 0 {
				y.st.Matches = 0
				res.add(out(nil, &y.row), y.st.N)
			}
		}
	case in.outer && add:
		res.add(out(xp, nil), 1)
	case in.outer:
		res.retract(out(xp, nil), 1)
	}
	return match && otherOuter
}

// passUpdate is passOne for an update of a row of side in from xo to xn.
func passUpdate[X, Y comparable, O any](in *joinSide[X], otherOuter bool, y *sideRow[Y], on func(X, Y) bool, out func(*X, *Y) O, xo, xn X, res *joinOut[O]) bool {
	in.prev, in.cur = xo, xn
	op, np := &in.prev, &in.cur
	was, is := on == nil || on(xo, y.row), on == nil || on(xn, y.row)
	switch {
	case was && is:
		res.update(out(op, &y.row), out(np, &y.row), y.st.N)
	case was:
		res.retract(out(op, &y.row), y.st.N)
		if in.outer {
			res.add(out(np, nil), 1)
		}
	case is:
		if in.outer {
			res.retract(out(op, nil), 1)
		}
		res.add(out(np, &y.row), y.st.N)
	case in.outer:
		res.update(out(op, nil), out(np, nil), 1)
	}
	if !otherOuter || was == is {
		return false
	}
	matchChanged(y, is, out, res)
	return true
}

// sideRowCodec encodes a unique row: the row, then its count and matches as
// varints.
type sideRowCodec[X comparable] struct{ c codec.Codec[X] }

func (c sideRowCodec[X]) Append(dst []byte, v sideRow[X]) []byte {
	dst = c.c.Append(dst, v.row)
	dst = binary.AppendVarint(dst, v.st.N)
	return binary.AppendVarint(dst, v.st.Matches)
}

func (c sideRowCodec[X]) Decode(src []byte) (v sideRow[X], n int, err error) {
	if v.row, n, err = c.c.Decode(src); err != nil {
		return v, 0, fmt.Errorf("join unique row: %w", err)
	}
	m := 0
	if v.st.N, m = binary.Varint(src[n:]); m <= 0 {
		return v, 0, fmt.Errorf("join unique row: short or invalid count")
	}
	n += m
	if v.st.Matches, m = binary.Varint(src[n:]); m <= 0 {
		return v, 0, fmt.Errorf("join unique row: short or invalid matches")
	}
	return v, n + m, nil
}

// rowSetCodec encodes the waiting rows of a key as joinStateCodec encodes
// one side.
type rowSetCodec[X comparable] struct{ c codec.Codec[X] }

func (c rowSetCodec[X]) Append(dst []byte, v rowSet[X]) []byte { return appendRowSet(dst, c.c, &v) }

func (c rowSetCodec[X]) Decode(src []byte) (rowSet[X], int, error) {
	s, n, err := decodeRowSet(src, c.c)
	if err != nil {
		return s, 0, fmt.Errorf("join waiting rows: %w", err)
	}
	return s, n, nil
}

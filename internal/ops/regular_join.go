package ops

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/codec"
)

// RegularJoinLogic is an unbounded equi-join of two changelogs on their key,
// as Flink's StreamingJoinOperator runs it: inner, left, right or full
// outer, with retractions.
type RegularJoinLogic[A, B comparable, O any] struct {
	// LeftOuter keeps left rows without a match, padded with a nil right
	// side; RightOuter does the same for right rows.
	LeftOuter, RightOuter bool
	// LeftInsertOnly and RightInsertOnly say that an input declared itself
	// insert-only: its rows are appended to its table without looking for
	// an equal row first (equal rows are then kept as separate entries,
	// which a retraction, should one come, finds as well).
	LeftInsertOnly, RightInsertOnly bool
	// LeftUnique and RightUnique say that the join key contains a unique
	// key of the input (Flink's JoinInputSideSpec "join key contains
	// unique key"): its table holds at most one row per join key. The
	// operator checks it: an addition to a key that holds a row already
	// fails with an error wrapping ErrJoinKeyNotUnique. If a unique input
	// is also insert-only, the other input's rows (unless it is unique
	// too) are kept only until the unique row of their key arrives: they
	// are joined with it then, and the other input's later changes of the
	// key are joined with it as they come, without being stored. A
	// retraction on such a unique, insert-only input is an error.
	LeftUnique, RightUnique bool
	// Semi makes the join a left semi join and Anti a left anti join (not
	// both): the results are left rows, Output(a, nil), a semi join's
	// while at least one right row of their key matches them, an anti
	// join's while none does, each as many times as it is in the left
	// table. A right change that gives a left row its first match, or
	// takes its last, emits or retracts it (+I or -D); a left update stays
	// an update when the old and new rows are both results. Outer sides
	// and unique declarations do not apply to them.
	Semi, Anti bool
	// On, if set, is the rest of the join condition: rows of the same key
	// join only if On accepts them. With On, each row of an outer side
	// keeps its number of matches in state; without, every pair of the key
	// joins and the number of matches is the other side's row count.
	On func(a A, b B) bool
	// Output makes the result row of a pair; a nil pointer is the missing
	// side of an outer join's unmatched row. It is called again, with the
	// same rows, to retract a result, and the pointers are valid only
	// during the call.
	Output func(a *A, b *B) O
	// Rewind, if set, is called after each input batch once its results
	// have gone to the output (not after a failed one): Output may then
	// write later results into the memory of earlier ones.
	Rewind func()
	// Equal, if set, compares result rows: an update whose old and new
	// result rows are equal is not emitted.
	Equal func(x, y O) bool
	// TTL, if positive, forgets the rows of a join key when neither side of
	// the key has been written for that long (idle state retention).
	TTL time.Duration
	// LeftExpiry, if set, bounds how long left rows are kept: a left row a
	// can join no change of the right input that comes once the join's
	// watermark has reached LeftExpiry(a), an addition or a retraction
	// (the caller guarantees it). The row is then dropped from state by an
	// event-time timer, which changes no result; a left row that arrives
	// with its expiry already reached is joined with the right rows held
	// and not kept. The left input must be insert-only (LeftInsertOnly),
	// so that no retraction of a dropped row can come, and the join must
	// not be a semi or anti join nor have a unique side. RightExpiry does
	// the same for right rows. The state then holds each key's timer too,
	// under a name of its own.
	LeftExpiry  func(a A) int64
	RightExpiry func(b B) int64
}

// joinRow is the state of one distinct row of a join input: how many times
// the row is in its table, and, for a row of an outer side of a join with
// an On condition, how many rows of the other side (with their
// multiplicity) it joins.
type joinRow struct {
	N       int64
	Matches int64
}

// sideRow is a distinct row of one side with its state.
type sideRow[X any] struct {
	row X
	st  joinRow
}

// rowSetIndexAt is the size from which a row set indexes its rows by value.
const rowSetIndexAt = 32

// rowSet is the table of one side of a join key: its distinct rows with
// their states, in no particular order. A single row is kept inline, so
// that the common case of a side with one row per key (a table joined on
// its primary key) is read with the key's state, without following a
// pointer. Once it holds more than rowSetIndexAt rows, the set indexes its
// rows by value (the index is not encoded: it is rebuilt when needed after
// a decode or a copy).
type rowSet[X comparable] struct {
	one    [1]sideRow[X]
	hasOne bool
	many   []sideRow[X] // the rows when there are several
	index  map[X]int32
}

// all returns the rows; changing them changes the set.
func (s *rowSet[X]) all() []sideRow[X] {
	if s.hasOne {
		return s.one[:]
	}
	return s.many
}

// len returns the number of distinct rows.
func (s *rowSet[X]) len() int {
	if s.hasOne {
		return 1
	}
	return len(s.many)
}

// find returns the position of row x in all(), or -1.
func (s *rowSet[X]) find(x X) int {
	if s.hasOne {
		if s.one[0].row == x {
			return 0
		}
		return -1
	}
	if len(s.many) <= rowSetIndexAt {
		for i := range s.many {
			if s.many[i].row == x {
				return i
			}
		}
		return -1
	}
	if s.index == nil {
		s.index = make(map[X]int32, len(s.many))
		for i := range s.many {
			s.index[s.many[i].row] = int32(i)
		}
	}
	if i, ok := s.index[x]; ok {
		return int(i)
	}
	return -1
}

// add adds row x, which is not in the set.
func (s *rowSet[X]) add(x X, st joinRow) {
	switch {
	case s.hasOne:
		s.many = append(make([]sideRow[X], 0, 4), s.one[0], sideRow[X]{x, st})
		s.one[0], s.hasOne = sideRow[X]{}, false
	case len(s.many) == 0:
		s.one[0], s.hasOne, s.many = sideRow[X]{x, st}, true, nil
	default:
		s.many = append(s.many, sideRow[X]{x, st})
		if s.index != nil {
			s.index[x] = int32(len(s.many) - 1)
		}
	}
}

// remove deletes the row at position i of all().
func (s *rowSet[X]) remove(i int) {
	if s.hasOne {
		s.one[0], s.hasOne = sideRow[X]{}, false
		return
	}
	last := len(s.many) - 1
	if s.index != nil {
		delete(s.index, s.many[i].row)
		if i != last {
			s.index[s.many[last].row] = int32(i)
		}
	}
	s.many[i] = s.many[last]
	s.many[last] = sideRow[X]{}
	s.many = s.many[:last]
	switch {
	case len(s.many) == 1:
		s.one[0], s.hasOne, s.many, s.index = s.many[0], true, nil, nil
	case len(s.many) <= rowSetIndexAt:
		s.index = nil
	}
}

// joinKeyState is the value of a join key in the join's table: a pointer,
// so that the table holds a word per key and a change of a key's rows is
// made where they are. It is a named type of the name the table's values
// had when they were joinKeyData values themselves, which the table's kind
// is made of: checkpoints and savepoints of either restore into the other.
type joinKeyState[A, B comparable] *joinKeyData[A, B]

// joinKeyData is the state of one join key: the tables of both sides,
// and, for a join whose rows expire, the time of the key's expiry timer.
type joinKeyData[A, B comparable] struct {
	left  rowSet[A]
	right rowSet[B]
	// timer is the time of the key's event-time timer if hasTimer: the
	// earliest expiry of its rows.
	timer    int64
	hasTimer bool
}

// joinStateCodec encodes a joinKeyState (the joinKeyData it points to): for each side, the number of rows,
// then each row with its count and matches as varints; with timer, then a
// byte that says whether the key has a timer, and its time as a varint.
type joinStateCodec[A, B comparable] struct {
	a     codec.Codec[A]
	b     codec.Codec[B]
	timer bool
}

func (c joinStateCodec[A, B]) Append(dst []byte, v joinKeyState[A, B]) []byte {
	dst = appendRowSet(dst, c.a, &v.left)
	dst = appendRowSet(dst, c.b, &v.right)
	if !c.timer {
		return dst
	}
	if !v.hasTimer {
		return append(dst, 0)
	}
	return binary.AppendVarint(append(dst, 1), v.timer)
}

func (c joinStateCodec[A, B]) Decode(src []byte) (joinKeyState[A, B], int, error) {
	v := joinKeyState[A, B](new(joinKeyData[A, B]))
	var n, m int
	var err error
	if v.left, n, err = decodeRowSet(src, c.a); err != nil {
		return nil, 0, fmt.Errorf("join state, left rows: %w", err)
	}
	if v.right, m, err = decodeRowSet(src[n:], c.b); err != nil {
		return nil, 0, fmt.Errorf("join state, right rows: %w", err)
	}
	n += m
	if !c.timer {
		return v, n, nil
	}
	if n >= len(src) || src[n] > 1 {
		return nil, 0, fmt.Errorf("join state: short or invalid expiry timer flag")
	}
	n++
	if src[n-1] == 1 {
		if v.timer, m = binary.Varint(src[n:]); m <= 0 {
			return nil, 0, fmt.Errorf("join state: short or invalid expiry timer")
		}
		v.hasTimer = true
		n += m
	}
	return v, n, nil
}

func appendRowSet[X comparable](dst []byte, c codec.Codec[X], s *rowSet[X]) []byte {
	rows := s.all()
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	for i := range rows {
		dst = c.Append(dst, rows[i].row)
		dst = binary.AppendVarint(dst, rows[i].st.N)
		dst = binary.AppendVarint(dst, rows[i].st.Matches)
	}
	return dst
}

func decodeRowSet[X comparable](src []byte, c codec.Codec[X]) (s rowSet[X], n int, err error) {
	count, n := binary.Uvarint(src)
	if n <= 0 || count > uint64(len(src)) {
		return s, 0, fmt.Errorf("short or invalid row count")
	}
	rows := make([]sideRow[X], count)
	for i := range rows {
		r := &rows[i]
		x, m, err := c.Decode(src[n:])
		if err != nil {
			return s, 0, err
		}
		r.row = x
		n += m
		if r.st.N, m = binary.Varint(src[n:]); m <= 0 {
			return s, 0, fmt.Errorf("short or invalid row count")
		}
		n += m
		if r.st.Matches, m = binary.Varint(src[n:]); m <= 0 {
			return s, 0, fmt.Errorf("short or invalid row matches")
		}
		n += m
	}
	if len(rows) == 1 {
		s.one[0], s.hasOne = rows[0], true
	} else if len(rows) > 1 {
		s.many = rows
	}
	return s, n, nil
}

// ErrJoinKeyNotUnique is wrapped by the error of a join whose input was
// declared unique on the join key and has a second row for a key.
var ErrJoinKeyNotUnique = errors.New("the join key is not unique")

// errRetractedUnique is returned when a unique, insert-only input retracts
// a row.
var errRetractedUnique = errors.New("retraction on a unique insert-only input")

// joinSide is one input of a regular join: whether it is outer, the table
// of the current key being changed, and the changed rows.
type joinSide[X comparable] struct {
	outer      bool
	insertOnly bool
	// unique says that the side holds at most one row per key.
	unique bool
	// untilMatched says that the other side is unique and insert-only:
	// this side's rows of a key are kept only until the other side's row
	// of the key arrives; from then on they are joined with it and not
	// stored.
	untilMatched bool
	// expire, if set, gives the time from which a row of the side can be
	// dropped (RegularJoinLogic.LeftExpiry, RightExpiry); noStore says
	// that the row being added has reached it: it is joined, not kept.
	expire  func(X) int64
	noStore bool
	set     *rowSet[X]
	// cur and prev hold the changed rows while their results are made, so
	// that the pointers given to Output point into the operator rather
	// than to copies on the heap.
	cur, prev X
}

// joinOut collects the result changes of one input change (or of the two
// halves of an update): updates of result rows (before and after), and
// retractions and additions of others.
type joinOut[O any] struct {
	befores, afters []O
	rets, adds      []O
}

func (o *joinOut[O]) retract(v O, n int64) {
	for ; n > 0; n-- {
		o.rets = append(o.rets, v)
	}
}

func (o *joinOut[O]) add(v O, n int64) {
	for ; n > 0; n-- {
		o.adds = append(o.adds, v)
	}
}

func (o *joinOut[O]) update(before, after O, n int64) {
	for ; n > 0; n-- {
		o.befores = append(o.befores, before)
		o.afters = append(o.afters, after)
	}
}

// RegularJoin runs a RegularJoinLogic over two keyed changelogs, as a
// one-input operator over Either.
//
// State: one value per join key holding the tables of both sides, each a
// set of distinct rows with their joinRow (a key's rows are read and written
// at once: one state access per change). A change of a row of one side
// joins the rows of the other side of its key and updates its own side;
// with an outer side, a row of it is padded with nil while it has no match,
// and the padded row is retracted when its first match arrives (and emitted
// again when its last match goes). An update (-U then +U of the same key,
// adjacent in a batch) comes out as updates of the result rows, each -U
// followed by its +U; a -U or +U alone comes out as a -D or a +I. With a
// TTL, the state of a key expires as a whole when neither side has been
// written for that long.
//
// A side declared unique (RegularJoinLogic.LeftUnique, RightUnique) holds
// at most one row per key, which is checked. If it is insert-only as well
// (and the other side is not unique), the state lives in two tables
// instead: see uniqueJoin.
type RegularJoin[K comparable, A, B comparable, O any] struct {
	*relational[K, Either[changelog.Change[A], changelog.Change[B]], O]
	logic RegularJoinLogic[A, B, O]
	state *state.ValueHandle[K, state.VoidNamespace, joinKeyState[A, B]]
	// unique, if set, holds the state instead of state: one side is
	// unique and insert-only.
	unique uniqueState[A, B, O]
	left   *joinSide[A]
	right  *joinSide[B]
	// outL and outR make result rows with the changed side first.
	outL func(a *A, b *B) O
	outR func(b *B, a *A) O
	onL  func(a A, b B) bool
	onR  func(b B, a A) bool
	res  joinOut[O]
	// cur is the state of the current key while a change is applied;
	// left.set and right.set point into it. A key without state gets
	// blank, which is copied to a value of its own when stored.
	cur   joinKeyState[A, B]
	blank joinKeyData[A, B]
	// inPlace says that a key's state read from the table is the table's
	// own (a heap backend without a state TTL): changing it in place
	// changes the table, and only new keys are written.
	inPlace bool
	// timers are the expiry timers of the keys that checkpoints of
	// earlier versions hold, nil unless rows expire; expiry holds the
	// timers since; wm is the last watermark; expiryStep the step of the
	// timers' times (ms).
	timers     state.Timers[K, state.VoidNamespace]
	expiry     expiryIndex[K]
	wm         int64
	expiryStep int64
}

// NewRegularJoin returns the operator; it restores ctx.Restored.
func NewRegularJoin[K comparable, A, B comparable, O any](ctx *runtime.Context, spec KeySpec[K, Either[changelog.Change[A], changelog.Change[B]]], newBackend BackendFactory, logic RegularJoinLogic[A, B, O], outs map[string]any) (*RegularJoin[K, A, B, O], error) {
	rel, err := newRelational[K, Either[changelog.Change[A], changelog.Change[B]], O](ctx, spec, newBackend, logic.TTL, outs)
	if err != nil {
		return nil, err
	}
	j := &RegularJoin[K, A, B, O]{relational: rel, logic: logic, wm: runtime.MinWatermark, expiryStep: expiryGranularity,
		left: &joinSide[A]{outer: logic.LeftOuter, insertOnly: logic.LeftInsertOnly, unique: logic.LeftUnique,
			untilMatched: logic.RightUnique && logic.RightInsertOnly && !logic.LeftUnique, expire: logic.LeftExpiry},
		right: &joinSide[B]{outer: logic.RightOuter, insertOnly: logic.RightInsertOnly, unique: logic.RightUnique,
			untilMatched: logic.LeftUnique && logic.LeftInsertOnly && !logic.RightUnique, expire: logic.RightExpiry}}
	j.setCur(&j.blank)
	_, object := rel.backend.(state.ObjectBackend)
	j.inPlace = object && logic.TTL <= 0
	expiring := logic.LeftExpiry != nil || logic.RightExpiry != nil
	if expiring {
		if err := logic.checkExpiry(); err != nil {
			rel.Close()
			return nil, err
		}
		if j.timers, err = newExpiryTimers(rel.keyedBase); err != nil {
			rel.Close()
			return nil, err
		}
	}
	if logic.Semi || logic.Anti {
		if err := logic.checkSemi(); err != nil {
			rel.Close()
			return nil, err
		}
	}
	out := logic.Output
	j.outL = out
	j.outR = func(b *B, a *A) O { return out(a, b) }
	if on := logic.On; on != nil {
		j.onL = on
		j.onR = func(b B, a A) bool { return on(a, b) }
	}
	var expiryCodec joinStateCodec[A, B]
	switch {
	case logic.Semi || logic.Anti:
		codec := joinStateCodec[A, B]{a: lazyCodec[A](), b: lazyCodec[B]()}
		j.state, err = state.NewValueHandle[K, state.VoidNamespace, joinKeyState[A, B]](rel.store, nil, nil, "semi-anti-join", codec, rel.ttlConfig())
	case j.right.untilMatched:
		j.unique, err = newUniqueLeft(rel, j.left, j.right, j.onL, j.outL, j.onR, j.outR)
	case j.left.untilMatched:
		j.unique, err = newUniqueRight(rel, j.left, j.right, j.onL, j.outL, j.onR, j.outR)
	case expiring:
		expiryCodec = joinStateCodec[A, B]{a: lazyCodec[A](), b: lazyCodec[B](), timer: true}
		j.state, err = state.NewValueHandle[K, state.VoidNamespace, joinKeyState[A, B]](rel.store, nil, nil, "join-expiring", expiryCodec, rel.ttlConfig())
	default:
		codec := joinStateCodec[A, B]{a: lazyCodec[A](), b: lazyCodec[B]()}
		j.state, err = state.NewValueHandle[K, state.VoidNamespace, joinKeyState[A, B]](rel.store, nil, nil, "join", codec, rel.ttlConfig())
	}
	if err != nil {
		rel.Close()
		return nil, err
	}
	if err := rel.restore(ctx.Restored); err != nil {
		rel.Close()
		return nil, err
	}
	if j.state != nil && expiring && ctx.Restored != nil {
		if err := j.rebuildExpiry(expiryCodec); err != nil {
			rel.Close()
			return nil, err
		}
	}
	return j, nil
}

// ProcessBatch applies every change to the state of its key and emits the
// changes of the result.
func (j *RegularJoin[K, A, B, O]) ProcessBatch(b *runtime.Batch[Either[changelog.Change[A], changelog.Change[B]]]) error {
	err := j.processBatch(b)
	if j.logic.Rewind != nil && err == nil {
		j.logic.Rewind()
	}
	return err
}

func (j *RegularJoin[K, A, B, O]) processBatch(b *runtime.Batch[Either[changelog.Change[A], changelog.Change[B]]]) error {
	if j.unique != nil {
		return j.processUnique(b)
	}
	if j.logic.Semi || j.logic.Anti {
		return j.processSemi(b)
	}
	n := len(b.Data)
	for i := 0; i < n; i++ {
		kg := j.setKeyAt(b, i)
		j.ts = b.TS[i]
		had := j.loadKey()
		e, f := &b.Data[i], &b.Data[i]
		var changed bool
		var err error
		if i+1 < n && j.pairAt(b, i) {
			f = &b.Data[i+1]
			j.ts = b.TS[i+1]
			if e.IsRight {
				changed, err = changeUpdate(j.relational, j.right, j.left, j.onR, j.outR, e.Right.Row, f.Right.Row, &j.res)
			} else {
				changed, err = changeUpdate(j.relational, j.left, j.right, j.onL, j.outL, e.Left.Row, f.Left.Row, &j.res)
			}
			i++
		} else if e.IsRight {
			expiry, expires := addedExpiry(j.right, e.Right.Kind, e.Right.Row, j.wm)
			changed, err = changeOne(j.relational, j.right, j.left, j.onR, j.outR, e.Right.Kind, e.Right.Row, &j.res)
			if expires && err == nil {
				j.scheduleExpiry(kg, expiry)
			}
			j.right.noStore = false
		} else {
			expiry, expires := addedExpiry(j.left, e.Left.Kind, e.Left.Row, j.wm)
			changed, err = changeOne(j.relational, j.left, j.right, j.onL, j.outL, e.Left.Kind, e.Left.Row, &j.res)
			if expires && err == nil {
				j.scheduleExpiry(kg, expiry)
			}
			j.left.noStore = false
		}
		if err != nil {
			return j.changeError(err, e, f)
		}
		j.emitResult()
		if changed {
			j.storeKey(had)
		}
	}
	j.releaseKey()
	j.cleanup(n)
	return j.flush()
}

// setCur makes st the state of the current key.
func (j *RegularJoin[K, A, B, O]) setCur(st joinKeyState[A, B]) {
	j.cur = st
	j.left.set, j.right.set = &st.left, &st.right
}

// loadKey reads the state of the current key into cur, blank if the key
// has none, and reports whether it had state.
func (j *RegularJoin[K, A, B, O]) loadKey() bool {
	st, ok := j.state.Value()
	if !ok || st == nil {
		j.blank = joinKeyData[A, B]{}
		st, ok = &j.blank, false
	}
	j.setCur(st)
	return ok
}

// storeKey writes the changed state of the current key, which had state
// in the table if had: a key whose sides are both empty is cleared, a new
// key gets a copy of blank, and a key read from the table is written back
// unless it was changed in place.
func (j *RegularJoin[K, A, B, O]) storeKey(had bool) {
	st := j.cur
	switch {
	case st.left.len() == 0 && st.right.len() == 0:
		if had {
			j.state.Clear()
		}
	case !had:
		p := joinKeyState[A, B](new(joinKeyData[A, B]))
		*p = *st
		j.blank = joinKeyData[A, B]{}
		j.setCur(p)
		j.state.Update(p)
	case !j.inPlace:
		j.state.Update(st)
	}
}

// releaseKey lets go of the state of the last key, so that the operator
// keeps no rows alive between batches.
func (j *RegularJoin[K, A, B, O]) releaseKey() {
	j.blank = joinKeyData[A, B]{}
	j.setCur(&j.blank)
}

// changeError describes err, returned while change e (or the update from e
// to f) was applied to the current key: a retraction names e, an addition
// f.
func (j *RegularJoin[K, A, B, O]) changeError(err error, e, f *Either[changelog.Change[A], changelog.Change[B]]) error {
	j.res = joinOut[O]{}
	if errors.Is(err, ErrJoinKeyNotUnique) {
		e = f
	}
	side, kind, row, held := "left", e.Left.Kind, any(e.Left.Row), any(nil)
	if e.IsRight {
		side, kind, row = "right", e.Right.Kind, any(e.Right.Row)
		if rows := j.right.set.all(); len(rows) > 0 {
			held = rows[0].row
		}
	} else if rows := j.left.set.all(); len(rows) > 0 {
		held = rows[0].row
	}
	switch {
	case errors.Is(err, ErrJoinKeyNotUnique):
		return fmt.Errorf("join, key %v: the %s input is declared unique on the join key (JoinKeyContainsUniqueKey), but %v %+v comes while the key holds %+v: %w; declare only a unique key, or keep one row per key first (Deduplicate, or TopN with n = 1)", j.kc.Key, side, kind, row, held, err)
	case errors.Is(err, errRetractedUnique):
		return fmt.Errorf("join, key %v: the %s input is insert-only by its changelog mode and declared unique on the join key, so the join does not keep the other input's matched rows, but it retracts %v %+v; declare the input's true changelog mode (AsChangelog with changelog.Retract)", j.kc.Key, side, kind, row)
	}
	return fmt.Errorf("join, key %v: %w", j.kc.Key, err)
}

// pairAt reports whether records i and i+1 of b are the -U and +U of one
// update of a row of the current key, on the same side.
func (j *RegularJoin[K, A, B, O]) pairAt(b *runtime.Batch[Either[changelog.Change[A], changelog.Change[B]]], i int) bool {
	e, f := &b.Data[i], &b.Data[i+1]
	if e.IsRight != f.IsRight {
		return false
	}
	if e.IsRight {
		if e.Right.Kind != changelog.UpdateBefore || f.Right.Kind != changelog.UpdateAfter {
			return false
		}
	} else if e.Left.Kind != changelog.UpdateBefore || f.Left.Kind != changelog.UpdateAfter {
		return false
	}
	return j.spec.Key(*f) == j.kc.Key
}

// emitResult sends the collected result changes: the updates of result
// rows as -U/+U pairs (dropped if Equal says the rows are equal), then the
// retractions as -D and the additions as +I.
func (j *RegularJoin[K, A, B, O]) emitResult() {
	r := &j.res
	for i := range r.befores {
		if j.logic.Equal != nil && j.logic.Equal(r.befores[i], r.afters[i]) {
			continue
		}
		j.emitUpdate(r.befores[i], r.afters[i])
	}
	for _, v := range r.rets {
		j.emit(changelog.Delete, v)
	}
	for _, v := range r.adds {
		j.emit(changelog.Insert, v)
	}
	r.befores, r.afters = clearSlice(r.befores), clearSlice(r.afters)
	r.rets, r.adds = clearSlice(r.rets), clearSlice(r.adds)
}

// clearSlice returns s emptied, its elements zeroed so that it keeps
// nothing alive.
func clearSlice[T any](s []T) []T {
	clear(s)
	return s[:0]
}

// changeOne applies one change of row x to side in of the current key and
// collects the result changes: x joins the rows of side other. It reports
// whether the state changed.
func changeOne[K comparable, X, Y comparable, T, O any](rel *relational[K, T, O], in *joinSide[X], other *joinSide[Y], on func(X, Y) bool, out func(*X, *Y) O, kind changelog.Kind, x X, res *joinOut[O]) (bool, error) {
	if kind.IsAddition() {
		return true, addRow(in, other, on, out, x, res)
	}
	if other.untilMatched {
		return false, errRetractedUnique
	}
	i := in.set.find(x)
	if i < 0 {
		rel.retractedAbsent()
		return false, nil
	}
	in.cur = x
	xp := &in.cur
	if in.set.all()[i].st.N--; in.set.all()[i].st.N <= 0 {
		in.set.remove(i)
	}
	ys := other.set.all()
	if on == nil {
		if len(ys) == 0 {
			if in.outer {
				res.retract(out(xp, nil), 1)
			}
			return true, nil
		}
		for i := range ys {
			res.retract(out(xp, &ys[i].row), ys[i].st.N)
		}
		// The other side's rows lose their last match when this side's
		// table of the key becomes empty.
		if other.outer && in.set.len() == 0 {
			for i := range ys {
				res.add(out(nil, &ys[i].row), ys[i].st.N)
			}
		}
		return true, nil
	}
	matched := false
	for i := range ys {
		y := &ys[i]
		if !on(x, y.row) {
			continue
		}
		matched = true
		res.retract(out(xp, &y.row), y.st.N)
		if other.outer {
			if y.st.Matches--; y.st.Matches <= 0 {
				y.st.Matches = 0
				res.add(out(nil, &y.row), y.st.N)
			}
		}
	}
	if !matched && in.outer {
		res.retract(out(xp, nil), 1)
	}
	return true, nil
}

// addRow adds one occurrence of row x to side in of the current key and
// collects the result changes. It fails with ErrJoinKeyNotUnique if in is
// unique and holds a row of the key.
func addRow[X, Y comparable, O any](in *joinSide[X], other *joinSide[Y], on func(X, Y) bool, out func(*X, *Y) O, x X, res *joinOut[O]) error {
	if in.unique && in.set.len() > 0 {
		return ErrJoinKeyNotUnique
	}
	in.cur = x
	xp := &in.cur
	ys := other.set.all()
	i := -1
	if !in.insertOnly {
		i = in.set.find(x)
	}
	if on == nil {
		if len(ys) == 0 {
			if in.outer {
				res.add(out(xp, nil), 1)
			}
		} else {
			// The other side's rows get their first match when this side's
			// table of the key was empty.
			if other.outer && in.set.len() == 0 {
				for i := range ys {
					res.retract(out(nil, &ys[i].row), ys[i].st.N)
				}
			}
			for i := range ys {
				res.add(out(xp, &ys[i].row), ys[i].st.N)
			}
		}
		switch {
		case in.noStore:
		case i >= 0:
			in.set.all()[i].st.N++
		default:
			in.set.add(x, joinRow{N: 1})
		}
		if other.untilMatched {
			release(in, other, on, x)
		}
		return nil
	}
	var matches int64
	for i := range ys {
		y := &ys[i]
		if !on(x, y.row) {
			continue
		}
		matches += y.st.N
		if other.outer {
			if y.st.Matches == 0 {
				res.retract(out(nil, &y.row), y.st.N)
			}
			y.st.Matches++
		}
		res.add(out(xp, &y.row), y.st.N)
	}
	if matches == 0 && in.outer {
		res.add(out(xp, nil), 1)
	}
	switch {
	case in.noStore:
	case i >= 0:
		in.set.all()[i].st.N++
		in.set.all()[i].st.Matches = matches
	default:
		in.set.add(x, joinRow{N: 1, Matches: matches})
	}
	if other.untilMatched {
		release(in, other, on, x)
	}
	return nil
}

// changeUpdate applies an update of a row of side in from xo to xn, both of
// the current key, and collects the result changes: a result row of xo
// whose pair with xn is a result too becomes an update of that result row;
// others are retracted or added. It reports whether the state changed.
func changeUpdate[K comparable, X, Y comparable, T, O any](rel *relational[K, T, O], in *joinSide[X], other *joinSide[Y], on func(X, Y) bool, out func(*X, *Y) O, xo, xn X, res *joinOut[O]) (bool, error) {
	if other.untilMatched {
		return false, errRetractedUnique
	}
	i := in.set.find(xo)
	if i < 0 {
		rel.retractedAbsent()
		return true, addRow(in, other, on, out, xn, res)
	}
	in.prev, in.cur = xo, xn
	op, np := &in.prev, &in.cur
	if in.set.all()[i].st.N--; in.set.all()[i].st.N <= 0 {
		in.set.remove(i)
	}
	ys := other.set.all()
	if on == nil {
		// Every row of the key joins both: the other side's matches do not
		// change.
		if len(ys) == 0 && in.outer {
			res.update(out(op, nil), out(np, nil), 1)
		}
		for i := range ys {
			res.update(out(op, &ys[i].row), out(np, &ys[i].row), ys[i].st.N)
		}
		if i := in.set.find(xn); i >= 0 {
			in.set.all()[i].st.N++
		} else {
			in.set.add(xn, joinRow{N: 1})
		}
		return true, nil
	}
	var oldMatched bool
	var matches int64
	for i := range ys {
		y := &ys[i]
		was, is := on(xo, y.row), on(xn, y.row)
		oldMatched = oldMatched || was
		if is {
			matches += y.st.N
		}
		switch {
		case was && is:
			res.update(out(op, &y.row), out(np, &y.row), y.st.N)
		case was:
			res.retract(out(op, &y.row), y.st.N)
		case is:
			res.add(out(np, &y.row), y.st.N)
		}
		if !other.outer || was == is {
			continue
		}
		matchChanged(y, is, out, res)
	}
	if in.outer {
		switch {
		case !oldMatched && matches == 0:
			res.update(out(op, nil), out(np, nil), 1)
		case !oldMatched:
			res.retract(out(op, nil), 1)
		case matches == 0:
			res.add(out(np, nil), 1)
		}
	}
	if i := in.set.find(xn); i >= 0 {
		in.set.all()[i].st.N++
		in.set.all()[i].st.Matches = matches
	} else {
		in.set.add(xn, joinRow{N: 1, Matches: matches})
	}
	return true, nil
}

// matchChanged counts a match of the outer row y gained (is) or lost: its
// padded result is retracted at its first match and emitted again when its
// last match goes.
func matchChanged[X, Y comparable, O any](y *sideRow[Y], is bool, out func(*X, *Y) O, res *joinOut[O]) {
	if is {
		if y.st.Matches == 0 {
			res.retract(out(nil, &y.row), y.st.N)
		}
		y.st.Matches++
	} else if y.st.Matches--; y.st.Matches <= 0 {
		y.st.Matches = 0
		res.add(out(nil, &y.row), y.st.N)
	}
}

package ops

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// RegularJoinLogic is an unbounded equi-join of two changelogs on their key,
// as Flink's StreamingJoinOperator runs it: inner, left, right or full
// outer, with retractions.
type RegularJoinLogic[A, B comparable, O any] struct {
	// LeftOuter keeps left rows without a match, padded with a nil right
	// side; RightOuter does the same for right rows.
	LeftOuter, RightOuter bool
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
	// Equal, if set, compares result rows: an update whose old and new
	// result rows are equal is not emitted.
	Equal func(x, y O) bool
	// TTL, if positive, forgets a row that has not been written for that
	// long (Flink's idle state retention).
	TTL time.Duration
}

// joinRow is the state of one distinct row of a join input: how many times
// the row is in its table, and, for a row of an outer side of a join with
// an On condition, how many rows of the other side (with their
// multiplicity) it joins.
type joinRow struct {
	N       int64
	Matches int64
}

// joinRowCodec encodes a joinRow as two varints.
type joinRowCodec struct{}

func (joinRowCodec) Append(dst []byte, v joinRow) []byte {
	return binary.AppendVarint(binary.AppendVarint(dst, v.N), v.Matches)
}

func (joinRowCodec) Decode(src []byte) (v joinRow, n int, err error) {
	var m int
	if v.N, n = binary.Varint(src); n <= 0 {
		return v, 0, fmt.Errorf("join row count: short or invalid varint")
	}
	if v.Matches, m = binary.Varint(src[n:]); m <= 0 {
		return v, 0, fmt.Errorf("join row matches: short or invalid varint")
	}
	return v, n + m, nil
}

// sideRow is a row of one side read from state, with its state.
type sideRow[X any] struct {
	row X
	st  joinRow
}

// joinSide is one input of a regular join: its rows of the current key in
// a map state from row to joinRow, whether it is outer, and a buffer for
// reading them.
type joinSide[K comparable, X comparable] struct {
	rows  *state.MapHandle[K, state.VoidNamespace, X, joinRow]
	outer bool
	buf   []sideRow[X]
	// cur and prev hold the changed rows while their results are made, so
	// that the pointers given to Output point into the operator rather
	// than to copies on the heap.
	cur, prev X
}

// read returns the rows of the current key.
func (s *joinSide[K, X]) read() []sideRow[X] {
	s.buf = s.buf[:0]
	for x, st := range s.rows.Entries() {
		s.buf = append(s.buf, sideRow[X]{x, st})
	}
	return s.buf
}

// joinOut collects the result changes of one input change (or of the two
// halves of an update), so that they go out in an order that keeps the
// halves of each update together.
type joinOut[O any] struct {
	rets, adds []O
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

// RegularJoin runs a RegularJoinLogic over two keyed changelogs, as a
// one-input operator over Either.
//
// State: per join key and side, a map from each distinct row to its
// joinRow. A change of a row of one side joins the rows of the other side
// of its key and updates its own side; with an outer side, a row of it is
// padded with nil while it has no match, and the padded row is retracted
// when its first match arrives (and emitted again when its last match
// goes). An update (-U then +U of the same key, adjacent in a batch) comes
// out as updates of the result rows, each -U followed by its +U; a -U or +U
// alone comes out as a -D or a +I.
type RegularJoin[K comparable, A, B comparable, O any] struct {
	*relational[K, Either[changelog.Change[A], changelog.Change[B]], O]
	logic RegularJoinLogic[A, B, O]
	left  *joinSide[K, A]
	right *joinSide[K, B]
	// outL and outR make result rows with the changed side first.
	outL func(a *A, b *B) O
	outR func(b *B, a *A) O
	onL  func(a A, b B) bool
	onR  func(b B, a A) bool
	res  joinOut[O]
}

// NewRegularJoin returns the operator; it restores ctx.Restored.
func NewRegularJoin[K comparable, A, B comparable, O any](ctx *runtime.Context, spec KeySpec[K, Either[changelog.Change[A], changelog.Change[B]]], newBackend BackendFactory, logic RegularJoinLogic[A, B, O], outs map[string]any) (*RegularJoin[K, A, B, O], error) {
	rel, err := newRelational[K, Either[changelog.Change[A], changelog.Change[B]], O](ctx, spec, newBackend, logic.TTL, outs)
	if err != nil {
		return nil, err
	}
	j := &RegularJoin[K, A, B, O]{relational: rel, logic: logic,
		left: &joinSide[K, A]{outer: logic.LeftOuter}, right: &joinSide[K, B]{outer: logic.RightOuter}}
	if j.left.rows, err = state.NewMapHandle[K, state.VoidNamespace, A, joinRow](rel.store, nil, nil, "join-left", lazyCodec[A](), joinRowCodec{}, rel.ttlConfig()); err != nil {
		rel.Close()
		return nil, err
	}
	if j.right.rows, err = state.NewMapHandle[K, state.VoidNamespace, B, joinRow](rel.store, nil, nil, "join-right", lazyCodec[B](), joinRowCodec{}, rel.ttlConfig()); err != nil {
		rel.Close()
		return nil, err
	}
	if err := rel.restore(ctx.Restored); err != nil {
		rel.Close()
		return nil, err
	}
	out := logic.Output
	j.outL = out
	j.outR = func(b *B, a *A) O { return out(a, b) }
	if on := logic.On; on != nil {
		j.onL = on
		j.onR = func(b B, a A) bool { return on(a, b) }
	}
	return j, nil
}

// ProcessBatch applies every change to the state of its key and emits the
// changes of the result.
func (j *RegularJoin[K, A, B, O]) ProcessBatch(b *runtime.Batch[Either[changelog.Change[A], changelog.Change[B]]]) error {
	n := len(b.Data)
	for i := 0; i < n; i++ {
		j.setKeyAt(b, i)
		j.ts = b.TS[i]
		e := &b.Data[i]
		if i+1 < n && j.pairAt(b, i) {
			f := &b.Data[i+1]
			j.ts = b.TS[i+1]
			if e.IsRight {
				changeUpdate(j.relational, j.right, j.left, j.onR, j.outR, e.Right.Row, f.Right.Row, &j.res)
			} else {
				changeUpdate(j.relational, j.left, j.right, j.onL, j.outL, e.Left.Row, f.Left.Row, &j.res)
			}
			j.emitResult(true)
			i++
			continue
		}
		if e.IsRight {
			changeOne(j.relational, j.right, j.left, j.onR, j.outR, e.Right.Kind, e.Right.Row, &j.res)
		} else {
			changeOne(j.relational, j.left, j.right, j.onL, j.outL, e.Left.Kind, e.Left.Row, &j.res)
		}
		j.emitResult(false)
	}
	j.cleanup(n)
	return j.flush()
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

// emitResult sends the collected result changes: with update, pairs of a
// retraction and an addition as -U/+U (dropped if Equal says the rows are
// equal), then the remaining retractions as -D and additions as +I.
func (j *RegularJoin[K, A, B, O]) emitResult(update bool) {
	r := &j.res
	p := 0
	if update {
		p = min(len(r.rets), len(r.adds))
		for i := range p {
			if j.logic.Equal != nil && j.logic.Equal(r.rets[i], r.adds[i]) {
				continue
			}
			j.emitUpdate(r.rets[i], r.adds[i])
		}
	}
	for _, v := range r.rets[p:] {
		j.emit(changelog.Delete, v)
	}
	for _, v := range r.adds[p:] {
		j.emit(changelog.Insert, v)
	}
	clear(r.rets)
	clear(r.adds)
	r.rets, r.adds = r.rets[:0], r.adds[:0]
}

// changeOne applies one change of row x to side in of the current key and
// collects the result changes: x joins the rows of side other.
func changeOne[K comparable, X, Y comparable, T, O any](rel *relational[K, T, O], in *joinSide[K, X], other *joinSide[K, Y], on func(X, Y) bool, out func(*X, *Y) O, kind changelog.Kind, x X, res *joinOut[O]) {
	if kind.IsAddition() {
		addRow(in, other, on, out, x, res)
		return
	}
	in.cur = x
	xp := &in.cur
	st, ok := in.rows.Get(x)
	if !ok {
		rel.retractedAbsent()
		return
	}
	ys := other.read()
	if st.N--; st.N > 0 {
		in.rows.Put(x, st)
	} else {
		in.rows.Delete(x)
	}
	if on == nil {
		if len(ys) == 0 {
			if in.outer {
				res.retract(out(xp, nil), 1)
			}
			return
		}
		for i := range ys {
			res.retract(out(xp, &ys[i].row), ys[i].st.N)
		}
		// The other side's rows lose their last match when this side's
		// table of the key becomes empty.
		if other.outer && st.N == 0 && in.rows.IsEmpty() {
			for i := range ys {
				res.add(out(nil, &ys[i].row), ys[i].st.N)
			}
		}
		return
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
			other.rows.Put(y.row, y.st)
		}
	}
	if !matched && in.outer {
		res.retract(out(xp, nil), 1)
	}
}

// addRow adds one occurrence of row x to side in of the current key and
// collects the result changes.
func addRow[K comparable, X, Y comparable, O any](in *joinSide[K, X], other *joinSide[K, Y], on func(X, Y) bool, out func(*X, *Y) O, x X, res *joinOut[O]) {
	in.cur = x
	xp := &in.cur
	ys := other.read()
	st, _ := in.rows.Get(x)
	if on == nil {
		if len(ys) == 0 {
			if in.outer {
				res.add(out(xp, nil), 1)
			}
		} else {
			// The other side's rows get their first match when this side's
			// table of the key was empty.
			if other.outer && st.N == 0 && in.rows.IsEmpty() {
				for i := range ys {
					res.retract(out(nil, &ys[i].row), ys[i].st.N)
				}
			}
			for i := range ys {
				res.add(out(xp, &ys[i].row), ys[i].st.N)
			}
		}
		st.N++
		in.rows.Put(x, st)
		return
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
			other.rows.Put(y.row, y.st)
		}
		res.add(out(xp, &y.row), y.st.N)
	}
	if matches == 0 && in.outer {
		res.add(out(xp, nil), 1)
	}
	st.N++
	st.Matches = matches
	in.rows.Put(x, st)
}

// changeUpdate applies an update of a row of side in from xo to xn, both of
// the current key, and collects the result changes as updates: each result
// row of xo is retracted and the same pair with xn added, so that emitted in
// pairs they read as updates of the result rows.
func changeUpdate[K comparable, X, Y comparable, T, O any](rel *relational[K, T, O], in *joinSide[K, X], other *joinSide[K, Y], on func(X, Y) bool, out func(*X, *Y) O, xo, xn X, res *joinOut[O]) {
	so, ok := in.rows.Get(xo)
	if !ok {
		rel.retractedAbsent()
		addRow(in, other, on, out, xn, res)
		return
	}
	in.prev, in.cur = xo, xn
	op, np := &in.prev, &in.cur
	ys := other.read()
	if so.N--; so.N > 0 {
		in.rows.Put(xo, so)
	} else {
		in.rows.Delete(xo)
	}
	sn, _ := in.rows.Get(xn)
	sn.N++
	if on == nil {
		// Every row of the key joins both: the other side's matches do not
		// change.
		if len(ys) == 0 {
			if in.outer {
				res.retract(out(op, nil), 1)
				res.add(out(np, nil), 1)
			}
		}
		for i := range ys {
			res.retract(out(op, &ys[i].row), ys[i].st.N)
			res.add(out(np, &ys[i].row), ys[i].st.N)
		}
		in.rows.Put(xn, sn)
		return
	}
	var oldMatched bool
	var matches int64
	for i := range ys {
		y := &ys[i]
		was, is := on(xo, y.row), on(xn, y.row)
		if was {
			oldMatched = true
			res.retract(out(op, &y.row), y.st.N)
		}
		if is {
			matches += y.st.N
			res.add(out(np, &y.row), y.st.N)
		}
		if !other.outer || was == is {
			continue
		}
		if is {
			if y.st.Matches == 0 {
				res.retract(out(nil, &y.row), y.st.N)
			}
			y.st.Matches++
		} else if y.st.Matches--; y.st.Matches <= 0 {
			y.st.Matches = 0
			res.add(out(nil, &y.row), y.st.N)
		}
		other.rows.Put(y.row, y.st)
	}
	if in.outer {
		if !oldMatched {
			res.retract(out(op, nil), 1)
		}
		if matches == 0 {
			res.add(out(np, nil), 1)
		}
	}
	sn.Matches = matches
	in.rows.Put(xn, sn)
}

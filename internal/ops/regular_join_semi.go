package ops

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
)

// A semi or anti join (RegularJoinLogic.Semi, Anti) keeps the state of the
// general join, one value per key with the rows of both sides, under a
// name of its own ("semi-anti-join"): a savepoint of it restores only into
// a semi or anti join. Its results are left rows: a semi join's while they
// have at least one match, an anti join's while they have none, each as
// many times as it is in the left table, whatever its number of matches.
//
// Without On, every left row of a key matches every right row of it, so a
// left row is matched while the key has right rows: a right change flips
// every left row of the key when the right table of the key becomes empty
// or stops being empty. With On, each distinct left row keeps its number
// of matches (right rows with their multiplicity that On accepts with it),
// as Flink's semi/anti join keeps its "associations", and flips when that
// number rises from 0 or falls to 0.

// semiKept tells whether a left row that is matched (or not) is a result.
func (j *RegularJoin[K, A, B, O]) semiKept(matched bool) bool { return matched == j.logic.Semi }

// semiMatches returns the number of matches of left row x among the right
// rows of the current key. Without On, it is the number of right rows.
func (j *RegularJoin[K, A, B, O]) semiMatches(x A) int64 {
	var m int64
	for _, y := range j.right.set.all() {
		if j.onL == nil || j.onL(x, y.row) {
			m += y.st.N
		}
	}
	return m
}

// semiLeftMatched tells whether the left row at position i is matched.
func (j *RegularJoin[K, A, B, O]) semiLeftMatched(i int) bool {
	if j.onL == nil {
		return j.right.set.len() > 0
	}
	return j.left.set.all()[i].st.Matches > 0
}

// semiAddLeft adds one occurrence of left row x and returns whether it is
// matched.
func (j *RegularJoin[K, A, B, O]) semiAddLeft(x A) bool {
	i := -1
	if !j.left.insertOnly {
		i = j.left.set.find(x)
	}
	if i >= 0 {
		j.left.set.all()[i].st.N++
		return j.semiLeftMatched(i)
	}
	if j.onL == nil {
		j.left.set.add(x, joinRow{N: 1})
		return j.right.set.len() > 0
	}
	m := j.semiMatches(x)
	j.left.set.add(x, joinRow{N: 1, Matches: m})
	return m > 0
}

// semiRemoveLeft removes one occurrence of the left row at position i and
// returns whether it was matched.
func (j *RegularJoin[K, A, B, O]) semiRemoveLeft(i int) bool {
	matched := j.semiLeftMatched(i)
	if j.left.set.all()[i].st.N--; j.left.set.all()[i].st.N <= 0 {
		j.left.set.remove(i)
	}
	return matched
}

// semiLeft applies a change of a left row: it is a result, or stops being
// one, as it is matched. It reports whether the state changed.
func (j *RegularJoin[K, A, B, O]) semiLeft(kind changelog.Kind, x A) bool {
	j.left.cur = x
	xp := &j.left.cur
	if kind.IsAddition() {
		if j.semiKept(j.semiAddLeft(x)) {
			j.res.add(j.outL(xp, nil), 1)
		}
		return true
	}
	i := j.left.set.find(x)
	if i < 0 {
		j.retractedAbsent()
		return false
	}
	if j.semiKept(j.semiRemoveLeft(i)) {
		j.res.retract(j.outL(xp, nil), 1)
	}
	return true
}

// semiLeftUpdate applies an update of a left row from xo to xn: an update
// of the result if both are results, otherwise a retraction or an
// addition.
func (j *RegularJoin[K, A, B, O]) semiLeftUpdate(xo, xn A) bool {
	i := j.left.set.find(xo)
	if i < 0 {
		j.retractedAbsent()
		return j.semiLeft(changelog.UpdateAfter, xn)
	}
	j.left.prev, j.left.cur = xo, xn
	op, np := &j.left.prev, &j.left.cur
	was := j.semiKept(j.semiRemoveLeft(i))
	is := j.semiKept(j.semiAddLeft(xn))
	switch {
	case was && is:
		j.res.update(j.outL(op, nil), j.outL(np, nil), 1)
	case was:
		j.res.retract(j.outL(op, nil), 1)
	case is:
		j.res.add(j.outL(np, nil), 1)
	}
	return true
}

// semiFlip collects the change of the left row l, matched (or not) from
// now on, and thereby a result or no longer one.
func (j *RegularJoin[K, A, B, O]) semiFlip(l *sideRow[A], matched bool) {
	if j.semiKept(matched) {
		j.res.add(j.outL(&l.row, nil), l.st.N)
	} else {
		j.res.retract(j.outL(&l.row, nil), l.st.N)
	}
}

// semiFlipAll flips every left row of the key: the key's right table has
// just become non-empty (matched) or empty.
func (j *RegularJoin[K, A, B, O]) semiFlipAll(matched bool) {
	ls := j.left.set.all()
	for i := range ls {
		j.semiFlip(&ls[i], matched)
	}
}

// semiMatch counts a match of every left row that On accepts with right
// row y (gained, or lost if by is -1), flipping those whose number of
// matches rises from or falls to 0.
func (j *RegularJoin[K, A, B, O]) semiMatch(y B, by int64) {
	ls := j.left.set.all()
	for i := range ls {
		l := &ls[i]
		if !j.onL(l.row, y) {
			continue
		}
		was := l.st.Matches > 0
		l.st.Matches = max(l.st.Matches+by, 0)
		if is := l.st.Matches > 0; is != was {
			j.semiFlip(l, is)
		}
	}
}

// semiRight applies a change of a right row to the left rows it matches.
func (j *RegularJoin[K, A, B, O]) semiRight(kind changelog.Kind, y B) bool {
	if kind.IsAddition() {
		if j.onL == nil && j.right.set.len() == 0 {
			j.semiFlipAll(true)
		} else if j.onL != nil {
			j.semiMatch(y, 1)
		}
		j.semiAddRight(y)
		return true
	}
	i := j.right.set.find(y)
	if i < 0 {
		j.retractedAbsent()
		return false
	}
	if j.right.set.all()[i].st.N--; j.right.set.all()[i].st.N <= 0 {
		j.right.set.remove(i)
	}
	if j.onL == nil && j.right.set.len() == 0 {
		j.semiFlipAll(false)
	} else if j.onL != nil {
		j.semiMatch(y, -1)
	}
	return true
}

// semiAddRight adds one occurrence of right row y.
func (j *RegularJoin[K, A, B, O]) semiAddRight(y B) {
	i := -1
	if !j.right.insertOnly {
		i = j.right.set.find(y)
	}
	if i >= 0 {
		j.right.set.all()[i].st.N++
	} else {
		j.right.set.add(y, joinRow{N: 1})
	}
}

// semiRightUpdate applies an update of a right row from yo to yn. Without
// On the key keeps as many right rows, and nothing changes; with On, a
// left row is flipped only if its number of matches rises from or falls
// to 0 over the whole update.
func (j *RegularJoin[K, A, B, O]) semiRightUpdate(yo, yn B) bool {
	i := j.right.set.find(yo)
	if i < 0 {
		j.retractedAbsent()
		return j.semiRight(changelog.UpdateAfter, yn)
	}
	if j.right.set.all()[i].st.N--; j.right.set.all()[i].st.N <= 0 {
		j.right.set.remove(i)
	}
	j.semiAddRight(yn)
	if j.onL == nil {
		return true
	}
	ls := j.left.set.all()
	for i := range ls {
		l := &ls[i]
		d := int64(0)
		if j.onL(l.row, yo) {
			d--
		}
		if j.onL(l.row, yn) {
			d++
		}
		if d == 0 {
			continue
		}
		was := l.st.Matches > 0
		l.st.Matches = max(l.st.Matches+d, 0)
		if is := l.st.Matches > 0; is != was {
			j.semiFlip(l, is)
		}
	}
	return true
}

// processSemi is ProcessBatch of a semi or anti join.
func (j *RegularJoin[K, A, B, O]) processSemi(b *runtime.Batch[Either[changelog.Change[A], changelog.Change[B]]]) error {
	n := len(b.Data)
	for i := 0; i < n; i++ {
		j.setKeyAt(b, i)
		j.ts = b.TS[i]
		had := j.loadKey()
		e := &b.Data[i]
		var changed bool
		switch {
		case i+1 < n && j.pairAt(b, i):
			f := &b.Data[i+1]
			j.ts = b.TS[i+1]
			if e.IsRight {
				changed = j.semiRightUpdate(e.Right.Row, f.Right.Row)
			} else {
				changed = j.semiLeftUpdate(e.Left.Row, f.Left.Row)
			}
			i++
		case e.IsRight:
			changed = j.semiRight(e.Right.Kind, e.Right.Row)
		default:
			changed = j.semiLeft(e.Left.Kind, e.Left.Row)
		}
		j.emitResult()
		if changed {
			j.storeKey(had)
		}
	}
	j.releaseKey()
	var zeroA A
	j.left.cur, j.left.prev = zeroA, zeroA
	j.cleanup(n)
	return j.flush()
}

// checkSemi refuses the settings a semi or anti join does not take.
func (l *RegularJoinLogic[A, B, O]) checkSemi() error {
	switch {
	case l.Semi && l.Anti:
		return fmt.Errorf("regular join: a join is a semi join or an anti join, not both")
	case l.LeftOuter || l.RightOuter:
		return fmt.Errorf("regular join: a semi or anti join has no outer side; its results are the left rows")
	case l.LeftUnique || l.RightUnique:
		return fmt.Errorf("regular join: a semi or anti join keeps every row of both inputs; it takes no declaration that the join key is unique")
	}
	return nil
}

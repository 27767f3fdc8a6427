package ops

import (
	"errors"
	"fmt"
	"math"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// Expiry of regular join rows (RegularJoinLogic.LeftExpiry, RightExpiry).
//
// A row of an expiring side is kept until the join's watermark reaches its
// expiry: each key has at most one event-time timer, at the earliest
// expiry of the rows it keeps, whose time the key's state holds too (so
// that a row expiring earlier moves the timer). The timers are entries of
// the join's expiryIndex, built again from the keys' states on restore;
// timers of the timer service, where checkpoints of earlier versions of
// the join hold them, fire as well. When the timer fires, the
// rows whose expiry the watermark has reached are dropped, and the timer
// moves to the earliest expiry of the rows left. Dropping emits nothing:
// the caller guarantees that no change to come of the other input can join
// the row, and the row's own side is insert-only, so no retraction of it
// can come either. A row that arrives with its expiry reached (a late row)
// is joined with the rows of the other side held, as any row is, and not
// kept.
//
// A key's timer is set at the earliest expiry of its rows rounded up to
// the join's expiry step (expiryGranularity): a key with many rows (a hot join key) is then visited
// at most once per expiryGranularity of event time, each visit reading all
// its rows, rather than at every watermark; rows stay that much longer at
// most. Rows are dropped only once the watermark has reached their own
// expiry.
//
// At the final watermark (the end of input) the timers do not fire: no
// change can come any more, and dropping the rows would be work for
// nothing.

// expiryGranularity is the step of the times of expiry timers, in ms.
const expiryGranularity = 1000

// expiryTimer returns the time of the timer of a row that expires at at:
// at rounded up to a multiple of step.
func expiryTimer(at, step int64) int64 {
	r := at % step
	switch {
	case r == 0:
		return at
	case r < 0:
		return at - r
	case at > math.MaxInt64-step:
		return math.MaxInt64
	}
	return at - r + step
}

// checkExpiry checks that the rows of the sides that expire can be dropped
// without a retraction of them coming later.
func (l RegularJoinLogic[A, B, O]) checkExpiry() error {
	switch {
	case l.Semi || l.Anti:
		return errors.New("join: rows of a semi or anti join do not expire; drop LeftExpiry and RightExpiry")
	case l.LeftUnique || l.RightUnique:
		return errors.New("join: rows of a join with a unique side do not expire; drop LeftExpiry and RightExpiry, or the unique declaration")
	case l.LeftExpiry != nil && !l.LeftInsertOnly:
		return errors.New("join: left rows expire, but the left input is not insert-only, and a retraction of an expired row would find nothing to retract; set LeftExpiry only for an insert-only left input")
	case l.RightExpiry != nil && !l.RightInsertOnly:
		return errors.New("join: right rows expire, but the right input is not insert-only, and a retraction of an expired row would find nothing to retract; set RightExpiry only for an insert-only right input")
	}
	return nil
}

// newExpiryTimers returns the expiry timers of a join, turning the panic
// of newTimers into an error.
func newExpiryTimers[K comparable, T any](k *keyedBase[K, T]) (ts state.Timers[K, state.VoidNamespace], err error) {
	defer func() {
		if r := recover(); r != nil {
			ts, err = nil, fmt.Errorf("join expiry timers: %v", r)
		}
	}()
	return newTimers[K, state.VoidNamespace](k, "join-expiry-timers"), nil
}

// addedExpiry returns the expiry of row x if the change adds it to a side
// whose rows expire, and marks the side not to keep it if wm has reached
// it already.
func addedExpiry[X comparable](in *joinSide[X], kind changelog.Kind, x X, wm int64) (int64, bool) {
	if in.expire == nil || !kind.IsAddition() {
		return 0, false
	}
	at := in.expire(x)
	if at <= wm {
		in.noStore = true
		return at, false
	}
	return at, true
}

// scheduleExpiry makes sure that the current key, of key group kg, has a
// timer at or before the timer time of at, the expiry of a row it keeps.
func (j *RegularJoin[K, A, B, O]) scheduleExpiry(kg int, at int64) {
	at = expiryTimer(at, j.expiryStep)
	c := j.cur
	if c.hasTimer && c.timer <= at {
		return
	}
	// The entry of a timer moved earlier stays, stale: the key's state
	// says the timer is elsewhere.
	j.expiry.add(at, kg, j.kc.Key)
	c.timer, c.hasTimer = at, true
}

// ProcessWatermark drops the rows whose expiry wm reaches, if rows expire,
// then forwards wm.
func (j *RegularJoin[K, A, B, O]) ProcessWatermark(wm int64) error {
	if j.timers != nil && wm > j.wm {
		j.wm = wm
		if wm != runtime.MaxWatermark {
			if err := j.timers.AdvanceWatermark(wm, j.onExpiryTimer); err != nil {
				return err
			}
			if err := j.expiry.fire(wm, j.onExpiryTimer); err != nil {
				return err
			}
		}
	}
	return j.relational.ProcessWatermark(wm)
}

// onExpiryTimer drops the rows of key k whose expiry the watermark has
// reached and sets the key's timer at the earliest expiry of the rest.
func (j *RegularJoin[K, A, B, O]) onExpiryTimer(kg int, k K, _ state.VoidNamespace, at int64) error {
	j.setKey(kg, k)
	defer j.releaseKey()
	if !j.loadKey() || !j.cur.hasTimer || j.cur.timer != at {
		// The key's state expired by its TTL, or is gone: nothing waits.
		return nil
	}
	c := j.cur
	next := int64(math.MaxInt64)
	expireRows(&c.left, j.left.expire, j.wm, &next)
	expireRows(&c.right, j.right.expire, j.wm, &next)
	c.hasTimer = false
	if next != math.MaxInt64 {
		next = expiryTimer(next, j.expiryStep)
		j.expiry.add(next, kg, k)
		c.timer, c.hasTimer = next, true
	}
	j.storeKey(true)
	return nil
}

// expireRows removes the rows of s whose expiry wm has reached, and lowers
// next to the earliest expiry of the others. A nil expire keeps them all.
func expireRows[X comparable](s *rowSet[X], expire func(X) int64, wm int64, next *int64) {
	if expire == nil {
		return
	}
	// Backwards: remove moves the last row into the place it frees, and
	// that row has been seen.
	for i := s.len() - 1; i >= 0; i-- {
		at := expire(s.all()[i].row)
		if at <= wm {
			s.remove(i)
			continue
		}
		*next = min(*next, at)
	}
}

// rebuildExpiry puts the keys that have an expiry timer in the expiry
// index, from the states of all keys (after a restore), with the codec of
// the states.
func (j *RegularJoin[K, A, B, O]) rebuildExpiry(c joinStateCodec[A, B]) error {
	const name = "join-expiring"
	kc := j.store.KeyCodec()
	if j.ttl > 0 {
		t, err := state.NewValueTable[K, state.VoidNamespace, state.Timed[joinKeyState[A, B]]](j.backend, name, kc, nil, state.TimedCodec[joinKeyState[A, B]](c))
		if err != nil {
			return fmt.Errorf("join expiry: %w", err)
		}
		for kg := j.kgs.Start; kg < j.kgs.End; kg++ {
			t.Range(kg, func(k K, _ state.VoidNamespace, v state.Timed[joinKeyState[A, B]]) bool {
				if st := v.Value; st != nil && st.hasTimer {
					j.expiry.add(st.timer, kg, k)
				}
				return true
			})
		}
		return nil
	}
	t, err := state.NewValueTable[K, state.VoidNamespace, joinKeyState[A, B]](j.backend, name, kc, nil, c)
	if err != nil {
		return fmt.Errorf("join expiry: %w", err)
	}
	for kg := j.kgs.Start; kg < j.kgs.End; kg++ {
		t.Range(kg, func(k K, _ state.VoidNamespace, st joinKeyState[A, B]) bool {
			if st != nil && st.hasTimer {
				j.expiry.add(st.timer, kg, k)
			}
			return true
		})
	}
	return nil
}

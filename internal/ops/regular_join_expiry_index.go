package ops

import (
	"slices"

	"github.com/eddystream/eddy/internal/state"
)

// expiryIndex holds the keys of a join whose rows expire by the time of
// their expiry timer (see regular_join_expiry.go): a bucket of keys per
// timer time, and the times in order. It stands in for an event-time timer
// per key: adding a key appends it to its bucket, without the timer
// service's per-timer map entry and heap push, and moving a key's timer
// earlier leaves its entry in the later bucket, where it is found stale
// (the key's state holds its timer's time) and skipped.
//
// The index is not checkpointed: the state of each key holds its timer's
// time, from which a restore builds the index again
// (RegularJoin.rebuildExpiry).
type expiryIndex[K comparable] struct {
	buckets map[int64]*expiryBucket[K]
	// times are the times of the buckets, ascending.
	times []int64
	// last is the bucket keys were last added to, at lastAt: rows come
	// in about the order of their times, so most keys go to it.
	last   *expiryBucket[K]
	lastAt int64
}

// expiryBucket is the keys whose timer is at one time.
type expiryBucket[K comparable] struct {
	keys []expiryKey[K]
}

// expiryKey is a key with its key group.
type expiryKey[K comparable] struct {
	kg int
	k  K
}

// add puts key k of key group kg in the bucket of time at.
func (x *expiryIndex[K]) add(at int64, kg int, k K) {
	b := x.last
	if b == nil || x.lastAt != at {
		b = x.buckets[at]
		if b == nil {
			if x.buckets == nil {
				x.buckets = make(map[int64]*expiryBucket[K])
			}
			b = &expiryBucket[K]{}
			x.buckets[at] = b
			i, _ := slices.BinarySearch(x.times, at)
			x.times = slices.Insert(x.times, i, at)
		}
		x.last, x.lastAt = b, at
	}
	b.keys = append(b.keys, expiryKey[K]{kg: kg, k: k})
}

// fire calls fn, a timer service's callback, for the keys of each bucket
// whose time wm has reached, earliest first, and drops the buckets. fn may
// add keys at times after wm.
func (x *expiryIndex[K]) fire(wm int64, fn func(kg int, k K, _ state.VoidNamespace, at int64) error) error {
	for len(x.times) > 0 && x.times[0] <= wm {
		at := x.times[0]
		x.times = x.times[1:]
		b := x.buckets[at]
		delete(x.buckets, at)
		if x.last == b {
			x.last = nil
		}
		for i := range b.keys {
			if err := fn(b.keys[i].kg, b.keys[i].k, state.VoidNamespace{}, at); err != nil {
				return err
			}
		}
	}
	if len(x.times) == 0 {
		x.times = nil
	}
	return nil
}

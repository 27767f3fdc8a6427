package state

import (
	"fmt"
	"slices"

	"github.com/eddystream/eddy/internal/state/codec"
	"github.com/eddystream/eddy/internal/state/kv"
)

// The canonical format (canonical.go) of the timer service.

var _ CanonicalTable = (*TimerService[int, int])(nil)

// AppendCanonical appends the timers of key group kg in the canonical
// format: per timer, domain | timestamp | key | namespace and an empty
// value, event time first, each domain in firing order, so that a restore
// into a TimerService keeps the order of equal timestamps.
func (s *TimerService[K, N]) AppendCanonical(dst []byte, kg int) []byte {
	checkKeyGroup(kg, s.kgs)
	var key []byte
	for d, q := range []*timerQueue[K, N]{kv.DomainEvent: &s.event, kv.DomainProc: &s.proc} {
		m := q.ids[kg-s.kgs.Start]
		ts := make([]timer[K, N], 0, len(m))
		for id, seq := range m {
			ts = append(ts, timer[K, N]{id: id, seq: seq})
		}
		slices.SortFunc(ts, func(a, b timer[K, N]) int { return a.compare(&b) })
		for _, t := range ts {
			key = codec.AppendInt64(append(key[:0], byte(d)), t.id.ts)
			key = s.nc.Append(s.kc.Append(key, t.id.k), t.id.n)
			dst = codec.AppendKV(dst, key, nil)
		}
	}
	return dst
}

// BeginCanonicalSnapshot encodes every key group in the canonical format
// at once, as BeginSnapshot does in the native one.
func (s *TimerService[K, N]) BeginCanonicalSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return s.beginWith(s.AppendCanonical)
}

// RestoreCanonical adds the canonical timers to key group kg, in the order
// of the entries for equal timestamps.
func (s *TimerService[K, N]) RestoreCanonical(kg int, entries []byte) error {
	checkKeyGroup(kg, s.kgs)
	err := codec.EachKV(entries, func(key, _ []byte) error {
		if len(key) < 9 {
			return codec.Truncated("timer")
		}
		var q *timerQueue[K, N]
		switch key[0] {
		case kv.DomainEvent:
			q = &s.event
		case kv.DomainProc:
			q = &s.proc
		default:
			return fmt.Errorf("timer of unknown domain %d", key[0])
		}
		var id timerID[K, N]
		id.ts = codec.ReadInt64(key[1:])
		pos, err := codec.DecodeAt(s.kc, key, 9, &id.k)
		if err == nil {
			err = codec.DecodeWhole(s.nc, key[pos:], &id.n)
		}
		if err == nil {
			q.add(s.kgs, kg, id, &s.seq, 0)
		}
		return err
	})
	if err != nil {
		return restoreErr(s.kind, kg, err)
	}
	return nil
}

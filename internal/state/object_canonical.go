package state

import (
	"fmt"
	"slices"

	"github.com/eddystream/eddy/internal/state/codec"
)

// The canonical format (canonical.go) of the object tables and the timer
// service: each entry encoded with the table's codecs, as a bytes backend
// stores it.

var (
	_ CanonicalTable = (*objectValueTable[int, int, int])(nil)
	_ CanonicalTable = (*objectVoidTable[int, int])(nil)
	_ CanonicalTable = (*objectMapTable[int, int, int, int])(nil)
	_ CanonicalTable = (*TimerService[int, int])(nil)
)

// kvScratch holds the buffers of one canonical encoder.
type kvScratch struct{ key, val []byte }

func (t *objectValueTable[K, N, V]) canonicalEntry() func(dst []byte, p pair[K, N], v V) []byte {
	var s kvScratch
	return func(dst []byte, p pair[K, N], v V) []byte {
		s.key = t.nc.Append(t.kc.Append(s.key[:0], p.k), p.n)
		s.val = t.vc.Append(s.val[:0], v)
		return appendKV(dst, s.key, s.val)
	}
}

// AppendCanonical appends key group kg in the canonical format.
func (t *objectValueTable[K, N, V]) AppendCanonical(dst []byte, kg int) []byte {
	return t.m.appendLive(dst, t.index(kg), t.canonicalEntry(), false)
}

// BeginCanonicalSnapshot freezes the table for a canonical snapshot; see
// CanonicalTable.
func (t *objectValueTable[K, N, V]) BeginCanonicalSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return t.m.begin(t.kgs.Start, t.canonicalEntry(), false)
}

// RestoreCanonical adds canonical entries to key group kg.
func (t *objectValueTable[K, N, V]) RestoreCanonical(kg int, entries []byte) error {
	i := t.index(kg)
	err := eachKV(entries, func(key, value []byte) error {
		var p pair[K, N]
		var v V
		pos, err := codec.DecodeAt(t.kc, key, 0, &p.k)
		if err == nil {
			err = codec.DecodeWhole(t.nc, key[pos:], &p.n)
		}
		if err == nil {
			err = codec.DecodeWhole(t.vc, value, &v)
		}
		if err == nil {
			t.m.put(i, p, v)
		}
		return err
	})
	if err != nil {
		return restoreErr(t.kind, kg, err)
	}
	return nil
}

func (t *objectVoidTable[K, V]) canonicalEntry() func(dst []byte, k K, v V) []byte {
	var s kvScratch
	return func(dst []byte, k K, v V) []byte {
		s.key = t.nc.Append(t.kc.Append(s.key[:0], k), VoidNamespace{})
		s.val = t.vc.Append(s.val[:0], v)
		return appendKV(dst, s.key, s.val)
	}
}

// AppendCanonical appends key group kg in the canonical format.
func (t *objectVoidTable[K, V]) AppendCanonical(dst []byte, kg int) []byte {
	return t.m.appendLive(dst, t.index(kg), t.canonicalEntry(), false)
}

// BeginCanonicalSnapshot freezes the table for a canonical snapshot; see
// CanonicalTable.
func (t *objectVoidTable[K, V]) BeginCanonicalSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return t.m.begin(t.kgs.Start, t.canonicalEntry(), false)
}

// RestoreCanonical adds canonical entries to key group kg.
func (t *objectVoidTable[K, V]) RestoreCanonical(kg int, entries []byte) error {
	i := t.index(kg)
	err := eachKV(entries, func(key, value []byte) error {
		var k K
		var n VoidNamespace
		var v V
		pos, err := codec.DecodeAt(t.kc, key, 0, &k)
		if err == nil {
			err = codec.DecodeWhole(t.nc, key[pos:], &n)
		}
		if err == nil {
			err = codec.DecodeWhole(t.vc, value, &v)
		}
		if err == nil {
			t.m.put(i, k, v)
		}
		return err
	})
	if err != nil {
		return restoreErr(t.kind, kg, err)
	}
	return nil
}

func (t *objectMapTable[K, N, UK, UV]) canonicalEntry() func(dst []byte, p pair[K, N], m map[UK]UV) []byte {
	var s kvScratch
	return func(dst []byte, p pair[K, N], m map[UK]UV) []byte {
		prefix := t.nc.Append(t.kc.Append(s.key[:0], p.k), p.n)
		for uk, uv := range m {
			s.key = t.ukc.Append(prefix, uk)
			prefix = s.key[:len(prefix)]
			s.val = t.uvc.Append(s.val[:0], uv)
			dst = appendKV(dst, s.key, s.val)
		}
		return dst
	}
}

// AppendCanonical appends key group kg in the canonical format: one entry
// per user entry.
func (t *objectMapTable[K, N, UK, UV]) AppendCanonical(dst []byte, kg int) []byte {
	return t.m.appendLive(dst, t.index(kg), t.canonicalEntry(), false)
}

// BeginCanonicalSnapshot freezes the table for a canonical snapshot; see
// CanonicalTable.
func (t *objectMapTable[K, N, UK, UV]) BeginCanonicalSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return t.m.begin(t.kgs.Start, t.canonicalEntry(), false)
}

// RestoreCanonical adds canonical entries to key group kg.
func (t *objectMapTable[K, N, UK, UV]) RestoreCanonical(kg int, entries []byte) error {
	t.index(kg)
	err := eachKV(entries, func(key, value []byte) error {
		var k K
		var n N
		var uk UK
		var uv UV
		pos, err := codec.DecodeAt(t.kc, key, 0, &k)
		if err == nil {
			pos, err = codec.DecodeAt(t.nc, key, pos, &n)
		}
		if err == nil {
			err = codec.DecodeWhole(t.ukc, key[pos:], &uk)
		}
		if err == nil {
			err = codec.DecodeWhole(t.uvc, value, &uv)
		}
		if err == nil {
			t.Put(kg, k, n, uk, uv)
		}
		return err
	})
	if err != nil {
		return restoreErr(t.kind, kg, err)
	}
	return nil
}

// AppendCanonical appends the timers of key group kg in the canonical
// format: per timer, domain | timestamp | key | namespace and an empty
// value, event time first, each domain in firing order, so that a restore
// into a TimerService keeps the order of equal timestamps.
func (s *TimerService[K, N]) AppendCanonical(dst []byte, kg int) []byte {
	checkKeyGroup(kg, s.kgs)
	var key []byte
	for d, q := range []*timerQueue[K, N]{domainEvent: &s.event, domainProc: &s.proc} {
		m := q.ids[kg-s.kgs.Start]
		ts := make([]timer[K, N], 0, len(m))
		for id, seq := range m {
			ts = append(ts, timer[K, N]{id: id, seq: seq})
		}
		slices.SortFunc(ts, func(a, b timer[K, N]) int { return a.compare(&b) })
		for _, t := range ts {
			key = codec.AppendInt64(append(key[:0], byte(d)), t.id.ts)
			key = s.nc.Append(s.kc.Append(key, t.id.k), t.id.n)
			dst = appendKV(dst, key, nil)
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
	err := eachKV(entries, func(key, _ []byte) error {
		if len(key) < 9 {
			return codec.Truncated("timer")
		}
		var q *timerQueue[K, N]
		switch key[0] {
		case domainEvent:
			q = &s.event
		case domainProc:
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

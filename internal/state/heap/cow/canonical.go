package cow

import (
	"github.com/eddystream/eddy/internal/state/codec"
)

// The canonical format of the tables (state.CanonicalTable), which
// savepoints use: each entry a key and a value encoded with the table's
// codecs, as a bytes backend stores them (see internal/state's canonical.go).

// kvScratch holds the buffers of one canonical encoder.
type kvScratch struct{ key, val []byte }

func (t *ValueTable[K, N, V]) canonicalEntry() func(dst []byte, p pair[K, N], v V) []byte {
	var s kvScratch
	return func(dst []byte, p pair[K, N], v V) []byte {
		s.key = t.nc.Append(t.kc.Append(s.key[:0], p.k), p.n)
		s.val = t.vc.Append(s.val[:0], v)
		return codec.AppendKV(dst, s.key, s.val)
	}
}

// AppendCanonical appends key group kg in the canonical format.
func (t *ValueTable[K, N, V]) AppendCanonical(dst []byte, kg int) []byte {
	return t.m.appendLive(dst, t.index(kg), t.canonicalEntry(), false)
}

// BeginCanonicalSnapshot freezes the table for a canonical snapshot; see
// state.CanonicalTable.
func (t *ValueTable[K, N, V]) BeginCanonicalSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return t.m.begin(t.kgs.Start, t.canonicalEntry(), false)
}

// RestoreCanonical adds canonical entries to key group kg.
func (t *ValueTable[K, N, V]) RestoreCanonical(kg int, entries []byte) error {
	i := t.index(kg)
	err := codec.EachKV(entries, func(key, value []byte) error {
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

func (t *VoidTable[K, N, V]) canonicalEntry() func(dst []byte, k K, v V) []byte {
	var s kvScratch
	return func(dst []byte, k K, v V) []byte {
		var n N
		s.key = t.nc.Append(t.kc.Append(s.key[:0], k), n)
		s.val = t.vc.Append(s.val[:0], v)
		return codec.AppendKV(dst, s.key, s.val)
	}
}

// AppendCanonical appends key group kg in the canonical format.
func (t *VoidTable[K, N, V]) AppendCanonical(dst []byte, kg int) []byte {
	return t.m.appendLive(dst, t.index(kg), t.canonicalEntry(), false)
}

// BeginCanonicalSnapshot freezes the table for a canonical snapshot; see
// state.CanonicalTable.
func (t *VoidTable[K, N, V]) BeginCanonicalSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return t.m.begin(t.kgs.Start, t.canonicalEntry(), false)
}

// RestoreCanonical adds canonical entries to key group kg.
func (t *VoidTable[K, N, V]) RestoreCanonical(kg int, entries []byte) error {
	i := t.index(kg)
	err := codec.EachKV(entries, func(key, value []byte) error {
		var k K
		var n N
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

func (t *MapTable[K, N, UK, UV]) canonicalEntry() func(dst []byte, p pair[K, N], m map[UK]UV) []byte {
	var s kvScratch
	return func(dst []byte, p pair[K, N], m map[UK]UV) []byte {
		prefix := t.nc.Append(t.kc.Append(s.key[:0], p.k), p.n)
		for uk, uv := range m {
			s.key = t.ukc.Append(prefix, uk)
			prefix = s.key[:len(prefix)]
			s.val = t.uvc.Append(s.val[:0], uv)
			dst = codec.AppendKV(dst, s.key, s.val)
		}
		return dst
	}
}

// AppendCanonical appends key group kg in the canonical format: one entry
// per user entry.
func (t *MapTable[K, N, UK, UV]) AppendCanonical(dst []byte, kg int) []byte {
	return t.m.appendLive(dst, t.index(kg), t.canonicalEntry(), false)
}

// BeginCanonicalSnapshot freezes the table for a canonical snapshot; see
// state.CanonicalTable.
func (t *MapTable[K, N, UK, UV]) BeginCanonicalSnapshot() (encode func(dst []byte, kg int) []byte, release func()) {
	return t.m.begin(t.kgs.Start, t.canonicalEntry(), false)
}

// RestoreCanonical adds canonical entries to key group kg.
func (t *MapTable[K, N, UK, UV]) RestoreCanonical(kg int, entries []byte) error {
	t.index(kg)
	err := codec.EachKV(entries, func(key, value []byte) error {
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

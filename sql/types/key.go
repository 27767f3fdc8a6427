package types

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"
)

// KeyEncoder encodes the key of a row - a subset of its fields - as a
// string, for operators keyed by it (grouping, joins, deduplication,
// partitioning). The key is the canonical encoding of the row of the key
// fields (of KeyType), so equal key values give equal keys, and KeyRow
// reads a key back. It is immutable and safe for concurrent use.
type KeyEncoder struct {
	cols    []int
	kt      *RowType
	fixed   int   // size of the key's bitmap and slots
	varKeys []int // positions in the key of variable-length fields
}

// NewKeyEncoder returns the encoder of the key made of fields cols of rows
// of type rt, in that order.
func NewKeyEncoder(rt *RowType, cols ...int) *KeyEncoder {
	kt := rt.Project(cols...)
	return &KeyEncoder{cols: append([]int(nil), cols...), kt: kt, fixed: kt.fixedSize, varKeys: kt.varFields}
}

// KeyType returns the row type of keys.
func (k *KeyEncoder) KeyType() *RowType { return k.kt }

// Size returns the size of r's key.
func (k *KeyEncoder) Size(r Row) int {
	n := k.fixed
	for _, j := range k.varKeys {
		n += int(uint32(r.slot(k.cols[j])))
	}
	return n
}

// AppendKey appends the key of r to dst.
func (k *KeyEncoder) AppendKey(dst []byte, r Row) []byte {
	start := len(dst)
	dst = grow(dst, k.Size(r))
	out := dst[start:]
	clear(out[:k.fixed])
	bm := k.kt.bitmapBytes
	for j, c := range k.cols {
		if r.IsNull(c) {
			out[j>>3] |= 1 << (j & 7)
			continue
		}
		binary.LittleEndian.PutUint64(out[bm+8*j:], r.slot(c))
	}
	off := k.fixed
	for _, j := range k.varKeys {
		c := k.cols[j]
		if r.IsNull(c) {
			continue
		}
		v := varAt(r.b, r.slot(c))
		copy(out[off:], v)
		binary.LittleEndian.PutUint64(out[bm+8*j:], uint64(off)<<32|uint64(len(v)))
		off += len(v)
	}
	return dst
}

// Key returns the key of r, in one allocation.
func (k *KeyEncoder) Key(r Row) string {
	b := make([]byte, 0, k.Size(r))
	return unsafeString(k.AppendKey(b, r))
}

// KeyIn returns the key of r in memory of arena a: no allocation of its
// own, for keys made one per record.
func (k *KeyEncoder) KeyIn(a *Arena, r Row) string {
	n := k.Size(r)
	if n == 0 {
		return ""
	}
	return unsafeString(k.AppendKey(a.alloc(n)[:0], r))
}

// KeyRow returns the key as a row of KeyType, without copying.
func (k *KeyEncoder) KeyRow(key string) Row { return Row{b: key, n: int32(k.kt.Len())} }

// Hash returns the hash of r's key: xxhash.Sum64String(k.Key(r)), the
// hash eddy's runtime uses for string keys, computed without allocating
// for keys up to 256 bytes.
func (k *KeyEncoder) Hash(r Row) uint64 {
	var buf [256]byte
	if k.Size(r) <= len(buf) {
		return xxhash.Sum64(k.AppendKey(buf[:0], r))
	}
	return xxhash.Sum64(k.AppendKey(nil, r))
}

// Project writes the fields cols of r as a row of KeyType into arena: a
// projection of a row without decoding its values.
func (k *KeyEncoder) Project(arena *Arena, r Row) Row {
	dst := arena.alloc(k.Size(r))
	k.AppendKey(dst[:0], r)
	return Row{b: unsafeString(dst), n: int32(k.kt.Len())}
}

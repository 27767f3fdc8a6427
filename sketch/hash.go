package sketch

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// This file implements XXH64 (Yann Collet's xxHash, 64-bit variant), the
// item hash used by every hashing synopsis. It is fast, passes SMHasher and
// is stable across platforms and releases, which serialized sketches need.

const (
	xxPrime1 uint64 = 11400714785074694791
	xxPrime2 uint64 = 14029467366897019727
	xxPrime3 uint64 = 1609587929392839161
	xxPrime4 uint64 = 9650029242287828579
	xxPrime5 uint64 = 2870177450012600261
)

func xxRound(acc, input uint64) uint64 {
	acc += input * xxPrime2
	acc = bits.RotateLeft64(acc, 31)
	return acc * xxPrime1
}

func xxMergeRound(acc, val uint64) uint64 {
	val = xxRound(0, val)
	acc ^= val
	return acc*xxPrime1 + xxPrime4
}

func xxAvalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}

// hash64 returns XXH64(b, seed).
func hash64(b []byte, seed uint64) uint64 {
	n := len(b)
	var h uint64
	if n >= 32 {
		v1 := seed + xxPrime1 + xxPrime2
		v2 := seed + xxPrime2
		v3 := seed
		v4 := seed - xxPrime1
		for len(b) >= 32 {
			v1 = xxRound(v1, binary.LittleEndian.Uint64(b[0:8]))
			v2 = xxRound(v2, binary.LittleEndian.Uint64(b[8:16]))
			v3 = xxRound(v3, binary.LittleEndian.Uint64(b[16:24]))
			v4 = xxRound(v4, binary.LittleEndian.Uint64(b[24:32]))
			b = b[32:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) +
			bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = xxMergeRound(h, v1)
		h = xxMergeRound(h, v2)
		h = xxMergeRound(h, v3)
		h = xxMergeRound(h, v4)
	} else {
		h = seed + xxPrime5
	}
	h += uint64(n)
	for ; len(b) >= 8; b = b[8:] {
		h ^= xxRound(0, binary.LittleEndian.Uint64(b))
		h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * xxPrime1
		h = bits.RotateLeft64(h, 23)*xxPrime2 + xxPrime3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * xxPrime5
		h = bits.RotateLeft64(h, 11) * xxPrime1
	}
	return xxAvalanche(h)
}

// hashUint64 returns XXH64 of the 8-byte little-endian form of x, without
// building the byte slice; hashUint64(x, s) == hash64(le64(x), s).
func hashUint64(x, seed uint64) uint64 {
	h := seed + xxPrime5 + 8
	h ^= xxRound(0, x)
	h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	return xxAvalanche(h)
}

// hashString returns XXH64 of the bytes of s without copying them.
func hashString(s string, seed uint64) uint64 {
	return hash64(unsafe.Slice(unsafe.StringData(s), len(s)), seed)
}

// Arithmetic modulo the Mersenne prime 2^61−1, used for the k-wise
// independent polynomial hash families of CountMin and AMS.

const mersenne61 = (1 << 61) - 1

// mod61 reduces x modulo 2^61−1.
func mod61(x uint64) uint64 {
	x = (x & mersenne61) + (x >> 61)
	if x >= mersenne61 {
		x -= mersenne61
	}
	return x
}

// mulAdd61 returns (a·x + b) mod 2^61−1 for a, x, b < 2^61−1.
func mulAdd61(a, x, b uint64) uint64 {
	hi, lo := bits.Mul64(a, x)
	// a·x < 2^122, so hi < 2^58; split at bit 61.
	r := (lo & mersenne61) + (lo>>61 | hi<<3) + b
	// r < 3·2^61; two conditional subtractions finish the reduction.
	r = (r & mersenne61) + (r >> 61)
	if r >= mersenne61 {
		r -= mersenne61
	}
	return r
}

// fastRange maps a uniform 64-bit value to [0, n) by multiply-shift
// (Lemire's fast alternative to modulo reduction).
func fastRange(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}

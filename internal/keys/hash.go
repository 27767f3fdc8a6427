// Package keys hashes record keys to key groups. The hash must be the same in
// every process and every version, because savepoints record state by key
// group: it is therefore computed from the key's value, never from memory
// addresses or a per-process seed.
package keys

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// mix64 is the finaliser of MurmurHash3: a bijection that spreads every input
// bit over the output.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// HashUint64 hashes an integer key.
func HashUint64(v uint64) uint64 { return mix64(v) }

// HashString hashes a string key.
func HashString(s string) uint64 { return xxhash.Sum64String(s) }

// HashBytes hashes a byte-slice key.
func HashBytes(b []byte) uint64 { return xxhash.Sum64(b) }

// HasherFor returns the hash function for keys of type K. Integer, float,
// bool and string keys (and types defined on them) hash directly; other
// comparable types (structs, arrays) hash a canonical encoding of their
// fields. Pointer, channel and interface keys are refused: their identity is
// not stable across processes.
func HasherFor[K comparable]() (func(K) uint64, error) {
	t := reflect.TypeFor[K]()
	// The kind is checked here, so the conversions below read the key as
	// the type it is.
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return func(k K) uint64 { return mix64(*(*uint64)(unsafe.Pointer(&k))) }, nil
	case reflect.Int32:
		return func(k K) uint64 { return mix64(uint64(*(*int32)(unsafe.Pointer(&k)))) }, nil
	case reflect.Uint32:
		return func(k K) uint64 { return mix64(uint64(*(*uint32)(unsafe.Pointer(&k)))) }, nil
	case reflect.Int16:
		return func(k K) uint64 { return mix64(uint64(*(*int16)(unsafe.Pointer(&k)))) }, nil
	case reflect.Uint16:
		return func(k K) uint64 { return mix64(uint64(*(*uint16)(unsafe.Pointer(&k)))) }, nil
	case reflect.Int8:
		return func(k K) uint64 { return mix64(uint64(*(*int8)(unsafe.Pointer(&k)))) }, nil
	case reflect.Uint8, reflect.Bool:
		return func(k K) uint64 { return mix64(uint64(*(*uint8)(unsafe.Pointer(&k)))) }, nil
	case reflect.String:
		return func(k K) uint64 { return xxhash.Sum64String(*(*string)(unsafe.Pointer(&k))) }, nil
	}
	enc, err := encoderFor(t)
	if err != nil {
		return nil, err
	}
	return func(k K) uint64 {
		var buf [64]byte
		return xxhash.Sum64(enc(buf[:0], reflect.ValueOf(k)))
	}, nil
}

type encoder func(dst []byte, v reflect.Value) []byte

// encoderFor builds a canonical encoder for a comparable type.
func encoderFor(t reflect.Type) (encoder, error) {
	switch t.Kind() {
	case reflect.Bool:
		return func(d []byte, v reflect.Value) []byte {
			if v.Bool() {
				return append(d, 1)
			}
			return append(d, 0)
		}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(d []byte, v reflect.Value) []byte { return binary.LittleEndian.AppendUint64(d, uint64(v.Int())) }, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(d []byte, v reflect.Value) []byte { return binary.LittleEndian.AppendUint64(d, v.Uint()) }, nil
	case reflect.Float32, reflect.Float64:
		return func(d []byte, v reflect.Value) []byte {
			f := v.Float()
			if f == 0 {
				f = 0 // -0 and +0 are equal keys
			}
			return binary.LittleEndian.AppendUint64(d, math.Float64bits(f))
		}, nil
	case reflect.String:
		return func(d []byte, v reflect.Value) []byte {
			s := v.String()
			d = binary.AppendUvarint(d, uint64(len(s)))
			return append(d, s...)
		}, nil
	case reflect.Array:
		elem, err := encoderFor(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(d []byte, v reflect.Value) []byte {
			for i := 0; i < v.Len(); i++ {
				d = elem(d, v.Index(i))
			}
			return d
		}, nil
	case reflect.Struct:
		fields := make([]encoder, t.NumField())
		for i := range fields {
			f, err := encoderFor(t.Field(i).Type)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", t.Field(i).Name, err)
			}
			fields[i] = f
		}
		return func(d []byte, v reflect.Value) []byte {
			for i, f := range fields {
				d = f(d, v.Field(i))
			}
			return d
		}, nil
	}
	return nil, fmt.Errorf("keys: a key of type %s cannot be hashed stably across processes; key by a value made of numbers, strings, bools, arrays and structs of them", t)
}

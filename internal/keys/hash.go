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

// HashString hashes a string key.
func HashString(s string) uint64 { return xxhash.Sum64String(s) }

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
	prog, err := compile(nil, t, 0)
	if err != nil {
		return nil, err
	}
	return func(k K) uint64 {
		var buf [128]byte
		return xxhash.Sum64(prog.encode(buf[:0], unsafe.Pointer(&k)))
	}, nil
}

// opKind is what one step of an encoding program reads.
type opKind uint8

const (
	opBool opKind = iota
	opInt8
	opInt16
	opInt32
	opInt64
	opUint8
	opUint16
	opUint32
	opUint64
	opFloat32
	opFloat64
	opString
)

// op reads one scalar field at an offset of the key.
type op struct {
	kind opKind
	off  uintptr
}

// program is the canonical encoding of a comparable type, flattened to its
// scalar fields in order: bools as one byte, integers as eight bytes
// little-endian (signed ones sign-extended), floats as the eight bytes of
// their float64 bits (with -0 taken as +0), strings as a uvarint length and
// their bytes. It reads the key in place, so hashing allocates nothing.
type program []op

// compile appends the steps that encode a value of type t at offset off.
func compile(p program, t reflect.Type, off uintptr) (program, error) {
	k := t.Kind()
	switch k {
	case reflect.Bool:
		return append(p, op{opBool, off}), nil
	case reflect.Int8:
		return append(p, op{opInt8, off}), nil
	case reflect.Int16:
		return append(p, op{opInt16, off}), nil
	case reflect.Int32:
		return append(p, op{opInt32, off}), nil
	case reflect.Int, reflect.Int64:
		return append(p, op{opInt64, off}), nil
	case reflect.Uint8:
		return append(p, op{opUint8, off}), nil
	case reflect.Uint16:
		return append(p, op{opUint16, off}), nil
	case reflect.Uint32:
		return append(p, op{opUint32, off}), nil
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return append(p, op{opUint64, off}), nil
	case reflect.Float32:
		return append(p, op{opFloat32, off}), nil
	case reflect.Float64:
		return append(p, op{opFloat64, off}), nil
	case reflect.String:
		return append(p, op{opString, off}), nil
	case reflect.Array:
		var err error
		for i := 0; i < t.Len(); i++ {
			if p, err = compile(p, t.Elem(), off+uintptr(i)*t.Elem().Size()); err != nil {
				return nil, err
			}
		}
		return p, nil
	case reflect.Struct:
		var err error
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if p, err = compile(p, f.Type, off+f.Offset); err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		return p, nil
	}
	return nil, fmt.Errorf("keys: a key of type %s cannot be hashed stably across processes; key by a value made of numbers, strings, bools, arrays and structs of them", t)
}

// encode appends the encoding of the value at base.
func (p program) encode(d []byte, base unsafe.Pointer) []byte {
	for _, o := range p {
		at := unsafe.Add(base, o.off)
		switch o.kind {
		case opBool:
			if *(*bool)(at) {
				d = append(d, 1)
			} else {
				d = append(d, 0)
			}
		case opInt8:
			d = binary.LittleEndian.AppendUint64(d, uint64(*(*int8)(at)))
		case opInt16:
			d = binary.LittleEndian.AppendUint64(d, uint64(*(*int16)(at)))
		case opInt32:
			d = binary.LittleEndian.AppendUint64(d, uint64(*(*int32)(at)))
		case opInt64:
			d = binary.LittleEndian.AppendUint64(d, uint64(*(*int64)(at)))
		case opUint8:
			d = binary.LittleEndian.AppendUint64(d, uint64(*(*uint8)(at)))
		case opUint16:
			d = binary.LittleEndian.AppendUint64(d, uint64(*(*uint16)(at)))
		case opUint32:
			d = binary.LittleEndian.AppendUint64(d, uint64(*(*uint32)(at)))
		case opUint64:
			d = binary.LittleEndian.AppendUint64(d, *(*uint64)(at))
		case opFloat32, opFloat64:
			var f float64
			if o.kind == opFloat32 {
				f = float64(*(*float32)(at))
			} else {
				f = *(*float64)(at)
			}
			if f == 0 {
				f = 0 // -0 and +0 are equal keys
			}
			d = binary.LittleEndian.AppendUint64(d, math.Float64bits(f))
		case opString:
			s := *(*string)(at)
			d = binary.AppendUvarint(d, uint64(len(s)))
			d = append(d, s...)
		}
	}
	return d
}

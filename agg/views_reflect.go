package agg

import (
	"cmp"
	"encoding/binary"
	"math"
	"reflect"
	"unsafe"
)

// orderedKeyOf encodes a value of a defined ordered type (type Price int64)
// by its kind, as OrderedKey does its underlying type.
func orderedKeyOf[V cmp.Ordered](v V) string {
	r := reflect.ValueOf(v)
	var b [8]byte
	switch r.Kind() {
	case reflect.String:
		return r.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		binary.BigEndian.PutUint64(b[:], uint64(r.Int())^1<<63)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		binary.BigEndian.PutUint64(b[:], r.Uint())
	case reflect.Float32, reflect.Float64:
		binary.BigEndian.PutUint64(b[:], floatKey(r.Float()))
	}
	return string(b[:])
}

// decodeOrderedKey is the inverse of OrderedKey.
func decodeOrderedKey[V cmp.Ordered](s string) V {
	var v V
	r := reflect.ValueOf(&v).Elem()
	switch r.Kind() {
	case reflect.String:
		r.SetString(s)
		return v
	}
	u := binary.BigEndian.Uint64([]byte(s))
	switch r.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		r.SetInt(int64(u ^ 1<<63))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		r.SetUint(u)
	case reflect.Float32, reflect.Float64:
		if u&(1<<63) != 0 {
			u &^= 1 << 63
		} else {
			u = ^u
		}
		r.SetFloat(math.Float64frombits(u))
	}
	return v
}

// intKind says whether V fits an int64 view in order (signed integers, and
// unsigned ones of up to 32 bits) and whether it is signed; 0 if it does
// not fit.
func intKind[V any]() int {
	switch reflect.TypeFor[V]().Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return signedInt
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return unsignedInt
	}
	return 0
}

const (
	signedInt = 1 + iota
	unsignedInt
)

// intOf returns the integer value of v, of an intKind kind, reading it in
// place.
func intOf[V any](v V, kind int) int64 {
	p := unsafe.Pointer(&v)
	switch unsafe.Sizeof(v) {
	case 1:
		if kind == signedInt {
			return int64(*(*int8)(p))
		}
		return int64(*(*uint8)(p))
	case 2:
		if kind == signedInt {
			return int64(*(*int16)(p))
		}
		return int64(*(*uint16)(p))
	case 4:
		if kind == signedInt {
			return int64(*(*int32)(p))
		}
		return int64(*(*uint32)(p))
	}
	return *(*int64)(p)
}

// fromInt is the inverse of intOf.
func fromInt[V any](i int64) V {
	var v V
	p := unsafe.Pointer(&v)
	switch unsafe.Sizeof(v) {
	case 1:
		*(*int8)(p) = int8(i)
	case 2:
		*(*int16)(p) = int16(i)
	case 4:
		*(*int32)(p) = int32(i)
	default:
		*(*int64)(p) = i
	}
	return v
}

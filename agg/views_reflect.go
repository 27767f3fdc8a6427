package agg

import (
	"cmp"
	"encoding/binary"
	"math"
	"reflect"
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

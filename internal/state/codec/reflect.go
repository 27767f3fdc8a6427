package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// coder encodes and decodes the value of one type at a pointer. A tree of
// coders is built once per type by reflection; encoding then reads memory
// through unsafe pointers, so no reflect.Value is made per primitive.
type coder struct {
	enc func(dst []byte, p unsafe.Pointer) []byte
	dec func(src []byte, p unsafe.Pointer) (int, error)
}

// coderBuilder builds coders, sharing one coder per type so that recursive
// types (a struct holding a pointer to itself) terminate.
type coderBuilder struct {
	done map[reflect.Type]*coder
}

// build returns the coder of t. path names where t was found, for errors.
func (b *coderBuilder) build(t reflect.Type, path string) (*coder, error) {
	if c, ok := b.done[t]; ok {
		return c, nil
	}
	c := &coder{}
	b.done[t] = c
	if t == timeType {
		c.enc = func(dst []byte, p unsafe.Pointer) []byte { return appendTime(dst, *(*time.Time)(p)) }
		c.dec = func(src []byte, p unsafe.Pointer) (n int, err error) {
			*(*time.Time)(p), n, err = decodeTime(src)
			return n, err
		}
		return c, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		c.enc = func(dst []byte, p unsafe.Pointer) []byte { return appendBool(dst, *(*bool)(p)) }
		c.dec = func(src []byte, p unsafe.Pointer) (n int, err error) {
			*(*bool)(p), n, err = decodeBool(src)
			return n, err
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.integer(c, t)
	case reflect.Float32:
		c.enc = func(dst []byte, p unsafe.Pointer) []byte { return appendFloat32(dst, *(*float32)(p)) }
		c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
			if len(src) < 4 {
				return 0, Truncated("float32")
			}
			*(*float32)(p) = decodeFloat32(src)
			return 4, nil
		}
	case reflect.Float64:
		c.enc = func(dst []byte, p unsafe.Pointer) []byte { return appendFloat64(dst, *(*float64)(p)) }
		c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
			if len(src) < 8 {
				return 0, Truncated("float64")
			}
			*(*float64)(p) = decodeFloat64(src)
			return 8, nil
		}
	case reflect.Complex64:
		c.enc = func(dst []byte, p unsafe.Pointer) []byte {
			v := *(*complex64)(p)
			return appendFloat32(appendFloat32(dst, real(v)), imag(v))
		}
		c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
			if len(src) < 8 {
				return 0, Truncated("complex64")
			}
			*(*complex64)(p) = complex(decodeFloat32(src), decodeFloat32(src[4:]))
			return 8, nil
		}
	case reflect.Complex128:
		c.enc = func(dst []byte, p unsafe.Pointer) []byte {
			v := *(*complex128)(p)
			return appendFloat64(appendFloat64(dst, real(v)), imag(v))
		}
		c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
			if len(src) < 16 {
				return 0, Truncated("complex128")
			}
			*(*complex128)(p) = complex(decodeFloat64(src), decodeFloat64(src[8:]))
			return 16, nil
		}
	case reflect.String:
		c.enc = func(dst []byte, p unsafe.Pointer) []byte { return appendString(dst, *(*string)(p)) }
		c.dec = func(src []byte, p unsafe.Pointer) (n int, err error) {
			*(*string)(p), n, err = decodeString(src)
			return n, err
		}
	case reflect.Struct:
		return c, b.structure(c, t, path)
	case reflect.Array:
		return c, b.array(c, t, path)
	case reflect.Slice:
		return c, b.slice(c, t, path)
	case reflect.Pointer:
		return c, b.pointer(c, t, path)
	case reflect.Map:
		return c, b.mapping(c, t, path)
	default:
		return nil, fmt.Errorf("state: no default codec for %s: %s has kind %s; use JSONCodec or a Codec of your own", path, t, t.Kind())
	}
	return c, nil
}

// integer fills c for an integer kind of any size.
func (b *coderBuilder) integer(c *coder, t reflect.Type) {
	size := int(t.Size())
	signed := false
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		signed = true
	}
	var flip uint64
	if signed {
		flip = 1 << (8*size - 1)
	}
	name := t.String()
	switch size {
	case 1:
		c.enc = func(dst []byte, p unsafe.Pointer) []byte { return append(dst, *(*uint8)(p)^uint8(flip)) }
		c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
			if len(src) < 1 {
				return 0, Truncated(name)
			}
			*(*uint8)(p) = src[0] ^ uint8(flip)
			return 1, nil
		}
	case 2:
		c.enc = func(dst []byte, p unsafe.Pointer) []byte {
			return binary.BigEndian.AppendUint16(dst, *(*uint16)(p)^uint16(flip))
		}
		c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
			if len(src) < 2 {
				return 0, Truncated(name)
			}
			*(*uint16)(p) = binary.BigEndian.Uint16(src) ^ uint16(flip)
			return 2, nil
		}
	case 4:
		c.enc = func(dst []byte, p unsafe.Pointer) []byte {
			return binary.BigEndian.AppendUint32(dst, *(*uint32)(p)^uint32(flip))
		}
		c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
			if len(src) < 4 {
				return 0, Truncated(name)
			}
			*(*uint32)(p) = binary.BigEndian.Uint32(src) ^ uint32(flip)
			return 4, nil
		}
	default:
		c.enc = func(dst []byte, p unsafe.Pointer) []byte {
			return binary.BigEndian.AppendUint64(dst, *(*uint64)(p)^flip)
		}
		c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
			if len(src) < 8 {
				return 0, Truncated(name)
			}
			*(*uint64)(p) = binary.BigEndian.Uint64(src) ^ flip
			return 8, nil
		}
	}
}

type fieldCoder struct {
	off uintptr
	c   *coder
}

func (b *coderBuilder) structure(c *coder, t reflect.Type, path string) error {
	var fields []fieldCoder
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Size() == 0 {
			continue
		}
		fc, err := b.build(f.Type, path+"."+f.Name)
		if err != nil {
			return err
		}
		fields = append(fields, fieldCoder{f.Offset, fc})
	}
	c.enc = func(dst []byte, p unsafe.Pointer) []byte {
		for _, f := range fields {
			dst = f.c.enc(dst, unsafe.Add(p, f.off))
		}
		return dst
	}
	c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
		n := 0
		for _, f := range fields {
			k, err := f.c.dec(src[n:], unsafe.Add(p, f.off))
			if err != nil {
				return 0, err
			}
			n += k
		}
		return n, nil
	}
	return nil
}

func (b *coderBuilder) array(c *coder, t reflect.Type, path string) error {
	if t.Elem().Kind() == reflect.Uint8 {
		// The bytes as they are, which is what encoding them one by one
		// gives, in one copy.
		length, name := t.Len(), t.String()
		c.enc = func(dst []byte, p unsafe.Pointer) []byte { return append(dst, unsafe.Slice((*byte)(p), length)...) }
		c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
			if len(src) < length {
				return 0, Truncated(name)
			}
			copy(unsafe.Slice((*byte)(p), length), src)
			return length, nil
		}
		return nil
	}
	ec, err := b.build(t.Elem(), path+"[]")
	if err != nil {
		return err
	}
	size, length := t.Elem().Size(), t.Len()
	c.enc = func(dst []byte, p unsafe.Pointer) []byte {
		for i := range length {
			dst = ec.enc(dst, unsafe.Add(p, uintptr(i)*size))
		}
		return dst
	}
	c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
		n := 0
		for i := range length {
			k, err := ec.dec(src[n:], unsafe.Add(p, uintptr(i)*size))
			if err != nil {
				return 0, err
			}
			n += k
		}
		return n, nil
	}
	return nil
}

// sliceHeader is the memory layout of a Go slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func (b *coderBuilder) slice(c *coder, t reflect.Type, path string) error {
	if t.Elem().Kind() == reflect.Uint8 {
		c.enc = func(dst []byte, p unsafe.Pointer) []byte { return appendBytes(dst, *(*[]byte)(p)) }
		c.dec = func(src []byte, p unsafe.Pointer) (n int, err error) {
			*(*[]byte)(p), n, err = decodeBytes(src)
			return n, err
		}
		return nil
	}
	ec, err := b.build(t.Elem(), path+"[]")
	if err != nil {
		return err
	}
	size := t.Elem().Size()
	c.enc = func(dst []byte, p unsafe.Pointer) []byte {
		h := (*sliceHeader)(p)
		dst = binary.AppendUvarint(dst, uint64(h.len))
		for i := range h.len {
			dst = ec.enc(dst, unsafe.Add(h.data, uintptr(i)*size))
		}
		return dst
	}
	c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
		l, n := binary.Uvarint(src)
		// Every element of non-zero size encodes to at least one byte.
		if n <= 0 || (size > 0 && l > uint64(len(src)-n)) {
			return 0, Truncated(t.String())
		}
		s := reflect.NewAt(t, p).Elem()
		if l == 0 {
			s.SetZero()
			return n, nil
		}
		s.Set(reflect.MakeSlice(t, int(l), int(l)))
		data := s.UnsafePointer()
		for i := range int(l) {
			k, err := ec.dec(src[n:], unsafe.Add(data, uintptr(i)*size))
			if err != nil {
				return 0, err
			}
			n += k
		}
		return n, nil
	}
	return nil
}

func (b *coderBuilder) pointer(c *coder, t reflect.Type, path string) error {
	ec, err := b.build(t.Elem(), "(*"+path+")")
	if err != nil {
		return err
	}
	c.enc = func(dst []byte, p unsafe.Pointer) []byte {
		e := *(*unsafe.Pointer)(p)
		if e == nil {
			return append(dst, 0)
		}
		return ec.enc(append(dst, 1), e)
	}
	c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
		if len(src) < 1 {
			return 0, Truncated(t.String())
		}
		switch src[0] {
		case 0:
			*(*unsafe.Pointer)(p) = nil
			return 1, nil
		case 1:
			e := reflect.New(t.Elem()).UnsafePointer()
			k, err := ec.dec(src[1:], e)
			if err != nil {
				return 0, err
			}
			*(*unsafe.Pointer)(p) = e
			return 1 + k, nil
		}
		return 0, fmt.Errorf("state: decoding %s: invalid nil flag %#x", t, src[0])
	}
	return nil
}

func (b *coderBuilder) mapping(c *coder, t reflect.Type, path string) error {
	kc, err := b.build(t.Key(), path+"{key}")
	if err != nil {
		return err
	}
	vc, err := b.build(t.Elem(), path+"{value}")
	if err != nil {
		return err
	}
	type entry struct{ k, v []byte }
	c.enc = func(dst []byte, p unsafe.Pointer) []byte {
		m := reflect.NewAt(t, p).Elem()
		dst = binary.AppendUvarint(dst, uint64(m.Len()))
		if m.Len() == 0 {
			return dst
		}
		kv, vv := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		kp, vp := kv.Addr().UnsafePointer(), vv.Addr().UnsafePointer()
		entries := make([]entry, 0, m.Len())
		var buf []byte
		for it := m.MapRange(); it.Next(); {
			kv.SetIterKey(it)
			vv.SetIterValue(it)
			start := len(buf)
			buf = kc.enc(buf, kp)
			mid := len(buf)
			buf = vc.enc(buf, vp)
			entries = append(entries, entry{buf[start:mid:mid], buf[mid:len(buf):len(buf)]})
		}
		slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
		for _, e := range entries {
			dst = append(append(dst, e.k...), e.v...)
		}
		return dst
	}
	c.dec = func(src []byte, p unsafe.Pointer) (int, error) {
		l, n := binary.Uvarint(src)
		if n <= 0 || l > uint64(len(src)-n) {
			return 0, Truncated(t.String())
		}
		m := reflect.NewAt(t, p).Elem()
		if l == 0 {
			m.SetZero()
			return n, nil
		}
		mv := reflect.MakeMapWithSize(t, int(l))
		for range l {
			kv, vv := reflect.New(t.Key()), reflect.New(t.Elem())
			k, err := kc.dec(src[n:], kv.UnsafePointer())
			if err != nil {
				return 0, err
			}
			n += k
			if k, err = vc.dec(src[n:], vv.UnsafePointer()); err != nil {
				return 0, err
			}
			n += k
			mv.SetMapIndex(kv.Elem(), vv.Elem())
		}
		m.Set(mv)
		return n, nil
	}
	return nil
}

// reflectCodec is the Codec of a composite type, built from a coder tree. A
// value passed to a coder through an unsafe pointer would escape to the heap,
// so Append and Decode work on a pooled *T instead: no allocation per call
// beyond what the decoded value itself needs.
type reflectCodec[T any] struct {
	name string
	c    *coder
	pool *sync.Pool
}

func newReflectCodec[T any](t reflect.Type, c *coder) reflectCodec[T] {
	return reflectCodec[T]{
		name: t.String(),
		c:    c,
		pool: &sync.Pool{New: func() any { return new(T) }},
	}
}

// Append appends the encoding of v to dst.
func (r reflectCodec[T]) Append(dst []byte, v T) []byte {
	p := r.pool.Get().(*T)
	*p = v
	dst = r.c.enc(dst, unsafe.Pointer(p))
	var zero T
	*p = zero
	r.pool.Put(p)
	return dst
}

// Decode decodes one value from the start of src.
func (r reflectCodec[T]) Decode(src []byte) (v T, n int, err error) {
	p := r.pool.Get().(*T)
	n, err = r.c.dec(src, unsafe.Pointer(p))
	v = *p
	var zero T
	*p = zero
	r.pool.Put(p)
	if err != nil {
		return zero, 0, fmt.Errorf("%w (in %s)", err, r.name)
	}
	return v, n, nil
}

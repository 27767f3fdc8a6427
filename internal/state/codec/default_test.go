package codec

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// roundTrip encodes v after a prefix, checks the decoder uses exactly the
// encoding, and returns the decoded value.
func roundTrip[T any](t *testing.T, c Codec[T], v T) T {
	t.Helper()
	prefix := []byte("pre")
	enc := c.Append(slices.Clone(prefix), v)
	if !bytes.HasPrefix(enc, prefix) {
		t.Fatalf("%T: Append overwrote dst", c)
	}
	body := enc[len(prefix):]
	got, n, err := c.Decode(append(slices.Clone(body), "trailing"...))
	if err != nil {
		t.Fatalf("%T: decode %v: %v", c, v, err)
	}
	if n != len(body) {
		t.Fatalf("%T: decode of %v used %d bytes, encoding has %d", c, v, n, len(body))
	}
	// No strict prefix of an encoding decodes: encodings are self-delimiting.
	for i := range body {
		if _, _, err := c.Decode(body[:i]); err == nil {
			t.Fatalf("%T: the first %d of %d bytes of the encoding of %v decode", c, i, len(body), v)
		}
	}
	return got
}

// void is an empty struct, as the void namespace of state is.
type void struct{}

func mustCodec[T any](t testing.TB) Codec[T] {
	t.Helper()
	c, err := Default[T]()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func checkRoundTrips[T any](t *testing.T, vs ...T) {
	t.Helper()
	c := mustCodec[T](t)
	for _, v := range vs {
		if got := roundTrip(t, c, v); !reflect.DeepEqual(got, v) {
			t.Errorf("%T: round trip of %#v gave %#v", c, v, got)
		}
	}
}

// checkOrder checks that the encodings of vs, which are in increasing order,
// are in increasing byte order too.
func checkOrder[T any](t *testing.T, vs ...T) {
	t.Helper()
	c := mustCodec[T](t)
	for i := 1; i < len(vs); i++ {
		a, b := c.Append(nil, vs[i-1]), c.Append(nil, vs[i])
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("%T: %v encodes as %x, not before %v as %x", c, vs[i-1], a, vs[i], b)
		}
	}
}

type userID int64

type named string

func TestDefaultCodecPrimitives(t *testing.T) {
	checkRoundTrips(t, false, true)
	checkRoundTrips(t, int8(math.MinInt8), -1, 0, 1, math.MaxInt8)
	checkRoundTrips(t, int16(math.MinInt16), -1, 0, math.MaxInt16)
	checkRoundTrips(t, int32(math.MinInt32), -1, 0, math.MaxInt32)
	checkRoundTrips(t, int64(math.MinInt64), -1, 0, math.MaxInt64)
	checkRoundTrips(t, math.MinInt, -1, 0, math.MaxInt)
	checkRoundTrips(t, uint8(0), math.MaxUint8)
	checkRoundTrips(t, uint16(0), math.MaxUint16)
	checkRoundTrips(t, uint32(0), math.MaxUint32)
	checkRoundTrips(t, uint64(0), math.MaxUint64)
	checkRoundTrips(t, uint(0), math.MaxUint)
	checkRoundTrips(t, uintptr(7))
	checkRoundTrips(t, float32(-1.5), 0, float32(math.Inf(1)), math.SmallestNonzeroFloat32)
	checkRoundTrips(t, -1.5, 0, math.Inf(-1), math.MaxFloat64, math.Copysign(0, -1))
	checkRoundTrips(t, "", "a", "a\x00", "\x00\x00\xff", "héllo", strings.Repeat("x\x00", 100))
	checkRoundTrips(t, []byte(nil), []byte("a\x00b"))
	checkRoundTrips(t, time.Time{}, time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC), time.Unix(-1e10, 5).UTC())
	checkRoundTrips(t, time.Duration(0), -time.Second, time.Duration(math.MaxInt64))
	checkRoundTrips(t, void{})
	checkRoundTrips(t, userID(-5), userID(5))
	checkRoundTrips(t, named("x\x00y"))
	if n := len(mustCodec[void](t).Append(nil, void{})); n != 0 {
		t.Errorf("void encodes in %d bytes, want 0", n)
	}
}

func TestDefaultCodecOrder(t *testing.T) {
	checkOrder(t, false, true)
	checkOrder(t, int8(math.MinInt8), -1, 0, 1, math.MaxInt8)
	checkOrder(t, int16(math.MinInt16), -300, -1, 0, 1, 300, math.MaxInt16)
	checkOrder(t, int32(math.MinInt32), -1, 0, 1, math.MaxInt32)
	checkOrder(t, int64(math.MinInt64), -1<<40, -1, 0, 1, 1<<40, math.MaxInt64)
	checkOrder(t, userID(-2), userID(3))
	checkOrder(t, uint64(0), 1, 255, 256, math.MaxUint64)
	checkOrder(t, math.Inf(-1), -1e300, -1, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 1, math.Inf(1))
	checkOrder(t, float32(-2), -1, 0, 1, 2)
	checkOrder(t, "", "\x00", "\x00\x00", "\x00\x01", "a", "a\x00", "a\x00b", "a\x01", "ab", "b", "\xff")
	checkOrder(t, time.Unix(-100, 0), time.Unix(0, 0), time.Unix(0, 1), time.Unix(1, 0))
	type composite struct {
		A string
		B int32
	}
	checkOrder(t, composite{"a", 5}, composite{"a", 6}, composite{"a\x00", -9}, composite{"b", -9})
	checkOrder(t, [2]int16{-1, 5}, [2]int16{0, -5}, [2]int16{0, 4})
}

type node struct {
	V    int
	Next *node
}

type everything struct {
	B      bool
	I      int
	I8     int8
	U16    uint16
	U32    uint32
	F32    float32
	C64    complex64
	C128   complex128
	S      string
	Bs     []byte
	T      time.Time
	D      time.Duration
	Void   void
	Arr    [3]uint8
	Sl     []string
	Nested []struct{ X, Y int32 }
	M      map[string][]int
	P      *int
	Nil    *int
	List   *node
	Empty  struct{}
	_      int
	lower  float64
}

func TestDefaultCodecComposites(t *testing.T) {
	seven := 7
	v := everything{
		B: true, I: -3, I8: -8, U16: 16, U32: 32, F32: 3.5, C64: complex(1, -2), C128: complex(-3, 4),
		S: "s\x00", Bs: []byte{0, 1}, T: time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC), D: time.Minute,
		Arr: [3]uint8{1, 2, 3}, Sl: []string{"a", ""}, Nested: []struct{ X, Y int32 }{{1, 2}, {-3, 4}},
		M: map[string][]int{"b": {1}, "a": nil, "c": {2, 3}}, P: &seven,
		List: &node{1, &node{2, nil}}, lower: 2.5,
	}
	checkRoundTrips(t, v, everything{})
	checkRoundTrips(t, []int64{1, -2}, nil)
	checkRoundTrips(t, map[int32]string{1: "a", -1: "b"}, nil)
	checkRoundTrips(t, &node{1, &node{2, &node{3, nil}}})
	checkRoundTrips(t, [0]int{})
	checkRoundTrips(t, [2]struct{}{})
	checkRoundTrips(t, [5]byte{1, 2, 0, 255, 7}, [5]byte{})

	// A byte array encodes as its bytes (the format of checkpoints taken
	// before it was copied whole), and a short one is an error.
	type tag uint8
	arr := mustCodec[[4]tag](t)
	if enc := arr.Append([]byte{9}, [4]tag{1, 2, 3, 250}); !bytes.Equal(enc, []byte{9, 1, 2, 3, 250}) {
		t.Fatalf("[4]tag encodes as %v", enc)
	}
	if _, _, err := arr.Decode([]byte{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "[4]") {
		t.Fatalf("3 bytes decoded as a [4]tag: %v", err)
	}

	// Maps encode deterministically whatever their iteration order.
	c := mustCodec[map[string]int](t)
	m := map[string]int{}
	for i := range 50 {
		m[strings.Repeat("k", i)] = i
	}
	first := c.Append(nil, m)
	for range 10 {
		if !bytes.Equal(c.Append(nil, m), first) {
			t.Fatal("a map encoded differently twice")
		}
	}
}

func TestDefaultCodecErrors(t *testing.T) {
	if _, err := Default[any](); err == nil {
		t.Error("Default[any] succeeded")
	}
	type withFunc struct {
		A int
		F func()
	}
	_, err := Default[[]withFunc]()
	if err == nil || !strings.Contains(err.Error(), ".F") || !strings.HasPrefix(err.Error(), "state: ") {
		t.Errorf("Default of a struct with a func field: %v", err)
	}
	if _, err := Default[chan int](); err == nil {
		t.Error("Default[chan int] succeeded")
	}

	// Bad input is an error, never a panic.
	type rec struct {
		A []string
		B map[int8]*int
		C string
	}
	c := mustCodec[rec](t)
	five := 5
	enc := c.Append(nil, rec{A: []string{"x", "y"}, B: map[int8]*int{1: &five}, C: "z"})
	for i := range enc {
		if _, _, err := c.Decode(enc[:i]); err == nil {
			t.Errorf("decoding %d of %d bytes succeeded", i, len(enc))
		}
	}
	if _, _, err := mustCodec[[]int64](t).Decode([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}); err == nil {
		t.Error("a huge slice length was accepted")
	}
	if _, _, err := mustCodec[bool](t).Decode([]byte{2}); err == nil {
		t.Error("bool 2 was accepted")
	}
	if _, _, err := mustCodec[string](t).Decode([]byte{'a', 0, 7}); err == nil {
		t.Error("an invalid string escape was accepted")
	}
}

func TestDefaultCodecIsCached(t *testing.T) {
	a, b := mustCodec[everything](t), mustCodec[everything](t)
	if reflect.ValueOf(a).Interface() != reflect.ValueOf(b).Interface() {
		t.Error("Default built the codec of a type twice")
	}
}

func TestDefaultCodecAllocations(t *testing.T) {
	type small struct {
		ID    int64
		Price float64
		Time  time.Time
	}
	c := mustCodec[small](t)
	v := small{1, 2, time.Unix(3, 0).UTC()}
	buf := c.Append(nil, v)
	if n := testing.AllocsPerRun(100, func() { buf = c.Append(buf[:0], v) }); n != 0 {
		t.Errorf("Append of a flat struct allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { v, _, _ = c.Decode(buf) }); n != 0 {
		t.Errorf("Decode of a flat struct allocates %v times", n)
	}
	ic := mustCodec[int64](t)
	if n := testing.AllocsPerRun(100, func() { buf = ic.Append(buf[:0], 5); _, _, _ = ic.Decode(buf) }); n != 0 {
		t.Errorf("int64 codec allocates %v times", n)
	}
}

func TestListCodec(t *testing.T) {
	lc := List(mustCodec[string](t))
	for _, l := range [][]string{nil, {"a"}, {"", "b\x00", "c"}} {
		if got := roundTrip(t, lc, l); !slices.Equal(got, l) {
			t.Errorf("list round trip of %q gave %q", l, got)
		}
	}
}

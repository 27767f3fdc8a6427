package sketch

import (
	"encoding/binary"
	"math/big"
	"testing"
)

func TestXXH64Vectors(t *testing.T) {
	cases := []struct {
		in   string
		seed uint64
		want uint64
	}{
		{"", 0, 0xef46db3751d8e999},
		{"a", 0, 0xd24ec4f1a98c6e5b},
		{"abc", 0, 0x44bc2cf5ad770999},
		{"Nobody inspects the spammish repetition", 0, 0xfbcea83c8a378bf1},
	}
	for _, c := range cases {
		if got := hash64([]byte(c.in), c.seed); got != c.want {
			t.Errorf("XXH64(%q, %d) = %#x, want %#x", c.in, c.seed, got, c.want)
		}
		if got := hashString(c.in, c.seed); got != c.want {
			t.Errorf("hashString(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
	var b [8]byte
	r := newSplitMix64(1)
	for i := 0; i < 1000; i++ {
		x, seed := r.next(), r.next()
		binary.LittleEndian.PutUint64(b[:], x)
		if hashUint64(x, seed) != hash64(b[:], seed) {
			t.Fatalf("hashUint64(%#x) differs from hash64 of its bytes", x)
		}
	}
}

func TestMulAdd61(t *testing.T) {
	p := big.NewInt(mersenne61)
	r := newSplitMix64(2)
	edge := []uint64{0, 1, 2, mersenne61 - 1, mersenne61 - 2}
	for i := 0; i < 5000; i++ {
		a, x, c := mod61(r.next()), mod61(r.next()), mod61(r.next())
		if i < len(edge)*len(edge) {
			a, x = edge[i%len(edge)], edge[i/len(edge)]
			c = mersenne61 - 1
		}
		want := new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(x))
		want.Add(want, new(big.Int).SetUint64(c)).Mod(want, p)
		if got := mulAdd61(a, x, c); got != want.Uint64() {
			t.Fatalf("mulAdd61(%d, %d, %d) = %d, want %d", a, x, c, got, want.Uint64())
		}
	}
	for i := 0; i < 5000; i++ {
		var c [4]uint64
		for j := range c {
			c[j] = mod61(r.next())
		}
		x := mod61(r.next())
		if i < 4 {
			x, c = mersenne61-1, [4]uint64{mersenne61 - 1, mersenne61 - 1, mersenne61 - 1, mersenne61 - 1}
		}
		bx := new(big.Int).SetUint64(x)
		want := new(big.Int)
		for j := 3; j >= 0; j-- {
			want.Mul(want, bx).Add(want, new(big.Int).SetUint64(c[j])).Mod(want, p)
		}
		x2 := mulAdd61(x, x, 0)
		if got := poly3(&c, x, x2, mulAdd61(x2, x, 0)); got != want.Uint64() {
			t.Fatalf("poly3 = %d, want %d", got, want.Uint64())
		}
	}
	if mod61(1<<64-1) != (1<<64-1)%mersenne61 {
		t.Fatal("mod61 of 2^64-1")
	}
}

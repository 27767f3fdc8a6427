package types

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestCellsAppendInt64Bytes checks the writer's word-at-a-time encoding of
// a wide DECIMAL's unscaled int64 against appendInt64Bytes, at the edges of
// each length and at random, after bytes already in the buffer.
func TestCellsAppendInt64Bytes(t *testing.T) {
	vals := []int64{0, 1, -1, 127, 128, -128, -129, 255, 256, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	for k := 8; k < 64; k += 8 {
		vals = append(vals, 1<<(k-1)-1, 1<<(k-1), -1<<(k-1), -1<<(k-1)-1)
	}
	rng := rand.New(rand.NewPCG(1, 9))
	for range 2000 {
		vals = append(vals, rng.Int64()>>rng.IntN(64))
	}
	var c cells
	for i, v := range vals {
		prefix := bytes.Repeat([]byte{0xa5}, i%11)
		c.vbuf = append(c.vbuf[:0], prefix...)
		c.appendInt64Bytes(v)
		want := appendInt64Bytes(append([]byte(nil), prefix...), v)
		if !bytes.Equal(c.vbuf, want) {
			t.Fatalf("%d after %d bytes: %x, want %x", v, len(prefix), c.vbuf, want)
		}
	}
}

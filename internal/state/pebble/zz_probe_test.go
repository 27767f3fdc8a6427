package pebble

import (
	"encoding/binary"
	"testing"

	"github.com/eddystream/eddy/internal/state"
)

func BenchmarkProbe(b *testing.B) {
	be := open(b, state.KeyGroupRange{Start: 0, End: 1}, 1)
	key := make([]byte, 14)
	val := make([]byte, 8)
	for k := range 4096 {
		binary.BigEndian.PutUint64(key[6:], uint64(k))
		be.Set(key, val)
	}
	b.Run("set", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			binary.BigEndian.PutUint64(key[6:], uint64(i&4095))
			be.Set(key, val)
		}
	})
	b.Run("get", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			binary.BigEndian.PutUint64(key[6:], uint64(i&4095))
			be.Get(key)
		}
	})
	be.db.Flush()
	b.Run("get-flushed", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			binary.BigEndian.PutUint64(key[6:], uint64(i&4095))
			be.Get(key)
		}
	})
}

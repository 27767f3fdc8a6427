package statetest

import (
	"testing"

	"github.com/eddystream/eddy/internal/state"
)

// Bench runs the state benchmarks against the backends newBackend makes:
// a Get and a Put of an existing entry per op, on tables and on handles.
func Bench(b *testing.B, newBackend func(kgs state.KeyGroupRange, maxParallelism int) state.Backend) {
	const keys = 1 << 12
	b.Run("ValueTableGetPut", func(b *testing.B) {
		be := newBackend(all, maxP)
		defer be.Close()
		vt, err := state.NewValueTable[int64, state.VoidNamespace, int64](be, "v", nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		for k := range int64(keys) {
			vt.Put(kgOfInt(k), k, state.VoidNamespace{}, 0)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := int64(i & (keys - 1))
			kg := kgOfInt(k)
			v, _ := vt.Get(kg, k, state.VoidNamespace{})
			vt.Put(kg, k, state.VoidNamespace{}, v+1)
		}
	})
	b.Run("ValueTableGetPutStruct", func(b *testing.B) {
		be := newBackend(all, maxP)
		defer be.Close()
		vt, err := state.NewValueTable[int64, window, bid](be, "v", nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		w := window{0, 10}
		for k := range int64(keys) {
			vt.Put(kgOfInt(k), k, w, bid{})
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := int64(i & (keys - 1))
			kg := kgOfInt(k)
			v, _ := vt.Get(kg, k, w)
			v.Qty++
			vt.Put(kg, k, w, v)
		}
	})
	for _, ttl := range []bool{false, true} {
		name := "ValueHandle"
		var cfg state.TTLConfig
		if ttl {
			name, cfg = "ValueHandleTTL", ttl10
		}
		b.Run(name, func(b *testing.B) {
			be := newBackend(all, maxP)
			defer be.Close()
			kc := &state.KeyContext[int64]{}
			s := state.NewStore(be, kc, func() int64 { return 0 }, nil)
			h, err := state.NewValueHandle[int64, state.VoidNamespace, int64](s, nil, nil, "v", nil, cfg)
			if err != nil {
				b.Fatal(err)
			}
			for k := range int64(keys) {
				kc.Key, kc.KG = k, kgOfInt(k)
				h.Update(0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := int64(i & (keys - 1))
				kc.Key, kc.KG = k, kgOfInt(k)
				v, _ := h.Value()
				h.Update(v + 1)
			}
		})
	}
}

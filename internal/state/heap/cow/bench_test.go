package cow

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy/internal/state/codec"
)

// Benchmarks of copy-on-write snapshots:
//
//	go test -run XXX -bench COW -benchtime 0.5s ./internal/state/heap/cow/
//
// Begin is BeginSnapshot (plus the release and Settle of an untouched
// snapshot) of a table of 1M entries; AppendAll the synchronous encoding of
// all of it that Begin saves the owner. GetPut is a Get and a Put of an
// existing entry with no snapshot, during a snapshot once the entries have
// been copied (steady), and on entries touched first since BeginSnapshot
// (first-touch: the copy-on-write path, a codec round trip for []int64).

// benchKGs are the key groups of the benchmark tables, as many as the
// default max parallelism makes.
var benchKGs = kgRange{Start: 0, End: 128}

func benchKG(k int64) int { return int(uint64(k) % uint64(benchKGs.End)) }

type benchTable[V any] interface {
	cowValueTable[void, V]
}

func newBenchTable[V any](b *testing.B, keys int, val func(int64) V) benchTable[V] {
	c, err := codec.Default[V]()
	if err != nil {
		b.Fatal(err)
	}
	if _, ok := any(val(0)).([]int64); ok {
		c = any(codec.List(mustCodec[int64](b))).(codec.Codec[V])
	}
	t := NewVoidTable("bench", benchKGs.Start, benchKGs.End, mustCodec[int64](b), mustCodec[void](b), c)
	for k := range int64(keys) {
		t.Put(benchKG(k), k, void{}, val(k))
	}
	return t
}

func BenchmarkCOW(b *testing.B) {
	benchCOW(b, "int64", func(k int64) int64 { return k }, func(v int64) int64 { return v + 1 })
	benchCOW(b, "list", func(k int64) []int64 { return []int64{k, 1, 2, 3} }, func(l []int64) []int64 {
		l[0]++
		return l
	})
}

func benchCOW[V any](b *testing.B, name string, val func(int64) V, inc func(V) V) {
	const big = 1 << 20
	var t1M benchTable[V]
	get1M := func(b *testing.B) benchTable[V] {
		if t1M == nil {
			t1M = newBenchTable(b, big, val)
		}
		return t1M
	}
	b.Run(fmt.Sprintf("%s/Begin1M", name), func(b *testing.B) {
		t := get1M(b)
		for b.Loop() {
			_, release := t.BeginSnapshot()
			release()
			t.Settle()
		}
	})
	b.Run(fmt.Sprintf("%s/AppendAll1M", name), func(b *testing.B) {
		t := get1M(b)
		var buf []byte
		for b.Loop() {
			n := 0
			for kg := benchKGs.Start; kg < benchKGs.End; kg++ {
				buf = t.AppendKeyGroup(buf[:0], kg)
				n += len(buf)
			}
			b.SetBytes(int64(n))
		}
	})
	b.Run(fmt.Sprintf("%s/EncodeAll1M", name), func(b *testing.B) {
		t := get1M(b)
		var buf []byte
		for b.Loop() {
			encode, release := t.BeginSnapshot()
			done := make(chan int)
			go func() {
				n := 0
				for kg := benchKGs.Start; kg < benchKGs.End; kg++ {
					buf = encode(buf[:0], kg)
					n += len(buf)
				}
				release()
				done <- n
			}()
			b.SetBytes(int64(<-done))
			t.Settle()
		}
	})
	getPut := func(b *testing.B, t benchTable[V], keys int) {
		k := int64(0)
		for b.Loop() {
			kg := benchKG(k)
			v, _ := t.Get(kg, k, void{})
			t.Put(kg, k, void{}, inc(v))
			if k++; k == int64(keys) {
				k = 0
			}
		}
	}
	b.Run(fmt.Sprintf("%s/GetPut4K/quiet", name), func(b *testing.B) {
		getPut(b, newBenchTable(b, 1<<12, val), 1<<12)
	})
	b.Run(fmt.Sprintf("%s/GetPut4K/snapshot-steady", name), func(b *testing.B) {
		t := newBenchTable(b, 1<<12, val)
		_, release := t.BeginSnapshot()
		defer release()
		getPut(b, t, 1<<12)
	})
	b.Run(fmt.Sprintf("%s/GetPut1M/quiet", name), func(b *testing.B) {
		getPut(b, get1M(b), big)
	})
	b.Run(fmt.Sprintf("%s/GetPut1M/snapshot-first-touch", name), func(b *testing.B) {
		t := get1M(b)
		_, release := t.BeginSnapshot()
		k := int64(0)
		for b.Loop() {
			kg := benchKG(k)
			v, _ := t.Get(kg, k, void{})
			t.Put(kg, k, void{}, inc(v))
			if k++; k == big {
				b.StopTimer()
				release()
				t.Settle()
				_, release = t.BeginSnapshot()
				k = 0
				b.StartTimer()
			}
		}
		release()
		t.Settle()
	})
	b.Run(fmt.Sprintf("%s/Settle1M", name), func(b *testing.B) {
		// Folding back a snapshot during which every entry changed.
		t := get1M(b)
		for b.Loop() {
			b.StopTimer()
			_, release := t.BeginSnapshot()
			for k := range int64(big) {
				t.Put(benchKG(k), k, void{}, val(k))
			}
			release()
			b.StartTimer()
			t.Settle()
		}
	})
}

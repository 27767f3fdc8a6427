package pebble

import (
	"encoding/binary"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/state"
	"github.com/eddystream/eddy/internal/state/heap"
)

// rmwValue is the state a key keeps in BenchmarkRandomReadModifyWrite: a
// sequence number and a payload that does not compress, about 192 bytes
// encoded.
type rmwValue struct {
	Seq     int64
	Payload [184]byte
}

// rmwEntrySize is the approximate encoded size of an entry: a 192-byte value
// and a key of the table prefix and an int64.
const rmwEntrySize = 192 + 16

// mix is the splitmix64 finalizer: a cheap bijective hash.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// cpuTime returns the CPU time the process has used, user and system, all
// goroutines (Pebble's flushes and compactions included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRandomReadModifyWrite reads, changes and writes back the value
// of a random key, one op per iteration, on one subtask holding every key
// group, with state five times the memory budget: 5·B bytes of keys and
// values for B = 32 MiB. It fills every key once, runs a warm-up of as many
// read-modify-writes as there are keys, then times b.N of them and reports
// ops per second of process CPU time (ops/s/core: background flushes,
// compactions and the garbage collector included) and the cores used. The
// heap backend holds the same state, for comparison.
//
// Keys are uniform (keys=uniform, the figure to compare: every key is as
// likely, so the hit rate of any cache is bounded by its share of the
// state) or Zipf-distributed (keys=zipf, P(rank k) ∝ (1+k)^-1.1, closer to
// real streams: a few hot keys take most ops). The fill takes a while; run
// it with a fixed count:
//
//	go test -run XXX -bench RandomReadModifyWrite -benchtime 1000000x ./internal/state/pebble/
func BenchmarkRandomReadModifyWrite(b *testing.B) {
	const (
		budget = 32 << 20
		maxP   = 128
		keys   = 5 * budget / rmwEntrySize
	)
	all := state.KeyGroupRange{Start: 0, End: maxP}
	// The Zipf keys are drawn ahead, so that drawing them is not timed.
	var zipf []int64
	dists := []struct {
		name string
		key  func(seq int64) int64
	}{
		{"uniform", func(seq int64) int64 { return int64(mix(uint64(seq)) % keys) }},
		{"zipf", func(seq int64) int64 {
			if zipf == nil {
				z := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, keys-1)
				zipf = make([]int64, 1<<20)
				for i := range zipf {
					zipf[i] = int64(z.Uint64())
				}
			}
			return zipf[seq%int64(len(zipf))]
		}},
	}
	run := func(b *testing.B, be state.Backend, key func(seq int64) int64, report func()) {
		vt, err := state.NewValueTable[int64, state.VoidNamespace, rmwValue](be, "value", nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		last := map[int64]int64{} // the last seq written to a key, for the check
		rmw := func(k, seq int64) {
			kg := kgOf(k, maxP)
			v, ok := vt.Get(kg, k, state.VoidNamespace{})
			v.Seq = seq
			if ok {
				binary.LittleEndian.PutUint64(v.Payload[:8], mix(uint64(seq)))
			} else {
				x := uint64(k)*0x9e3779b97f4a7c15 ^ uint64(seq)
				for o := 0; o < len(v.Payload); o += 8 {
					x = mix(x + 0x9e3779b97f4a7c15)
					binary.LittleEndian.PutUint64(v.Payload[o:], x)
				}
			}
			vt.Put(kg, k, state.VoidNamespace{}, v)
		}
		for k := range int64(keys) {
			rmw(k, k)
		}
		seq := int64(keys)
		for range keys {
			rmw(key(seq), seq)
			seq++
		}
		b.ResetTimer()
		c0, t0 := cpuTime(), time.Now()
		for range b.N {
			rmw(key(seq), seq)
			seq++
		}
		cpu, wall := cpuTime()-c0, time.Since(t0)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "ops/s/core")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
		report()
		// The last values are all there: the keys of the last ops read
		// back with the seq of their last write.
		for s := seq - 1000; s < seq; s++ {
			last[key(s)] = s
		}
		for k, s := range last {
			if v, ok := vt.Get(kgOf(k, maxP), k, state.VoidNamespace{}); !ok || v.Seq != s {
				b.Fatalf("key %d: got seq %d, %v; want %d", k, v.Seq, ok, s)
			}
		}
	}
	for _, d := range dists {
		b.Run("keys="+d.name, func(b *testing.B) {
			b.Run("backend=heap", func(b *testing.B) {
				run(b, heap.New(all, maxP), d.key, func() {})
			})
			b.Run("backend=pebble", func(b *testing.B) {
				be, err := Open(b.TempDir(), all, maxP, Options{MemoryBudget: budget, Backends: 1})
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close()
				m0 := be.DB().Metrics()
				run(b, be, d.key, func() {
					m := be.DB().Metrics()
					t := m.Total()
					b.ReportMetric(float64(m.ReadAmp()), "read-amp")
					b.ReportMetric(t.WriteAmp(), "write-amp")
					b.ReportMetric(float64(m.BlockCache.Hits-m0.BlockCache.Hits)/float64(max(m.BlockCache.Hits+m.BlockCache.Misses-m0.BlockCache.Hits-m0.BlockCache.Misses, 1)), "block-hit-rate")
					b.ReportMetric(float64(Budget().ValueLogBytes)/(1<<20), "log-MiB")
					b.ReportMetric(float64(be.CacheBudget())/(1<<20), "objcache-MiB")
				})
			})
		})
	}
}

package pebble

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/state"
)

// The tests in this file write hundreds of megabytes and take longer than
// the default run should; they run with EDDY_PEBBLE_BIG=1 and not under
// -short:
//
//	EDDY_PEBBLE_BIG=1 go test -count=1 -run 'Big' -v ./internal/state/pebble/
//
// EDDY_PEBBLE_BIG_MB sets the state size in MB (default 256 for the
// larger-than-memory test, 200 for the checkpoint test).

func bigSize(t *testing.T, def int) int64 {
	t.Helper()
	if testing.Short() || os.Getenv("EDDY_PEBBLE_BIG") == "" {
		t.Skip("set EDDY_PEBBLE_BIG=1 (and no -short) to run")
	}
	mb := def
	if s := os.Getenv("EDDY_PEBBLE_BIG_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	return int64(mb) << 20
}

// procStatus returns a field of /proc/self/status in bytes (VmRSS, VmHWM).
func procStatus(field string) int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

const bigValueSize = 100

func randFill(rng *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := rng.Uint64()
		for j := i; j < min(i+8, len(b)); j++ {
			b[j] = byte(v)
			v >>= 8
		}
	}
}

// TestBigLargerThanMemory writes state several times the memory budget
// (random keys, 100-byte values) and reports the write throughput per
// tenth of the run and the process RSS against the budget, then random reads.
func TestBigLargerThanMemory(t *testing.T) {
	size := bigSize(t, 256)
	const maxP = 128
	opts := testOpts
	if mb, _ := strconv.Atoi(os.Getenv("EDDY_PEBBLE_BIG_BUDGET_MB")); mb > 0 {
		opts.MemoryBudget = int64(mb) << 20
	}
	b, err := Open(t.TempDir(), state.KeyGroupRange{Start: 0, End: maxP}, maxP, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	budget := Budget().Budget
	vt, err := state.NewValueTable[int64, state.VoidNamespace, []byte](b, "v", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := size / (bigValueSize + 16) // value + key; the LSM's own overhead comes on top
	val := make([]byte, bigValueSize)
	rng, vrng := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(5, 6))
	t.Logf("budget %d MiB, writing %d entries (%d MiB of keys and values), RSS before %d MiB",
		budget>>20, n, size>>20, procStatus("VmRSS")>>20)
	var maxRSS, maxAnon int64
	start, lap := time.Now(), time.Now()
	step := n / 10
	for i := int64(0); i < n; i++ {
		k := int64(rng.Uint64() >> 1)
		randFill(vrng, val) // incompressible: the state on disk is what was written
		vt.Put(kgOf(k, maxP), k, state.VoidNamespace{}, val)
		if (i+1)%step == 0 {
			rss := procStatus("VmRSS")
			maxRSS = max(maxRSS, rss)
			maxAnon = max(maxAnon, procStatus("RssAnon"))
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			t.Logf("%3d%%: %7.0f writes/s, RSS %4d MiB, Go heap %3d MiB, cache %3d MiB", (i+1)*100/n,
				float64(step)/time.Since(lap).Seconds(), rss>>20, ms.HeapAlloc>>20, Budget().CacheSize>>20)
			lap = time.Now()
		}
	}
	total := time.Since(start)
	if err := b.db.Flush(); err != nil {
		t.Fatal(err)
	}
	m := b.db.Metrics()
	t.Logf("wrote %d entries in %v: %.0f writes/s; on disk %d MiB; max RSS %d MiB (%.2f× budget), peak RSS %d MiB",
		n, total.Round(time.Millisecond), float64(n)/total.Seconds(), m.DiskSpaceUsage()>>20, maxRSS>>20,
		float64(maxRSS)/float64(budget), procStatus("VmHWM")>>20)
	// Random reads over the whole state: most miss the block cache.
	rng = rand.New(rand.NewPCG(1, 2))
	for range n / 2 {
		rng.Uint64() // read the second half of the written keys
	}
	reads := min(n/2, 200_000)
	start = time.Now()
	found := 0
	var readRSS int64
	for i := range reads {
		k := int64(rng.Uint64() >> 1)
		if _, ok := vt.Get(kgOf(k, maxP), k, state.VoidNamespace{}); ok {
			found++
		}
		if (i+1)%(reads/10) == 0 {
			readRSS = max(readRSS, procStatus("VmRSS"))
			maxAnon = max(maxAnon, procStatus("RssAnon"))
		}
	}
	el := time.Since(start)
	maxRSS = max(maxRSS, readRSS)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m = b.db.Metrics()
	t.Logf("%d random reads of written keys in %v: %.0f reads/s, %d found; max RSS %d MiB, now %d MiB (Go heap in use %d MiB, Go sys %d MiB, cache %d MiB, memtables %d MiB, open tables %d); cache hits %d misses %d",
		reads, el.Round(time.Millisecond), float64(reads)/el.Seconds(), found, readRSS>>20, procStatus("VmRSS")>>20,
		ms.HeapInuse>>20, ms.Sys>>20, m.BlockCache.Size>>20, m.MemTable.Size>>20, m.FileCache.TableCount,
		Budget().CacheHits, Budget().CacheMisses)
	if found != int(reads) {
		t.Errorf("found %d of %d keys", found, reads)
	}
	// The process's own memory (RssAnon: the RSS without the mapped pages
	// of table files and value log segments, which are the page cache's).
	// Beyond the budget: the test binary (~25 MiB), the Go heap's garbage,
	// and glibc malloc's retention of freed cache blocks (less with
	// MALLOC_ARENA_MAX=2).
	t.Logf("max RssAnon %d MiB", maxAnon>>20)
	if limit := 2*budget + 100<<20; maxAnon > limit {
		t.Errorf("RssAnon %d MiB exceeds 2 × budget %d MiB + 100 MiB", maxAnon>>20, budget>>20)
	}
}

// TestBigIncrementalCheckpoint fills a large state, checkpoints it, changes
// 1% of the keys and checkpoints again, three times, reporting how much of
// each checkpoint must be uploaded (PlanUpload) and the checkpoint and
// restore durations.
func TestBigIncrementalCheckpoint(t *testing.T) {
	size := bigSize(t, 200)
	const maxP = 128
	b := open(t, state.KeyGroupRange{Start: 0, End: maxP}, maxP)
	vt, err := state.NewValueTable[int64, state.VoidNamespace, []byte](b, "v", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := size / (bigValueSize + 16)
	val := make([]byte, bigValueSize)
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Now()
	for k := int64(0); k < n; k++ {
		randFill(rng, val) // incompressible, so file sizes reflect the state
		vt.Put(kgOf(k, maxP), k, state.VoidNamespace{}, val)
	}
	t.Logf("filled %d entries (%d MiB) in %v", n, size>>20, time.Since(start).Round(time.Millisecond))
	root := t.TempDir()
	uploaded := map[string]string{}
	sizeOf := func(dir, f string) int64 {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	var last string
	const rounds = 10
	var incr int64
	for round := 0; round <= rounds; round++ {
		if round > 0 {
			for range n / 100 { // 1% of the keys, anywhere
				k := rng.Int64N(n)
				randFill(rng, val)
				vt.Put(kgOf(k, maxP), k, state.VoidNamespace{}, val)
			}
		}
		dir := filepath.Join(root, strconv.Itoa(round))
		start := time.Now()
		files, err := b.Checkpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		ckDur := time.Since(start)
		plan := PlanUpload(files, uploaded)
		var total, up int64
		for _, f := range files {
			total += sizeOf(dir, f)
		}
		for _, f := range plan.Upload {
			up += sizeOf(dir, f)
			if IsShared(f) {
				uploaded[f] = f
			}
		}
		what := "full"
		if round > 0 {
			what = "after changing 1% of keys"
			incr += up
		}
		t.Logf("checkpoint %d (%s): %v, %d files, %d MiB; upload %d files, %.1f MiB = %.1f%%",
			round, what, ckDur.Round(time.Millisecond), len(files), total>>20, len(plan.Upload), float64(up)/(1<<20), 100*float64(up)/float64(total))
		// Keep only the newest checkpoint directory.
		if last != "" {
			os.RemoveAll(last)
		}
		last = dir
	}
	t.Logf("rounds 1-%d: mean upload %.1f MiB per checkpoint = %.1f%% of the state",
		rounds, float64(incr)/rounds/(1<<20), 100*float64(incr)/rounds/float64(size))
	m := b.db.Metrics()
	tot := m.Total()
	t.Logf("LSM: %d MiB on disk, write amplification %.2f", m.DiskSpaceUsage()>>20, tot.WriteAmp())
	b.Close()
	start = time.Now()
	r, err := Restore(last, state.KeyGroupRange{Start: 0, End: maxP}, maxP, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Logf("restore (open in place, checks files): %v", time.Since(start).Round(time.Millisecond))
	rvt, _ := state.NewValueTable[int64, state.VoidNamespace, []byte](r, "v", nil, nil, nil)
	for k := int64(0); k < n; k += n / 1000 {
		if _, ok := rvt.Get(kgOf(k, maxP), k, state.VoidNamespace{}); !ok {
			t.Fatalf("key %d lost", k)
		}
	}
	// Rescale 1 → 2 from the same checkpoint: time of each new subtask.
	ck := filepath.Join(root, "for-rescale")
	if _, err := r.Checkpoint(ck); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		start := time.Now()
		nb, err := Rescale(filepath.Join(root, "half"+strconv.Itoa(i)), []string{ck}, state.RangeOf(i, 2, maxP), maxP, testOpts)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("rescale 1 → 2, subtask %d (excise only): %v", i, time.Since(start).Round(time.Millisecond))
		nb.Close()
	}
	// And 2 → 1: the second half is rewritten and ingested.
	var halves []string
	for i := range 2 {
		h := filepath.Join(root, "half-ck"+strconv.Itoa(i))
		hb, err := Rescale(filepath.Join(root, "half-db"+strconv.Itoa(i)), []string{ck}, state.RangeOf(i, 2, maxP), maxP, testOpts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hb.Checkpoint(h); err != nil {
			t.Fatal(err)
		}
		hb.Close()
		halves = append(halves, h)
	}
	start = time.Now()
	whole, err := Rescale(filepath.Join(root, "whole"), halves, state.KeyGroupRange{Start: 0, End: maxP}, maxP, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rescale 2 → 1 (half the state rewritten into ingested SSTs): %v", time.Since(start).Round(time.Millisecond))
	whole.Close()
}

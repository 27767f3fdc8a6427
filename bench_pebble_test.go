package eddy_test

// Benchmarks of the Pebble state backend with state larger than its memory
// budget, and of its incremental checkpoints. They take minutes and GBs of
// local disk; run them alone, once:
//
//	go test -run XXX -bench 'PebbleStateBeyondBudget|PebbleIncrementalCheckpoint' -benchtime 1x -timeout 30m .

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/internal/checkpoint"
	"github.com/eddystream/eddy/internal/state/pebble"
	"github.com/eddystream/eddy/state"
)

// pebbleValue is the state a key keeps: 192 bytes encoded, a sequence number
// and a pseudo-random payload that does not compress, so that bytes on disk
// are bytes of state.
type pebbleValue struct {
	Seq     int64
	Payload [184]byte
}

// pebbleValueSize is the encoded size of a pebbleValue.
const pebbleValueSize = 192

// touch asks to write the value of Key.
type touch struct{ Key, Seq int64 }

// mix64 is the splitmix64 finalizer: a cheap bijective hash.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func fillPayload(p *[184]byte, key, seq int64) {
	x := uint64(key)*0x9e3779b97f4a7c15 ^ uint64(seq)
	for o := 0; o < len(p); o += 8 {
		x = mix64(x + 0x9e3779b97f4a7c15)
		binary.LittleEndian.PutUint64(p[o:], x)
	}
}

// progress counts the records the keyed operator processed and notes when
// the count reaches each mark.
type progress struct {
	n     atomic.Int64
	marks []int64        // ascending record counts
	at    []atomic.Int64 // UnixNano when the count reached marks[i]
	cpu   []atomic.Int64 // the process's CPU time then (cpuTime)
}

func newProgress(marks ...int64) *progress {
	return &progress{marks: marks, at: make([]atomic.Int64, len(marks)), cpu: make([]atomic.Int64, len(marks))}
}

func (p *progress) add() {
	n := p.n.Add(1)
	for i, m := range p.marks {
		if n == m {
			p.at[i].Store(time.Now().UnixNano())
			p.cpu[i].Store(int64(connectortest.CPUTime()))
		}
	}
}

// wait returns once count records are processed, or fails if the job ends
// first.
func (p *progress) wait(b *testing.B, r *running, count int64) time.Time {
	b.Helper()
	for p.n.Load() < count {
		select {
		case <-r.done:
			b.Fatalf("the job ended after %d of %d records: %v", p.n.Load(), count, r.err)
		case <-time.After(2 * time.Millisecond):
		}
	}
	return time.Now()
}

// pebbleWriter keeps a pebbleValue per key. With rmw it reads the value and
// writes it back changed (read-modify-write), otherwise it overwrites it.
type pebbleWriter struct {
	rmw  bool
	prog *progress
	v    state.Value[pebbleValue]
}

func (w *pebbleWriter) Open(ctx *eddy.KeyedContext[int64, int64]) error {
	w.v = state.NewValue(ctx.Store(), state.ValueDescriptor[pebbleValue]{Name: "value"})
	return nil
}

func (w *pebbleWriter) ProcessElement(_ *eddy.KeyedContext[int64, int64], t touch) error {
	var v pebbleValue
	ok := false
	if w.rmw {
		v, ok = w.v.Value()
	}
	if ok {
		v.Seq = t.Seq
		binary.LittleEndian.PutUint64(v.Payload[:8], mix64(uint64(t.Seq)))
	} else {
		v.Seq = t.Seq
		fillPayload(&v.Payload, t.Key, t.Seq)
	}
	w.v.Update(v)
	w.prog.add()
	return nil
}

// phasedSource is a one-split source of fn(0), fn(1), … that emits the
// indices below a limit the benchmark raises, idles at the limit, and ends
// once the benchmark sets end. It records its position at every snapshot,
// so that the benchmark knows which checkpoint first covers a phase.
type phasedSource struct {
	fn    func(int64) touch
	limit atomic.Int64
	end   atomic.Bool

	mu    sync.Mutex
	snaps []int64 // the position at each snapshot, in order
}

func (s *phasedSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "phased", State: binary.AppendVarint(nil, 0)}}, nil
	})
}

func (s *phasedSource) NewReader(connector.ReaderContext) (connector.Reader[touch], error) {
	return &phasedReader{s: s, next: -1}, nil
}

// coveringID returns the id of the first checkpoint that snapshotted the
// source at position pos or later, given the id of the job's first
// checkpoint, or 0 if none has yet. The source runs as one subtask, which
// snapshots every checkpoint in id order.
func (s *phasedSource) coveringID(firstID, pos int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, at := range s.snaps {
		if at >= pos {
			return firstID + int64(k)
		}
	}
	return 0
}

type phasedReader struct {
	s    *phasedSource
	next int64 // -1: no split
}

func (r *phasedReader) AddSplits(splits []connector.Split) error {
	for _, sp := range splits {
		next, n := binary.Varint(sp.State)
		if n <= 0 {
			return fmt.Errorf("phased source: bad split %x", sp.State)
		}
		r.next = next
	}
	return nil
}

func (r *phasedReader) Read(out connector.Output[touch]) error {
	if r.next < 0 {
		return nil
	}
	so := out.Split("phased")
	limit := r.s.limit.Load()
	if r.next >= limit {
		if r.s.end.Load() {
			so.Finish()
			r.next = -1
			return nil
		}
		time.Sleep(time.Millisecond)
		return nil
	}
	for out.Room() > 0 && r.next < limit {
		so.Emit(r.s.fn(r.next))
		r.next++
	}
	return nil
}

func (r *phasedReader) SnapshotState(int64) ([]connector.Split, error) {
	r.s.mu.Lock()
	r.s.snaps = append(r.s.snaps, r.next)
	r.s.mu.Unlock()
	if r.next < 0 {
		return nil, nil
	}
	return []connector.Split{{ID: "phased", State: binary.AppendVarint(nil, r.next)}}, nil
}

func (r *phasedReader) Close() error { return nil }

// pebbleStateJob feeds src (one subtask) to pebbleWriters keyed by Key. The
// UIDs let later jobs restore the checkpoints of earlier ones.
func pebbleStateJob(env *eddy.Environment, src *phasedSource, rmw bool, prog *progress) {
	s := eddy.FromSource[touch](env, "phased", src, eddy.NoWatermarks[touch]()).UID("src").Parallelism(1)
	out := eddy.ProcessKeyed(eddy.KeyBy(s, func(t touch) int64 { return t.Key }),
		func() eddy.KeyedProcessFunction[int64, touch, int64] { return &pebbleWriter{rmw: rmw, prog: prog} })
	eddy.Discard(out.UID("state"))
}

// running is a job executing on its own goroutine.
type running struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func start(env *eddy.Environment, name string) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = env.Execute(ctx, name)
	}()
	return r
}

// stop cancels the job and waits for it.
func (r *running) stop(b *testing.B) {
	b.Helper()
	r.cancel()
	<-r.done
	if r.err != nil {
		b.Fatal(r.err)
	}
}

// awaitCovering waits for the checkpoint that first covers the source up to
// position pos and returns its statistics.
func awaitCovering(b *testing.B, env *eddy.Environment, r *running, src *phasedSource, firstID, pos int64) eddy.CheckpointStats {
	b.Helper()
	for {
		if id := src.coveringID(firstID, pos); id > 0 {
			for _, st := range env.CheckpointStats() {
				if st.ID == id {
					return st
				}
				if st.ID > id {
					b.Fatalf("checkpoint %d did not complete (checkpoint %d did)", id, st.ID)
				}
			}
		}
		select {
		case <-r.done:
			b.Fatalf("the job ended before a checkpoint covered position %d: %v", pos, r.err)
		case <-time.After(time.Millisecond):
		}
	}
}

// warnings is a slog handler that keeps the job's warnings and errors.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler           { return w }
func (w *warnings) WithGroup(string) slog.Handler                { return w }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	var sb strings.Builder
	sb.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		sb.WriteString(" " + a.String())
		return true
	})
	w.mu.Lock()
	w.msgs = append(w.msgs, sb.String())
	w.mu.Unlock()
	return nil
}

// check logs the warnings and fails if a checkpoint was aborted, which
// would break the mapping of source snapshots to checkpoint ids.
func (w *warnings) check(b *testing.B) {
	b.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.msgs {
		b.Logf("job log: %s", m)
		if strings.Contains(m, "checkpoint aborted") || strings.Contains(m, "checkpoint failed") || strings.Contains(m, "writing checkpoint failed") {
			b.Errorf("a checkpoint failed; the figures are not reliable: %s", m)
		}
	}
}

// procStatus returns a field of /proc/self/status in bytes (VmRSS, RssAnon, VmHWM),
// or 0.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			fs := strings.Fields(rest)
			if len(fs) > 0 {
				kb, _ := strconv.ParseInt(fs[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// resetPeakRSS resets VmHWM to the current RSS (Linux: clear_refs 5). It
// reports whether it could, else VmHWM is the peak of the whole process.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// dirSize returns the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// memSample is the memory of the process at one time.
type memSample struct {
	at        time.Time
	heapInuse int64 // Go heap in use (MemStats.HeapInuse): live objects and garbage not yet swept
	heapLive  int64 // Go heap live at the last GC (/gc/heap/live:bytes)
	blocks    int64 // Pebble block cache: cached blocks
	objects   int64 // object caches of the typed tables
	memtables int64 // Pebble memtables
	rss       int64 // VmRSS: Go runtime + C allocations (Pebble's cache and memtables) + glibc + mapped table pages
	rssAnon   int64 // RssAnon: VmRSS without file pages (the table files Pebble maps on Linux)
}

func (s memSample) max(o memSample) memSample {
	return memSample{at: s.at, heapInuse: max(s.heapInuse, o.heapInuse), heapLive: max(s.heapLive, o.heapLive),
		blocks: max(s.blocks, o.blocks), objects: max(s.objects, o.objects), memtables: max(s.memtables, o.memtables), rss: max(s.rss, o.rss), rssAnon: max(s.rssAnon, o.rssAnon)}
}

func sampleMem() memSample {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	var heapLive int64
	if live[0].Value.Kind() == metrics.KindUint64 {
		heapLive = int64(live[0].Value.Uint64())
	}
	bs := pebble.Budget()
	return memSample{at: time.Now(), heapInuse: int64(ms.HeapInuse), heapLive: heapLive, blocks: bs.CacheSize, objects: bs.ObjectCacheBytes, memtables: bs.MemTableBytes, rss: procStatus("VmRSS"), rssAnon: procStatus("RssAnon")}
}

// sampler samples the memory every period until stopped.
type sampler struct {
	stopc chan struct{}
	done  chan struct{}
	list  []memSample
}

func startSampler(period time.Duration) *sampler {
	s := &sampler{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			s.list = append(s.list, sampleMem())
			select {
			case <-t.C:
			case <-s.stopc:
				return
			}
		}
	}()
	return s
}

func (s *sampler) stop() []memSample {
	close(s.stopc)
	<-s.done
	return s.list
}

// peak returns the maxima of the samples in [from, to), or the first
// sample after from if none falls in it.
func peak(samples []memSample, from, to time.Time) memSample {
	var p memSample
	found := false
	for _, s := range samples {
		if !s.at.Before(from) && (s.at.Before(to) || !found) {
			p = p.max(s)
			found = true
		}
	}
	return p
}

const mib = 1 << 20

// BenchmarkPebbleStateBeyondBudget keeps 192-byte values for 1.6 M keys
// (307 MB of values, 4.6× the 64 MiB memory budget) in Pebble: a fill pass
// writes every key once, then 10 tenths of uniformly random
// read-modify-writes. It reports the throughput of each tenth, the memory
// sampled during the run, the peak RSS and the state on disk.
func BenchmarkPebbleStateBeyondBudget(b *testing.B) {
	const (
		budget  = 64 << 20
		keys    = 1_600_000
		updates = 2_000_000 // random read-modify-writes after the fill
		phases  = 10
	)
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		marks := []int64{keys}
		for k := int64(1); k <= phases; k++ {
			marks = append(marks, keys+k*updates/phases)
		}
		prog := newProgress(marks...)
		src := &phasedSource{fn: func(i int64) touch {
			if i < keys {
				return touch{Key: i, Seq: i}
			}
			return touch{Key: int64(mix64(uint64(i)) % keys), Seq: i}
		}}
		src.limit.Store(keys + updates)
		warn := &warnings{}
		env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithStateBackend(eddy.PebbleState(dir, budget)),
			eddy.WithLogger(slog.New(warn)))
		pebbleStateJob(env, src, true, prog)

		runtime.GC()
		hwmReset := resetPeakRSS()
		smp := startSampler(200 * time.Millisecond)
		b.ResetTimer()
		cpu0, t0 := connectortest.CPUTime(), time.Now()
		r := start(env, "beyond-budget")
		tEnd := prog.wait(b, r, keys+updates)
		wall, cpu := tEnd.Sub(t0), connectortest.CPUTime()-cpu0
		b.StopTimer()
		// The job idles at the end of its input: its databases are still
		// there to measure.
		disk := dirSize(dir)
		samples := smp.stop()
		hwm := procStatus("VmHWM")
		src.end.Store(true)
		<-r.done
		if r.err != nil {
			b.Fatal(r.err)
		}
		warn.check(b)

		// The table: go test shows 10 lines of a benchmark's log without -v.
		b.Logf("budget %d MiB; %d keys × %d B = %d MB of values (fill), then %d uniformly random read-modify-writes in tenths; GOMAXPROCS %d; columns: fill | rmw 1/10 … 10/10",
			budget/mib, keys, pebbleValueSize, keys*pebbleValueSize/1_000_000, updates, runtime.GOMAXPROCS(0))
		var rate, cpuRate, heapInuse, heapLive, blocks, objects, memtables, rss, rssAnon []string
		prev, prevCPU := t0, cpu0
		var minRate, maxRate, minCPURate, maxCPURate float64
		all := peak(samples, t0, tEnd.Add(time.Hour))
		for k := range marks {
			at, atCPU := time.Unix(0, prog.at[k].Load()), time.Duration(prog.cpu[k].Load())
			n := marks[k]
			if k > 0 {
				n -= marks[k-1]
			}
			r, c := float64(n)/at.Sub(prev).Seconds(), float64(n)/(atCPU-prevCPU).Seconds()
			if k > 0 {
				if minRate == 0 || r < minRate {
					minRate = r
				}
				if minCPURate == 0 || c < minCPURate {
					minCPURate = c
				}
				maxRate, maxCPURate = max(maxRate, r), max(maxCPURate, c)
				b.ReportMetric(r, fmt.Sprintf("rec/s-rmw%02d", k))
			} else {
				b.ReportMetric(r, "rec/s-fill")
			}
			p := peak(samples, prev, at)
			rate, cpuRate = append(rate, fmt.Sprintf("%6.0f", r)), append(cpuRate, fmt.Sprintf("%6.0f", c))
			for _, x := range []struct {
				to *[]string
				v  int64
			}{{&heapInuse, p.heapInuse}, {&heapLive, p.heapLive}, {&blocks, p.blocks}, {&objects, p.objects}, {&memtables, p.memtables}, {&rss, p.rss}, {&rssAnon, p.rssAnon}} {
				*x.to = append(*x.to, fmt.Sprintf("%6.0f", float64(x.v)/mib))
			}
			prev, prevCPU = at, atCPU
		}
		for _, row := range []struct {
			name string
			vs   []string
		}{{"rec/s", rate}, {"rec/CPU-s", cpuRate}, {"peak heapInuse MiB", heapInuse}, {"peak heap live MiB", heapLive},
			{"peak block cache MiB", blocks}, {"peak object caches MiB", objects}, {"peak memtables MiB", memtables}, {"peak RSS MiB", rss}, {"peak RssAnon MiB", rssAnon}} {
			b.Logf("%-23s %s | %s", row.name, row.vs[0], strings.Join(row.vs[1:], " "))
		}
		hwmNote := "since the benchmark started"
		if !hwmReset {
			hwmNote = "of the whole process (clear_refs failed)"
		}
		b.Logf("overall %.0f rec/s, %.2f cores; rmw tenths min/max %.0f/%.0f rec/s (%.2fx), per CPU-s %.0f/%.0f (%.2fx); VmHWM %.0f MiB %s; state on disk %.0f MB",
			float64(keys+updates)/wall.Seconds(), cpu.Seconds()/wall.Seconds(), minRate, maxRate, maxRate/minRate, minCPURate, maxCPURate, maxCPURate/minCPURate,
			float64(hwm)/mib, hwmNote, float64(disk)/1e6)
		b.ReportMetric(float64(keys+updates)/wall.Seconds(), "rec/s")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
		b.ReportMetric(maxRate/minRate, "rmw-max/min")
		b.ReportMetric(maxCPURate/minCPURate, "rmw-cpu-max/min")
		b.ReportMetric(float64(all.heapInuse)/mib, "heap-MiB")
		b.ReportMetric(float64(all.heapLive)/mib, "heaplive-MiB")
		b.ReportMetric(float64(all.blocks)/mib, "blockcache-MiB")
		b.ReportMetric(float64(all.objects)/mib, "objcache-MiB")
		b.ReportMetric(float64(all.memtables)/mib, "memtables-MiB")
		b.ReportMetric(float64(all.rss)/mib, "rss-MiB")
		b.ReportMetric(float64(hwm)/mib, "hwm-MiB")
		b.ReportMetric(float64(disk)/1e6, "disk-MB")
		b.ReportMetric(float64(keys*pebbleValueSize)/1e6, "values-MB")
	}
}

// newestCheckpoint returns the newest checkpoint in dir.
func newestCheckpoint(b *testing.B, dir string) checkpoint.Ref {
	b.Helper()
	d, err := checkpoint.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	refs, err := d.List()
	if err != nil || len(refs) == 0 {
		b.Fatalf("no checkpoint in %s: %v", dir, err)
	}
	newest := refs[0]
	for _, r := range refs {
		if r.ID > newest.ID {
			newest = r
		}
	}
	return newest
}

// nextCheckpoint waits for the first checkpoint after id to complete.
func nextCheckpoint(b *testing.B, env *eddy.Environment, r *running, id int64) eddy.CheckpointStats {
	b.Helper()
	for {
		for _, st := range env.CheckpointStats() {
			if st.ID > id {
				return st
			}
		}
		select {
		case <-r.done:
			b.Fatalf("the job ended before the checkpoint after %d: %v", id, r.err)
		case <-time.After(time.Millisecond):
		}
	}
}

// sharedFiles returns the shared files checkpoint id in dir references,
// with their sizes.
func sharedFiles(b *testing.B, dir string, id int64) map[string]int64 {
	b.Helper()
	d, err := checkpoint.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	refs, err := d.List()
	if err != nil {
		b.Fatal(err)
	}
	for _, ref := range refs {
		if ref.ID != id {
			continue
		}
		m, err := checkpoint.ReadMetadata(ref.Path)
		if err != nil {
			b.Fatal(err)
		}
		files := map[string]int64{}
		for _, op := range m.Operators {
			for _, st := range op.Subtasks {
				for _, bs := range st.Backends {
					for _, f := range bs.Files {
						if f.Shared != "" {
							files[f.Shared] = f.Size
						}
					}
				}
			}
		}
		return files
	}
	b.Fatalf("checkpoint %d is not in %s", id, dir)
	return nil
}

// newFiles describes the shared files of checkpoint id that checkpoint prev
// does not reference: how many, and the largest.
func newFiles(b *testing.B, dir string, prev, id int64) string {
	b.Helper()
	old := map[string]int64{}
	if prev > 0 {
		old = sharedFiles(b, dir, prev)
	}
	n, largest := 0, int64(0)
	for k, size := range sharedFiles(b, dir, id) {
		if _, ok := old[k]; !ok {
			n++
			largest = max(largest, size)
		}
	}
	return fmt.Sprintf("%4d new SSTs, largest %5.1f MB", n, float64(largest)/1e6)
}

// BenchmarkPebbleIncrementalCheckpoint builds about 1 GB of Pebble state
// (5.5 M keys × 192-byte values), takes a full checkpoint of it, changes 1% of
// the keys and takes the next checkpoint, then restores the latest one.
//
// A job's checkpoints are time-triggered, so the build job checkpoints as it
// goes; to measure a full upload cleanly a second job restores the build's
// last checkpoint and checkpoints into a new directory, whose first
// checkpoint must upload every file. That job then takes idle checkpoints
// (no input) until the compactions the bulk load left settle, changes 1% of
// the keys (spread over the key space) and takes the next checkpoint; the
// table lists every checkpoint with the SSTs it added. Finally a
// job with an input that ends at once restores the latest checkpoint; its
// run time minus that of the same job without state is the restore time.
func BenchmarkPebbleIncrementalCheckpoint(b *testing.B) {
	const (
		budget   = 256 << 20
		keys     = 5_500_000
		changed  = keys / 100
		interval = 2 * time.Second
		maxIdle  = 8
	)
	fn := func(i int64) touch {
		if i < keys {
			return touch{Key: i}
		}
		j := i - keys // 1%: one key in every 100, at a pseudo-random place
		return touch{Key: j*100 + int64(mix64(uint64(j))%100), Seq: 1}
	}
	for i := 0; i < b.N; i++ {
		root := b.TempDir()
		stateDir, buildChk, chk := filepath.Join(root, "state"), filepath.Join(root, "build"), filepath.Join(root, "chk")
		opts := func(warn *warnings, more ...eddy.Option) []eddy.Option {
			return append([]eddy.Option{eddy.WithParallelism(2), eddy.WithStateBackend(eddy.PebbleState(stateDir, budget)),
				eddy.WithRestartStrategy(eddy.NoRestart()), eddy.WithLogger(slog.New(warn))}, more...)
		}
		hwmReset := resetPeakRSS()
		b.ResetTimer()

		// Build: every key once.
		warn := &warnings{}
		prog := newProgress()
		src := &phasedSource{fn: fn}
		src.limit.Store(keys)
		env := eddy.NewEnvironment(opts(warn, eddy.WithCheckpointing(interval), eddy.WithCheckpointDir(buildChk), eddy.WithRetainedCheckpoints(1))...)
		pebbleStateJob(env, src, false, prog)
		t0 := time.Now()
		r := start(env, "build")
		built := prog.wait(b, r, keys).Sub(t0)
		awaitCovering(b, env, r, src, 1, keys)
		r.stop(b)
		var buildUploaded int64
		buildCheckpoints := env.CheckpointStats()
		for _, st := range buildCheckpoints {
			buildUploaded += st.Uploaded
		}
		buildRef := newestCheckpoint(b, buildChk)
		warn.check(b)

		// Restore the build into a job with a new checkpoint directory: full
		// checkpoint, 1% change, incremental checkpoint.
		warn = &warnings{}
		prog = newProgress()
		src = &phasedSource{fn: fn}
		src.limit.Store(keys)
		env = eddy.NewEnvironment(opts(warn, eddy.WithCheckpointing(interval), eddy.WithCheckpointDir(chk),
			eddy.WithRetainedCheckpoints(maxIdle+4), eddy.WithRestoreFrom(buildRef.Path))...)
		pebbleStateJob(env, src, false, prog)
		r = start(env, "incremental")
		first := buildRef.ID + 1
		full := awaitCovering(b, env, r, src, first, keys)
		// Idle checkpoints, with no input, upload what compactions write:
		// take them until two in a row upload less than 0.5% of the state
		// (the LSM has settled after the bulk load), at most maxIdle.
		last := full
		var idle []eddy.CheckpointStats
		for quiet := 0; quiet < 2 && len(idle) < maxIdle; {
			last = nextCheckpoint(b, env, r, last.ID)
			idle = append(idle, last)
			if last.Uploaded*200 < last.Bytes {
				quiet++
			} else {
				quiet = 0
			}
		}
		src.limit.Store(keys + changed) // right after a checkpoint: the next one is interval away
		tc := time.Now()
		changeTime := prog.wait(b, r, changed).Sub(tc)
		inc := awaitCovering(b, env, r, src, first, keys+changed)
		stats := env.CheckpointStats()
		r.stop(b)
		warn.check(b)
		latest := newestCheckpoint(b, chk)
		if latest.ID < inc.ID {
			b.Fatalf("newest checkpoint %d is older than %d", latest.ID, inc.ID)
		}
		// Any checkpoint between the last idle and the covering one (there
		// should be none) uploaded part of the change too.
		var changeUploaded, idleUploaded int64
		between := 0
		for _, st := range stats {
			if st.ID > last.ID && st.ID <= inc.ID {
				changeUploaded += st.Uploaded
				between++
			}
		}
		for _, st := range idle {
			idleUploaded += st.Uploaded
		}
		// The table: go test shows 10 lines of a benchmark's log without -v.
		var rows, idleUp []string
		prevID := int64(0)
		for _, st := range stats {
			if st.ID > inc.ID {
				break
			}
			kind := "idle"
			switch {
			case st.ID == full.ID:
				kind = "full"
			case st.ID == inc.ID:
				kind = "1% change"
			case st.ID > last.ID:
				kind = "during change"
			}
			files := newFiles(b, chk, prevID, st.ID)
			prevID = st.ID
			if kind == "idle" {
				idleUp = append(idleUp, fmt.Sprintf("%d: %.1f MB (%.1f%%, %s)", st.ID, float64(st.Uploaded)/1e6, 100*float64(st.Uploaded)/float64(st.Bytes), strings.TrimSpace(files)))
				continue
			}
			rows = append(rows, fmt.Sprintf("%3d %-13s %8.0f %11.1f %8.2f%% %10.2f %9.1f  %s", st.ID, kind, float64(st.Bytes)/1e6, float64(st.Uploaded)/1e6,
				100*float64(st.Uploaded)/float64(st.Bytes), st.Duration.Seconds(), st.Sync.Seconds()*1000, files))
		}

		// Restore time: the job whose input ends at once, with and without
		// the state.
		runEmpty := func(restore string) time.Duration {
			warn := &warnings{}
			src := &phasedSource{fn: fn}
			src.end.Store(true)
			var o []eddy.Option
			if restore != "" {
				src.limit.Store(keys + changed)
				o = append(o, eddy.WithRestoreFrom(restore))
			}
			env := eddy.NewEnvironment(opts(warn, o...)...)
			pebbleStateJob(env, src, false, newProgress())
			start := time.Now()
			if err := env.Execute(context.Background(), "restore"); err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			warn.check(b)
			return d
		}
		baseline := min(runEmpty(""), runEmpty(""))
		restoreWall := runEmpty(latest.Path)
		restore := restoreWall - baseline
		b.StopTimer()
		hwm := procStatus("VmHWM")

		pct := 100 * float64(changeUploaded) / float64(inc.Bytes)
		b.Logf("%d keys × %d B values (%.0f MB), %d keys changed (1%%); parallelism 2, budget %d MiB, checkpoint interval %v",
			keys, pebbleValueSize, float64(keys*pebbleValueSize)/1e6, changed, budget/mib, interval)
		b.Logf("build: %.1f s (%.0f rec/s); its %d checkpoints uploaded %.0f MB in all", built.Seconds(), keys/built.Seconds(), len(buildCheckpoints), float64(buildUploaded)/1e6)
		b.Logf("%3s %-13s %8s %11s %9s %10s %9s  %s", "id", "checkpoint", "size MB", "uploaded MB", "uploaded", "duration s", "pause ms", "SSTs not in the previous checkpoint")
		for _, row := range rows {
			b.Logf("%s", row)
		}
		b.Logf("idle checkpoints between full and change (compactions left by the load): %s", strings.Join(idleUp, "; "))
		hwmNote := ""
		if !hwmReset {
			hwmNote = " (of the whole process: clear_refs failed)"
		}
		b.Logf("the change took %.2f s; the %d checkpoint(s) covering it uploaded %.1f MB = %.2f%% of the state (target < 5%%); restore of checkpoint %d: %.2f s (job %.2f s − baseline %.2f s); VmHWM %.0f MiB%s",
			changeTime.Seconds(), between, float64(changeUploaded)/1e6, pct, latest.ID, restore.Seconds(), restoreWall.Seconds(), baseline.Seconds(), float64(hwm)/mib, hwmNote)
		b.ReportMetric(float64(full.Bytes)/1e6, "state-MB")
		b.ReportMetric(float64(full.Uploaded)/1e6, "full-upload-MB")
		b.ReportMetric(full.Duration.Seconds(), "full-checkpoint-s")
		b.ReportMetric(float64(idleUploaded)/1e6, "idle-upload-MB")
		b.ReportMetric(float64(changeUploaded)/1e6, "incr-upload-MB")
		b.ReportMetric(pct, "incr-upload-%")
		b.ReportMetric(inc.Duration.Seconds(), "incr-checkpoint-s")
		b.ReportMetric(restore.Seconds(), "restore-s")
		b.ReportMetric(keys/built.Seconds(), "build-rec/s")
	}
}

package hashlog_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state/hashlog"
)

// The key groups of the test logs: [254, 262) spans keys whose first byte is
// 0 (254, 255) and 1 (256 to 261), so that one-byte prefixes select part of
// the log's key groups.
const (
	testKGStart = 254
	testKGEnd   = 262
	// testSegSize is the smallest segment size, so that segments seal and
	// compactions run often.
	testSegSize = 64 << 10
)

// memCounter sums the deltas passed to Options.OnMemory.
type memCounter struct{ n int64 }

func (c *memCounter) add(d int64) { c.n += d }

// testOptions returns the options of a test log, counting its memory in mc
// if it is not nil.
func testOptions(mc *memCounter) hashlog.Options {
	opts := hashlog.Options{SegmentSize: testSegSize}
	if mc != nil {
		opts.OnMemory = mc.add
	}
	return opts
}

// openLog opens an empty log in dir, closed when the test ends.
func openLog(t *testing.T, dir string, kgStart, kgEnd int, mc *memCounter) *hashlog.Log {
	t.Helper()
	l, err := hashlog.Open(dir, kgStart, kgEnd, testOptions(mc))
	if err != nil {
		t.Fatalf("Open(%s, %d, %d): %v", dir, kgStart, kgEnd, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// model is what a log should hold: value by key.
type model map[string][]byte

// keysWith returns the keys of m that start with prefix, sorted.
func (m model) keysWith(prefix []byte) []string {
	var out []string
	for k := range m {
		if strings.HasPrefix(k, string(prefix)) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// deletePrefix removes the keys that start with prefix.
func (m model) deletePrefix(prefix []byte) {
	for k := range m {
		if strings.HasPrefix(k, string(prefix)) {
			delete(m, k)
		}
	}
}

// liveBytes returns the bytes of the records of m's entries in a log.
func (m model) liveBytes() int64 {
	var n int64
	for k, v := range m {
		n += recordSize(len(k), len(v))
	}
	return n
}

// recordSize returns the size of a set record of a key and value of these
// lengths: checksum, kind, two uvarint lengths, key and value.
func recordSize(klen, vlen int) int64 {
	return int64(5 + len(binary.AppendUvarint(nil, uint64(klen))) + len(binary.AppendUvarint(nil, uint64(vlen))) + klen + vlen)
}

// kgKey returns a key of key group kg followed by rest.
func kgKey(kg int, rest ...byte) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(kg)), rest...)
}

// workload draws random keys, values and prefixes for the log of the key
// groups [kgStart, kgEnd).
type workload struct {
	r              *rand.Rand
	kgStart, kgEnd int
	// bigValues says whether values larger than a segment are drawn.
	bigValues bool
	// maxValue is the size of the largest value drawn.
	maxValue int
	// width is the alphabet of the fourth byte of keys and extra the most
	// bytes after it: together they set the number of keys per key group.
	width, extra int
}

func newWorkload(seed uint64, kgStart, kgEnd int) *workload {
	return &workload{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), kgStart: kgStart, kgEnd: kgEnd, bigValues: true, width: 16, extra: 2}
}

// key returns a key of one of the key groups: the key group, then up to 4
// bytes from small alphabets, so that keys share prefixes of every length
// and are written again often.
func (w *workload) key() []byte {
	kg := w.kgStart + w.r.IntN(w.kgEnd-w.kgStart)
	if w.r.IntN(300) == 0 {
		return kgKey(kg) // the shortest key of the key group
	}
	k := kgKey(kg, byte(w.r.IntN(4)), byte(w.r.IntN(w.width)))
	for range w.r.IntN(w.extra + 1) {
		k = append(k, byte(w.r.IntN(4)))
	}
	return k
}

// value returns a value of 0 bytes to a few KiB, and rarely one larger than
// a segment.
func (w *workload) value() []byte {
	var n int
	switch x := w.r.IntN(1000); {
	case x < 2 && w.bigValues:
		n = testSegSize + w.r.IntN(testSegSize)
	case x < 100:
		n = 256 + w.r.IntN(4096)
	case x < 500:
		n = 16 + w.r.IntN(240)
	default:
		n = w.r.IntN(16)
	}
	w.maxValue = max(w.maxValue, n)
	v := make([]byte, n)
	for i := 0; i < n; i += 8 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], w.r.Uint64())
		copy(v[i:], b[:])
	}
	return v
}

// prefix returns a prefix of 0 to 4 bytes; those of 0 and 1 bytes are rare,
// as they select many key groups.
func (w *workload) prefix() []byte {
	switch x := w.r.IntN(20); {
	case x == 0:
		return nil
	case x <= 3:
		return []byte{byte(w.r.IntN(3))} // 0, 1: some key groups; 2: none
	case x <= 8:
		return kgKey(w.kgStart - 1 + w.r.IntN(w.kgEnd-w.kgStart+2)) // one outside at each end
	default:
		return w.key()[:2+1+w.r.IntN(2)]
	}
}

// step applies a random operation to l and m and checks its result. It
// reports whether the operation was a Set or SetBatch (after which
// compaction has run).
func (w *workload) step(t *testing.T, l *hashlog.Log, m model) bool {
	t.Helper()
	switch x := w.r.IntN(1000); {
	case x < 550:
		k, v := w.key(), w.value()
		if err := l.Set(k, v); err != nil {
			t.Fatalf("Set(%x, %d bytes): %v", k, len(v), err)
		}
		m[string(k)] = v
		return true
	case x < 580:
		n := 1 + w.r.IntN(8)
		keys, values := make([][]byte, n), make([][]byte, n)
		for i := range n {
			keys[i], values[i] = w.key(), w.value()
			if i > 0 && w.r.IntN(4) == 0 {
				keys[i] = keys[w.r.IntN(i)] // a key twice: the last value wins
			}
		}
		if err := l.SetBatch(keys, values); err != nil {
			t.Fatalf("SetBatch(%d keys): %v", n, err)
		}
		for i := range n {
			m[string(keys[i])] = values[i]
		}
		return true
	case x < 750:
		k := w.key()
		if err := l.Delete(k); err != nil {
			t.Fatalf("Delete(%x): %v", k, err)
		}
		delete(m, string(k))
	case x < 920:
		checkGet(t, l, m, w.key())
	case x < 995:
		checkScan(t, l, m, w.prefix())
	default:
		p := w.prefix()
		if len(p) == 0 && w.r.IntN(4) != 0 {
			p = kgKey(w.kgStart + w.r.IntN(w.kgEnd-w.kgStart)) // fewer full wipes
		}
		if err := l.DeletePrefix(p); err != nil {
			t.Fatalf("DeletePrefix(%x): %v", p, err)
		}
		m.deletePrefix(p)
		checkScan(t, l, m, p)
	}
	return false
}

// checkGet checks that l's value of k is m's.
func checkGet(t *testing.T, l *hashlog.Log, m model, k []byte) {
	t.Helper()
	v, ok, err := l.Get(k)
	if err != nil {
		t.Fatalf("Get(%x): %v", k, err)
	}
	want, wok := m[string(k)]
	if ok != wok || !bytes.Equal(v, want) {
		t.Fatalf("Get(%x) = %d bytes, %v; want %d bytes, %v", k, len(v), ok, len(want), wok)
	}
}

// checkScan checks that Scan(prefix) visits exactly m's keys with prefix, in
// strictly increasing order, with m's values.
func checkScan(t *testing.T, l *hashlog.Log, m model, prefix []byte) {
	t.Helper()
	want := m.keysWith(prefix)
	i := 0
	var prev []byte
	failed := false
	err := l.Scan(prefix, func(k, v []byte) bool {
		switch {
		case prev != nil && bytes.Compare(prev, k) >= 0:
			t.Errorf("Scan(%x): key %x after %x", prefix, k, prev)
		case i >= len(want) || string(k) != want[i]:
			t.Errorf("Scan(%x): key %d is %x, want %d keys %x", prefix, i, k, len(want), want[min(i, len(want)):min(i+1, len(want))])
		case !bytes.Equal(v, m[string(k)]):
			t.Errorf("Scan(%x): key %x has a value of %d bytes, want %d bytes", prefix, k, len(v), len(m[string(k)]))
		default:
			prev = append(prev[:0], k...)
			i++
			return true
		}
		failed = true
		return false
	})
	if err != nil {
		t.Fatalf("Scan(%x): %v", prefix, err)
	}
	if failed {
		t.FailNow()
	}
	if i != len(want) {
		t.Fatalf("Scan(%x) visited %d keys, want %d", prefix, i, len(want))
	}
}

// checkLog compares all of l with m: Len, a Get of every key and a Scan of
// every key.
func checkLog(t *testing.T, l *hashlog.Log, m model) {
	t.Helper()
	if n := l.Len(); n != len(m) {
		t.Fatalf("Len() = %d, want %d", n, len(m))
	}
	for k := range m {
		checkGet(t, l, m, []byte(k))
	}
	checkScan(t, l, m, nil)
}

// segFiles returns the number and the total size of the segment files in
// dir.
func segFiles(t *testing.T, dir string) (files int, size int64) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "vlog-*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		size += st.Size()
	}
	return len(m), size
}

// checkDisk checks, right after a Set (so after compaction), that the
// segment files in dir take at most about 3 times the live record bytes of m
// and two segments.
func checkDisk(t *testing.T, dir string, m model) {
	t.Helper()
	files, size := segFiles(t, dir)
	live := m.liveBytes()
	if limit := 3*live + 2*testSegSize; size > limit {
		t.Fatalf("%d segment files of %d bytes for %d live bytes: more than %d (compaction does not keep up)", files, size, live, limit)
	}
}

// checkMemory checks Memory against the OnMemory deltas and its bounds: more
// than 0 while the log has entries, at most about 40 bytes a key (peak is the
// most keys the log held) with the active segment.
func checkMemory(t *testing.T, l *hashlog.Log, mc *memCounter, peak, maxValue int) {
	t.Helper()
	mem := l.Memory()
	if mc != nil && mc.n != mem {
		t.Fatalf("Memory() = %d, but the OnMemory deltas add up to %d", mem, mc.n)
	}
	if l.Len() > 0 && mem <= 0 {
		t.Fatalf("Memory() = %d with %d entries", mem, l.Len())
	}
	if limit := int64(40*peak + 256*(testKGEnd-testKGStart) + 2*testSegSize + maxValue); mem > limit {
		t.Fatalf("Memory() = %d for at most %d keys: more than %d", mem, peak, limit)
	}
}

// TestRandomOpsMatchMap runs random Set, Get, Delete, DeletePrefix and Scan
// calls on a log of small segments, so that segments seal and are compacted
// many times, and checks every result, and regularly all the log, against a
// map; that compaction keeps the segment files within a few times the live
// bytes; and that Memory is consistent.
func TestRandomOpsMatchMap(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		dir := t.TempDir()
		var mc memCounter
		l := openLog(t, dir, testKGStart, testKGEnd, &mc)
		if got := l.SegmentSize(); got != testSegSize {
			t.Fatalf("SegmentSize() = %d, want %d", got, testSegSize)
		}
		w := newWorkload(seed, testKGStart, testKGEnd)
		m := model{}
		peak := 0
		for i := range 20000 {
			w.step(t, l, m)
			peak = max(peak, len(m))
			if i%1000 == 999 {
				checkLog(t, l, m)
				k, v := w.key(), w.value()
				if err := l.Set(k, v); err != nil {
					t.Fatal(err)
				}
				m[string(k)] = v
				peak = max(peak, len(m))
				checkDisk(t, dir, m)
				checkMemory(t, l, &mc, peak, w.maxValue)
			}
		}
		checkLog(t, l, m)
		if err := l.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if mem := l.Memory(); mem != 0 || mc.n != 0 {
			t.Fatalf("after Close: Memory() = %d, OnMemory deltas add up to %d; want 0", mem, mc.n)
		}
	}
}

// TestDeleteEverythingReclaimsDisk deletes every key, by DeletePrefix and by
// Delete, and checks that the next writes compact the segments away.
func TestDeleteEverythingReclaimsDisk(t *testing.T) {
	for _, byPrefix := range []bool{true, false} {
		dir := t.TempDir()
		var mc memCounter
		l := openLog(t, dir, testKGStart, testKGEnd, &mc)
		w := newWorkload(3, testKGStart, testKGEnd)
		w.bigValues = false
		m := model{}
		for range 3000 {
			k, v := w.key(), w.value()
			if err := l.Set(k, v); err != nil {
				t.Fatal(err)
			}
			m[string(k)] = v
		}
		if files, _ := segFiles(t, dir); files < 4 {
			t.Fatalf("%d segment files after 3000 writes: the test needs more", files)
		}
		if byPrefix {
			if err := l.DeletePrefix(nil); err != nil {
				t.Fatal(err)
			}
		} else {
			for k := range m {
				if err := l.Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
			}
		}
		clear(m)
		checkLog(t, l, m)
		if mem := l.Memory(); byPrefix && mem > testSegSize {
			t.Fatalf("Memory() = %d after DeletePrefix(nil), want at most the active segment (%d)", mem, testSegSize)
		}
		for range 10 {
			k := w.key()
			if err := l.Set(k, []byte("v")); err != nil {
				t.Fatal(err)
			}
			m[string(k)] = []byte("v")
		}
		checkLog(t, l, m)
		checkDisk(t, dir, m)
		checkMemory(t, l, &mc, 3000, w.maxValue)
	}
}

// TestPrefixesAcrossKeyGroups checks DeletePrefix and Scan with prefixes of
// 0, 1, 2 and more bytes on a log whose key groups end at the last one,
// 0xFFFF, so that the one-byte prefix 0xFF selects key groups up to the end.
func TestPrefixesAcrossKeyGroups(t *testing.T) {
	const start, end = 0xFEFE, 1 << 16
	l := openLog(t, t.TempDir(), start, end, nil)
	m := model{}
	for kg := start; kg < end; kg++ {
		for i := range 40 {
			k := kgKey(kg, byte(i%4), byte(i))
			v := bytes.Repeat([]byte{byte(kg), byte(i)}, 5*i)
			if err := l.Set(k, v); err != nil {
				t.Fatal(err)
			}
			m[string(k)] = v
		}
	}
	for _, p := range [][]byte{nil, {0xFE}, {0xFF}, {0x00}, kgKey(0xFEFF), kgKey(0xFFFF), kgKey(0xFFFF, 2), kgKey(0xFEFE, 3, 7), kgKey(0x0001)} {
		checkScan(t, l, m, p)
	}
	steps := [][]byte{kgKey(0xFFFF, 1), kgKey(0xFEFF, 2, 6), kgKey(0x1234), {0x01}, {0xFF}, kgKey(0xFEFE), {0xFE}}
	for _, p := range steps {
		if err := l.DeletePrefix(p); err != nil {
			t.Fatalf("DeletePrefix(%x): %v", p, err)
		}
		m.deletePrefix(p)
		checkLog(t, l, m)
		for _, q := range [][]byte{nil, {0xFE}, {0xFF}, kgKey(0xFFFF), kgKey(0xFFFF, 2)} {
			checkScan(t, l, m, q)
		}
	}
	if len(m) != 0 {
		t.Fatalf("the test should delete every key, %d left", len(m))
	}
}

// TestScanSetsAndDeletes runs Scans whose fn Gets other keys and Sets,
// Deletes, or Deletes and Sets again the key it is given (with values large
// enough to seal segments during the Scan), and checks that each Scan visits
// exactly the keys present when it started, with the values they had, and
// that the log matches the map afterwards.
func TestScanSetsAndDeletes(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testKGStart, testKGEnd, nil)
	w := newWorkload(4, testKGStart, testKGEnd)
	m := model{}
	for range 6000 {
		w.step(t, l, m)
	}
	for round := range 40 {
		prefix := w.prefix()
		if round%10 == 0 {
			prefix = nil
		}
		want := m.keysWith(prefix)
		stopAt := len(want) + 1
		if round%7 == 3 && len(want) > 0 {
			stopAt = w.r.IntN(len(want)) + 1
		}
		var visited []string
		failed := false
		fail := func(format string, args ...any) bool {
			t.Errorf("round %d, Scan(%x): "+format, append([]any{round, prefix}, args...)...)
			failed = true
			return false
		}
		err := l.Scan(prefix, func(k, v []byte) bool {
			ks := string(k)
			visited = append(visited, ks)
			if len(visited) > len(want) || want[len(visited)-1] != ks {
				return fail("visit %d is key %x, want %d keys", len(visited), k, len(want))
			}
			if mv, ok := m[ks]; !ok || !bytes.Equal(v, mv) {
				return fail("key %x: value of %d bytes, want %d bytes (present %v)", k, len(v), len(mv), ok)
			}
			other := w.key()
			got, ok, err := l.Get(other)
			if mv, mok := m[string(other)]; err != nil || ok != mok || !bytes.Equal(got, mv) {
				return fail("Get(%x) = %d bytes, %v, %v; want %d bytes, %v", other, len(got), ok, err, len(mv), mok)
			}
			if string(k) != ks || !bytes.Equal(v, m[ks]) {
				return fail("key %x or its value changed by a Get of another key", k)
			}
			switch w.r.IntN(4) {
			case 0:
				nv := w.value()
				if err := l.Set(k, nv); err != nil {
					return fail("Set(%x): %v", k, err)
				}
				m[ks] = nv
			case 1:
				if err := l.Delete(k); err != nil {
					return fail("Delete(%x): %v", k, err)
				}
				delete(m, ks)
			case 2:
				if err := l.Delete(k); err != nil {
					return fail("Delete(%x): %v", k, err)
				}
				nv := w.value()
				if err := l.Set(k, nv); err != nil {
					return fail("Set(%x) after Delete: %v", k, err)
				}
				m[ks] = nv
			}
			got, ok, err = l.Get([]byte(ks))
			if mv, mok := m[ks]; err != nil || ok != mok || !bytes.Equal(got, mv) {
				return fail("Get(%x) after changing it = %d bytes, %v, %v; want %d bytes, %v", ks, len(got), ok, err, len(mv), mok)
			}
			return len(visited) < stopAt
		})
		if err != nil {
			t.Fatalf("round %d, Scan(%x): %v", round, prefix, err)
		}
		if failed {
			t.FailNow()
		}
		if n := min(stopAt, len(want)); len(visited) != n {
			t.Fatalf("round %d, Scan(%x) visited %d keys, want %d", round, prefix, len(visited), n)
		}
		checkLog(t, l, m)
		for range 200 {
			w.step(t, l, m)
		}
		k := w.key()
		if err := l.Set(k, nil); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = nil
		checkDisk(t, dir, m)
	}
	checkLog(t, l, m)
}

// TestGetValueAsSetInput Sets keys to values that Get returned (a value in
// the log, written again into it), whole or in part, to other keys and to
// the key itself, over many seals and compactions; and checks that a value
// from Get stays valid across Gets and that appending to it does not change
// the log.
func TestGetValueAsSetInput(t *testing.T) {
	l := openLog(t, t.TempDir(), testKGStart, testKGEnd, nil)
	w := newWorkload(5, testKGStart, testKGEnd)
	m := model{}
	keys := make([][]byte, 24)
	for i := range keys {
		keys[i] = kgKey(testKGStart+i%(testKGEnd-testKGStart), byte(i))
		v := make([]byte, 1000+w.r.IntN(4000))
		for j := range v {
			v[j] = byte(w.r.Uint32())
		}
		if err := l.Set(keys[i], v); err != nil {
			t.Fatal(err)
		}
		m[string(keys[i])] = v
	}
	for i := range 600 {
		src, dst := keys[w.r.IntN(len(keys))], keys[w.r.IntN(len(keys))]
		v, ok, err := l.Get(src)
		if err != nil || !ok {
			t.Fatalf("Get(%x) = %v, %v", src, ok, err)
		}
		want := m[string(src)]
		// A second Get leaves the first value as it was.
		if _, _, err := l.Get(dst); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(v, want) {
			t.Fatalf("step %d: the value of %x changed with a Get of %x", i, src, dst)
		}
		switch i % 4 {
		case 1:
			v, want = v[len(v)/3:], want[len(want)/3:]
		case 2:
			dst = src // the key's own value, written again
		case 3:
			dst = src
			v, want = v[:len(v)/2], want[:len(want)/2]
		}
		if err := l.Set(dst, v); err != nil {
			t.Fatalf("step %d: Set(%x): %v", i, dst, err)
		}
		m[string(dst)] = bytes.Clone(want)
		checkGet(t, l, m, dst)
		if len(m[string(dst)]) < 200 { // keep the values large enough to seal often
			nv := bytes.Repeat([]byte{byte(i)}, 3000)
			if err := l.Set(dst, nv); err != nil {
				t.Fatal(err)
			}
			m[string(dst)] = nv
		}
	}
	checkLog(t, l, m)

	// Appending to a value from Get must not write into the log: the record
	// after it (in the active segment) stays as it was.
	a, b := kgKey(testKGStart, 0xA0), kgKey(testKGStart, 0xB0)
	for _, k := range [][]byte{a, b} {
		if err := l.Set(k, []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = []byte("0123456789")
	}
	v, _, err := l.Get(a)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(v, bytes.Repeat([]byte{'x'}, 64)...)
	checkLog(t, l, m)
}

// TestKeysOutsideKeyGroups checks that keys shorter than a key group or of
// key groups outside the log's are refused by Set, Get and Delete, and that
// such prefixes delete and scan nothing.
func TestKeysOutsideKeyGroups(t *testing.T) {
	l := openLog(t, t.TempDir(), testKGStart, testKGEnd, nil)
	m := model{}
	for kg := testKGStart; kg < testKGEnd; kg++ {
		k := kgKey(kg, 1)
		if err := l.Set(k, []byte{byte(kg)}); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = []byte{byte(kg)}
	}
	bad := [][]byte{nil, {}, {0x00}, {0x01}, kgKey(testKGStart - 1), kgKey(testKGStart-1, 1), kgKey(testKGEnd), kgKey(testKGEnd, 1), kgKey(0), kgKey(0xFFFF, 1)}
	for _, k := range bad {
		if err := l.Set(k, []byte("v")); err == nil {
			t.Errorf("Set(%x) succeeded, want an error", k)
		}
		if _, _, err := l.Get(k); err == nil {
			t.Errorf("Get(%x) succeeded, want an error", k)
		}
		if err := l.Delete(k); err == nil {
			t.Errorf("Delete(%x) succeeded, want an error", k)
		}
		if err := l.SetBatch([][]byte{kgKey(testKGStart, 2), k}, [][]byte{[]byte("a"), []byte("b")}); err == nil {
			t.Errorf("SetBatch with key %x succeeded, want an error", k)
		}
		if err := l.Delete(kgKey(testKGStart, 2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.SetBatch(nil, nil); err != nil {
		t.Errorf("SetBatch of no keys: %v", err)
	}
	for _, p := range [][]byte{kgKey(testKGStart - 1), kgKey(testKGEnd), kgKey(testKGEnd, 1), {0x02}, {0xFF}} {
		checkScan(t, l, m, p)
		if err := l.DeletePrefix(p); err != nil {
			t.Errorf("DeletePrefix(%x): %v", p, err)
		}
	}
	checkLog(t, l, m)
}

// TestOpenOptions checks the key group ranges Open refuses and the clamping
// of the segment size.
func TestOpenOptions(t *testing.T) {
	dir := t.TempDir()
	for _, r := range [][2]int{{-1, 3}, {5, 4}, {0, 1<<16 + 1}} {
		if l, err := hashlog.Open(dir, r[0], r[1], hashlog.Options{}); err == nil {
			l.Close()
			t.Errorf("Open(%d, %d) succeeded, want an error", r[0], r[1])
		}
	}
	for _, c := range []struct{ in, want int }{
		{0, hashlog.DefaultSegmentSize},
		{1, 64 << 10},
		{100 << 10, 100 << 10},
		{2 << 30, 1 << 30},
	} {
		l, err := hashlog.Open(dir, 0, 1<<16, hashlog.Options{SegmentSize: c.in})
		if err != nil {
			t.Fatal(err)
		}
		if got := l.SegmentSize(); got != c.want {
			t.Errorf("SegmentSize %d: SegmentSize() = %d, want %d", c.in, got, c.want)
		}
		if l.Len() != 0 || l.Memory() != 0 {
			t.Errorf("a new log has Len() = %d, Memory() = %d; want 0, 0", l.Len(), l.Memory())
		}
		l.Close()
	}
	// An empty key group range holds nothing.
	l := openLog(t, dir, 7, 7, nil)
	if err := l.Set(kgKey(7), nil); err == nil {
		t.Error("Set on a log of no key groups succeeded")
	}
	checkLog(t, l, model{})
}

// TestSetOptions checks that SetOptions clamps the segment size as Open
// does, that segments started after it take its size (larger, with an
// active segment that a Checkpoint wrote as a part, sealed at its own size;
// smaller, with an active segment of the larger size), and that its
// OnMemory is called at once with the log's memory and then with every
// change, down to 0 at Close.
func TestSetOptions(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testKGStart, testKGEnd, nil)
	w := newWorkload(8, testKGStart, testKGEnd)
	w.bigValues = false
	m := model{}
	for range 3000 {
		w.step(t, l, m)
	}
	for _, c := range []struct{ in, want int }{
		{0, hashlog.DefaultSegmentSize},
		{1, 64 << 10},
		{2 << 30, 1 << 30},
		{testSegSize, testSegSize},
	} {
		var mc memCounter
		l.SetOptions(hashlog.Options{SegmentSize: c.in, OnMemory: mc.add})
		if got := l.SegmentSize(); got != c.want {
			t.Errorf("SetOptions(SegmentSize %d): SegmentSize() = %d, want %d", c.in, got, c.want)
		}
		if mc.n != l.Memory() || mc.n <= 0 {
			t.Fatalf("SetOptions(SegmentSize %d) reported %d bytes to OnMemory, Memory() = %d", c.in, mc.n, l.Memory())
		}
	}
	checkLog(t, l, m)

	// newSegments writes until n segment files not in seen are in dir, and
	// returns the sizes of all the new ones (parts left out).
	seen := listDir(t, dir)
	newSegments := func(mc *memCounter, n int) []int64 {
		t.Helper()
		var sizes []int64
		for i := 0; len(sizes) < n; i++ {
			if i == 100000 {
				t.Fatalf("%d new segments after 100000 operations, want %d", len(sizes), n)
			}
			w.step(t, l, m)
			if mc.n != l.Memory() {
				t.Fatalf("Memory() = %d, but the OnMemory deltas add up to %d", l.Memory(), mc.n)
			}
			if i%20 != 0 {
				continue
			}
			sizes = sizes[:0]
			for name, size := range listDir(t, dir) {
				if _, ok := seen[name]; !ok && !isPart(name) {
					sizes = append(sizes, size)
				}
			}
		}
		for name, size := range listDir(t, dir) {
			seen[name] = size
		}
		return sizes
	}

	// Larger segments, from the next one on; the active one, written as a
	// part by a Checkpoint, is sealed at the size it was started with.
	names, err := l.Checkpoint(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(names, isPart) {
		t.Fatalf("checkpoint %q: want the active segment as a part", names)
	}
	var mc memCounter
	l.SetOptions(hashlog.Options{SegmentSize: 3 * testSegSize, OnMemory: mc.add})
	if mc.n != l.Memory() {
		t.Fatalf("SetOptions reported %d bytes, Memory() = %d", mc.n, l.Memory())
	}
	sizes := newSegments(&mc, 4)
	if largest := slices.Max(sizes); largest <= testSegSize || largest > 3*testSegSize {
		t.Fatalf("new segments of %v bytes with a segment size of %d: want some larger than %d", sizes, 3*testSegSize, testSegSize)
	}
	checkLog(t, l, m)

	// Smaller segments: the active one is sealed at its size or earlier,
	// the next ones take the new size.
	var mc2 memCounter
	l.SetOptions(hashlog.Options{SegmentSize: testSegSize, OnMemory: mc2.add})
	newSegments(&mc2, 1)
	for _, size := range newSegments(&mc2, 4) {
		if size > testSegSize {
			t.Fatalf("a segment of %d bytes after SetOptions(SegmentSize %d)", size, testSegSize)
		}
	}
	checkLog(t, l, m)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if mc2.n != 0 {
		t.Fatalf("after Close, the OnMemory deltas add up to %d, want 0", mc2.n)
	}
}

// TestIsLogFile checks IsLogFile on the names the package writes and on
// others.
func TestIsLogFile(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testKGStart, testKGEnd, nil)
	w := newWorkload(6, testKGStart, testKGEnd)
	for range 500 {
		if err := l.Set(w.key(), w.value()); err != nil {
			t.Fatal(err)
		}
	}
	cp := filepath.Join(t.TempDir(), "cp")
	if err := os.MkdirAll(cp, 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := l.Checkpoint(cp)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) < 2 {
		t.Fatalf("names %q: want segments", names)
	}
	for _, n := range names {
		if !hashlog.IsLogFile(n) {
			t.Errorf("IsLogFile(%q) = false for a file the log wrote", n)
		}
	}
	if !slices.ContainsFunc(names, isPart) {
		t.Fatalf("names %q: want a part of the active segment", names)
	}
	for _, n := range []string{"vlog-000001.seg", "vlog-000042.seg", "vlog-1234567.seg", "vlog-9999999999999999999.seg", "vlog-000001.0.part", "vlog-000042.65536.part", "vlog-000001.4294967295.part"} {
		if !hashlog.IsLogFile(n) {
			t.Errorf("IsLogFile(%q) = false", n)
		}
	}
	for _, n := range []string{"", "vlog-", "vlog-.seg", "vlog-abc.seg", "vlog-000001.sst", "vlog-000001.seg.tmp", "vlog-000001", "xvlog-000001.seg", "VLOG-000001.SEG", "000001.sst", "MANIFEST-000001", "OPTIONS-000003", "vlog-000001.idx.part", "vlog-0x1.seg", "vlog-000042.idx", "vlog-000001.idx", "vlog-1.seg.idx", "vlog--1.seg", "vlog-+1.seg",
		"vlog-000001.part", "vlog-000001..part", "vlog-000001.x.part", "vlog-000001.0.part.tmp", "vlog-000001.-1.part", "vlog-000001.+1.part", "vlog-1.seg.0.part", "vlog-000001.0.seg", "vlog-000001.0.0.part", "vlog-000001.12345678901.part", "vlog-.0.part", "vlog-x.0.part", "vlog-000001.0.PART",
		// Only the names the log writes: six digits at least, no segment 0.
		"vlog-0.seg", "vlog-000000.seg", "vlog-1.seg", "vlog-0000001.seg", "vlog-1.0.part", "vlog-000001.007.part", "vlog-000000.0.part"} {
		if hashlog.IsLogFile(n) {
			t.Errorf("IsLogFile(%q) = true for a name the log does not write", n)
		}
	}
}

// TestCorruptRecordInLiveLog damages a record of a sealed segment of a
// writable log in place (its file written, its size unchanged) and checks
// that Get and Scan of it fail with ErrCorrupt naming the file, and that the
// other keys still read.
func TestCorruptRecordInLiveLog(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testKGStart, testKGEnd, nil)
	m := model{}
	var keys [][]byte
	for i := range 400 {
		k := kgKey(testKGStart+i%(testKGEnd-testKGStart), 'k', 'e', 'y', byte(i>>8), byte(i))
		v := bytes.Repeat([]byte{byte(i)}, 500)
		if err := l.Set(k, v); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = v
		keys = append(keys, k)
	}
	segs, err := filepath.Glob(filepath.Join(dir, "vlog-*.seg"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no sealed segment after 200 KB of writes: %v", err)
	}
	name := filepath.Base(segs[0])
	// A byte of the value of the key 10 records into the first segment.
	damaged := keys[10]
	flipByte(t, segs[0], keyOffset(t, segs[0], damaged)+int64(len(damaged))+100)
	for _, k := range keys {
		v, ok, err := l.Get(k)
		if bytes.Equal(k, damaged) {
			if !errorsIsCorrupt(err) || !strings.Contains(err.Error(), name) {
				t.Fatalf("Get(%x) of the damaged record = %d bytes, %v, %v; want an error wrapping ErrCorrupt naming %s", k, len(v), ok, err, name)
			}
			continue
		}
		if err != nil || !ok || !bytes.Equal(v, m[string(k)]) {
			t.Fatalf("Get(%x) = %d bytes, %v, %v; want %d bytes", k, len(v), ok, err, len(m[string(k)]))
		}
	}
	err = l.Scan(nil, func(k, v []byte) bool { return true })
	if !errorsIsCorrupt(err) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Scan: %v; want an error wrapping ErrCorrupt naming %s", err, name)
	}
}

// keyOffset returns the offset of the only occurrence of key in the file at
// path.
func keyOffset(t *testing.T, path string, key []byte) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, key)
	if i < 0 || bytes.Contains(data[i+1:], key) {
		t.Fatalf("key %x is not once in %s", key, path)
	}
	return int64(i)
}

// flipByte inverts the byte at off of the file at path (the middle of the
// file if off < 0), writing it in place.
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off = st.Size() / 2
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xFF
	if _, err := f.WriteAt(b[:], off); err != nil {
		t.Fatal(err)
	}
}

// cloneModel returns a copy of m (values are never changed in place).
func cloneModel(m model) model { return maps.Clone(m) }

// errorsIsCorrupt reports whether err wraps ErrCorrupt.
func errorsIsCorrupt(err error) bool { return errors.Is(err, hashlog.ErrCorrupt) }

// TestCompactionTerminatesHalfFullSegments writes values of about half a
// segment, so that every segment is sealed about half full (one record, or
// two a little smaller), over a few keys set again and again, deleted, and
// set in batches, with checkpoints now and then: compaction's copies seal as
// sparse as the segments they replace, and every Set, Delete, SetBatch and
// Checkpoint must still return (the writes run on another goroutine, and the
// test fails after a generous 60 s rather than hang). The log then matches
// the map, and its files stay within a few times the live bytes.
func TestCompactionTerminatesHalfFullSegments(t *testing.T) {
	// Values of one size, whose records are a few bytes more than half a
	// segment: one a segment, each sealed a little over half full.
	t.Run("one size", func(t *testing.T) { halfSegmentWrites(t, func(*rand.Rand) int { return testSegSize/2 - 10 }) })
	// Values of sizes around half a segment: some pairs fit, and segments
	// of one record smaller than half are sealed.
	t.Run("around half", func(t *testing.T) {
		halfSegmentWrites(t, func(r *rand.Rand) int { return testSegSize/2 - 60 + r.IntN(120) })
	})
}

// halfSegmentWrites runs TestCompactionTerminatesHalfFullSegments with
// values of size(r) bytes.
func halfSegmentWrites(t *testing.T, size func(*rand.Rand) int) {
	dir := t.TempDir()
	l, err := hashlog.Open(dir, testKGStart, testKGEnd, testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	m := model{}
	r := rand.New(rand.NewPCG(100, 101))
	value := func() []byte {
		v := make([]byte, size(r))
		v[0] = byte(r.Uint32())
		return v
	}
	key := func() []byte { return kgKey(testKGStart+r.IntN(testKGEnd-testKGStart), byte(r.IntN(4))) }
	cps := t.TempDir()
	done := make(chan error, 1)
	go func() {
		for i := range 2000 {
			if i%50 == 49 {
				// A checkpoint, which writes the active segment as a part
				// and leaves it active.
				d, err := os.MkdirTemp(cps, "cp")
				if err == nil {
					_, err = l.Checkpoint(d)
				}
				if err != nil {
					done <- fmt.Errorf("write %d: Checkpoint: %w", i, err)
					return
				}
			}
			switch x := r.IntN(10); {
			case x == 0:
				k := key()
				if err := l.Delete(k); err != nil {
					done <- fmt.Errorf("write %d: Delete(%x): %w", i, k, err)
					return
				}
				delete(m, string(k))
			case x == 1:
				n := 2 + r.IntN(3)
				keys, values := make([][]byte, n), make([][]byte, n)
				for j := range n {
					keys[j], values[j] = key(), value()
				}
				if err := l.SetBatch(keys, values); err != nil {
					done <- fmt.Errorf("write %d: SetBatch: %w", i, err)
					return
				}
				for j := range n {
					m[string(keys[j])] = values[j]
				}
			default:
				k, v := key(), value()
				if err := l.Set(k, v); err != nil {
					done <- fmt.Errorf("write %d: Set(%x): %w", i, k, err)
					return
				}
				m[string(k)] = v
			}
		}
		done <- nil
	}()
	// A compaction that never ends hangs here, until go test's -timeout
	// fails the run with every goroutine's stack.
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkLog(t, l, m)
	checkDisk(t, dir, m)
	files, total := segFiles(t, dir)
	t.Logf("%d keys, %d segment files of %d bytes", len(m), files, total)
}

package hashlog_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/eddystream/eddy/internal/state/hashlog"
)

// newDir returns a new, empty directory for a checkpoint.
func newDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "checkpoint")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// listDir returns the size of every file in dir by name.
func listDir(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int64, len(ents))
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = info.Size()
	}
	return out
}

// dirState returns the size and a digest of the bytes of every file in dir,
// by name.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, size := range listDir(t, dir) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = fmt.Sprintf("%d bytes, sha256 %x", size, sha256.Sum256(data))
	}
	return out
}

// sameState checks that dir holds the files of before, with the same bytes.
func sameState(t *testing.T, what, dir string, before map[string]string) {
	t.Helper()
	if after := dirState(t, dir); !maps.Equal(before, after) {
		t.Fatalf("%s changed %s: files before %v, after %v", what, dir, before, after)
	}
}

// copyDir copies the files of dir (not links: the copies share nothing with
// the originals) into a new directory and returns it.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	to := newDir(t)
	for name := range listDir(t, dir) {
		in, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(to, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// loadLog loads the checkpoint in dir for the key groups [kgStart, kgEnd),
// closed when the test ends.
func loadLog(t *testing.T, dir string, kgStart, kgEnd int, readOnly bool, mc *memCounter) *hashlog.Log {
	t.Helper()
	l, err := hashlog.Load(dir, kgStart, kgEnd, testOptions(mc), readOnly)
	if err != nil {
		t.Fatalf("Load(%s, %d, %d, readOnly %v): %v", dir, kgStart, kgEnd, readOnly, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// checkpoint checkpoints l into a new directory, checks the names it returns
// against the directory (sorted, segments only), and returns the directory
// and the names.
func checkpoint(t *testing.T, l *hashlog.Log) (string, []string) {
	t.Helper()
	dir := newDir(t)
	names, err := l.Checkpoint(dir)
	if err != nil {
		t.Fatalf("Checkpoint(%s): %v", dir, err)
	}
	if !slices.IsSorted(names) {
		t.Fatalf("Checkpoint returned names %q, not sorted", names)
	}
	if got := slices.Sorted(maps.Keys(listDir(t, dir))); !slices.Equal(got, names) {
		t.Fatalf("Checkpoint returned names %q, the directory holds %q", names, got)
	}
	for _, n := range names {
		if !hashlog.IsLogFile(n) {
			t.Fatalf("IsLogFile(%q) = false for a file of a checkpoint", n)
		}
		segSeq(t, n)
	}
	return dir, names
}

// segSeq returns the sequence number of a segment file name.
func segSeq(t *testing.T, name string) uint64 {
	t.Helper()
	digits, ok := strings.CutPrefix(name, "vlog-")
	if ok {
		digits, ok = strings.CutSuffix(digits, ".seg")
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	if !ok || err != nil {
		t.Fatalf("%s is not a segment file name", name)
	}
	return seq
}

// seqRange returns the lowest and highest sequence numbers of the segment
// names, 0, 0 if there are none.
func seqRange(t *testing.T, names []string) (lo, hi uint64) {
	t.Helper()
	for i, n := range names {
		s := segSeq(t, n)
		if i == 0 || s < lo {
			lo = s
		}
		hi = max(hi, s)
	}
	return lo, hi
}

// subset returns the entries of m of the key groups [kgStart, kgEnd).
func subset(m model, kgStart, kgEnd int) model {
	out := model{}
	for k, v := range m {
		if kg := int(k[0])<<8 | int(k[1]); kg >= kgStart && kg < kgEnd {
			out[k] = v
		}
	}
	return out
}

// checkOutside checks that l refuses the keys of m outside [kgStart,
// kgEnd).
func checkOutside(t *testing.T, l *hashlog.Log, m model, kgStart, kgEnd int) {
	t.Helper()
	for k := range m {
		if kg := int(k[0])<<8 | int(k[1]); kg < kgStart || kg >= kgEnd {
			if v, ok, err := l.Get([]byte(k)); err == nil {
				t.Fatalf("Get(%x) of a key group not loaded = %d bytes, %v; want an error", k, len(v), ok)
			}
		}
	}
}

// checkAbsent checks that l has none of the keys of the key groups [kgStart,
// kgEnd) in keys that m does not hold (keys written once and deleted since).
func checkAbsent(t *testing.T, l *hashlog.Log, m model, keys map[string]bool, kgStart, kgEnd int) {
	t.Helper()
	for k := range keys {
		if _, ok := m[k]; ok {
			continue
		}
		if kg := int(k[0])<<8 | int(k[1]); kg < kgStart || kg >= kgEnd {
			continue
		}
		if v, ok, err := l.Get([]byte(k)); ok || err != nil {
			t.Fatalf("Get(%x) of a deleted key = %d bytes, %v, %v; want absent", k, len(v), ok, err)
		}
	}
}

// sameDir checks that dir holds the files of before, of the same sizes.
func sameDir(t *testing.T, what, dir string, before map[string]int64) {
	t.Helper()
	if after := listDir(t, dir); !maps.Equal(before, after) {
		t.Fatalf("%s changed %s: files before %v, after %v", what, dir, before, after)
	}
}

// segRecord is a record of a segment file, as the tests read it.
type segRecord struct {
	off, size int // offset in the file and size
	hdr       int // checksum, kind and the two lengths
	kind      byte
	key       []byte
	value     []byte
}

// The record kinds (the byte after the checksum) and the segment header.
const (
	kindSet       = 0
	kindKill      = 1
	segHeaderSize = 16
	segMagic      = "EDDYVLG1"
)

// castagnoli is the table of the records' checksums (CRC-32C).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readRecords returns the records of the segment file at path, checking
// its header, that the records fill it and that their checksums match.
func readRecords(t *testing.T, path string) []segRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < segHeaderSize || string(data[:8]) != segMagic || binary.LittleEndian.Uint64(data[8:]) != segSeq(t, filepath.Base(path)) {
		t.Fatalf("%s: bad segment header %x", path, data[:min(len(data), segHeaderSize)])
	}
	var out []segRecord
	for off := segHeaderSize; off < len(data); {
		b := data[off:]
		kl, n1 := binary.Uvarint(b[5:])
		vl, n2 := binary.Uvarint(b[5+n1:])
		hdr := 5 + n1 + n2
		size := hdr + int(kl) + int(vl)
		if n1 <= 0 || n2 <= 0 || size > len(b) || b[4] > kindKill {
			t.Fatalf("%s: bad record at offset %d", path, off)
		}
		if crc32.Checksum(b[4:size], castagnoli) != binary.LittleEndian.Uint32(b) {
			t.Fatalf("%s: checksum mismatch at offset %d", path, off)
		}
		out = append(out, segRecord{off: off, size: size, hdr: hdr, kind: b[4], key: b[hdr : hdr+int(kl)], value: b[hdr+int(kl) : size]})
		off += size
	}
	return out
}

// TestRecordFormat checks the records a Set and a Delete write: a set
// record of the key and value, and a kill record of the key whose value is
// the sequence number (8 bytes LE) and offset (4 bytes LE) of the set
// record.
func TestRecordFormat(t *testing.T) {
	l := openLog(t, t.TempDir(), testKGStart, testKGEnd, nil)
	k := kgKey(testKGStart, 'k')
	if err := l.Set(k, []byte("value")); err != nil {
		t.Fatal(err)
	}
	// A second segment between the set and the kill.
	for i := range 100 {
		if err := l.Set(kgKey(testKGStart+1, byte(i)), make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Delete(k); err != nil {
		t.Fatal(err)
	}
	dir, names := checkpoint(t, l)
	if len(names) < 2 {
		t.Fatalf("checkpoint %q: want 2 segments", names)
	}
	var setSeq uint64
	setOff, kills := -1, 0
	for _, n := range names {
		for _, r := range readRecords(t, filepath.Join(dir, n)) {
			if !bytes.Equal(r.key, k) {
				continue
			}
			switch r.kind {
			case kindSet:
				if setOff >= 0 || string(r.value) != "value" {
					t.Fatalf("%s: set record of %x at %d with value %q; want one, of value %q", n, k, r.off, r.value, "value")
				}
				setSeq, setOff = segSeq(t, n), r.off
			case kindKill:
				kills++
				if setOff < 0 || len(r.value) != 12 || binary.LittleEndian.Uint64(r.value) != setSeq || int(binary.LittleEndian.Uint32(r.value[8:])) != setOff {
					t.Fatalf("%s: kill record of %x has value %x; want the set record's sequence %d and offset %d", n, k, r.value, setSeq, setOff)
				}
				if segSeq(t, n) == setSeq {
					t.Fatalf("the kill record is in the set record's segment %s; the test wants it in a later one", n)
				}
			}
		}
	}
	if setOff < 0 || kills != 1 {
		t.Fatalf("found the set record at %d and %d kill records of %x; want one of each", setOff, kills, k)
	}
}

// TestCheckpointAndLoad checkpoints a log mid-way, keeps writing until its
// compactions remove segment files the checkpoint holds, and loads the
// checkpoint read-only (all key groups, and subsets) and writable, checking
// that Load changes no file, that a writable log's compactions then remove
// the segments it does not need, that it names new segments above the
// checkpoint's, and that it can be used, checkpointed and loaded again.
func TestCheckpointAndLoad(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testKGStart, testKGEnd, nil)
	m := model{}

	// Segments that hold key group 254 only (distinct keys, not written
	// again), then writes and deletes of the other key groups.
	w := newWorkload(11, testKGStart, testKGEnd)
	w.bigValues = false
	for i := range 1200 {
		k, v := kgKey(testKGStart, 0xEE, byte(i>>8), byte(i)), w.value()
		if err := l.Set(k, v); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = v
	}
	w1 := newWorkload(10, testKGStart+1, testKGEnd)
	for range 3000 {
		k := w1.key()
		if w1.r.IntN(4) == 0 {
			if err := l.Delete(k); err != nil {
				t.Fatal(err)
			}
			delete(m, string(k))
			continue
		}
		v := w1.value()
		if err := l.Set(k, v); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = v
	}
	w.bigValues = true

	cp1, names1 := checkpoint(t, l)
	m1 := cloneModel(m)
	state1 := dirState(t, cp1)
	checkLog(t, l, m)
	// The segments of the checkpoint that hold records of key group 254
	// only.
	var kg254 []string
	for _, name := range names1 {
		only := true
		for _, r := range readRecords(t, filepath.Join(cp1, name)) {
			only = only && int(binary.BigEndian.Uint16(r.key)) == testKGStart
		}
		if only {
			kg254 = append(kg254, name)
		}
	}
	if len(kg254) == 0 {
		t.Fatalf("no segment of the checkpoint %q holds key group %d only: the test needs some", names1, testKGStart)
	}

	// Write on until compaction has removed from dir segments that the
	// checkpoint holds.
	removed := func(dir string, names []string) int {
		n := 0
		now := listDir(t, dir)
		for _, name := range names {
			if _, ok := now[name]; !ok {
				n++
			}
		}
		return n
	}
	for i := 0; removed(dir, names1) < 3; i++ {
		if i == 50 {
			t.Fatalf("after 10000 more operations, compaction removed only %d of the checkpoint's segments from the log's directory", removed(dir, names1))
		}
		for range 200 {
			w.step(t, l, m)
		}
	}
	checkLog(t, l, m)
	sameState(t, "writing on in the log after its checkpoint", cp1, state1)

	// Read-only loads, of every key group and of subsets, leave the
	// directory as it was.
	for _, r := range [][2]int{{testKGStart, testKGEnd}, {256, 259}, {testKGStart + 1, testKGEnd}, {testKGStart, testKGStart + 1}, {0, 1 << 16}, {100, 200}} {
		ro := loadLog(t, cp1, r[0], r[1], true, nil)
		sub := subset(m1, r[0], r[1])
		checkLog(t, ro, sub)
		checkOutside(t, ro, m1, r[0], r[1])
		if len(sub) > 0 && ro.Memory() <= 0 {
			t.Fatalf("read-only log of %d entries: Memory() = %d", len(sub), ro.Memory())
		}
		for k := range sub {
			if err := ro.Set([]byte(k), []byte("x")); err == nil {
				t.Fatalf("Set(%x) on a read-only log succeeded", k)
			}
			if err := ro.Delete([]byte(k)); err == nil {
				t.Fatalf("Delete(%x) on a read-only log succeeded", k)
			}
			break
		}
		if err := ro.DeletePrefix(nil); err == nil {
			t.Fatal("DeletePrefix on a read-only log succeeded")
		}
		if _, err := ro.Checkpoint(newDir(t)); err == nil {
			t.Fatal("Checkpoint of a read-only log succeeded")
		}
		checkLog(t, ro, sub)
		sameState(t, fmt.Sprintf("read-only Load of key groups %v", r), cp1, state1)
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
		sameState(t, fmt.Sprintf("Close of a read-only log of key groups %v", r), cp1, state1)
	}

	// A writable load of a subset leaves its directory as it was; its
	// compactions then remove the segments of key group 254 only, which it
	// does not need, and the others it has compacted.
	cpSub := copyDir(t, cp1)
	subState := dirState(t, cpSub)
	subKGs := [2]int{testKGStart + 1, testKGEnd}
	sub := loadLog(t, cpSub, subKGs[0], subKGs[1], false, nil)
	mSub := subset(m1, subKGs[0], subKGs[1])
	checkLog(t, sub, mSub)
	checkOutside(t, sub, m1, subKGs[0], subKGs[1])
	sameState(t, "a writable Load of a subset", cpSub, subState)
	wSub := newWorkload(13, subKGs[0], subKGs[1])
	for i := 0; removed(cpSub, kg254) < len(kg254); i++ {
		if i == 100 {
			t.Fatalf("after 20000 operations, the log loaded without key group %d keeps %d of its segments %q", testKGStart, len(kg254)-removed(cpSub, kg254), kg254)
		}
		for range 200 {
			wSub.step(t, sub, mSub)
		}
	}
	checkLog(t, sub, mSub)
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}

	// A writable load of every key group, with the options a restore
	// uses (the default ones, then SetOptions), used further.
	wl, err := hashlog.Load(cp1, testKGStart, testKGEnd, hashlog.Options{}, false)
	if err != nil {
		t.Fatalf("Load(%s): %v", cp1, err)
	}
	t.Cleanup(func() { wl.Close() })
	sameState(t, "a writable Load", cp1, state1)
	var mc memCounter
	wl.SetOptions(testOptions(&mc))
	checkLog(t, wl, m1)
	checkMemory(t, wl, &mc, len(m1), w.maxValue)
	_, hi1 := seqRange(t, names1)
	m2 := cloneModel(m1)
	w2 := newWorkload(12, testKGStart, testKGEnd)
	peak := len(m2)
	for i := range 6000 {
		w2.step(t, wl, m2)
		peak = max(peak, len(m2))
		if i%1000 == 999 {
			checkLog(t, wl, m2)
			k := w2.key()
			if err := wl.Set(k, []byte("v")); err != nil {
				t.Fatal(err)
			}
			m2[string(k)] = []byte("v")
			checkDisk(t, cp1, m2)
			checkMemory(t, wl, &mc, peak, max(w.maxValue, w2.maxValue))
		}
	}
	// New segments are named above the checkpoint's, and the loaded
	// segments it compacted are gone.
	for name := range listDir(t, cp1) {
		if !slices.Contains(names1, name) && segSeq(t, name) <= hi1 {
			t.Fatalf("the loaded log wrote %s, not above the segments of the checkpoint it was loaded from (up to %d)", name, hi1)
		}
	}
	if removed(cp1, names1) == 0 {
		t.Fatalf("after 6000 operations, the writable log loaded from %s still holds every segment of the checkpoint", cp1)
	}
	cp2, _ := checkpoint(t, wl)
	m2cp := cloneModel(m2)
	for range 2000 {
		w2.step(t, wl, m2)
	}
	checkLog(t, wl, m2)
	ro2 := loadLog(t, cp2, testKGStart, testKGEnd, true, nil)
	checkLog(t, ro2, m2cp)

	// The original log was not disturbed by any of it.
	checkLog(t, l, m)
}

// TestSuccessiveCheckpoints takes several checkpoints of a log into fresh
// directories, between random operations, and checks that each loads as the
// log was when it was taken, even after later compactions; that a
// checkpoint right after another holds the same segments; and that a
// segment in two checkpoints has the same bytes in both.
func TestSuccessiveCheckpoints(t *testing.T) {
	l := openLog(t, t.TempDir(), testKGStart, testKGEnd, nil)
	w := newWorkload(20, testKGStart, testKGEnd)
	m := model{}
	var dirs []string
	var snaps []model
	var prev []string
	for i := range 6 {
		n := 1500
		if i == 3 {
			n = 0 // a checkpoint right after another
		}
		for range n {
			w.step(t, l, m)
		}
		d, names := checkpoint(t, l)
		dirs = append(dirs, d)
		snaps = append(snaps, cloneModel(m))
		if i > 0 {
			_, hiPrev := seqRange(t, prev)
			_, hi := seqRange(t, names)
			switch {
			case n == 0 && !slices.Equal(names, prev):
				t.Fatalf("checkpoint %d right after the previous one holds %q, the previous one %q", i, names, prev)
			case n > 0 && hi <= hiPrev:
				t.Fatalf("checkpoint %d after 1500 operations holds segments up to %d, the previous one up to %d", i, hi, hiPrev)
			}
		}
		prev = names
	}
	for range 3000 {
		w.step(t, l, m)
	}
	for i, d := range dirs {
		ro := loadLog(t, d, testKGStart, testKGEnd, true, nil)
		checkLog(t, ro, snaps[i])
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
	}
	shared := 0
	for i := 1; i < len(dirs); i++ {
		for name := range listDir(t, dirs[i]) {
			prev, err := os.ReadFile(filepath.Join(dirs[i-1], name))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			cur, err := os.ReadFile(filepath.Join(dirs[i], name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(prev, cur) {
				t.Fatalf("%s differs between checkpoints %d and %d", name, i-1, i)
			}
			shared++
		}
	}
	if shared == 0 {
		t.Fatal("no segment is shared by two successive checkpoints: the test needs some")
	}
	// Each checkpoint also loads writable, and the loaded logs work.
	for i, d := range dirs {
		wl := loadLog(t, d, testKGStart, testKGEnd, false, nil)
		mi := cloneModel(snaps[i])
		wi := newWorkload(uint64(30+i), testKGStart, testKGEnd)
		for range 500 {
			wi.step(t, wl, mi)
		}
		checkLog(t, wl, mi)
		if err := wl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	checkLog(t, l, m)
}

// TestCheckpointEmpty checkpoints a log that never held an entry and one
// whose entries were all deleted, and loads both.
func TestCheckpointEmpty(t *testing.T) {
	l := openLog(t, t.TempDir(), testKGStart, testKGEnd, nil)
	d, names := checkpoint(t, l)
	if len(names) != 0 {
		t.Fatalf("the checkpoint of an empty log holds %q, want nothing", names)
	}
	ro := loadLog(t, d, testKGStart, testKGEnd, true, nil)
	checkLog(t, ro, model{})
	wl := loadLog(t, d, testKGStart, testKGEnd, false, nil)
	checkLog(t, wl, model{})
	if err := wl.Set(kgKey(testKGStart, 1), []byte("a")); err != nil {
		t.Fatal(err)
	}
	checkLog(t, wl, model{string(kgKey(testKGStart, 1)): []byte("a")})

	// Every key deleted: the checkpoint holds set records and the kill
	// records that end them.
	w := newWorkload(40, testKGStart, testKGEnd)
	w.bigValues = false
	ever := map[string]bool{}
	for range 1000 {
		k := w.key()
		if err := l.Set(k, w.value()); err != nil {
			t.Fatal(err)
		}
		ever[string(k)] = true
	}
	if err := l.DeletePrefix(nil); err != nil {
		t.Fatal(err)
	}
	d, names = checkpoint(t, l)
	sets, kills := 0, 0
	for _, n := range names {
		for _, r := range readRecords(t, filepath.Join(d, n)) {
			if r.kind == kindKill {
				kills++
			} else {
				sets++
			}
		}
	}
	if sets == 0 || kills == 0 {
		t.Fatalf("checkpoint %q holds %d set and %d kill records: the test needs both", names, sets, kills)
	}
	before := dirState(t, d)
	ro = loadLog(t, d, testKGStart, testKGEnd, true, nil)
	checkLog(t, ro, model{})
	checkAbsent(t, ro, model{}, ever, testKGStart, testKGEnd)
	ro.Close()
	sameState(t, "a read-only Load", d, before)
	wl = loadLog(t, d, testKGStart, testKGEnd, false, nil)
	checkLog(t, wl, model{})
	sameState(t, "a writable Load", d, before)
	// Its writes compact the loaded segments away.
	m := model{}
	for i := 0; ; i++ {
		left := 0
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				left++
			}
		}
		if left == 0 {
			break
		}
		if i == 20000 {
			t.Fatalf("after 20000 writes, %d of the loaded segments %q of no entry are still in %s", left, names, d)
		}
		k, v := w.key(), w.value()
		if err := wl.Set(k, v); err != nil {
			t.Fatal(err)
		}
		m[string(k)] = v
	}
	checkLog(t, wl, m)
}

// TestLoadCorrupt damages copies of a checkpoint and checks that Load,
// read-only and writable, fails with an error wrapping ErrCorrupt that
// names the damaged file, and leaves the directory as it was: a byte of
// every part of every record (set records live and dead, kill records), of
// the segment header, segments truncated within a record, and segments of
// another sequence number. It also checks that an undamaged checkpoint,
// with files that are not the log's beside it, loads and is left as it was.
func TestLoadCorrupt(t *testing.T) {
	src := t.TempDir()
	l := openLog(t, src, testKGStart, testKGEnd, nil)
	var live []string
	for i := range 240 {
		k := kgKey(testKGStart+i%(testKGEnd-testKGStart), byte(i>>8), byte(i))
		if err := l.Set(k, bytes.Repeat([]byte{byte(i)}, 300+i*37%800)); err != nil {
			t.Fatal(err)
		}
		switch i % 10 {
		case 3: // a dead set record and a kill record
			if err := l.Delete(k); err != nil {
				t.Fatal(err)
			}
		case 7: // a dead set record and a live one
			if err := l.Set(k, []byte("again")); err != nil {
				t.Fatal(err)
			}
			live = append(live, string(k))
		default:
			live = append(live, string(k))
		}
	}
	if err := l.DeletePrefix(kgKey(testKGEnd - 1)); err != nil {
		t.Fatal(err)
	}
	cp, segs := checkpoint(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if len(segs) < 3 {
		t.Fatalf("checkpoint %q: the test needs 3 segments", segs)
	}
	records := map[string][]segRecord{}
	kills := 0
	for _, s := range segs {
		records[s] = readRecords(t, filepath.Join(cp, s))
		for _, r := range records[s] {
			if r.kind == kindKill {
				kills++
			}
		}
	}
	if kills < 40 {
		t.Fatalf("the checkpoint holds %d kill records: the test needs more", kills)
	}

	// load loads dir and checks that it fails naming want, wrapping
	// ErrCorrupt, and changes no file.
	load := func(t *testing.T, what, dir, want string, readOnly bool) {
		t.Helper()
		before := listDir(t, dir)
		l, err := hashlog.Load(dir, testKGStart, testKGEnd, testOptions(nil), readOnly)
		if err == nil {
			l.Close()
			t.Fatalf("%s: Load (readOnly %v) succeeded, want an error naming %s", what, readOnly, want)
		}
		if !strings.Contains(err.Error(), want) || !errorsIsCorrupt(err) {
			t.Fatalf("%s: Load (readOnly %v): %v; want an error wrapping ErrCorrupt naming %s", what, readOnly, err, want)
		}
		sameDir(t, what+": a failed Load", dir, before)
	}

	// A byte of each part of every record, flipped in place and back.
	t.Run("record bytes", func(t *testing.T) {
		dir := copyDir(t, cp)
		state := dirState(t, dir)
		n := 0
		for _, s := range segs {
			path := filepath.Join(dir, s)
			for _, r := range records[s] {
				kl := len(r.key)
				offs := []int{0, 3, 4, 5, r.hdr - 1, r.hdr, r.hdr + kl - 1, r.size - 1}
				if len(r.value) > 0 {
					offs = append(offs, r.hdr+kl, r.hdr+kl+len(r.value)/2)
				}
				slices.Sort(offs)
				for _, o := range slices.Compact(offs) {
					what := fmt.Sprintf("%s: byte %d of the %s record of key %x at offset %d", s, o, map[byte]string{kindSet: "set", kindKill: "kill"}[r.kind], r.key, r.off)
					flipByte(t, path, int64(r.off+o))
					load(t, what, dir, s, n%2 == 0)
					flipByte(t, path, int64(r.off+o))
					n++
				}
			}
		}
		sameState(t, "failed Loads", dir, state)
	})

	for _, readOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("files/readOnly=%v", readOnly), func(t *testing.T) {
			for i, s := range []string{segs[0], segs[1], segs[len(segs)-1]} {
				recs := records[s]
				// The header: magic and sequence number.
				for _, o := range []int64{0, 7, 8, 15} {
					dir := copyDir(t, cp)
					flipByte(t, filepath.Join(dir, s), o)
					load(t, fmt.Sprintf("%s: header byte %d", s, o), dir, s, readOnly)
				}
				// Truncated within a record: in the header, in the first
				// record, within later ones, by one byte.
				size := int64(recs[len(recs)-1].off + recs[len(recs)-1].size)
				mid := recs[len(recs)/2]
				for _, n := range []int64{0, 8, segHeaderSize - 1, segHeaderSize + 3, int64(recs[0].off + recs[0].size - 1), int64(mid.off + 1), int64(mid.off + mid.hdr + 1), size - 1} {
					dir := copyDir(t, cp)
					if err := os.Truncate(filepath.Join(dir, s), n); err != nil {
						t.Fatal(err)
					}
					load(t, fmt.Sprintf("%s truncated to %d bytes", s, n), dir, s, readOnly)
				}
				// Another segment's bytes under its name.
				other := segs[(i+1)%len(segs)]
				dir := copyDir(t, cp)
				data, err := os.ReadFile(filepath.Join(dir, other))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, s), data, 0o644); err != nil {
					t.Fatal(err)
				}
				load(t, fmt.Sprintf("%s holding segment %s", s, other), dir, s, readOnly)
			}
			// A segment of a name no segment of the checkpoint has, holding
			// another's bytes; one of a header only.
			_, hi := seqRange(t, segs)
			for _, c := range []struct {
				name string
				data func([]byte) []byte
			}{
				{fmt.Sprintf("vlog-%06d.seg", hi+1), func(b []byte) []byte { return b }},
				{fmt.Sprintf("vlog-%06d.seg", hi+2), func(b []byte) []byte { return b[:8] }},
			} {
				dir := copyDir(t, cp)
				data, err := os.ReadFile(filepath.Join(dir, segs[0]))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, c.name), c.data(data), 0o644); err != nil {
					t.Fatal(err)
				}
				load(t, "a stray "+c.name, dir, c.name, readOnly)
			}
		})
	}

	// The undamaged checkpoint loads, with files beside it that are not
	// the log's, and Load changes none.
	dir := copyDir(t, cp)
	for _, n := range []string{"vlog-000001.idx", "vlog-x.seg", "README", "vlog-000001.seg.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("not a segment"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	state := dirState(t, dir)
	for _, readOnly := range []bool{true, false} {
		l := loadLog(t, dir, testKGStart, testKGEnd, readOnly, nil)
		want := 0
		for _, k := range live {
			if int(binary.BigEndian.Uint16([]byte(k))) != testKGEnd-1 {
				want++
			}
		}
		if l.Len() != want {
			t.Fatalf("Len() = %d, want %d", l.Len(), want)
		}
		sameState(t, fmt.Sprintf("a Load (readOnly %v)", readOnly), dir, state)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		sameState(t, fmt.Sprintf("Close of a loaded log (readOnly %v)", readOnly), dir, state)
	}
}

// chain is a log in a chain of generations: each generation is a writable
// Load of a copy of the last checkpoint of the one before, used further. It
// keeps a map of what the log should hold.
type chain struct {
	t              *testing.T
	r              *rand.Rand
	w              *workload
	l              *hashlog.Log
	dir            string
	kgStart, kgEnd int
	full           bool // the key groups are those of the first generation
	m              model
	mc             *memCounter
	peak           int
	// tracked are keys of each key group, some written often and some
	// rarely, that are set again and again and deleted, over many seals
	// and compactions.
	tracked [][]byte
	// ever holds every key written.
	ever map[string]bool
	// loaded are the segments the generation was loaded from.
	loaded []string
	// cps are the checkpoints taken, checked again at the end.
	cps []chainCheckpoint
	// hazards counts the deleted keys whose set records a checkpoint held
	// (which a wrong replay would bring back).
	hazards int
}

// chainCheckpoint is a checkpoint of a chain and what it should hold.
type chainCheckpoint struct {
	dir            string
	m              model
	kgStart, kgEnd int
	full           bool
}

// op applies a random operation to the log and the map.
func (c *chain) op() {
	t, l, w := c.t, c.l, c.w
	t.Helper()
	switch x := c.r.IntN(100); {
	case x < 40:
		k, v := w.key(), w.value()
		if err := l.Set(k, v); err != nil {
			t.Fatalf("Set(%x, %d bytes): %v", k, len(v), err)
		}
		c.m[string(k)] = v
		c.ever[string(k)] = true
	case x < 45:
		n := 1 + c.r.IntN(8)
		keys, values := make([][]byte, n), make([][]byte, n)
		for i := range n {
			keys[i], values[i] = w.key(), w.value()
			if i > 0 && c.r.IntN(4) == 0 {
				keys[i] = keys[c.r.IntN(i)]
			}
		}
		if err := l.SetBatch(keys, values); err != nil {
			t.Fatalf("SetBatch(%d keys): %v", n, err)
		}
		for i := range n {
			c.m[string(keys[i])] = values[i]
			c.ever[string(keys[i])] = true
		}
	case x < 58:
		k := w.key()
		if err := l.Delete(k); err != nil {
			t.Fatalf("Delete(%x): %v", k, err)
		}
		delete(c.m, string(k))
	case x < 59:
		p := w.prefix()
		if len(p) == 0 && c.r.IntN(8) != 0 {
			p = kgKey(c.kgStart + c.r.IntN(c.kgEnd-c.kgStart)) // fewer full wipes
		}
		if err := l.DeletePrefix(p); err != nil {
			t.Fatalf("DeletePrefix(%x): %v", p, err)
		}
		c.m.deletePrefix(p)
	case x < 62:
		checkGet(t, l, c.m, w.key())
	default:
		k := c.tracked[c.r.IntN(c.r.IntN(len(c.tracked))+1)] // the first ones more often
		if _, ok := c.m[string(k)]; ok && c.r.IntN(4) == 0 {
			if err := l.Delete(k); err != nil {
				t.Fatalf("Delete(%x): %v", k, err)
			}
			delete(c.m, string(k))
			return
		}
		v := w.value()
		if err := l.Set(k, v); err != nil {
			t.Fatalf("Set(%x, %d bytes): %v", k, len(v), err)
		}
		c.m[string(k)] = v
		c.ever[string(k)] = true
	}
	c.peak = max(c.peak, len(c.m))
}

// checkpoint checkpoints the log into a new directory, checks the
// checkpoint and returns it with its names.
func (c *chain) checkpoint() (chainCheckpoint, []string) {
	t := c.t
	t.Helper()
	dir, names := checkpoint(t, c.l)
	cp := chainCheckpoint{dir: dir, m: cloneModel(c.m), kgStart: c.kgStart, kgEnd: c.kgEnd, full: c.full}
	// New segments are named above the ones the generation was loaded
	// from.
	_, hi := seqRange(t, c.loaded)
	for _, n := range names {
		if !slices.Contains(c.loaded, n) && segSeq(t, n) <= hi {
			t.Fatalf("checkpoint segment %s is not one the log was loaded from, and not above them (up to %d)", n, hi)
		}
	}
	// Deleted keys whose set records the checkpoint holds.
	dead := map[string]bool{}
	for _, n := range names {
		for _, r := range readRecords(t, filepath.Join(dir, n)) {
			kg := int(binary.BigEndian.Uint16(r.key))
			if _, ok := cp.m[string(r.key)]; !ok && r.kind == kindSet && kg >= c.kgStart && kg < c.kgEnd {
				dead[string(r.key)] = true
			}
		}
	}
	c.hazards += len(dead)
	c.check(cp)
	c.cps = append(c.cps, cp)
	return cp, names
}

// check loads the checkpoint cp read-only (all its key groups and a random
// subset) and writable (a random subset, in a copy, then written to,
// checkpointed and loaded again), compares each log with cp's map, and
// checks that the loads change no file.
func (c *chain) check(cp chainCheckpoint) {
	t := c.t
	t.Helper()
	state := dirState(t, cp.dir)
	a := cp.kgStart + c.r.IntN(cp.kgEnd-cp.kgStart)
	b := a + 1 + c.r.IntN(cp.kgEnd-a)
	ranges := [][2]int{{cp.kgStart, cp.kgEnd}, {a, b}}
	if cp.full {
		ranges = append(ranges, [2]int{0, 1 << 16})
	}
	for _, r := range ranges {
		ro := loadLog(t, cp.dir, r[0], r[1], true, nil)
		want := subset(cp.m, r[0], r[1])
		checkLog(t, ro, want)
		checkAbsent(t, ro, want, c.ever, r[0], r[1])
		checkOutside(t, ro, cp.m, r[0], r[1])
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
	}
	sameState(t, "read-only Loads", cp.dir, state)

	dir := copyDir(t, cp.dir)
	copyState := dirState(t, dir)
	wl := loadLog(t, dir, a, b, false, nil)
	sameState(t, "a writable Load", dir, copyState)
	m := subset(cp.m, a, b)
	checkLog(t, wl, m)
	checkAbsent(t, wl, m, c.ever, a, b)
	w := newWorkload(c.r.Uint64(), a, b)
	w.width, w.extra = c.w.width, c.w.extra
	for range 300 {
		w.step(t, wl, m)
	}
	checkLog(t, wl, m)
	d, _ := checkpoint(t, wl)
	if err := wl.Close(); err != nil {
		t.Fatal(err)
	}
	ro := loadLog(t, d, a, b, true, nil)
	checkLog(t, ro, m)
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	sameState(t, "the loads and the log of a copy", cp.dir, state)
}

// TestCheckpointChainsMatchMap runs random Set, SetBatch, Delete and
// DeletePrefix calls over several key groups of a log of 64 KiB segments
// (compaction runs often) with a small key space, and keys set several times
// and deleted; takes checkpoints at random points and at the end of each
// generation, each loaded (read-only and writable, every key group and
// subsets) and compared with a copy of the map taken at checkpoint time,
// deleted keys absent; and starts each next generation from a writable Load
// of a copy of the last checkpoint (in one chain, of a subset of the key
// groups), five generations. At the end every checkpoint loads again as it
// was taken.
func TestCheckpointChainsMatchMap(t *testing.T) {
	for _, seed := range []uint64{51, 52, 53} {
		narrow := seed == 52
		t.Run(fmt.Sprintf("seed=%d/narrow=%v", seed, narrow), func(t *testing.T) {
			c := &chain{
				t: t, r: rand.New(rand.NewPCG(seed, 7)), w: newWorkload(seed, testKGStart, testKGEnd),
				dir: t.TempDir(), kgStart: testKGStart, kgEnd: testKGEnd, full: true,
				m: model{}, mc: &memCounter{}, ever: map[string]bool{},
			}
			c.w.width, c.w.extra = 4, 1
			for i := range 4 {
				for kg := testKGStart; kg < testKGEnd; kg++ {
					c.tracked = append(c.tracked, kgKey(kg, 0xEE, byte(i)))
				}
			}
			c.r.Shuffle(len(c.tracked), func(i, j int) { c.tracked[i], c.tracked[j] = c.tracked[j], c.tracked[i] })
			c.l = openLog(t, c.dir, c.kgStart, c.kgEnd, c.mc)
			for gen := range 5 {
				loLoaded, _ := seqRange(t, c.loaded)
				ops := 2500 + c.r.IntN(2500)
				for i := range ops {
					c.op()
					if c.r.IntN(1000) == 0 {
						c.checkpoint()
					}
					if i%500 == 499 {
						k := c.w.key()
						if err := c.l.Set(k, nil); err != nil {
							t.Fatal(err)
						}
						c.m[string(k)] = nil
						c.ever[string(k)] = true
						checkLog(t, c.l, c.m)
						checkDisk(t, c.dir, c.m)
						checkMemory(t, c.l, c.mc, c.peak, c.w.maxValue)
					}
				}
				// The log's compactions removed the oldest segments,
				// those it was loaded from among them.
				if gen > 0 {
					gone := 0
					for _, n := range c.loaded {
						if _, err := os.Stat(filepath.Join(c.dir, n)); err != nil {
							gone++
						}
					}
					if gone == 0 {
						t.Fatalf("generation %d: after %d operations the log still holds every segment it was loaded from", gen, ops)
					}
				}
				cp, names := c.checkpoint()
				if lo, _ := seqRange(t, names); lo <= loLoaded {
					t.Fatalf("generation %d: the checkpoint's oldest segment is %d, the generation started at %d: no compaction", gen, lo, loLoaded)
				}
				// The log goes on after its checkpoint (which must not
				// change), then the next generation starts from it.
				for range 300 {
					c.op()
				}
				checkLog(t, c.l, c.m)
				if err := c.l.Close(); err != nil {
					t.Fatal(err)
				}
				if narrow && gen == 1 {
					c.kgStart, c.kgEnd, c.full = testKGStart+2, testKGEnd-1, false
				}
				c.dir = copyDir(t, cp.dir)
				state := dirState(t, c.dir)
				// As a restore does: the default options, then SetOptions.
				l, err := hashlog.Load(c.dir, c.kgStart, c.kgEnd, hashlog.Options{}, false)
				if err != nil {
					t.Fatalf("generation %d: Load(%s, %d, %d): %v", gen+1, c.dir, c.kgStart, c.kgEnd, err)
				}
				t.Cleanup(func() { l.Close() })
				sameState(t, "a writable Load", c.dir, state)
				c.mc = &memCounter{}
				l.SetOptions(testOptions(c.mc))
				if c.mc.n != l.Memory() {
					t.Fatalf("SetOptions reported %d bytes, Memory() = %d", c.mc.n, l.Memory())
				}
				c.l, c.loaded = l, names
				c.m = subset(cp.m, c.kgStart, c.kgEnd)
				c.peak = len(c.m)
				c.tracked = slices.DeleteFunc(c.tracked, func(k []byte) bool {
					kg := int(binary.BigEndian.Uint16(k))
					return kg < c.kgStart || kg >= c.kgEnd
				})
				width, extra, maxValue := c.w.width, c.w.extra, c.w.maxValue
				c.w = newWorkload(c.r.Uint64(), c.kgStart, c.kgEnd)
				c.w.width, c.w.extra, c.w.maxValue = width, extra, maxValue
				checkLog(t, c.l, c.m)
				checkAbsent(t, c.l, c.m, c.ever, c.kgStart, c.kgEnd)
			}
			if c.hazards == 0 {
				t.Fatal("no checkpoint held a set record of a deleted key: the test needs some")
			}
			for i, cp := range c.cps {
				ro := loadLog(t, cp.dir, cp.kgStart, cp.kgEnd, true, nil)
				checkLog(t, ro, cp.m)
				checkAbsent(t, ro, cp.m, c.ever, cp.kgStart, cp.kgEnd)
				if err := ro.Close(); err != nil {
					t.Fatalf("checkpoint %d: %v", i, err)
				}
			}
			t.Logf("%d checkpoints, %d deleted keys with set records in them", len(c.cps), c.hazards)
		})
	}
}
